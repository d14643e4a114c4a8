from django.apps import AppConfig


class MemoryConfig(AppConfig):
    """Memory L2/L3 (DESIGN.md §2): generic — it learns what a tool declares it teaches."""

    name = "memory"

    def ready(self):
        from workflows.learners import learner_register

        from .services import memory_learn

        # Distilled on the worker when an approved step completes, not when a request recalls.
        learner_register(memory_learn)

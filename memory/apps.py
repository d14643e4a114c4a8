from django.apps import AppConfig


class MemoryConfig(AppConfig):
    """Memory L2/L3 (seed 000 §8): generic — it learns what a tool declares it teaches."""

    name = "memory"

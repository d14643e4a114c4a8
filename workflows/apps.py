from django.apps import AppConfig


class WorkflowsConfig(AppConfig):
    name = "workflows"

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from . import checks, noop  # noqa: F401 - registers the system check and the engine's no-op tool

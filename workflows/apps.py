from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class WorkflowsConfig(AppConfig):
    name = "workflows"
    verbose_name = _("Workflows")  # the admin's app list, in the reader's language

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from . import checks, noop  # noqa: F401 - registers the system check and the engine's no-op tool

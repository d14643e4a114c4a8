from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = _("Approvals")  # the admin's app list, in the reader's language

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from workflows.gate import gate_register

        from .services import ApprovalGate

        gate_register(ApprovalGate())

    def seed_demo(self) -> None:
        """Called by `manage.py seed_demo`: the default approval matrix of every tenant."""
        from .matrix import matrix_seed_defaults

        matrix_seed_defaults()

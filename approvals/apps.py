from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"

    def seed_demo(self) -> None:
        """Called by `manage.py seed_demo`: the default approval matrix of every tenant."""
        from .matrix import matrix_seed_defaults

        matrix_seed_defaults()

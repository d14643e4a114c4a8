from django.apps import AppConfig


class PayrollConfig(AppConfig):
    name = "payroll"

    def seed_demo(self) -> None:
        """Called by `manage.py seed_demo`: the template catalog and the demo employees."""
        from .seed import seed_demo

        seed_demo()

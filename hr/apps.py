from django.apps import AppConfig


class HrConfig(AppConfig):
    name = "hr"
    verbose_name = "HR Core"

    def ready(self) -> None:
        from . import blueprints, tools  # noqa: F401 - registering is importing

    def seed_demo(self) -> None:
        """Called by `manage.py seed_demo`: the CV bank and two draft TANs."""
        from .seed import seed_demo

        seed_demo()

from django.apps import AppConfig


class HrConfig(AppConfig):
    name = "hr"
    verbose_name = "HR Core"

    def ready(self) -> None:
        from . import blueprints, tools  # noqa: F401 - registering is importing

        from workflows.news import news_register

        from .news import BLUEPRINT, matching_news

        news_register(BLUEPRINT, matching_news)  # what its runs tell the chat

    def seed_demo(self) -> None:
        """Called by `manage.py seed_demo`: the CV bank and two draft TANs."""
        from .seed import seed_demo

        seed_demo()

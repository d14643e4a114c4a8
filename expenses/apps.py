from django.apps import AppConfig


class ExpensesConfig(AppConfig):
    name = "expenses"
    verbose_name = "Expenses"

    def ready(self) -> None:
        from . import blueprints, tools  # noqa: F401 - registering is importing

        from workflows.news import news_register

        from .news import BLUEPRINT, expense_news

        news_register(BLUEPRINT, expense_news)  # what its runs tell the chat

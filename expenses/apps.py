from django.apps import AppConfig


class ExpensesConfig(AppConfig):
    name = "expenses"
    verbose_name = "Expenses"

    def ready(self) -> None:
        from . import blueprints, tools  # noqa: F401 - registering is importing

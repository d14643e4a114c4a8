from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from config.menu import MenuEntry, menu_register


class ExpensesConfig(AppConfig):
    name = "expenses"
    verbose_name = _("Expenses")  # the admin's app list, in the reader's language

    def ready(self) -> None:
        menu_register(MenuEntry("expenses-claims", _("Expenses"), testid="nav-expenses", order=20))  # in the top bar

        from . import blueprints  # noqa: F401 - registering is importing
        from .agent import tools  # noqa: F401 - registering is importing

        from workflows.news import news_register

        from .agent.news import BLUEPRINT, expense_news

        news_register(BLUEPRINT, expense_news)  # what its runs tell the chat

        from .agent.cards import cards_register

        cards_register()  # how its approval cards read (workflows.cards)

        from workflows.conversation import conversation_register

        from .conversation.domain import ExpensesConversation

        conversation_register(ExpensesConversation())  # its part in the conversation: claims, invoices

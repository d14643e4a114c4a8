from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from config.menu import MenuEntry, menu_register


class PayrollConfig(AppConfig):
    name = "payroll"

    def ready(self) -> None:
        menu_register(MenuEntry("payroll-home", _("Payroll"), order=10))  # its pages in the top bar

        # Imported here, not at the top: Django loads apps.py before the models exist.
        from llm.builtin import answerer_register

        from . import blueprints  # noqa: F401 - registering is importing
        from .agent import tools  # noqa: F401 - registering is importing
        from .reading.requirements import requirements_answer

        answerer_register("requirements", requirements_answer)

        from workflows.news import news_register

        from .agent.news import BLUEPRINT, payroll_news

        news_register(BLUEPRINT, payroll_news)  # what its runs tell the chat
        from .agent.month_news import BLUEPRINTS as MONTH_BLUEPRINTS, month_news

        news_register(lambda name: name in MONTH_BLUEPRINTS, month_news)

        from .agent.cards import cards_register

        cards_register()  # how its approval cards read (workflows.cards)

        from .agent.month_cards import month_cards_register

        month_cards_register()

        from workflows.conversation import conversation_register

        from .conversation.domain import PayrollConversation

        conversation_register(PayrollConversation())  # its part in the conversation

        from .conversation.month import MonthConversation

        conversation_register(MonthConversation())  # "run November payroll for …": the month's workflow

    def seed_demo(self) -> None:
        """Called by `manage.py seed_demo`: the template catalog and the demo employees."""
        from .records.seed import seed_demo

        seed_demo()

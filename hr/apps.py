from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from config.menu import MenuEntry, menu_register


class HrConfig(AppConfig):
    name = "hr"
    verbose_name = _("HR Core")  # the admin's app list, in the reader's language

    def ready(self) -> None:
        menu_register(MenuEntry("hr-tans", _("Hiring"), testid="nav-hiring", order=30))  # in the top bar

        from . import blueprints, tools  # noqa: F401 - registering is importing

        from workflows.news import news_register

        from .news import BLUEPRINT, matching_news

        news_register(BLUEPRINT, matching_news)  # what its runs tell the chat

        from .cards import cards_register

        cards_register()  # how its approval cards read (workflows.cards)

    def seed_demo(self) -> None:
        """Called by `manage.py seed_demo`: the CV bank and two draft TANs."""
        from .seed import seed_demo

        seed_demo()

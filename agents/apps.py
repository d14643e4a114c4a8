from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AgentsConfig(AppConfig):
    name = "agents"
    verbose_name = _("Agents")  # the admin's app list, in the reader's language

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from django.utils.module_loading import autodiscover_modules

        from timeline.services import event_subscribe

        from .news import NEWS_TYPES
        from .replies import answerers_register
        from .tasks import NEWS_TASK

        answerers_register()
        # Each domain's part in a replay's sandbox (workflows.sandbox), as the admin finds `admin` modules.
        autodiscover_modules("sandbox")
        # What a run does is told in its conversation (agents.news), driven by the engine's events.
        event_subscribe(types=NEWS_TYPES, task=NEWS_TASK)

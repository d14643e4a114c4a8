from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from timeline.services import event_subscribe

        from .news import NEWS_TYPES
        from .replies import answerers_register
        from .tasks import NEWS_TASK

        answerers_register()
        # What a run does is told in its conversation (agents.news), driven by the engine's events.
        event_subscribe(types=NEWS_TYPES, task=NEWS_TASK)

from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The top layer: pages, websocket consumers, metrics. Reads every app below; none reads it."""

    name = "console"

    def ready(self) -> None:
        # The admin timeline (timeline/admin.py) names an Activity and a status as the console's
        # pages do; the timeline sits below the blueprints and this vocabulary and never imports them.
        from timeline.shown import shown_register

        from .blueprint_words import activity_title_shown
        from .status import status_label

        shown_register(activity_title=activity_title_shown, status_label=status_label)

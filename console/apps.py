from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    """The top layer: pages, websocket consumers, metrics. Reads every app below; none reads it."""

    name = "console"

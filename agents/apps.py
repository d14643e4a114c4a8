from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self) -> None:
        from agents import checks  # noqa: F401 - registers the system check
        from agents import tools  # noqa: F401 - registers the tools

from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from .replies import answerers_register

        answerers_register()

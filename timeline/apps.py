from django.apps import AppConfig


class TimelineConfig(AppConfig):
    name = "timeline"

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from .model_frames import model_frames_hook_install

        model_frames_hook_install()

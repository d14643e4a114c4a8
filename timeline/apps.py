from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TimelineConfig(AppConfig):
    name = "timeline"
    verbose_name = _("Timeline")  # the admin's app list, in the reader's language

    def ready(self) -> None:
        # Imported here, not at the top: Django loads apps.py before the models exist.
        from .model_frames import model_frames_hook_install

        model_frames_hook_install()

from django.apps import AppConfig


class KeelConfig(AppConfig):
    """Keel's project-wide policies that hook into the libraries when Django starts."""

    name = "config"

    def ready(self) -> None:
        from config.fields import ascii_digits_install

        ascii_digits_install()

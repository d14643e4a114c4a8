from django.apps import AppConfig


class TenantsConfig(AppConfig):
    name = "tenants"

    def ready(self):
        from django.contrib.auth.signals import user_logged_out

        from .tokens import on_logged_out

        user_logged_out.connect(on_logged_out, dispatch_uid="tenants.tokens.on_logged_out")

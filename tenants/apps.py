from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class TenantsConfig(AppConfig):
    name = "tenants"
    verbose_name = _("Tenants")  # the admin's app list, in the reader's language

    def ready(self):
        from django.contrib.auth.signals import user_logged_out

        from .tokens import on_logged_out

        user_logged_out.connect(on_logged_out, dispatch_uid="tenants.tokens.on_logged_out")

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Tenant(models.Model):
    """A customer company. Nothing of one tenant is visible to another."""

    slug = models.SlugField(_("slug"), unique=True)
    name = models.CharField(_("name"), max_length=200)
    # A replay's sandbox (agents/replay.py): a copy of the records one run touched, never listed,
    # deleted once the replay is compared (or by the periodic cleanup).
    sandbox = models.BooleanField(_("sandbox"), default=False)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("tenant"), _("tenants")

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    BUSINESS = "business", _("Business user")
    APPROVER = "approver", _("Approver")
    DEVELOPER = "developer", _("Developer")
    ADMIN = "admin", _("Tenant admin")


class Membership(models.Model):
    """A user's place in one tenant. A user belongs to exactly one tenant."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership",
                                verbose_name=_("user"))
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("tenant"))
    role = models.CharField(_("role"), max_length=20, choices=Role.choices)
    # The language this person chose for the console (settings.LANGUAGES); blank: the browser's.
    language = models.CharField(_("language"), max_length=10, blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name, verbose_name_plural = _("membership"), _("memberships")
        ordering = ["user__username"]

    def __str__(self) -> str:
        return f"{self.user} @ {self.tenant} ({self.role})"

    # Capabilities, one place to read them (views, APIs and services all ask here).
    @property
    def can_approve(self) -> bool:
        return self.role in {Role.APPROVER, Role.ADMIN}

    @property
    def can_see_payloads(self) -> bool:
        return self.role in {Role.DEVELOPER, Role.ADMIN}

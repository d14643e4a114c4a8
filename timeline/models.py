from django.conf import settings
from django.db import models

from config.ids import BusinessIdField


class WiringCheck(models.Model):
    """A round trip through every moving part: request → commit → broker →
    worker → database → channel layer → websocket. The home page offers it so
    anyone can see, in the browser, that the deployment is whole."""

    id = BusinessIdField()
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="wiring_checks")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, help_text="hostname of the worker that ran it")

    class Meta:
        ordering = ["-created_at"]

"""The admin site's access rules, shared by every app's admin: staff users as Django
has it, and members whose role may see payloads (developer, tenant admin) — without
making them staff. We keep the stock `admin.site` that config/urls.py mounts and
override its documented hooks (`has_permission`, `login_form`). Every ModelAdmin
built on `TenantScopedAdmin` is read-only (a status changes only through the
transition functions, never a form) and scoped to the member's tenant: another
tenant's object answers 404."""
from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from .models import Membership, Tenant


def request_membership(request: HttpRequest) -> Membership | None:
    """The requesting user's membership, looked up once per request."""
    if not hasattr(request, "_keel_membership"):
        user = request.user
        request._keel_membership = (  # type: ignore[attr-defined]
            Membership.objects.select_related("tenant").filter(user=user).first()
            if user.is_authenticated else None)
    return request._keel_membership  # type: ignore[attr-defined]


def admin_member(request: HttpRequest) -> Membership | None:
    """The member behind the request when their role may use the admin timeline."""
    member = request_membership(request)
    return member if member is not None and member.can_see_payloads and request.user.is_active else None


def _site_has_permission(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and (user.is_staff or admin_member(request) is not None))


class MemberAdminAuthenticationForm(AdminAuthenticationForm):
    """The admin's log-in form, letting in developers and tenant admins too."""

    def confirm_login_allowed(self, user) -> None:
        member = Membership.objects.filter(user=user).first()
        if user.is_active and (user.is_staff or (member is not None and member.can_see_payloads)):
            return
        raise forms.ValidationError(self.error_messages["invalid_login"], code="invalid_login",
                                    params={"username": self.username_field.verbose_name})


admin.site.has_permission = _site_has_permission  # type: ignore[method-assign]
admin.site.login_form = MemberAdminAuthenticationForm
admin.site.site_header = _("Keel admin")
admin.site.site_title = _("Keel admin")
admin.site.index_title = _("Runs, tool calls and the timeline")

# Words of Django's own admin templates (app_list.html's column captions, read by screen readers
# and shown in the nav sidebar) that Django's Simplified Chinese catalog lacks: listed here so
# makemessages puts them in Keel's catalog, which Django reads first (LOCALE_PATHS).
ADMIN_WORDS_DJANGO_LACKS = (gettext_noop("Model name"), gettext_noop("Add link"),
                            gettext_noop("Change or view list link"))


def admin_link(obj: Any, text: Any | None = None) -> SafeString | str:
    """A link to `obj`'s admin page (or just its text when there is none)."""
    if obj is None:
        return "—"
    url = reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])
    return format_html('<a href="{}">{}</a>', url, text if text is not None else obj)


class _MemberAccess:
    """View-only access for developers and tenant admins; no writes for anyone."""

    def has_view_permission(self, request, obj=None) -> bool:
        return admin_member(request) is not None or super().has_view_permission(request, obj)  # type: ignore[misc]

    def has_module_permission(self, request) -> bool:
        return admin_member(request) is not None or super().has_module_permission(request)  # type: ignore[misc]

    def has_add_permission(self, request, *args) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class TenantScopedAdmin(_MemberAccess, admin.ModelAdmin):
    """Read-only, and only the member's own tenant. `tenant_path` leads from the
    model to its tenant's id."""

    tenant_path = "tenant_id"
    list_per_page = 50

    def get_queryset(self, request) -> QuerySet:
        queryset = super().get_queryset(request)
        member = request_membership(request)
        if member is not None:
            return queryset.filter(**{self.tenant_path: member.tenant_id})
        # Platform staff without a tenant see every tenant; anyone else sees nothing.
        return queryset if request.user.is_superuser else queryset.none()

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is None:
            # Another tenant's id and a missing id answer the same: nothing leaks.
            raise Http404("No such object.")
        return obj


class ReadOnlyInline(_MemberAccess, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(sandbox=False)  # a replay's sandbox is never listed


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "tenant", "role"]
    list_filter = [("tenant", admin.RelatedOnlyFieldListFilter), "role"]

    def get_queryset(self, request):
        return super().get_queryset(request).filter(tenant__sandbox=False)

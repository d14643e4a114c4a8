from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView

from config.outage import healthz, readyz

api_v1 = [
    path("", include("tenants.apis")),
    path("", include("timeline.apis")),
    path("payroll/", include("payroll.apis")),
    path("expenses/", include("expenses.apis")),
    path("hr/", include("hr.apis")),
    path("", include("workflows.apis")),
    path("", include("approvals.apis")),
    path("", include("agents.apis")),
    path("", include("agents.replay_apis")),
    path("", include("policy.apis")),
    path("", include("console.apis")),
]

urlpatterns = [
    # For a load balancer: liveness and readiness (config/outage.py).
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name no icon (the API's JSON, the admin).
    path("favicon.ico", RedirectView.as_view(url=static("keel/favicon.svg"), permanent=True)),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("payroll/", include("payroll.urls")),
    path("expenses/", include("expenses.urls")),
    path("hiring/", include("hr.urls")),
    path("", include("console.urls")),
    path("", include("tenants.urls")),
]

# One error contract (config.api): a problem under /api/, Keel's page elsewhere; none of
# them reads the request's body, so none can raise again on the body that failed.
handler400 = "config.api.bad_request"
handler403 = "config.api.permission_denied"
handler404 = "config.api.api_not_found"
handler500 = "config.api.api_server_error"

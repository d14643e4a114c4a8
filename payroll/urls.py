from django.urls import path

from . import views

urlpatterns = [
    path("", views.payroll_home, name="payroll-home"),
    path("templates/", views.template_catalog, name="payroll-templates"),
    path("groups/<int:group_id>/", views.group_detail, name="payroll-group"),
    path("employees/<int:employee_id>/", views.employee_detail, name="payroll-employee"),
    path("employees/<int:employee_id>/payslips/<int:year>/<int:month>/", views.payslip, name="payroll-payslip"),
    path("rules/", views.city_rules_page, name="payroll-rules"),
    path("rules/periods/<int:period_id>/", views.city_rule_period_change, name="payroll-rules-period"),
    path("snapshots/", views.snapshot_take, name="payroll-snapshot-take"),
    path("snapshots/<int:snapshot_id>/", views.snapshot_detail, name="payroll-snapshot"),
    path("snapshots/<int:snapshot_id>/restore/", views.snapshot_restore_request, name="payroll-snapshot-restore"),
]

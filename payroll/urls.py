from django.urls import path

from . import month_data_views, month_views, views

urlpatterns = [
    path("", views.payroll_home, name="payroll-home"),
    path("templates/", views.template_catalog, name="payroll-templates"),
    path("groups/<int:group_id>/", views.group_detail, name="payroll-group"),
    path("groups/<int:group_id>/inputs/", month_data_views.group_inputs, name="payroll-group-inputs"),
    path("attendance/", month_data_views.attendance_rules_page, name="payroll-attendance"),
    path("year-openings/", month_data_views.year_openings_page, name="payroll-year-openings"),
    path("employees/identities/", month_data_views.employee_identities_upload, name="payroll-employee-identities"),
    path("employees/<int:employee_id>/", views.employee_detail, name="payroll-employee"),
    path("employees/<int:employee_id>/payslips/<int:year>/<int:month>/", views.payslip, name="payroll-payslip"),
    path("groups/<int:group_id>/months/", month_views.month_start_view, name="payroll-month-start"),
    path("months/<int:month_id>/", month_views.month_page, name="payroll-month"),
    path("months/<int:month_id>/live/", month_views.month_live_fragment, name="payroll-month-live"),
    path("months/<int:month_id>/files/<str:kind>/", month_views.month_file_download, name="payroll-month-file"),
    path("months/<int:month_id>/reopen/", month_views.month_reopen_view, name="payroll-month-reopen"),
    path("months/<int:month_id>/payslips/<int:employee_id>/", month_views.month_payslip,
         name="payroll-month-payslip"),
    path("rules/", views.city_rules_page, name="payroll-rules"),
    path("rules/periods/<int:period_id>/", views.city_rule_period_change, name="payroll-rules-period"),
    path("snapshots/", views.snapshot_take, name="payroll-snapshot-take"),
    path("snapshots/<int:snapshot_id>/", views.snapshot_detail, name="payroll-snapshot"),
    path("snapshots/<int:snapshot_id>/restore/", views.snapshot_restore_request, name="payroll-snapshot-restore"),
]

"""Numbers and dates are read from ASCII digits only, in the API and in the pages: a value
written in other digits is refused naming the field, never read as a number nobody saw."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from expenses.models import ExpenseClaim
from payroll.models import Employee, EmployeePay

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]

CLAIM = {"category": "lodging", "city": "Beijing", "start_date": "2026-11-16", "nights": 2, "amount": "1400"}


def api(username: str) -> Client:
    response = Client().post("/api/v1/auth/token/", {"username": username, "password": "keel-demo"},
                             content_type="application/json")
    return Client(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")


@pytest.mark.parametrize("field, value", [
    ("start_date", "１２１２-11-16"),  # fullwidth digits: the year 1212
    ("start_date", "٢٠٢٦-١١-١٦"),  # Arabic-Indic digits: read as 2026-11-16
    ("amount", "١٤٠٠"),
])
def test_a_claim_with_other_digits_is_a_400_naming_the_field_and_files_nothing(field, value):
    response = api("alice").post("/api/v1/expenses/claims/", {**CLAIM, field: value}, content_type="application/json",
                                 HTTP_IDEMPOTENCY_KEY=f"digits-{field}")
    assert response.status_code == 400, response.content
    assert field in response.json()["detail"]
    assert not ExpenseClaim.objects.exists()


def test_the_same_claim_in_ascii_digits_is_filed():
    response = api("alice").post("/api/v1/expenses/claims/", CLAIM, content_type="application/json",
                                 HTTP_IDEMPOTENCY_KEY="ascii")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize("field, value", [("base_salary", "١٢٣٤٥"), ("base_salary", "１２３４５"),
                                          ("effective_from", "２０２６-01-01")])
def test_the_pay_page_refuses_other_digits_and_records_nothing(field, value):
    employee = Employee.objects.filter(tenant__slug="demo", location="Shanghai").order_by("employee_no").first()
    before = EmployeePay.objects.filter(employee=employee).count()
    bob = Client()
    bob.force_login(get_user_model().objects.get(username="bob"))
    first = timezone.localdate().replace(day=1).isoformat()
    response = bob.post(f"/payroll/employees/{employee.id}/", {
        "key": "k-digits", "effective_from": first, "base_salary": "12345", field: value})
    assert response.status_code == 400
    assert "0–9" in response.content.decode()
    assert EmployeePay.objects.filter(employee=employee).count() == before

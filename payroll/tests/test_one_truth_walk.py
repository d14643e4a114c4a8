"""Every template × every city with rules: the approval card's items, the trial API's, the
group's own trial and the payslip's are the same items with the same formula, base, rate and
amount (one evaluator behind all four)."""
import json
from types import SimpleNamespace
from decimal import Decimal as D

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from payroll.agent import previews
from payroll.records import rules, services
from payroll.records.services import imports
from payroll.models import Employee, EmployeePay, PayrollGroup, PayrollTemplate
from tests.payroll import actor_for, api
from payroll.records.trial import payslip_of, trial_applies

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def lines(items) -> list[tuple]:
    """Items compared as values: the API writes rates as 0.090000, the receipts as 0.09."""
    def dec(value):
        return None if value is None else D(str(value))
    return [(i["code"], i["formula"], dec(i["base"]), dec(i["rate"]), dec(i["amount"])) if isinstance(i, dict) else
            (i.code, i.formula, i.base, i.rate, i.amount) for i in items]


def test_the_card_the_trial_api_the_group_and_the_payslip_show_the_same_items_for_every_template_and_city(
        monkeypatch):
    # Fifty-odd imports by one approver: the approval matrix's limits are not what this walks.
    monkeypatch.setattr(imports, "approval_route", lambda **_: SimpleNamespace(over_limit=False, reason=""))
    bob = actor_for("bob")
    employee = Employee.objects.filter(tenant_id=bob.tenant_id, location="Shanghai").order_by("employee_no").first()
    EmployeePay.objects.create(employee=employee, effective_from=timezone.localdate().replace(month=1, day=1),
                               base_salary=D("23456.78"), allowances={"岗位津贴": "500"},
                               special_additional_deductions=D("1000"), source="test")
    year = timezone.localdate().year
    page = Client()
    page.force_login(User.objects.get(username="alice"))
    templates = [t for t in PayrollTemplate.objects.order_by("code") if trial_applies(t.region)
                 and t.code != "cn-sh-legacy-grade-2015"]
    cities = [key for key in rules.rules_all() if key != rules.NATIONWIDE]
    assert len(templates) >= 6 and {"shanghai", "hangzhou", "chengdu"} <= set(cities)
    for n, template in enumerate(templates):
        for city in cities:
            name = rules.rules_all()[city].name
            params = {"employee_ids": [str(employee.id)], "request": f"payroll for {name}",
                      "requirements": {"region": "CN-X", "city": {"en": name}}}
            card = previews.import_trial(tenant_id=bob.tenant_id, template_id=template.id, params=params)
            card_items = card["samples"][0]["items"]

            response = api("alice").post("/api/v1/payroll/trial/", json.dumps({
                "city": city, "months": 1, "template_code": template.code, "employees": [{
                    "employee_no": employee.employee_no, "base_salary": "23456.78", "allowances": {"岗位津贴": "500"},
                    "special_additional_deductions": "1000"}]}), content_type="application/json")
            assert response.status_code == 200, response.content
            api_items = response.json()["employees"][0]["months"][0]["items"]

            receipt = services.template_import(actor=bob, template_id=template.id, group_name=f"G {n} {city}",
                                               idempotency_key=f"walk-{n}-{city}", city=city)
            group = PayrollGroup.objects.get(id=receipt.body["group_id"])
            Employee.objects.filter(id=employee.id).update(group=group)
            employee.refresh_from_db()
            group_trial = api("alice").get(f"/api/v1/payroll/groups/{group.id}/trial/?months=1").json()
            slip = payslip_of(employee, year, 1)["result"]

            assert lines(card_items) == lines(api_items) == lines(group_trial["employees"][0]["months"][0]["items"]) \
                == lines(slip.items), (template.code, city)
            medical = next((i for i in slip.items if i.code == "medical_er"), None)
            if medical is not None:
                rule = next(r for r in rules.city_rules(city, timezone.localdate().replace(month=1, day=1))
                            .contributions if r.kind == "medical")
                assert medical.rate == rule.employer_rate, (template.code, city)
            html = page.get(f"/payroll/employees/{employee.id}/payslips/{year}/1/").content.decode()
            for item in slip.items:
                assert f'data-item="{item.code}"' in html

"""What Keel says about the template agrees with the catalog and with the run:
after alice accepts the template Keel offered for a Shenzhen group, Keel never says there is no
Shenzhen template (there are two; neither fits the request), and "which template is it using?"
is answered with the template the run took, not a list of the catalog."""
import pytest

from agents.orchestrator import message_post
from timeline.services import conversation_create
from workflows.models import Run, StateCoordinate
from payroll.models import PayrollTemplate
from tests.helpers import drive, membership

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("builtin_llm", "demo")]


@pytest.mark.parametrize("ask, accept, which, no_template, local", [
    ("Set up a payroll group for our Shenzhen team paid twice a month with commission", "the first one",
     "which template is it using?", "There is no Shenzhen template", "Shenzhen monthly salaried staff"),
    ("给深圳的销售团队建一个半月发薪、有提成的工资组", "第一个", "用的是哪个模板？", "没有深圳的模板", "深圳月薪员工"),
])
def test_after_accepting_the_offered_template_keel_says_what_is_true_of_it(ask, accept, which, no_template, local):
    alice = membership("alice")
    conv = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id)
    run = drive(Run.objects.get(id=int(message_post(membership=alice, conversation_id=conv.id, text=ask)["run_id"])))
    assert run.status == "awaiting_input"
    accepted = message_post(membership=alice, conversation_id=conv.id, text=accept)["reply"]
    run = drive(Run.objects.get(id=run.id))
    used = PayrollTemplate.objects.get(id=int(StateCoordinate.objects.filter(run=run, key="template_id")
                                              .order_by("-plan_version").first().value))
    assert (used.name_zh if ask[0] > "~" else used.name) in accepted
    assert no_template not in accepted and local in accepted, accepted
    answer = message_post(membership=alice, conversation_id=conv.id, text=which)["reply"]
    assert (used.name_zh if ask[0] > "~" else used.name) in answer and no_template not in answer, answer
    assert "templates fit" not in answer and "个模板符合" not in answer, answer

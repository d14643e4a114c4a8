"""The engine's flows in the embedded default, as `make run` serves them: PostgreSQL from the
wheel, the worker and the channel layer inside the server process."""
import pytest

from tests.integration.payroll_runs import FAST, groups_named, pending_approval, start_run
from tests.support import Api, keel_start, keel_stop


@pytest.fixture
def embedded():
    keel = keel_start("embedded", FAST)
    yield keel
    keel_stop(keel)


def test_the_same_flows_work_in_the_embedded_default(embedded):
    alice, bob = Api(embedded.base_url, "alice"), Api(embedded.base_url, "bob")
    run = start_run(alice, group_name="Embedded")
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    bob.post(f"/api/v1/approvals/{pending_approval(bob, run['id'])['id']}/approve/")
    assert alice.wait_for_run(run["id"], {"completed", "failed"})["status"] == "completed"
    legacy = start_run(alice, template_code="cn-sh-legacy-grade-2015", group_name="Embedded Legacy")
    alice.wait_for_run(legacy["id"], {"awaiting_approval"})
    bob.post(f"/api/v1/approvals/{pending_approval(bob, legacy['id'])['id']}/approve/")
    assert alice.wait_for_run(legacy["id"], {"rolled_back", "failed"})["status"] == "rolled_back"
    assert groups_named(embedded, "Embedded") == 1 and groups_named(embedded, "Embedded Legacy") == 0

"""In the browser: an import that fails its verification is undone, and alice sees on
the run page why the plan changed — which steps were kept, removed and added, and the template
tried next — and then the run completing with it."""
import pytest
from playwright.sync_api import expect

from tests.support import Api, log_in, screenshot

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


# The first template's import is verified one item short, for this run only.
pytestmark = pytest.mark.keel(
    "embedded", {"KEEL_FAULTS": "verify_import.item_unseen#Browser Replan+cn-sales-commission=on"})


def approve(base_url: str, run_id: str) -> None:
    bob = Api(base_url, "bob")
    pending = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run_id]
    assert len(pending) == 1, pending
    assert bob.post(f"/api/v1/approvals/{pending[0]['id']}/approve/", {"comment": "ok"})[0] == 200


def test_alice_sees_the_failed_verification_replanned_with_the_next_best_template(keel, new_page):
    alice = Api(keel.base_url, "alice")
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                               "params": {"request": REQUEST, "group_name": "Browser Replan"}})
    assert status == 201, run
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    approve(keel.base_url, run["id"])

    page = new_page()
    log_in(page, keel.base_url, "alice")
    page.goto(f"{keel.base_url}/runs/{run['id']}/")
    diff = page.get_by_test_id("plan-diff-2")
    for _ in range(60):  # the undo and the replan run on the embedded worker
        if diff.count():
            break
        page.wait_for_timeout(500)
        page.reload()
    expect(diff).to_contain_text("verification failed: every template item is in the group; "
                                 "trying template Shanghai monthly salaried staff")
    expect(diff).to_contain_text("kept: interpret, snapshot")
    expect(diff).to_contain_text("removed: match (completed), import (completed), verify (failed), "
                                 "trial (pending), restore (completed)")
    expect(diff).to_contain_text("added: match, import, verify, trial, restore")
    expect(page.get_by_test_id("run-status")).to_have_text("Awaiting Approval")
    screenshot(page, "run-verify-replanned")

    approve(keel.base_url, run["id"])
    assert alice.wait_for_run(run["id"], {"completed", "rolled_back", "failed"})["status"] == "completed"
    page.reload()
    expect(page.get_by_test_id("run-status")).to_have_text("Completed")
    expect(page.get_by_test_id("plan-diff-2")).to_be_visible()

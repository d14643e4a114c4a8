"""A developer replays a recorded run from the developer timeline, and the
developer view shows the interpretation consumed by the match."""
from playwright.sync_api import expect

from tests.browser.test_console import approve
from tests.browser.test_timeline import run_in_new_conversation
from tests.support import Api, log_in, screenshot


def test_dora_replays_a_completed_run_and_reads_identical(keel, new_page):
    conversation_id, run_id = run_in_new_conversation(keel.base_url, "Replay Sales")
    alice = Api(keel.base_url, "alice")
    alice.wait_for_run(run_id, {"awaiting_approval"})
    approve(keel.base_url, run_id)
    alice.wait_for_run(run_id, {"completed"})
    groups_before = Api(keel.base_url, "dora").get("/api/v1/payroll/groups/")["results"]

    page = new_page()
    log_in(page, keel.base_url, "dora")
    page.goto(f"{keel.base_url}/conversations/{conversation_id}/timeline/?view=developer")
    # The interpretation is consumed by the match (no more "not consumed yet").
    expect(page.locator('[data-coordinate="requirements"] td').nth(3)).to_contain_text("match_salary_template")
    page.get_by_test_id(f"replay-{run_id}").click()
    verdict = page.get_by_test_id(f"replay-result-{run_id}")
    expect(verdict).to_contain_text("Identical", timeout=30000)
    expect(verdict).to_contain_text("in sandbox replay-")
    expect(verdict).to_contain_text("deleted once compared")
    screenshot(page, "timeline-replay")
    # Nothing changed in the tenant.
    assert Api(keel.base_url, "dora").get("/api/v1/payroll/groups/")["results"] == groups_before

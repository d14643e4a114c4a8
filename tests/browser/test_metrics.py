"""The metrics page after a real run through the embedded server's worker."""
from playwright.sync_api import expect

from tests.support import Api, log_in, screenshot


def test_dora_sees_the_figures_of_a_completed_run(keel, new_page):
    alice, bob = Api(keel.base_url, "alice"), Api(keel.base_url, "bob")
    status, run = alice.post("/api/v1/runs/", {
        "blueprint": "payroll_group_setup",
        "params": {"request": "set up a monthly payroll group for our Shanghai sales team with commission",
                   "group_name": "Shanghai Sales"}})
    assert status == 201, run
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    approval = next(a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run["id"])
    status, decided = bob.post(f"/api/v1/approvals/{approval['id']}/approve/", {"comment": "looks right"})
    assert status == 200, decided
    alice.wait_for_run(run["id"], {"completed"})

    page = new_page()
    log_in(page, keel.base_url, "dora")
    page.get_by_role("link", name="Metrics").click()
    expect(page.get_by_role("heading", name="Validation metrics")).to_be_visible()
    expect(page.get_by_test_id("metrics-runs")).to_have_text("1 run")
    expect(page.get_by_test_id("value-success_rate")).to_have_text("100%")
    expect(page.get_by_test_id("fraction-success_rate")).to_have_text("1 of 1 finished run")
    expect(page.get_by_test_id("fraction-approval_resumes")).to_have_text("1 of 1 approved step resumed")
    # 5 of 6: the interpretation's receipt is its own call, not a system of record's.
    expect(page.get_by_test_id("value-receipt_coverage")).to_have_text("83.3%")
    expect(page.get_by_test_id("fraction-crash_recoveries")).to_have_text("no worker crashed in this period")
    expect(page.get_by_test_id("value-checkpoint_consistency")).to_have_text("100%")
    for key in ("skipped_executions", "missed_executions", "duplicate_executions", "duplicate_side_effects",
                "provenance_blocks"):
        expect(page.get_by_test_id(f"value-{key}")).to_have_text("0")
    # The day's bar is drawn in the completed colour, and the success line has its point.
    expect(page.get_by_test_id("plot-runs").locator("rect")).to_have_count(1)
    expect(page.get_by_test_id("plot-success").locator("circle")).to_have_count(1)
    screenshot(page, "metrics")

    # The same figures for a script, and none of them for the other tenant.
    assert Api(keel.base_url, "dora").get("/api/v1/metrics/")["runs"] == 1
    assert Api(keel.base_url, "oscar").get("/api/v1/metrics/")["runs"] == 0

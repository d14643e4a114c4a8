"""Cancel and retry from the browser: on the run page and in the console's run panel.
Alice (who started the run) cancels one; bob (an approver) retries a blocked one;
dora (a developer, not the starter) sees no buttons."""
import pytest
from playwright.sync_api import expect

from tests.support import Api, log_in, logged_in, screenshot

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"


def start_run(base_url: str, group_name: str) -> dict:
    alice = Api(base_url, "alice")
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                               "params": {"request": REQUEST, "group_name": group_name}})
    assert status == 201, run
    return alice.wait_for_run(run["id"], {"awaiting_approval"})


def test_alice_cancels_her_waiting_run_from_the_run_page(keel, new_page):
    run = start_run(keel.base_url, "Browser Cancel")
    page = new_page()
    log_in(page, keel.base_url, "alice")
    page.goto(f"{keel.base_url}/runs/{run['id']}/")
    expect(page.get_by_test_id("run-status")).to_have_text("Awaiting Approval")
    expect(page.get_by_test_id("run-retry")).to_have_count(0)  # nothing failed: nothing to retry
    page.get_by_test_id("run-control-reason").fill("the team was merged")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("run-cancel").click()
    expect(page.get_by_test_id("run-status")).to_have_text("Cancelled", timeout=15000)
    expect(page.get_by_test_id("run-reason")).to_contain_text("cancelled by alice: the team was merged")
    expect(page.get_by_test_id("run-control")).to_have_count(0)
    # The run says who cancelled it and when; its steps read Cancelled, not Blocked,
    # here, in the runs grid and on the timeline, in English and in Chinese.
    expect(page.get_by_test_id("run-cancelled")).to_contain_text("Cancelled by Alice Chen at")
    expect(page.locator('.dag-node[data-node="import"]')).to_have_attribute("data-status", "cancelled")
    expect(page.get_by_test_id("run-nodes")).not_to_contain_text("Blocked")
    screenshot(page, "run-cancelled")
    page.goto(f"{keel.base_url}/runs/")
    row = page.locator(f'[data-run="{run["id"]}"]').first
    expect(row.locator('.grid-cell[data-status="cancelled"]').first).to_be_attached()
    expect(row.locator('.grid-cell[data-status="blocked"]')).to_have_count(0)
    page.goto(f"{keel.base_url}/conversations/{run['conversation']}/timeline/")
    expect(page.locator("main")).to_contain_text("Cancelled")
    zh, chinese = logged_in(page.context.browser, keel.base_url, "alice", locale="zh-CN", size=(390, 844))
    try:
        chinese.goto(f"{keel.base_url}/runs/{run['id']}/")
        expect(chinese.get_by_test_id("run-cancelled")).to_contain_text("Alice Chen 于")
        expect(chinese.get_by_test_id("run-cancelled")).to_contain_text("取消了此运行")
        expect(chinese.get_by_test_id("run-nodes")).to_contain_text("已取消")
        screenshot(chinese, "run-cancelled-zh-390")
    finally:
        zh.close()
    events = Api(keel.base_url, "alice").get(f"/api/v1/conversations/{run['conversation']}/events/?after=0")
    assert any(e["type"] == "run.cancel_requested" and e["data"]["by"] == "alice" for e in events["results"])


def test_bob_retries_a_rejected_run_from_the_console_panel_and_dora_sees_no_buttons(keel, new_page):
    run = start_run(keel.base_url, "Browser Retry")
    bob = Api(keel.base_url, "bob")
    approval = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run["id"]][0]
    bob.post(f"/api/v1/approvals/{approval['id']}/reject/", {"comment": "wait for the budget"})
    Api(keel.base_url, "alice").wait_for_run(run["id"], {"blocked"})

    dora = new_page()
    log_in(dora, keel.base_url, "dora")
    dora.goto(f"{keel.base_url}/runs/{run['id']}/")
    expect(dora.get_by_test_id("run-status")).to_have_text("Blocked")
    expect(dora.get_by_test_id("run-control")).to_have_count(0)

    page = new_page()
    log_in(page, keel.base_url, "bob")
    page.goto(f"{keel.base_url}/conversations/{run['conversation']}/")
    expect(page.get_by_test_id("run-status")).to_have_text("Blocked")
    page.get_by_test_id("run-control-reason").fill("budget agreed")
    page.get_by_test_id("run-retry").click()
    expect(page.get_by_test_id("run-status")).to_have_text("Awaiting Approval", timeout=15000)
    # The meta line follows the run: retried by whom, and no "finished" while it waits again.
    expect(page.get_by_test_id("run-retried")).to_contain_text("retried by Bob Li at")
    expect(page.get_by_test_id("run-meta")).not_to_contain_text("finished")
    screenshot(page, "run-retried")
    events = bob.get(f"/api/v1/conversations/{run['conversation']}/events/?after=0")["results"]
    retried = [e["data"] for e in events if e["type"] == "run.retried"]
    assert retried and retried[0]["by"] == "bob" and retried[0]["reason"] == "budget agreed"


@pytest.mark.parametrize("lang,size,status,cancelled", [
    ("en-US", (1366, 900), "Blocked", "Cancelled"),
    ("zh-CN", (390, 844), "受阻", "已取消"),
])
def test_a_reason_half_typed_while_the_run_changes_stays_typed(keel, browser, lang, size, status, cancelled):
    """The run panel refreshes live as the run moves; what alice is typing in it is hers: bob
    rejects the step while she types her reason, the panel shows the run blocked, and her words
    are still there for her to finish and send."""
    name = f"Half Typed {lang}"
    run = start_run(keel.base_url, name)
    context, page = logged_in(browser, keel.base_url, "alice", locale=lang, size=size)
    try:
        page.goto(f"{keel.base_url}/runs/{run['id']}/")
        reason = page.get_by_test_id("run-control-reason")
        reason.press_sequentially("the team was")

        # Bob rejects meanwhile, elsewhere (the desk's own reject has its tests): alice's page only
        # hears of it through its live events.
        bob = Api(keel.base_url, "bob")
        approval = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run["id"]][0]
        assert bob.post(f"/api/v1/approvals/{approval['id']}/reject/", {"comment": "not this quarter"})[0] == 200

        expect(page.get_by_test_id("run-status")).to_have_text(status, timeout=15000)
        expect(reason).to_have_value("the team was")
        reason.press_sequentially(" merged")
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_test_id("run-cancel").click()
        expect(page.get_by_test_id("run-status")).to_have_text(cancelled, timeout=15000)
        expect(page.get_by_test_id("run-cancelled")).to_contain_text("the team was merged")
        screenshot(page, f"run-reason-kept-{lang}")
    finally:
        context.close()

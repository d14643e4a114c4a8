"""The developer timeline, and a console that loses its websocket mid-run and
comes back without missing or repeating an event."""
import json

from playwright.sync_api import expect

from tests.browser.test_console import approve, capture_websockets
from tests.support import Api, log_in, screenshot

REQUEST = "Set up a monthly payroll group for our Shanghai sales team with commission"


def run_in_new_conversation(base_url: str, group_name: str) -> tuple[str, str]:
    alice = Api(base_url, "alice")
    _, conversation = alice.post("/api/v1/conversations/", {"title": f"{group_name} payroll"})
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "conversation": conversation["id"],
                                              "params": {"request": REQUEST, "group_name": group_name}})
    assert status == 201, run
    return conversation["id"], run["id"]


def test_dora_sees_which_call_produced_the_template_id(keel, new_page):
    conversation_id, run_id = run_in_new_conversation(keel.base_url, "Beijing Sales")
    alice = Api(keel.base_url, "alice")
    alice.wait_for_run(run_id, {"awaiting_approval"})
    approve(keel.base_url, run_id)
    run = alice.wait_for_run(run_id, {"completed"})
    template = next(c for c in run["state"] if c["key"] == "template_id")

    page = new_page()
    log_in(page, keel.base_url, "dora")
    page.goto(f"{keel.base_url}/conversations/{conversation_id}/timeline/?view=developer")
    produced = page.get_by_test_id("produced-by-template_id")
    expect(produced).to_contain_text(template["producer"])
    expect(produced).to_contain_text(template["call_id"])
    consumers = page.locator('[data-coordinate="template_id"] td').nth(3)
    expect(consumers).to_contain_text("import_template")
    expect(page.get_by_test_id("waits")).to_contain_text("approved")
    expect(page.get_by_test_id("totals")).to_contain_text("tokens")

    # A payload is loaded only when asked for.
    model_row = page.locator('.frame-row[data-frame-kind="model_call"]').first
    expect(model_row.get_by_test_id("payload")).to_have_count(0)
    model_row.get_by_test_id("payload-button").click()
    expect(model_row.get_by_test_id("payload")).to_contain_text("Extract payroll-group requirements")
    screenshot(page, "timeline-developer")

    # Filters narrow the frames.
    page.get_by_label("Kind").select_option("tool_call")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator('.frame-row[data-frame-kind="model_call"]')).to_have_count(0)
    expect(page.locator('.frame-row[data-frame-kind="tool_call"]').first).to_be_visible()


def test_a_dropped_websocket_resumes_and_every_sequence_number_arrives_once(keel, new_page):
    conversation_id, run_id = run_in_new_conversation(keel.base_url, "Shenzhen Sales")
    page = new_page()
    sockets = capture_websockets(page)
    log_in(page, keel.base_url, "alice")
    page.goto(f"{keel.base_url}/conversations/{conversation_id}/")
    first_seq = int(page.get_by_test_id("conversation").get_attribute("data-last-seq"))
    expect(page.locator('.dag-node[data-node="import"]')).to_have_attribute("data-status", "awaiting_approval",
                                                                             timeout=30000)

    page.evaluate("window.keelConsole.drop()")  # the connection goes down mid-run…
    expect(page.get_by_test_id("live-indicator")).to_have_text("reconnecting…")
    approve(keel.base_url, run_id)  # …while the run moves on
    Api(keel.base_url, "alice").wait_for_run(run_id, {"completed"})
    expect(page.get_by_test_id("run-status")).not_to_have_text("Completed")  # nothing arrived while down

    page.evaluate("window.keelConsole.reconnect()")
    expect(page.get_by_test_id("run-status")).to_have_text("Completed", timeout=30000)

    last_seq = Api(keel.base_url, "alice").get(
        f"/api/v1/conversations/{conversation_id}/events/?after=0")["last_seq"]
    applied = page.evaluate("window.keelConsole.state.seqs")
    assert applied == list(range(first_seq + 1, last_seq + 1))
    # On the wire too: across both connections, each number was sent exactly once.
    sent = [json.loads(f)["event"]["seq"] for f in sockets if '"timeline.event"' in f]
    assert sorted(sent) == list(range(first_seq + 1, last_seq + 1))


def test_a_waiting_approval_pulses_unless_the_reader_asked_for_less_motion(keel, browser):
    """The open wait on the timeline pulses; a reader whose system asks for reduced motion
    sees it still (keel.css), and so does every browser test (tests/fixtures.py)."""
    conversation_id, run_id = run_in_new_conversation(keel.base_url, "Motion Sales")
    Api(keel.base_url, "alice").wait_for_run(run_id, {"awaiting_approval"})
    animation = {}
    for motion in ("no-preference", "reduce"):
        context = browser.new_context(viewport={"width": 1366, "height": 860}, reduced_motion=motion)
        page = context.new_page()
        log_in(page, keel.base_url, "dora")
        page.goto(f"{keel.base_url}/conversations/{conversation_id}/timeline/?view=developer")
        open_wait = page.locator(".wait-open").first
        expect(open_wait).to_be_attached()
        animation[motion] = open_wait.evaluate("el => getComputedStyle(el).animationName")
        context.close()
    assert animation == {"no-preference": "keel-pulse", "reduce": "none"}
    approve(keel.base_url, run_id)  # leaves no run waiting for the module's next test

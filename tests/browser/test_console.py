"""The live console: alice asks, watches the run reach the approval gate and
finish after bob approves, all without a reload; nothing developer-only ever
reaches her page, her JSON or her websocket."""
import json

from playwright.sync_api import expect

from tests.support import Api, log_in, screenshot

PROMPT = "Extract payroll-group requirements as JSON"  # interpret_request's system prompt
REQUEST = "Set up a monthly payroll group for our Shanghai sales team with commission"


def capture_websockets(page) -> list[str]:
    frames: list[str] = []

    def on_socket(ws):
        ws.on("framereceived", lambda payload: frames.append(payload if isinstance(payload, str) else payload.decode()))

    page.on("websocket", on_socket)
    return frames


def start_conversation(page, base_url: str, title: str) -> str:
    page.goto(base_url + "/console/")
    page.get_by_placeholder("Title (optional)").fill(title)
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_test_id("live-indicator")).to_have_text("● live")
    return page.get_by_test_id("conversation").get_attribute("data-conversation-id")


def ask_for_a_run(page, base_url: str, conversation_id: str, group_name: str) -> str:
    """Type the request into the console; if this server has no conversation
    service yet, start the run through the API in the same conversation."""
    page.get_by_label("Message").fill(f"{REQUEST}. Call the group {group_name}.")
    page.get_by_test_id("send").click()
    panel = page.locator("#run-panel [data-run-id]")
    try:
        expect(panel).not_to_have_attribute("data-run-id", "", timeout=20000)
    except AssertionError:
        status, run = Api(base_url, "alice").post("/api/v1/runs/", {
            "blueprint": "payroll_group_setup", "conversation": conversation_id,
            "params": {"request": REQUEST, "group_name": group_name}})
        assert status == 201, run
    return panel.get_attribute("data-run-id")


def approve(base_url: str, run_id: str) -> None:
    bob = Api(base_url, "bob")
    pending = bob.get("/api/v1/approvals/?status=pending")
    rows = pending["results"] if isinstance(pending, dict) else pending
    approval = next(a for a in rows if str(a.get("run")) == run_id or str(a.get("run_id")) == run_id)
    status, body = bob.post(f"/api/v1/approvals/{approval['id']}/approve/", {"comment": "looks right"})
    assert status == 200, body


def test_alice_watches_her_run_wait_for_approval_and_complete_without_a_reload(keel, new_page):
    page = new_page()
    sockets = capture_websockets(page)
    log_in(page, keel.base_url, "alice")
    conversation_id = start_conversation(page, keel.base_url, "Shanghai Sales payroll")
    page.evaluate("window.__sameDocument = true")

    run_id = ask_for_a_run(page, keel.base_url, conversation_id, "Shanghai Sales")
    import_node = page.locator('.dag-node[data-node="import"]')
    expect(import_node).to_have_attribute("data-status", "awaiting_approval", timeout=30000)
    expect(page.get_by_test_id("waiting-on")).to_contain_text("an approver (ada, bob)")
    expect(page.get_by_test_id("progress")).to_contain_text("3 of 6 steps")
    screenshot(page, "console-awaiting-approval")

    approve(keel.base_url, run_id)  # bob, in his own session
    expect(page.get_by_test_id("run-status")).to_have_text("Completed", timeout=30000)
    expect(page.locator('.dag-node[data-node="verify"]')).to_have_attribute("data-status", "completed")
    expect(page.get_by_test_id("progress")).to_contain_text("6 of 6 steps")
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    screenshot(page, "console")

    # Nothing developer-only reached alice: not the page, not her JSON, not her websocket.
    assert any('"timeline.event"' in f for f in sockets)
    assert PROMPT not in page.content()
    assert all(PROMPT not in f for f in sockets)
    alice = Api(keel.base_url, "alice")
    run = alice.get(f"/api/v1/runs/{run_id}/")
    texts = [json.dumps(run), json.dumps(alice.get(f"/api/v1/conversations/{conversation_id}/events/?after=0"))]
    activities = {e["data"].get("activity") for e in alice.get(
        f"/api/v1/conversations/{conversation_id}/events/?after=0")["results"] if e["data"].get("activity")}
    for activity_id in activities:
        texts.append(json.dumps(alice.get(f"/api/v1/activities/{activity_id}/frames/")))
    assert all(PROMPT not in t for t in texts)

    page.goto(f"{keel.base_url}/console/")
    expect(page.get_by_test_id("conversations")).to_contain_text("Shanghai Sales payroll")
    screenshot(page, "console-list")
    page.goto(f"{keel.base_url}/runs/{run_id}/")
    expect(page.get_by_test_id("plan-versions")).to_contain_text("v1")
    screenshot(page, "run-page")

    page.goto(f"{keel.base_url}/conversations/{conversation_id}/timeline/")
    expect(page.get_by_test_id("activity-tree")).to_contain_text("Understood the request")
    expect(page.get_by_test_id("waits")).to_contain_text("Approval wait")
    assert PROMPT not in page.content()
    screenshot(page, "timeline-business")

    refused = page.goto(f"{keel.base_url}/conversations/{conversation_id}/timeline/?view=developer")
    assert refused.status == 403


def test_oscar_gets_404_for_alices_conversation(keel, new_page):
    alice = Api(keel.base_url, "alice")
    status, body = alice.post("/api/v1/conversations/", {"title": "Private"})
    page = new_page()
    log_in(page, keel.base_url, "oscar")
    assert page.goto(f"{keel.base_url}/conversations/{body['id']}/").status == 404
    assert page.goto(f"{keel.base_url}/conversations/{body['id']}/timeline/").status == 404

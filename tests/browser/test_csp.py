"""Every main page satisfies its own Content-Security-Policy in Chromium: no
inline script, style or handler that the policy (no 'unsafe-inline') blocks.

Violations are collected two ways: the console's "Content Security Policy"
messages, and `securitypolicyviolation` events recorded by a listener that is
installed before any page script runs."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_console import approve
from tests.support import Api, log_in

REQUEST = "Set up a monthly payroll group for our Shanghai sales team with commission"

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") +
                              " at " + e.sourceFile + ":" + e.lineNumber + " " + (e.sample || ""));
});
"""


@pytest.fixture(scope="module")
def finished_run(keel) -> dict[str, str]:
    """A conversation whose run waited for approval and completed: its pages draw
    the DAG, the waterfall, the approval wait and the metrics plots."""
    alice = Api(keel.base_url, "alice")
    _, conversation = alice.post("/api/v1/conversations/", {"title": "CSP walk"})
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup", "conversation": conversation["id"],
                                              "params": {"request": REQUEST, "group_name": "CSP Sales"}})
    assert status == 201, run
    alice.wait_for_run(run["id"], {"awaiting_approval"})
    approve(keel.base_url, run["id"])
    alice.wait_for_run(run["id"], {"completed"})
    return {"conversation": conversation["id"], "run": run["id"]}


def walk(keel, new_page, username: str, paths: list[str]) -> list[str]:
    page = new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console: {msg.text}")
            if "Content Security Policy" in msg.text else None)
    page.add_init_script(RECORD_VIOLATIONS)
    log_in(page, keel.base_url, username)
    expect(page.get_by_test_id("who")).to_be_visible()
    for path in paths:
        response = page.goto(keel.base_url + path)
        assert response is not None and response.ok, (path, response and response.status)
        assert "'unsafe-inline'" not in (response.headers.get("content-security-policy") or "unsafe-inline")
        page.wait_for_load_state("networkidle")
        problems += [f"{path}: {v}" for v in page.evaluate("window.__cspViolations")]
    return problems


def test_the_business_users_pages_raise_no_csp_violation(keel, new_page, finished_run):
    conversation, run = finished_run["conversation"], finished_run["run"]
    assert walk(keel, new_page, "alice", [
        "/", "/console/", f"/conversations/{conversation}/", f"/conversations/{conversation}/timeline/",
        f"/runs/{run}/", "/timeline/", "/payroll/", "/payroll/templates/", "/metrics/", "/password/",
    ]) == []


def test_the_approver_and_developer_pages_raise_no_csp_violation(keel, new_page, finished_run):
    conversation, run = finished_run["conversation"], finished_run["run"]
    assert walk(keel, new_page, "bob", ["/approvals/", f"/approvals/runs/{run}/history/", "/approvals/matrix/"]) == []
    assert walk(keel, new_page, "dora", [f"/conversations/{conversation}/timeline/?view=developer", "/metrics/"]) == []


def test_the_admin_timeline_and_provenance_pages_raise_no_csp_violation(keel, new_page, finished_run):
    """A developer debugs the run in the admin: finds its Activities by the run id,
    opens one (the frames waterfall), then a state coordinate's provenance chain.
    Their layout comes from static/keel/admin.css, not from style="" or <style>."""
    page = new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console: {msg.text}")
            if "Content Security Policy" in msg.text else None)
    page.add_init_script(RECORD_VIOLATIONS)
    log_in(page, keel.base_url, "dora")
    expect(page.get_by_test_id("who")).to_be_visible()

    def seen(where: str) -> None:
        page.wait_for_load_state("networkidle")
        problems.extend(f"{where}: {v}" for v in page.evaluate("window.__cspViolations"))

    page.goto(keel.base_url + "/admin/timeline/activity/")
    page.locator("#searchbar").fill(finished_run["run"])
    page.locator("#searchbar").press("Enter")
    seen("activities of the run")
    page.locator("#result_list tbody th a").first.click()
    waterfall = page.get_by_test_id("frames-waterfall")
    expect(waterfall).to_be_visible()
    bar = waterfall.locator("svg.keel-bar rect").first
    # The stylesheet loaded and applied: the bar has its colour and the row its layout.
    assert page.evaluate("(r) => getComputedStyle(r).fill", bar.element_handle()) in {
        "rgb(47, 158, 68)", "rgb(47, 111, 222)", "rgb(217, 142, 4)", "rgb(214, 69, 69)"}
    assert waterfall.locator("svg.keel-bar").first.bounding_box()["width"] > 100
    seen("an activity's waterfall")

    page.goto(keel.base_url + "/admin/workflows/statecoordinate/")
    page.locator("#searchbar").fill("template_id")
    page.locator("#searchbar").press("Enter")
    seen("coordinates named template_id")
    page.locator("#result_list tbody th a").first.click()
    chain = page.get_by_test_id("provenance-chain")
    expect(chain).to_be_visible()
    assert page.evaluate("(u) => getComputedStyle(u).marginLeft", chain.locator("ul").first.element_handle()) == "0px"
    seen("a coordinate's provenance chain")

    page.goto(keel.base_url + "/admin/workflows/run/")
    page.locator("#result_list tbody th a").first.click()
    seen("a run in the admin")
    page.goto(keel.base_url + "/admin/workflows/toolcall/")
    page.locator("#result_list tbody th a").first.click()
    seen("a tool call in the admin")
    assert problems == []


def test_the_log_in_page_raises_no_csp_violation(keel, new_page):
    page = new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(keel.base_url + "/login/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("do not match")
    assert problems + page.evaluate("window.__cspViolations") == []


def test_a_blocked_inline_script_would_be_seen(keel, new_page):
    """The probe works: an inline script injected into a Keel page is blocked
    by the policy and shows up in both channels."""
    page = new_page()
    messages: list[str] = []
    page.on("console", lambda msg: messages.append(msg.text) if "Content Security Policy" in msg.text else None)
    page.add_init_script(RECORD_VIOLATIONS)
    page.goto(keel.base_url + "/login/")
    page.evaluate("""() => { const s = document.createElement("script"); s.textContent = "window.__ran = 1";
                             document.body.appendChild(s); }""")
    page.wait_for_timeout(200)
    assert page.evaluate("window.__ran") is None
    assert messages and page.evaluate("window.__cspViolations")

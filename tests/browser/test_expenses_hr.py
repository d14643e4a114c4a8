"""In a real browser against the embedded server: alice files an expense claim in
the chat and bob approves it on his desk; ada approves a TAN and watches the matching run
the approval event started, live."""
from playwright.sync_api import expect

from tests.support import Api, log_in, screenshot

CLAIM = "Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,800 yuan in total"


def test_alice_files_a_claim_in_the_chat_and_bob_approves_it(keel, new_page):
    page = new_page()
    log_in(page, keel.base_url, "alice")
    page.goto(keel.base_url + "/console/")
    page.get_by_placeholder("Title (optional)").fill("Beijing trip")
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_test_id("live-indicator")).to_have_text("● live")
    page.get_by_label("Message").fill(CLAIM)
    page.get_by_test_id("send").click()
    expect(page.get_by_text("900.00 a night").first).to_be_visible(timeout=20000)
    panel = page.locator("#run-panel [data-run-id]")
    expect(panel).not_to_have_attribute("data-run-id", "", timeout=20000)
    run_id = panel.get_attribute("data-run-id")
    expect(page.locator('.dag-node[data-node="submit"]')).to_have_attribute("data-status", "awaiting_approval",
                                                                             timeout=30000)
    screenshot(page, "expense-chat-awaiting-approval")

    desk = new_page()
    log_in(desk, keel.base_url, "bob")
    desk.goto(keel.base_url + "/approvals/")
    card = desk.get_by_test_id("approval-card")
    expect(card).to_contain_text("over the limit of 750 yuan per room per night")
    expect(card).to_contain_text("travel-v2")
    expect(card).to_contain_text("Beijing lodging: 750 yuan per room per night.")  # the cited policy line
    screenshot(desk, "expense-approval-card")
    desk.get_by_test_id("approve").click()
    expect(desk.get_by_test_id("toast")).to_contain_text("Approved", timeout=15000)  # held with Undo, then sent

    expect(page.get_by_test_id("run-status")).to_have_text("Completed", timeout=30000)
    claim = Api(keel.base_url, "alice").get("/api/v1/expenses/claims/")["results"][0]
    assert claim["status"] == "submitted" and claim["policy_verdict"] == "over_limit"
    page.goto(f"{keel.base_url}/expenses/claims/{claim['id']}/")
    expect(page.get_by_test_id("claim-status")).to_have_text("Submitted")
    expect(page.get_by_test_id("claim-history")).to_contain_text("under approval")
    page.goto(f"{keel.base_url}/runs/{run_id}/")
    expect(page.locator('.dag-node[data-node="read_result"]')).to_have_attribute("data-status", "completed")


def test_ada_approves_a_tan_and_watches_the_matching_run_live(keel, new_page):
    ada = Api(keel.base_url, "ada")
    tan = next(t for t in ada.get("/api/v1/hr/tans/")["results"] if t["title"] == "Data Analyst")
    page = new_page()
    log_in(page, keel.base_url, "ada")
    page.goto(f"{keel.base_url}/hiring/tans/{tan['id']}/")
    expect(page.get_by_test_id("tan-status")).to_have_text("Draft")
    page.get_by_test_id("approve-tan").click()
    expect(page.get_by_test_id("tan-status")).to_have_text("Approved")
    # the panel follows the supervisor without a reload: event consumed, run started, matches in
    link = page.get_by_test_id("matching-run-link")
    expect(link).to_be_visible(timeout=30000)
    expect(page.get_by_test_id("event")).to_contain_text("started run")
    expect(page.get_by_test_id("match-row")).to_have_count(3, timeout=30000)
    expect(page.get_by_test_id("matches")).to_contain_text("Maria Garcia")
    expect(page.get_by_test_id("matches")).to_contain_text("3 of 3 skills")
    screenshot(page, "hr-tan-matches")
    link.click()
    expect(page.locator('.dag-node[data-node="persist"]')).to_have_attribute("data-status", "completed",
                                                                              timeout=30000)
    expect(page.get_by_test_id("run-status")).to_have_text("Completed")
    screenshot(page, "hr-matching-run")
    run_id = page.url.rstrip("/").rsplit("/", 1)[1]
    run = ada.get(f"/api/v1/runs/{run_id}/")
    conversation = run["conversation"]
    page.goto(f"{keel.base_url}/conversations/{conversation}/timeline/")
    expect(page.get_by_test_id("activity-tree")).to_contain_text("not by a chat message")
    screenshot(page, "hr-matching-timeline")
    page.goto(f"{keel.base_url}/conversations/{conversation}/timeline/?view=developer")
    expect(page.get_by_test_id("activity-tree")).to_contain_text("trigger: hr.tan.approved")


def test_alice_attaches_the_invoice_in_the_chat_and_the_claim_shows_it(keel, new_page, tmp_path):
    pdf = tmp_path / "hotel-invoice.pdf"
    pdf.write_bytes(b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
    page = new_page()
    log_in(page, keel.base_url, "alice")
    page.goto(keel.base_url + "/console/")
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_test_id("live-indicator")).to_have_text("● live")
    message = page.get_by_label("Message")
    message.focus()
    page.keyboard.type("Please file an expense claim: lodging in Beijing, 2 nights from 2026-11-16, 1,400 yuan in total")
    # The attach control is reached with the keyboard, like the rest of the form.
    for _ in range(3):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.getAttribute('data-testid')") == "attach-input":
            break
    assert page.evaluate("document.activeElement.getAttribute('data-testid')") == "attach-input"
    page.locator(":focus").set_input_files(str(pdf))
    expect(page.get_by_test_id("attachment-name")).to_have_text("hotel-invoice.pdf")
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("send")).to_be_focused()
    page.keyboard.press("Enter")
    chat = page.get_by_test_id("chat-messages")
    expect(chat).to_contain_text("The invoice you attached is filed with the claim.", timeout=20000)
    expect(chat).to_contain_text("Attached hotel-invoice.pdf")
    expect(page.get_by_test_id("attachment-name")).to_have_text("Attach a file")
    expect(page.get_by_test_id("run-status")).to_have_text("Completed", timeout=30000)  # 700 a night: within
    expect(page.locator('.dag-node[data-node="upload"]')).to_have_attribute("data-status", "completed")
    screenshot(page, "expense-chat-invoice")

    page.goto(keel.base_url + "/expenses/")
    page.get_by_test_id("claim-row").first.get_by_role("link").click()
    expect(page.get_by_test_id("claim-status")).to_have_text("Submitted")
    invoices = page.get_by_test_id("invoices")
    expect(invoices).to_contain_text("hotel-invoice.pdf")
    expect(invoices).to_contain_text("application/pdf")
    expect(invoices).to_contain_text("sha256")
    screenshot(page, "expense-claim-invoice")


def test_a_file_that_is_no_invoice_is_refused_in_the_chat_and_nothing_is_sent(keel, new_page, tmp_path):
    fake = tmp_path / "invoice.pdf"
    fake.write_text("this is not a PDF at all")
    page = new_page()
    log_in(page, keel.base_url, "alice")
    page.goto(keel.base_url + "/console/")
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_test_id("live-indicator")).to_have_text("● live")
    page.get_by_label("Message").fill(CLAIM)
    page.get_by_test_id("attach-input").set_input_files(str(fake))
    page.get_by_test_id("send").click()
    expect(page.get_by_test_id("chat-status")).to_contain_text("must be a PDF, PNG or JPEG", timeout=20000)
    page.reload()
    expect(page.get_by_test_id("user-message")).to_have_count(0)

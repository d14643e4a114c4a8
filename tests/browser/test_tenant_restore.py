"""The whole-tenant restore in the browser: ada (an admin) takes a snapshot on the payroll
page and, after bob has made a group, asks to restore the tenant; bob sees on his desk
exactly which group goes, approves, and the group is gone."""
from playwright.sync_api import expect

from tests.browser.test_console import approve, ask_for_a_run, start_conversation
from tests.support import Api, log_in, screenshot


def test_ada_asks_to_restore_the_tenant_and_bob_approves_it_on_his_desk(keel, new_page):
    ada = new_page()
    log_in(ada, keel.base_url, "ada")
    ada.goto(keel.base_url + "/payroll/")
    ada.get_by_label("Take a snapshot of the whole tenant, labelled").fill("Before the reorganisation")
    ada.get_by_role("button", name="Take snapshot").click()
    expect(ada.get_by_role("heading", name="Snapshot: Before the reorganisation")).to_be_visible()
    snapshot_url = ada.url

    # Meanwhile bob imports a group by hand (under the matrix's limits: it goes straight through).
    bob_api = Api(keel.base_url, "bob")
    templates = bob_api.get("/api/v1/payroll/templates/")["results"]
    shanghai = next(t for t in templates if t["code"] == "cn-sh-monthly-salaried")
    status, body = bob_api.request("POST", "/api/v1/payroll/groups/", {"template_id": shanghai["id"], "name": "Reorg Trial"},
                                   headers={"Idempotency-Key": "reorg-trial"})
    assert status == 201, body

    ada.goto(snapshot_url)
    expect(ada.get_by_test_id("restore-lines")).to_contain_text("Group “Reorg Trial” is deleted")
    ada.get_by_test_id("restore-ask").click()
    expect(ada.get_by_test_id("run-status")).to_have_text("Awaiting Approval", timeout=15000)
    expect(ada.get_by_text("a second person must approve it")).to_be_visible()

    bob = new_page()
    log_in(bob, keel.base_url, "bob")
    bob.goto(keel.base_url + "/approvals/")
    card = bob.get_by_test_id("approval-card")
    expect(card).to_contain_text("Restore the whole tenant to the snapshot “Before the reorganisation”")
    expect(card.get_by_test_id("diff-lines")).to_contain_text("Group “Reorg Trial” is deleted")
    expect(card.get_by_test_id("requester")).to_contain_text("Ada")
    screenshot(bob, "tenant-restore-card")
    card.get_by_test_id("approve").click()

    expect(ada.get_by_test_id("run-status")).to_have_text("Completed", timeout=20000)
    ada.goto(keel.base_url + "/payroll/")
    expect(ada.get_by_test_id("groups")).not_to_contain_text("Reorg Trial")
    expect(ada.get_by_test_id("groups")).to_contain_text("No payroll groups yet")


def test_alice_is_told_in_her_chat_when_adas_restore_deletes_her_group_and_her_old_link_says_so(keel, new_page):
    """ada's restore deletes the group alice's run set up. Alice's conversation
    tells her (what went, by whose restore, a link to it), and her old "Done" link to the group
    says it was removed by that run instead of answering 404."""
    ada_api = Api(keel.base_url, "ada")
    status, snap = ada_api.request("POST", "/api/v1/payroll/snapshots/", {"label": "Before alice's group"},
                                   headers={"Idempotency-Key": "before-alice"})
    assert status == 201, snap

    alice = new_page()
    log_in(alice, keel.base_url, "alice")
    conversation_id = start_conversation(alice, keel.base_url, "Hangzhou payroll")
    run_id = ask_for_a_run(alice, keel.base_url, conversation_id, "Restore Victim")
    expect(alice.locator('.dag-node[data-node="import"]')).to_have_attribute("data-status", "awaiting_approval",
                                                                             timeout=30000)
    approve(keel.base_url, run_id)
    expect(alice.get_by_test_id("run-status")).to_have_text("Completed", timeout=30000)
    done_link = alice.get_by_test_id("message-link").last
    expect(done_link).to_have_text("Restore Victim ›", timeout=20000)
    group_url = done_link.get_attribute("href")
    alice.goto(keel.base_url + "/payroll/")  # she goes on with her day

    ada = new_page()
    log_in(ada, keel.base_url, "ada")
    ada.goto(f"{keel.base_url}/payroll/snapshots/{snap['snapshot_id']}/")
    expect(ada.get_by_test_id("restore-lines")).to_contain_text("Group “Restore Victim” is deleted")
    ada.get_by_test_id("restore-ask").click()
    expect(ada.get_by_test_id("run-status")).to_have_text("Awaiting Approval", timeout=15000)
    # Ada asked for it: she may not decide it, so she is not among those it waits on.
    expect(ada.get_by_test_id("waiting-on")).to_contain_text("an approver (bob)")
    restore_run = ada.locator("#run-panel [data-run-id]").get_attribute("data-run-id")

    bob = new_page()
    log_in(bob, keel.base_url, "bob")
    bob.goto(keel.base_url + "/approvals/")
    card = bob.get_by_test_id("approval-card")
    expect(card).to_contain_text("Restore the whole tenant")
    card.get_by_test_id("approve").click()
    expect(ada.get_by_test_id("run-status")).to_have_text("Completed", timeout=20000)

    # Alice was away meanwhile; she comes back to her conversation.
    alice.goto(keel.base_url + "/console/")
    alice.get_by_role("link", name="Hangzhou payroll").click()
    chat = alice.get_by_test_id("chat-messages")
    expect(chat).to_contain_text("“Restore Victim” that this conversation set up was deleted by Ada Zhao's "
                                 "whole-tenant restore", timeout=20000)
    expect(alice.get_by_test_id("unread-marker")).to_have_count(1)
    last = alice.get_by_test_id("keel-message").last
    expect(last).to_contain_text("whole-tenant restore")
    expect(last).to_be_in_viewport()  # the chat opens at the newest message
    news_link = last.get_by_test_id("message-link")
    expect(news_link).to_have_text("Open the restore run ›")
    assert news_link.get_attribute("href") == f"/runs/{restore_run}/"
    screenshot(alice, "restore-news-in-alices-chat")

    alice.goto(keel.base_url + group_url)  # her old link
    expect(alice.get_by_test_id("group-removed")).to_contain_text("Ada Zhao's whole-tenant restore deleted it")
    alice.get_by_test_id("removed-by-run").click()
    expect(alice).to_have_url(f"{keel.base_url}/runs/{restore_run}/")
    screenshot(alice, "restore-removed-group-page")

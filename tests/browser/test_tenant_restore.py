"""The whole-tenant restore in the browser: ada (an admin) takes a snapshot on the payroll
page and, after bob has made a group, asks to restore the tenant; bob sees on his desk
exactly which group goes, approves, and the group is gone."""
from playwright.sync_api import expect

from tests.browser.conftest import log_in, screenshot
from tests.support import Api


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

"""Every change a card makes is on the card, in the browser (English on a desktop, Chinese on a
390 px phone): alice's first conversation sets up a group with one of the tenant's employees;
her second attaches a list with that employee and an unknown employee number. Keel asks her for
the unknown employee's salary before any approver sees the card; bob's card then shows the
employee moved out of alice's first group (its name and owner) and the new employee's salary;
after bob approves, alice's first conversation is told who was moved, in her language."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_language_walk import log_in_as
from tests.support import screenshot

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 860}
CASES = {
    "en": {"locale": "en-US", "viewport": DESKTOP, "user": "Username", "password": "Password", "log_in": "Log in",
           "employee": "D-0003", "unknown": "X-9999",
           "first": "CSV Sales EN", "second": "CSV Second EN",
           "ask": "set up a monthly payroll group for our Shanghai sales team, called '{name}'",
           "waiting": re.compile(r"waiting for .*Bob.* to approve it"),
           "salary_asked": "Before I ask the approver, I need a salary",
           "done": "has been created", "approved": "Approved",
           "moved": "Li Na 李娜 (D-0003) was moved from your group “CSV Sales EN” to “CSV Second EN”",
           "owner": "Alice Chen", "new_salary": "new: 12,000.00"},
    "zh": {"locale": "zh-CN", "viewport": PHONE, "user": "用户名", "password": "密码", "log_in": "登录",
           "employee": "D-0004", "unknown": "X-8888",
           "first": "CSV销售一组", "second": "CSV销售中文",
           "ask": "给上海销售团队建一个月薪工资组，叫{name}",
           "waiting": re.compile(r"等待.*批准"),
           "salary_asked": "在请审批人审批之前",
           "done": "已创建", "approved": "已批准",
           "moved": "已从您的薪资组“CSV销售一组”移到了“CSV销售中文”",
           "owner": "Alice Chen", "new_salary": "新设：12,000.00"},
}


@pytest.fixture
def person_at(keel, browser):
    contexts = []

    def open_as(username: str, case: dict):
        context = browser.new_context(viewport=case["viewport"], locale=case["locale"])
        contexts.append(context)
        page = context.new_page()
        log_in_as(page, keel.base_url, username, case["user"], case["password"], case["log_in"])
        return page

    yield open_as
    for context in contexts:
        context.close()


def send(page, case, text):
    page.get_by_label(re.compile("^(消息|Message)$")).fill(text)
    page.get_by_test_id("send").click()


def new_conversation(page, keel, case) -> str:
    page.goto(keel.base_url + "/console/")
    page.get_by_test_id("new-conversation").get_by_role("button").click()
    expect(page.get_by_test_id("live-indicator")).to_have_class(re.compile("live-live"), timeout=15000)
    return keel.base_url + f"/conversations/{page.get_by_test_id('conversation').get_attribute('data-conversation-id')}/"


def ask_with_list(page, keel, case, path, lines: str, name: str):
    """A new conversation: the list attached, the group asked for by name; its chat."""
    path.write_text(lines, encoding="utf-8")
    url = new_conversation(page, keel, case)
    page.get_by_test_id("attach-input").set_input_files(str(path))
    send(page, case, case["ask"].format(name=name))
    return url, page.get_by_test_id("chat-messages")


def approve(bob, keel, case, name):
    bob.goto(keel.base_url + "/approvals/")
    item = bob.get_by_test_id("queue-item").filter(has_text=name).first
    expect(item).to_be_attached(timeout=15000)
    if not item.is_visible():  # a phone folds the queue below the card: open it as a thumb would
        bob.get_by_test_id("queue-summary").click()
    item.click()
    card = bob.get_by_test_id("approval-card")
    expect(card).to_contain_text(name)
    return card


def decide(bob, card, case):
    card.get_by_test_id("approve").click()
    expect(bob.get_by_test_id("toast")).to_contain_text(case["approved"], timeout=15000)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_moved_employee_and_the_unknown_salary_are_on_the_card_and_the_owner_is_told(
        keel, person_at, tmp_path, lang):
    case = CASES[lang]
    alice, bob = person_at("alice", case), person_at("bob", case)

    first_url, chat = ask_with_list(alice, keel, case, tmp_path / "first.csv", f"Employee ID,Name\n{case['employee']},\n",
                                    case["first"])
    expect(chat).to_contain_text(case["waiting"], timeout=30000)
    decide(bob, approve(bob, keel, case, case["first"]), case)
    expect(chat).to_contain_text(case["done"], timeout=30000)

    _, chat = ask_with_list(alice, keel, case, tmp_path / "second.csv",
                            f"工号,姓名\n{case['employee']},\n{case['unknown']},许明\n", case["second"])
    # The salary is asked before the approval: no approver has a card yet.
    expect(chat).to_contain_text(case["salary_asked"], timeout=30000)
    expect(chat).to_contain_text(f"许明 ({case['unknown']})" if lang == "en" else case["unknown"])
    bob.goto(keel.base_url + "/approvals/")
    expect(bob.get_by_test_id("queue-item").filter(has_text=case["second"])).to_have_count(0)
    screenshot(alice, f"card-says-all-salary-asked-{lang}")
    send(alice, case, "12000")
    expect(chat).to_contain_text(case["waiting"], timeout=30000)

    card = approve(bob, keel, case, case["second"])
    moved = card.get_by_test_id("moved-employee")
    expect(moved).to_have_count(1)
    expect(moved).to_contain_text(case["employee"])
    expect(moved).to_contain_text(case["first"])
    expect(moved).to_contain_text(case["owner"])
    pay = card.locator(f'[data-testid="pay-change"][data-key="{case["unknown"]}"]')
    expect(pay).to_contain_text(case["new_salary"])
    expect(card.locator(f'[data-testid="new-employee"][data-key="{case["unknown"]}"]')).to_contain_text("12,000.00")
    screenshot(bob, f"card-says-all-card-{lang}")
    decide(bob, card, case)
    expect(chat).to_contain_text(case["done"], timeout=30000)

    alice.goto(first_url)
    expect(alice.get_by_test_id("chat-messages")).to_contain_text(case["moved"], timeout=30000)
    screenshot(alice, f"card-says-all-owner-told-{lang}")


PARTIAL = {
    "en": {"unknown": ("X-7701", "X-7702"), "names": ("Wen Jie", "Qiao Lin"), "name": "CSV Partial EN",
           "noted": "Noted 1 salary; I still need these", "first_new": "new: 12,000.00",
           "second_new": "new: 9,500.00"},
    "zh": {"unknown": ("X-7801", "X-7802"), "names": ("温杰", "乔林"), "name": "CSV分次工资",
           "noted": "已记下 1 项工资", "first_new": "新设：12,000.00", "second_new": "新设：9,500.00"},
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_salaries_given_one_at_a_time_are_kept_and_both_are_on_the_card(keel, person_at, tmp_path, lang):
    """Alice gives one of two missing salaries, then the other: Keel keeps the first, asks only
    for the second (saying what it noted), and bob's card carries both."""
    case, partial = CASES[lang], PARTIAL[lang]
    alice, bob = person_at("alice", case), person_at("bob", case)
    (one, two), (first_name, second_name) = partial["unknown"], partial["names"]
    _, chat = ask_with_list(alice, keel, case, tmp_path / "two_new.csv",
                            f"工号,姓名\n{one},{first_name}\n{two},{second_name}\n", partial["name"])
    expect(chat).to_contain_text(case["salary_asked"], timeout=30000)

    send(alice, case, f"{one}: 12,000")
    expect(chat).to_contain_text(partial["noted"], timeout=30000)
    asked_again = alice.get_by_test_id("keel-message").filter(has_text=partial["noted"]).last
    expect(asked_again).to_contain_text(two)
    expect(asked_again).not_to_contain_text(one)
    screenshot(alice, f"salaries-one-at-a-time-{lang}")
    send(alice, case, "9500")
    expect(chat).to_contain_text(case["waiting"], timeout=30000)

    card = approve(bob, keel, case, partial["name"])
    expect(card.locator(f'[data-testid="pay-change"][data-key="{one}"]')).to_contain_text(partial["first_new"])
    expect(card.locator(f'[data-testid="pay-change"][data-key="{two}"]')).to_contain_text(partial["second_new"])
    screenshot(bob, f"salaries-one-at-a-time-card-{lang}")
    decide(bob, card, case)
    expect(chat).to_contain_text(case["done"], timeout=30000)

"""In a real browser: a person whose browser asks for Chinese walks every page Keel has —
the console, a conversation, the approvals desk, the runs grid, a run's page, the timeline in its
business and developer views, payroll, expenses, hiring, metrics, the admin timeline — at desktop
and phone width, and reads no English word; a person whose browser asks for English reads no
Chinese character. The pages are walked after real work: a payroll group set up through the chat
that completes after bob approves, an expense claim filed through the chat and approved, a TAN
approved that starts candidate matching, and one payroll request left waiting on the desk.

What is not a word to translate: proper names and codes (ALLOWED_WORDS), what the page marks as
code or data (<code>, <pre>, lang="…", translate="no"), and what a person typed (USER_WORDS: the
messages' own text, a group's name). On failure the message names the page, the width, each
offending word and the text around it."""
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_approvals import approval_of
from tests.support import Api, wait_until

pytestmark = pytest.mark.long(140)  # seconds; started first (tests/fixtures.py)

DESKTOP = {"width": 1366, "height": 860}
PHONE = {"width": 390, "height": 844}

# What the test types: a person's own words, shown as typed in every language.
PAYROLL_GROUP = "沪销走查"
PAYROLL_REQUEST = f"帮我给上海销售团队建一个薪资组，有提成，叫“{PAYROLL_GROUP}”"
PENDING_GROUP = "Walk Pending"
PENDING_REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
CLAIM_REQUEST = "报销上周北京出差两晚住宿费1800元"
USER_WORDS = [PAYROLL_REQUEST, PAYROLL_GROUP, PENDING_REQUEST, PENDING_GROUP, CLAIM_REQUEST]

# Words that read the same in every language: Keel, the seed's people and tenant, the skills and
# tools people name in English in Chinese too, ISO currency codes, units and file formats.
ALLOWED_WORDS = {
    "Keel",
    "alice", "bob", "dora", "ada", "oscar",  # demo user names (a log-in name is a code)
    "Alice", "Chen", "Bob", "Li", "Dora", "Wang", "Ada", "Zhao", "Oscar", "Sun",  # demo people
    "Demo", "Manufacturing", "Co", "Other", "Trading", "Ltd",  # demo tenants (their names are data)
    # the CV bank's skills and the technologies Keel names (proper names)
    "python", "django", "postgresql", "celery", "redis", "java", "spring", "mysql", "react", "typescript",
    "go", "kubernetes", "sql", "tableau", "excel", "Python", "Django", "PostgreSQL", "Celery", "Redis",
    "Java", "SQL", "SQLite", "Excel", "OpenAI", "OpenTelemetry", "Chromium", "htmx",
    "CNY", "USD", "SGD", "HKD", "EUR", "RMB",  # ISO currency codes
    "ms", "KB", "MB", "GB", "px",  # units
    "CSV", "XLSX", "PDF", "PNG", "JPEG", "JPG", "JSON", "API", "HTTP", "URL", "UTC", "ID", "IDs",
    "HR", "TAN", "TANs", "CV", "LLM", "DAG", "SHA", "CPF", "MPF", "ReAct", "p50", "p95", "p99",
}

# Chinese characters an English reader may meet: the Chinese names of the CV bank's people,
# stored as data beside their English names (hr/seed.py), and what the test typed.
CHINESE_NAMES = ["李伟", "张敏", "陈静", "王芳", "刘洋", "赵磊", "安娜·施密特", "孙丽", "周欣", "玛丽亚·加西亚"]

# Leaks on pages other helpers own, found by this walk; a ratchet, this list only shrinks.
# (page name prefix, a regular expression of the text shown): the walk forgives exactly these
# fragments, on those pages, and nothing else.
PENDING_OTHERS: list[tuple[str, str]] = [
]

# The text a person reads, without what the page marks as data or code and without the text of the
# user's own messages: visible text nodes, then the attributes a person reads (title, placeholder,
# aria-label, alt, a button's value), the options of a select and the tab's title.
READ_TEXT = """() => {
  const skip = el => el.closest('code, pre, kbd, samp, script, style, template, [translate="no"], [lang]:not(html)');
  const typed = el => el.matches('.bubble-user');  // a user's message: its own text, not its label or chips
  const shown = el => el.checkVisibility({visibilityProperty: true, opacityProperty: false});
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, el = node.parentElement;
    if (el && !skip(el) && !typed(el) && (shown(el) || el.closest('option')) && node.textContent.trim())
      out.push(node.textContent.trim());
  }
  document.querySelectorAll('[title], [placeholder], [aria-label], [alt], input[type=submit][value], '
                            + 'input[type=button][value]').forEach(el => {
    if (skip(el)) return;
    ['title', 'placeholder', 'aria-label', 'alt'].forEach(a => { if (el.getAttribute(a)) out.push(el.getAttribute(a)); });
    if (el.matches('input[type=submit], input[type=button]')) out.push(el.value);
  });
  out.push(document.title);
  return out;
}"""

ASCII_RUN = re.compile(r"[A-Za-z0-9_.\-/@:#=+'’%]+")
CODE_MARK = re.compile(r"[0-9_@:#=+%]|\w\.\w")  # ids, keys, versions, dotted names: codes, not words
FILE_SUFFIX = re.compile(r"\.[a-z]{3,4}")  # a kind of file (".csv", ".xlsx"): a code, not a word
SLUG = re.compile(r"^[a-z]+(?:-[a-z]+){2,}$")  # a template's code ("cn-sales-commission"), not words
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")


def masked(text: str, page_name: str, extra: list[str]) -> str:
    """`text` without what a person typed or a record holds (`extra`), and without the leaks
    PENDING_OTHERS forgives on this page."""
    for prefix, pattern in PENDING_OTHERS:  # first: a pending leak may quote what a person typed
        if page_name.startswith(prefix):
            text = re.sub(pattern, " ", text)
    for fragment in sorted(USER_WORDS + extra, key=len, reverse=True):
        text = text.replace(fragment, " ")
    return text


def english_words(text: str) -> list[str]:
    found = []
    for run in ASCII_RUN.findall(text):
        for part in run.split("/"):
            if FILE_SUFFIX.fullmatch(part):
                continue
            part = part.strip(".-'’")
            if not re.search(r"[A-Za-z]", part) or CODE_MARK.search(part) or SLUG.match(part):
                continue
            for word in part.split("-"):
                word = word.strip(".'’")
                if len(word) >= 2 and word not in ALLOWED_WORDS and word.rstrip("s") not in ALLOWED_WORDS:
                    found.append(word)
    return found


def chinese_characters(text: str) -> list[str]:
    """Chinese runs, but not a piece of what the user typed (a summary may quote their words)."""
    return [run for run in CJK.findall(text) if not any(run in typed for typed in USER_WORDS)]


def offences(page, page_name: str, language: str, data: list[str]) -> list[str]:
    """What on the page reads in the other language; `data` are records' own words (a person's
    name and department as the HR export gave them), shown as stored in every language."""
    check, extra = (english_words, data) if language == "zh" else (chinese_characters, CHINESE_NAMES + data)
    lines = []
    for shown in page.evaluate(READ_TEXT):
        text = masked(shown, page_name, extra)
        bad = check(text)
        if bad:
            lines.append(f"    {', '.join(dict.fromkeys(bad))!r}   in: {' '.join(shown.split())[:160]!r}")
    return list(dict.fromkeys(lines))


# --- the work the pages show ------------------------------------------------------------------

def chat_send(page, text: str) -> str:
    """Types `text` in the conversation and returns what the chat's status line says meanwhile."""
    page.evaluate("""() => {
      const status = document.getElementById('chat-status');
      window.statusLines = [];
      new MutationObserver(() => { if (status.textContent.trim()) window.statusLines.push(status.textContent); })
        .observe(status, {childList: true, characterData: true, subtree: true});
    }""")
    page.get_by_label(re.compile("^(消息|Message)$")).fill(text)
    page.get_by_test_id("send").click()
    page.wait_for_function("window.statusLines.length > 0")
    return " | ".join(page.evaluate("window.statusLines"))


def new_conversation(page, base_url: str) -> str:
    page.goto(base_url + "/console/")
    page.get_by_test_id("new-conversation").get_by_role("button").click()
    expect(page.get_by_test_id("live-indicator")).to_have_class(re.compile("live-live"), timeout=15000)
    return page.get_by_test_id("conversation").get_attribute("data-conversation-id")


def run_of(page) -> str:
    panel = page.locator("#run-panel [data-run-id]")
    expect(panel).not_to_have_attribute("data-run-id", "", timeout=30000)
    return panel.get_attribute("data-run-id")


def zh_context(browser, base_url: str, username: str, viewport: dict):
    context = browser.new_context(viewport=viewport, locale="zh-CN")
    page = context.new_page()
    log_in_as(page, base_url, username, "用户名", "密码", "登录")
    return context, page


def en_context(browser, base_url: str, username: str, viewport: dict):
    context = browser.new_context(viewport=viewport, locale="en-US")
    page = context.new_page()
    log_in_as(page, base_url, username, "Username", "Password", "Log in")
    return context, page


def log_in_as(page, base_url, username, user_label, password_label, button) -> None:
    page.goto(base_url + "/login/")
    page.get_by_label(user_label).fill(username)
    page.get_by_label(password_label).fill("keel-demo")
    page.get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_test_id("who")).to_be_attached()


@pytest.fixture(scope="module")
def work(keel, browser):
    """Real runs, started as people start them; returns the ids the walk visits."""
    alice, bob, ada = (Api(keel.base_url, name) for name in ("alice", "bob", "ada"))
    context, page = zh_context(browser, keel.base_url, "alice", DESKTOP)
    work = {"status_lines": []}
    try:
        # A payroll group set up through the chat, in Chinese; it completes once bob approves.
        work["payroll_conversation"] = new_conversation(page, keel.base_url)
        work["status_lines"].append(("the chat while Keel works on a payroll request", chat_send(page, PAYROLL_REQUEST)))
        work["payroll_run"] = run_of(page)
        alice.wait_for_run(work["payroll_run"], {"awaiting_approval"})
        status, body = bob.post(f"/api/v1/approvals/{approval_of(bob, work['payroll_run'])['id']}/approve/",
                                {"comment": ""})
        assert status == 200, body
        alice.wait_for_run(work["payroll_run"], {"completed"})

        # An expense claim through the chat, over the lodging limit: bob approves it too.
        work["claim_conversation"] = new_conversation(page, keel.base_url)
        work["status_lines"].append(("the chat while Keel works on an expense claim", chat_send(page, CLAIM_REQUEST)))
        work["claim_run"] = run_of(page)
        alice.wait_for_run(work["claim_run"], {"awaiting_approval"})
        status, body = bob.post(f"/api/v1/approvals/{approval_of(bob, work['claim_run'])['id']}/approve/",
                                {"comment": ""})
        assert status == 200, body
        alice.wait_for_run(work["claim_run"], {"completed"})
    finally:
        context.close()

    # A TAN approved: the approval event starts candidate matching.
    tan = next(t for t in ada.get("/api/v1/hr/tans/")["results"] if t["title"] == "Data Analyst")
    assert ada.post(f"/api/v1/hr/tans/{tan['id']}/approve/")[0] == 200
    work["tan"] = tan["id"]
    wait_until(lambda: ada.get(f"/api/v1/hr/tans/{tan['id']}/").get("matching_run"),
               "the TAN's approval to start a matching run")
    work["matching_run"] = ada.get(f"/api/v1/hr/tans/{tan['id']}/")["matching_run"]
    matching = ada.wait_for_run(work["matching_run"], {"completed"})
    work["matching_conversation"] = matching["conversation"]

    # One request left waiting on the desk, so the approval card is walked too.
    status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                               "params": {"request": PENDING_REQUEST, "group_name": PENDING_GROUP}})
    assert status == 201, run
    work["pending_run"] = alice.wait_for_run(run["id"], {"awaiting_approval"})["id"]

    work["claim"] = alice.get("/api/v1/expenses/claims/")["results"][0]["id"]
    work["group"] = next(g["id"] for g in alice.get("/api/v1/payroll/groups/")["results"] if g["name"] == PAYROLL_GROUP)
    work["snapshot"] = alice.get("/api/v1/payroll/snapshots/")["results"][0]["id"]  # the payroll run took it
    employee = alice.get("/api/v1/payroll/employees/")["results"][0]
    work["employee"], work["data"] = employee["id"], [employee["name"], employee["department"]]
    return work


def pages(work: dict) -> list[tuple[str, str]]:
    """Every page, by the name a failure reports."""
    return [
        ("home", "/"),
        ("console", "/console/"),
        ("conversation (payroll)", f"/conversations/{work['payroll_conversation']}/"),
        ("conversation (expense claim)", f"/conversations/{work['claim_conversation']}/"),
        ("approvals desk", "/approvals/"),
        ("approvals matrix", "/approvals/matrix/"),
        ("approval history", f"/approvals/runs/{work['payroll_run']}/history/"),
        ("runs grid", "/runs/"),
        ("run page (payroll)", f"/runs/{work['payroll_run']}/"),
        ("run page (expense claim)", f"/runs/{work['claim_run']}/"),
        ("run page (candidate matching)", f"/runs/{work['matching_run']}/"),
        ("run page (awaiting approval)", f"/runs/{work['pending_run']}/"),
        ("timeline", "/timeline/"),
        ("timeline business (payroll)", f"/conversations/{work['payroll_conversation']}/timeline/"),
        ("timeline developer (payroll)", f"/conversations/{work['payroll_conversation']}/timeline/?view=developer"),
        ("timeline business (matching)", f"/conversations/{work['matching_conversation']}/timeline/"),
        ("timeline developer (matching)", f"/conversations/{work['matching_conversation']}/timeline/?view=developer"),
        ("payroll", "/payroll/"),
        ("payroll templates", "/payroll/templates/"),
        ("payroll group", f"/payroll/groups/{work['group']}/"),
        ("payroll employee", f"/payroll/employees/{work['employee']}/"),
        ("payroll snapshot", f"/payroll/snapshots/{work['snapshot']}/"),
        ("expense claims", "/expenses/"),
        ("expense claim", f"/expenses/claims/{work['claim']}/"),
        ("hiring", "/hiring/"),
        ("hiring TAN", f"/hiring/tans/{work['tan']}/"),
        ("metrics", "/metrics/"),
        ("password change", "/password/"),
        ("not found", "/no-such-page/"),
        ("admin timeline", "/admin/timeline/"),
        ("admin timeline activities", "/admin/timeline/activity/"),
        ("admin timeline frames", "/admin/timeline/frame/"),
        ("admin timeline events", "/admin/timeline/event/"),
    ]


def walk(page, base_url: str, work: dict, language: str, width: str) -> list[str]:
    report = []
    visits = pages(work)
    for name, path in visits:
        page.goto(base_url + path)
        page.wait_for_load_state("networkidle")
        if name == "admin timeline activities":  # and the first activity's own page, its frames in order
            first = page.locator("#result_list tbody a").first
            if first.count():
                visits.append(("admin timeline activity", first.get_attribute("href")))
        if width == "phone" and page.get_by_test_id("menu-toggle").is_visible():
            page.get_by_test_id("menu-toggle").click()  # the menu a phone shows on a tap
        found = offences(page, name, language, work["data"])
        if found:
            report.append(f"  {name} ({path}, {width}):\n" + "\n".join(found))
    return report


def logged_out(browser, base_url: str, language: str) -> list[str]:
    """The pages a person reads before logging in: the log-in form, and a page that is not there."""
    context = browser.new_context(viewport=PHONE, locale="zh-CN" if language == "zh" else "en-US")
    page = context.new_page()
    report = []
    try:
        for name, path in (("log-in", "/login/"), ("not found, logged out", "/no-such-page/")):
            page.goto(base_url + path)
            found = offences(page, name, language, [])
            if found:
                report.append(f"  {name} ({path}, phone):\n" + "\n".join(found))
    finally:
        context.close()
    return report


def test_a_chinese_reader_walks_every_page_and_reads_no_english_word(keel, browser, work):
    report = [f"  {where}:\n    {english_words(masked(text, where, []))!r}   in: {text!r}"
              for where, text in work["status_lines"] if english_words(masked(text, where, []))]
    for width, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context, page = zh_context(browser, keel.base_url, "ada", viewport)
        try:
            report += walk(page, keel.base_url, work, "zh", width)
        finally:
            context.close()
    report += logged_out(browser, keel.base_url, "zh")
    assert not report, "English words on pages read in Chinese:\n" + "\n".join(report)


def test_an_english_reader_walks_every_page_and_reads_no_chinese_character(keel, browser, work):
    report = []
    for width, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        context, page = en_context(browser, keel.base_url, "ada", viewport)
        try:
            report += walk(page, keel.base_url, work, "en", width)
        finally:
            context.close()
    report += logged_out(browser, keel.base_url, "en")
    assert not report, "Chinese characters on pages read in English:\n" + "\n".join(report)

"""The runs grid in the manner of Airflow's grid view, and tables that never break inside a word,
at a phone's 390 px, a laptop's 1366 × 768 and a desktop's 1920 px."""
import pytest
from playwright.sync_api import expect

from tests.support import Api, screenshot

REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
SIZES = {"phone": (390, 844), "laptop": (1366, 768), "desktop": (1920, 1080)}
LOGIN = {"en": ("Username", "Password", "Log in"), "zh-CN": ("用户名", "密码", "登录")}

# For every table cell under `selector`: the cell does not overflow (scrollWidth > clientWidth), and
# no word of its text is split across lines (a Range over the word has one client rect), and no
# word is wider than its cell. Words are runs of non-space Latin text; CJK may break between characters.
BROKEN_CELLS = """(selector) => {
  const out = [];
  for (const cell of document.querySelectorAll(selector)) {
    if (!cell.getClientRects().length) continue;  // not shown
    if (cell.scrollWidth > cell.clientWidth + 1) out.push({cell: cell.textContent.trim().slice(0, 60), why: 'overflows',
                                                           scroll: cell.scrollWidth, client: cell.clientWidth});
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const re = /[^\\s\\u3000-\\u9fff\\uff00-\\uffef]+/g;
      let m;
      while ((m = re.exec(node.data))) {
        const range = document.createRange();
        range.setStart(node, m.index); range.setEnd(node, m.index + m[0].length);
        const rects = [...range.getClientRects()].filter(r => r.width > 0);
        const width = range.getBoundingClientRect().width;
        if (rects.length > 1) out.push({cell: cell.textContent.trim().slice(0, 60), word: m[0], why: 'split', lines: rects.length});
        else if (width > cell.clientWidth + 1) out.push({cell: cell.textContent.trim().slice(0, 60), word: m[0], why: 'wider than cell',
                                                         width, client: cell.clientWidth});
      }
    }
  }
  return out;
}"""


def log_in_at(browser, keel, username, size, lang="en"):
    width, height = SIZES[size]
    context = browser.new_context(viewport={"width": width, "height": height}, locale=lang)
    page = context.new_page()
    user, password, button = LOGIN[lang]
    page.goto(keel.base_url + "/login/")
    page.get_by_label(user).fill(username)
    page.get_by_label(password).fill("keel-demo")
    page.get_by_role("button", name=button, exact=True).click()
    expect(page.get_by_test_id("who")).to_be_attached()
    return context, page


@pytest.fixture(scope="module")
def runs(keel):
    """24 quick fan-outs started by dora, then a completed payroll run (its undo step never ran)
    and one waiting for approval: 26 runs, more than the grid's page of 25."""
    alice, bob, dora = Api(keel.base_url, "alice"), Api(keel.base_url, "bob"), Api(keel.base_url, "dora")
    made, fanouts = {}, []
    for _ in range(24):  # first, so the payroll runs (newer) are on the grid's first page
        status, run = dora.post("/api/v1/runs/", {"blueprint": "noop_fanout", "params": {"n": 2}})
        assert status == 201, run
        fanouts.append(run["id"])
    for name in ("Grid Completed Shanghai Sales", "Grid Waiting Beijing Operations"):
        status, run = alice.post("/api/v1/runs/", {"blueprint": "payroll_group_setup",
                                                   "params": {"request": REQUEST, "group_name": name}})
        assert status == 201, run
        made[name] = alice.wait_for_run(run["id"], {"awaiting_approval"})
    completed = made["Grid Completed Shanghai Sales"]
    [approval] = [a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == completed["id"]]
    status, body = bob.post(f"/api/v1/approvals/{approval['id']}/approve/", {"comment": "fine"})
    assert status in (200, 201), body
    alice.wait_for_run(completed["id"], {"completed"})
    for run_id in fanouts:
        dora.wait_for_run(run_id, {"completed"})
    return {"completed": completed["id"], "waiting": made["Grid Waiting Beijing Operations"]["id"],
            "approval": [a for a in bob.get("/api/v1/approvals/?status=pending")["results"]
                         if a["run"] == made["Grid Waiting Beijing Operations"]["id"]][0]["id"]}


@pytest.mark.parametrize("size", list(SIZES))
def test_the_grid_is_one_compact_row_per_run_and_never_breaks_a_word(keel, browser, runs, size):
    context, page = log_in_at(browser, keel, "alice", size)
    try:
        page.goto(keel.base_url + "/runs/")
        grid = page.get_by_test_id("run-grid")
        rows = grid.locator("tbody tr[data-run]")
        expect(rows).to_have_count(25)  # a page of 25 (26 runs)
        expect(page.get_by_test_id("runs-count")).to_contain_text("26 runs")
        expect(page.get_by_test_id("pager")).to_be_visible()
        expect(page.get_by_test_id("grid-legend")).to_contain_text("Skipped")
        # Name, status, who, when, duration: no word split across lines, none wider than its cell.
        assert page.evaluate(BROKEN_CELLS, ".run-grid td") == []
        width = SIZES[size][0]
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if size == "phone":
            # A card per run: the header is gone; each card spans the page and holds the name,
            # the status and a mini strip of squares.
            expect(grid.locator("thead")).to_be_hidden()
            first = rows.first
            assert first.evaluate("r => getComputedStyle(r).display") == "flex"
            box = first.bounding_box()
            assert box["width"] >= 330 and box["x"] >= 0 and box["x"] + box["width"] <= width
            name, status, strip = (first.locator(s).bounding_box() for s in (".rg-name", ".rg-status .status", ".grid-strip"))
            assert name["y"] < status["y"] < strip["y"] or name["y"] < status["y"] <= strip["y"]
            assert first.locator(".grid-strip .grid-cell[data-status]").count() >= 2
        else:
            # One line per run: every row 20–24 px, 25 of them plus the header row within 768 px.
            boxes = [rows.nth(i).bounding_box() for i in (0, 24)]
            heights = rows.evaluate_all("rs => rs.map(r => r.getBoundingClientRect().height)")
            assert all(19.5 <= h <= 24.5 for h in heights), heights
            head = grid.locator("thead").bounding_box()
            total = boxes[1]["y"] + boxes[1]["height"] - boxes[0]["y"]
            assert total + head["height"] <= 768, (total, head["height"])
            # The steps are fixed-size squares in a strip of their own, aligned across rows.
            cells = grid.locator(".grid-cell[data-status]")
            sizes = {(round(b["width"]), round(b["height"])) for b in
                     cells.evaluate_all("cs => cs.map(c => c.getBoundingClientRect().toJSON())")}
            assert sizes == {(14, 14)}, sizes
            xs = rows.evaluate_all("rs => rs.map(r => r.querySelector('.grid-strip').getBoundingClientRect().x)")
            assert len({round(x) for x in xs}) == 1
            assert grid.locator("thead [data-step-key]").count() >= 8  # n0, n1 and the payroll steps
        screenshot(page, f"runs-grid-32-{size}")
    finally:
        context.close()


@pytest.mark.parametrize("lang,word", [("en", "Skipped"), ("zh-CN", "已跳过")])
def test_a_completed_runs_undo_step_reads_skipped(keel, browser, runs, lang, word):
    context, page = log_in_at(browser, keel, "alice", "laptop", lang)
    try:
        page.goto(keel.base_url + "/runs/")
        row = page.locator(f'tr[data-run="{runs["completed"]}"]')
        expect(row).to_have_attribute("data-run-status", "completed")
        expect(row.locator('.grid-cell[data-status="completed"]')).to_have_count(6)  # the trial too
        undo = row.locator('.grid-cell[data-status="skipped"]')
        expect(undo).to_have_count(1)
        expect(undo).to_have_attribute("title", f"{'撤销' if lang != 'en' else 'Undo'}: {word}")
        expect(row.locator('.grid-cell[data-status="pending"]')).to_have_count(0)
        expect(page.get_by_test_id("grid-legend")).to_contain_text(word)
        page.goto(f"{keel.base_url}/runs/{runs['completed']}/")
        expect(page.get_by_test_id("step-status-restore")).to_have_text(word)
        expect(page.get_by_test_id("step-status-verify")).not_to_have_text(word)
        screenshot(page, f"run-page-skipped-{lang}")
    finally:
        context.close()


@pytest.mark.parametrize("size", list(SIZES))
def test_the_run_pages_steps_and_the_approval_diff_never_break_a_word(keel, browser, runs, size):
    width = SIZES[size][0]
    context, page = log_in_at(browser, keel, "bob", size)
    try:
        page.goto(f"{keel.base_url}/runs/{runs['completed']}/")
        table = page.get_by_test_id("run-nodes")
        expect(table).to_be_visible()
        assert page.evaluate(BROKEN_CELLS, "[data-testid=run-nodes] td, [data-testid=run-nodes] th") == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if size == "phone":
            # Stacked: no header row; each step a card of "label: value" lines.
            expect(table.locator("thead")).to_be_hidden()
            cell = table.locator("tbody tr").first.locator("td").first
            assert cell.evaluate("c => getComputedStyle(c, '::before').content") == '"Step"'
            assert table.locator("tbody tr").first.evaluate("r => getComputedStyle(r).display") == "block"
        screenshot(page, f"run-steps-32-{size}")

        page.goto(f"{keel.base_url}/approvals/{runs['approval']}/")
        diff = page.get_by_test_id("approval-card").locator("table.diff-items")
        expect(diff).to_be_visible()
        assert page.evaluate(BROKEN_CELLS, "[data-testid=approval-card] table.diff-items td, "
                                           "[data-testid=approval-card] table.diff-items th") == []
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        if size == "phone":
            expect(diff.locator("thead")).to_be_hidden()
            assert diff.locator("tbody tr").first.evaluate("r => getComputedStyle(r).display") == "flex"
        screenshot(page, f"approval-diff-32-{size}")
    finally:
        context.close()

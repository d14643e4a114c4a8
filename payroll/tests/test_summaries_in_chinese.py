"""Payroll's tool summaries and acceptance details are stored as words: a Chinese
reader reads the setup run's timeline and run page in Chinese — what each step did, and what
each check found — and an English reader reads them as before. The failure reason keeps its
English; a detail stored as prose before words still shows."""
import html

import pytest
from django.conf import settings
from django.utils import translation

from approvals.models import ApprovalRequest
from approvals.services import approval_decide
from config.words import is_words, words_english, words_render
from console.templatetags.keel_timeline import detail_shown
from payroll.agent.tools.interpret import _interpret_summary
from payroll.agent.tools.writes import _undo_summary
from payroll.records.trial import _trial_summary
from timeline.models import Frame
from tests.helpers import client_for, drive, membership, run_to_approval
from workflows.models import Node

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


@pytest.fixture(autouse=True)
def _default_language_after():
    yield
    translation.activate(settings.LANGUAGE_CODE)


def page(url: str, language: str) -> str:
    response = client_for("ada").get(url, HTTP_ACCEPT_LANGUAGE=language)  # a tenant admin: the developer view too
    assert response.status_code == 200, response.content[:500]
    return html.unescape(response.content.decode())


def completed_run():
    run = run_to_approval()
    approval_decide(membership=membership("bob"), approval_id=ApprovalRequest.objects.get(run=run).id,
                    verdict="approved")
    return drive(run)


def test_the_setup_runs_summaries_read_in_chinese_and_in_english_as_before():
    run = completed_run()
    assert run.status == "completed"
    frames = {f.name: f for f in Frame.objects.filter(activity__run=run, kind="tool_call")}
    assert all(is_words(frames[name].summary_words) for name in (
        "interpret_request", "match_salary_template", "snapshot_payroll_groups", "import_template", "verify_import",
        "trial_payroll"))
    # The English column beside the words is the sentence it always was (search, logs).
    assert frames["interpret_request"].summary == "Understood the request: CN-SH · monthly · sales; items: commission."
    assert frames["snapshot_payroll_groups"].summary == ("Reserved the name “Shanghai Sales” and took a snapshot of "
                                                         "what the run touches.")

    url = f"/conversations/{run.conversation_id}/timeline/?view=developer"
    zh = page(url, "zh-hans")
    assert "已理解请求：上海 · 按月 · 销售；薪资项目：提成。" in zh
    assert "已匹配模板“销售人员（含提成）”。" in zh
    assert "已预留名称“Shanghai Sales”，并为本次运行涉及的记录做了快照。" in zh
    assert "已导入模板：创建了 15 个薪资项目。" in zh
    assert "已核验薪资组“Shanghai Sales”：15 个项目。" in zh
    for english in ("Understood the request", "Matched the template", "Reserved the name", "Imported the template",
                    "Verified the group", "No employees in the new group yet"):
        assert english not in zh
    en = page(url, "en")
    assert "Understood the request: CN-SH · monthly · sales; items: commission." in en
    assert "Matched the template “Sales staff with commission”." in en
    assert "Imported the template: 15 payroll items created." in en
    assert "Verified the group “Shanghai Sales”: 15 items." in en
    assert "已理解请求" not in en and "已导入模板" not in en


def test_the_run_page_shows_what_each_check_found_in_the_readers_language():
    run = completed_run()
    details = {n.key: n.acceptance_results for n in Node.objects.filter(run=run, retired_in__isnull=True)}
    assert is_words(next(r["detail"] for r in details["import"] if r["criterion"] == "it has the template's item count"))
    zh = page(f"/runs/{run.id}/", "zh-hans")
    assert 'title="15 项（共 15 项）"' in zh and 'title="15（共 15）"' in zh  # import, verify
    for english in ("15 of 15 items", "15 of 15", "employees and month", "of 0 employees"):
        assert english not in zh
    en = page(f"/runs/{run.id}/", "en")
    assert 'title="15 of 15 items"' in en and 'title="15 of 15"' in en
    assert "（共" not in en


def test_the_trials_summary_and_details_are_words():
    nobody = {"employees": [], "totals": [], "year": 2026, "group_id": "1"}
    assert words_render(_trial_summary(nobody), "zh-hans") == "新薪资组还没有员工：试算没有可计算的人。"
    assert words_english(_trial_summary(nobody)) == "No employees in the new group yet: the trial had nobody to compute."
    some = {"employees": [{}, {}], "year": 2026, "totals": [{"gross": "20000.00", "employer_cost": "26000.00",
                                                                "tax": "300.00", "net": "16000.00"}] * 3}
    assert words_english(_trial_summary(some)) == ("Trial payroll for 2 employees, months 1–3 of 2026: month 1 gross "
                                                   "20000.00, employer cost 26000.00, tax 300.00, net 16000.00 CNY.")
    assert "试算 2 名员工 2026 年第 1–3 月" in words_render(_trial_summary(some), "zh-hans")


def test_the_requirements_summary_names_what_it_understood_in_either_language():
    said = _interpret_summary({"requirements": {"region": "CN-BJ", "population": "intern", "items_named": []}})
    assert words_english(said) == "Understood the request: CN-BJ · intern."
    assert words_render(said, "zh-hans") == "已理解请求：北京 · 实习生。"
    nothing = _interpret_summary({"requirements": {}})
    assert words_english(nothing) == "Understood the request: no details yet."
    assert words_render(nothing, "zh-hans") == "已理解请求：尚无细节。"
    undone = _undo_summary({"groups_deleted": ["Shanghai Sales"], "employees_restored": 2})
    assert words_english(undone) == "Undid this run's changes: removed “Shanghai Sales”, put 2 employees back."
    assert words_render(undone, "zh-hans") == "已撤销本次运行的更改：删除了 “Shanghai Sales”，将 2 名员工恢复原状。"


def test_a_detail_stored_as_prose_still_shows_and_reads_for_the_reader_where_it_can():
    with translation.override("zh-hans"):
        assert detail_shown("12 of 12") == "12（共 12）"
        assert detail_shown("ANSWERED") == "已回答"
        assert detail_shown("submitted") == "已提交"
        assert detail_shown("a sentence stored before words") == "a sentence stored before words"
        assert detail_shown("") == ""
    with translation.override("en"):
        for stored in ("12 of 12", "ANSWERED", "submitted", "10 candidates", "a sentence stored before words"):
            assert detail_shown(stored) == stored

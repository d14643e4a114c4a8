"""The engine's summaries are stored as words and rendered for each reader:
the same run's timeline, run page and frames API read in Chinese for a reader who chose
Chinese and in English for one who reads English; rows written before words read as written.

The Chinese of the engine's own sentences comes from locale/zh_hans_strings.py (the catalog
is rebuilt with makemessages + scripts/i18n_fill.py); a step's goal and name come from its
blueprint ("goal_zh", "title_zh"), so they need no catalog."""
import pytest
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_noop

from config.words import words
from tenants.models import Membership
from timeline.models import Activity, Frame
from tests.helpers import client_for, drive, membership, no_broker, run_to_approval
from workflows.models import Node, Plan
from workflows.services import plan_replan, run_start

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


@pytest.fixture(autouse=True)
def _default_language_after():
    """A request activates its reader's language for the thread: the next test starts in the default."""
    yield
    translation.activate(settings.LANGUAGE_CODE)


def reads_chinese(*usernames: str) -> None:
    Membership.objects.filter(user__username__in=usernames).update(language="zh-hans")


def page(username: str, url: str) -> str:
    response = client_for(username).get(url, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


def test_a_runs_timeline_reads_in_chinese_for_a_chinese_reader_and_in_english_for_an_english_one():
    run = run_to_approval()
    reads_chinese("alice")
    url = f"/conversations/{run.conversation_id}/timeline/"
    zh = page("alice", url)
    assert "已开始薪资组设置。" in zh and "计划 v1：7 个步骤（初始计划）。" in zh  # the run's own summaries (with the trial step)
    assert "理解请求" in zh and "匹配模板" in zh  # the steps by their blueprint's names and goals
    assert "已从请求中读出需求：已满足；需求符合其结构定义：已满足" in zh  # the acceptance check
    assert "Started payroll group setup." not in zh and "Understand the request" not in zh
    assert ": met" not in zh and "node interpret" not in zh
    en = page("bob", url)  # the same rows, an English reader
    assert "Started payroll group setup." in en and "Plan v1: 7 steps (initial plan)." in en
    assert "Understand the request" in en
    assert "the requirements were read from the request: met; the requirements match their schema: met" in en
    assert "理解请求" not in en and "已开始" not in en


def test_the_step_activities_store_their_goal_as_words_on_every_path():
    run = run_to_approval()
    step = Activity.objects.get(run=run, node_key="interpret")
    # Written by the hot path's own statements (workflows/sql.py).
    assert step.summary == "Understand the request"
    assert step.summary_words["params"]["goal"] == {"en": "Understand the request", "zh-hans": "理解请求"}
    call = Frame.objects.get(activity=step, kind="validation")
    assert call.summary_words is not None and "met" in call.summary
    assert Node.objects.get(run=run, key="interpret").goal_words == step.summary_words


def test_the_run_panel_names_its_steps_in_the_readers_language():
    run = run_to_approval()
    reads_chinese("alice")
    zh = page("alice", f"/runs/{run.id}/panel/")
    assert 'class="dag-key">理解请求<' in zh and 'class="dag-key">预留并快照<' in zh
    assert 'class="dag-key">interpret<' not in zh
    en = page("bob", f"/runs/{run.id}/panel/")
    assert 'class="dag-key">Understand<' in en and 'class="dag-key">Reserve &amp; snapshot<' in en
    run_page = page("alice", f"/runs/{run.id}/")
    assert "<strong>理解请求</strong>" in run_page and "将模板导入新薪资组" in run_page  # the steps table
    assert "已接受" in run_page  # a step's reason the engine writes ("accepted")
    assert "等待审批</span> 导入" in run_page  # the wait, by its step's name


def test_the_frames_api_renders_the_summary_in_the_requests_language_and_gives_the_words_raw():
    run = run_to_approval()
    step = Activity.objects.get(run=run, node_key="interpret")
    url = f"/api/v1/activities/{step.id}/frames/"
    reads_chinese("alice")
    zh = client_for("alice").get(url).json()
    assert zh["summary"] == "理解请求"
    check = next(f for f in zh["results"] if f["kind"] == "validation")
    assert check["summary"].startswith("已从请求中读出需求：已满足")
    assert check["summary_words"]["key"] == "%(first)s; %(rest)s"
    en = client_for("bob").get(url).json()
    assert en["summary"] == "Understand the request" and en["summary_words"] == zh["summary_words"]
    check = next(f for f in en["results"] if f["kind"] == "validation")
    assert check["summary"].startswith("the requirements were read from the request: met")


def test_a_row_written_before_words_reads_as_it_was_written():
    run = run_to_approval()
    Activity.objects.filter(run=run, node_key="interpret").update(summary="Read the request (old prose).",
                                                                  summary_words=None)
    Frame.objects.filter(activity__run=run, kind="validation").update(summary="all criteria met (old prose)",
                                                                     summary_words=None)
    Node.objects.filter(run=run).update(goal_words=None)
    reads_chinese("alice")
    timeline = page("alice", f"/conversations/{run.conversation_id}/timeline/")
    assert "Read the request (old prose)." in timeline and "all criteria met (old prose)" in timeline
    # A step planned before words: its goal still reads in Chinese through its blueprint.
    assert "将模板导入新薪资组" in page("alice", f"/runs/{run.id}/")


def test_a_replan_reason_given_as_words_reads_in_the_readers_language():
    run = run_to_approval()
    plan_replan(run=run, replace=["verify", "restore"],
                reason=words(gettext_noop("step %(step)s failed: %(reason)s"), step="verify", reason="HTTP 503"))
    plan = Plan.objects.get(run=run, version=2)
    assert plan.reason == "step verify failed: HTTP 503"  # the column keeps its English
    assert plan.diff["why"]["key"] == "step %(step)s failed: %(reason)s"
    reads_chinese("alice")
    zh = page("alice", f"/runs/{run.id}/")
    assert "步骤 verify 失败：HTTP 503" in zh
    en = page("bob", f"/runs/{run.id}/")
    assert "why: step verify failed: HTTP 503" in en
    # A reason stored as prose (a plan replanned before words) reads as it was written.
    Plan.objects.filter(id=plan.id).update(diff={**plan.diff, "why": "the old prose reason"})
    assert "the old prose reason" in page("alice", f"/runs/{run.id}/")


def test_a_chain_run_through_the_hot_path_stores_its_steps_and_calls_as_words():
    """The chain's hops are the hand-written statements of workflows/sql.py (the activity
    and the call's frame inserted there)."""
    with no_broker():
        run = drive(run_start(membership=membership("dora"), blueprint="noop_chain", params={"n": 3}))
    assert run.status == "completed"
    steps = list(Activity.objects.filter(run=run, kind="node").order_by("node_key"))
    assert [s.summary for s in steps] == ["No-op 0", "No-op 1", "No-op 2"]
    assert all(s.summary_words["params"]["goal"]["zh-hans"].startswith("空操作") for s in steps)
    calls = Frame.objects.filter(activity__run=run, kind="tool_call")
    assert calls.count() == 3 and all(c.summary == "Nothing to do." and c.summary_words == {
        "key": "Nothing to do.", "params": {}} for c in calls)
    reads_chinese("dora")
    timeline = page("dora", f"/conversations/{run.conversation_id}/timeline/")
    assert "空操作 1" in timeline and "无事可做。" in timeline and "No-op 1" not in timeline

"""Frames: the API by role, masking at write time, Activity rollups, and a
page that costs the same queries at 1,000 and 20,000 frames."""
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from timeline.masking import payload_mask
from timeline.models import Activity, Frame, FramePayload
from timeline.services import activity_open, conversation_create, frame_record
from tests.helpers import PROMPT, client_for, membership, run_to_approval


pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo")]


def test_developers_get_payloads_and_business_users_only_summaries():
    run = run_to_approval()
    activity = Frame.objects.get(activity__run=run, kind="model_call").activity
    dora = client_for("dora").get(f"/api/v1/activities/{activity.id}/frames/").json()
    alice = client_for("alice").get(f"/api/v1/activities/{activity.id}/frames/").json()
    assert [f["name"] for f in dora["results"]] == [f["name"] for f in alice["results"]]
    assert any(PROMPT in str(f["payload"]) for f in dora["results"])
    assert all("payload" not in f and "payload_url" not in f for f in alice["results"])
    assert PROMPT not in str(alice)
    assert all(f["summary"] for f in alice["results"])


def test_a_cursor_with_an_offset_postgresql_refuses_is_read_as_the_moment_it_names():
    run = run_to_approval()
    answer = client_for("dora").get(f"/api/v1/activities/{run.activity_id}/frames/",
                                    {"after": "1027-02-19T02:43:14-16:12|1"})
    assert answer.status_code == 200 and answer.json()["results"]  # every frame is after the year 1027


@pytest.mark.parametrize("cursor", ["2026-11-30T08:00:00|1", "9999-12-31T23:00:00-05:00|1",
                                    "yesterday|1", "2026-11-30T08:00:00+00:00|x"])
def test_a_cursor_this_page_never_gave_out_is_refused_not_a_crash(cursor):
    run = run_to_approval()
    answer = client_for("dora").get(f"/api/v1/activities/{run.activity_id}/frames/", {"after": cursor})
    assert answer.status_code == 400 and "not a cursor" in answer.json()["detail"]


def test_another_tenants_activity_answers_404():
    run = run_to_approval()
    assert client_for("oscar").get(f"/api/v1/activities/{run.activity_id}/frames/").status_code == 404


def test_the_payload_endpoint_is_for_developers():
    run = run_to_approval()
    frame = Frame.objects.get(activity__run=run, kind="model_call")
    assert PROMPT in str(client_for("ada").get(f"/api/v1/frames/{frame.id}/payload/").json())
    assert client_for("alice").get(f"/api/v1/frames/{frame.id}/payload/").status_code == 403


def test_the_events_api_gives_business_users_no_developer_keys():
    from timeline.services import event_append

    run = run_to_approval()
    with transaction.atomic():
        event_append(conversation_id=run.conversation_id, run_id=run.id, type="node.reclaimed",
                     data={"node": "match", "previous_owner": "w1", "owner": "w2"})
    alice = client_for("alice").get(f"/api/v1/conversations/{run.conversation_id}/events/?after=0").json()
    dora = client_for("dora").get(f"/api/v1/conversations/{run.conversation_id}/events/?after=0").json()
    assert alice["results"][-1]["data"] == {"node": "match"}
    assert dora["results"][-1]["data"]["owner"] == "w2"


def test_it_masks_secrets_and_personal_data_when_writing_a_payload():
    run = run_to_approval()
    with transaction.atomic():
        frame = frame_record(activity_id=run.activity_id, kind="tool_call", name="probe", payload={
            "api_key": "sk-live-abcdefghijklmnop", "headers": {"Authorization": "Bearer abcdefghijklmnopqrstu"},
            "note": "call 13812345678 or mail li.na@example.com; ID 110101199003071234",
            "template_id": "8123456789012345678", "approval": "1234567890123456789"})
    stored = FramePayload.objects.get(frame=frame).data
    assert stored["api_key"] == "•••" and stored["headers"]["Authorization"] == "•••"
    assert "13812345678" not in stored["note"] and "li.na@example.com" not in stored["note"]
    assert "110101199003071234" not in stored["note"]
    assert stored["template_id"] == "8123456789012345678" and stored["approval"] == "1234567890123456789"


def test_the_masking_rules_come_from_settings(settings):
    settings.KEEL_MASK_RULES = {"keys": ["salary"], "patterns": [{"regex": r"EMP-\d+", "replace": "[employee]"}]}
    assert payload_mask({"salary": 30000, "who": "EMP-42", "password": "x"}) == {
        "salary": "•••", "who": "[employee]", "password": "x"}


def test_it_rolls_up_tokens_cost_latency_and_errors_on_the_activity():
    run = run_to_approval()
    conversation_id = run.conversation_id
    with transaction.atomic():
        activity = activity_open(conversation_id=conversation_id, kind="message", title="hi")
        start = timezone.now()
        frame_record(activity_id=activity.id, kind="model_call", name="m", input_tokens=100, output_tokens=20,
                     cost=Decimal("0.01"), started_at=start, ended_at=start + timedelta(milliseconds=40))
        frame_record(activity_id=activity.id, kind="tool_call", name="t", status="error", tool_call_id="42",
                     started_at=start + timedelta(milliseconds=50), ended_at=start + timedelta(milliseconds=60))
    activity.refresh_from_db()
    assert (activity.frame_count, activity.error_count, activity.tokens_in, activity.tokens_out) == (2, 1, 100, 20)
    assert activity.cost == Decimal("0.01") and activity.latency_ms == pytest.approx(50)
    assert activity.frames_from == start and activity.frames_until == start + timedelta(milliseconds=60)
    assert activity.links == {"tool_call": ["42"]}


def _activity_with_frames(n: int) -> Activity:
    alice = membership("alice")
    conversation = conversation_create(tenant_id=alice.tenant_id, user_id=alice.user_id, title=f"{n} frames")
    activity = Activity.objects.create(conversation=conversation, kind="run", title=f"{n} frames",
                                       frame_count=n, frames_from=timezone.now(),
                                       frames_until=timezone.now() + timedelta(seconds=n))
    start = timezone.now()
    Frame.objects.bulk_create([
        Frame(activity=activity, kind=["thought", "action", "observation", "tool_call"][i % 4], name=f"f{i}",
              summary=f"step {i}", started_at=start + timedelta(milliseconds=i), latency_ms=1,
              ended_at=start + timedelta(milliseconds=i + 1)) for i in range(n)], batch_size=2000)
    return activity


def _page_queries(client, activity: Activity) -> tuple[int, str]:
    url = f"/conversations/{activity.conversation_id}/timeline/?view=developer"
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries), response.content.decode()


def test_a_timeline_page_costs_the_same_queries_at_1000_and_20000_frames():
    dora = client_for("dora")
    dora.get("/console/")  # warm the session and caches
    small, html_small = _page_queries(dora, _activity_with_frames(1000))
    large, html_large = _page_queries(dora, _activity_with_frames(20000))
    assert small == large
    assert html_large.count('class="frame-row') == 200  # a bounded page, not 20,000 rows
    assert 'data-testid="load-more"' in html_large


def test_load_more_continues_where_the_page_ended():
    activity = _activity_with_frames(450)
    dora = client_for("dora")
    html = dora.get(f"/conversations/{activity.conversation_id}/timeline/?view=developer").content.decode()
    url = html.split('hx-get="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    while "activities/" not in url:
        url = html.split('hx-get="/activities/', 1)[1].split('"', 1)[0]
        url = "/activities/" + url.replace("&amp;", "&")
    second = dora.get(url).content.decode()
    assert ">f200<" in second and ">f399<" in second and ">f199<" not in second
    assert 'data-testid="load-more"' in second
    api = dora.get(f"/api/v1/activities/{activity.id}/frames/").json()
    more = dora.get(f"/api/v1/activities/{activity.id}/frames/", {"after": api["next"]}).json()
    assert [f["name"] for f in more["results"]][:2] == ["f200", "f201"]
    assert len(api["results"]) == 200 and more["next"] is not None


def test_react_iterations_are_grouped():
    activity = _activity_with_frames(8)
    html = client_for("dora").get(f"/conversations/{activity.conversation_id}/timeline/?view=developer").content
    assert html.decode().count("ReAct iteration") == 2


def test_the_errors_filter_reads_true_or_false_as_documented_and_refuses_anything_else():
    run = run_to_approval()
    url = f"/api/v1/activities/{run.activity_id}/frames/"
    everything = client_for("dora").get(url).json()["results"]
    assert client_for("dora").get(url, {"errors": "false"}).json()["results"] == everything
    only_errors = client_for("dora").get(url, {"errors": "true"}).json()["results"]
    assert all(f["status"] == "error" for f in only_errors)
    for given in ("", "yes", "TRUE", "1"):
        answer = client_for("dora").get(url, {"errors": given})
        assert answer.status_code == 400 and answer.json()["field"] == "errors", (given, answer.content)
        assert "true or false" in answer.json()["detail"]

"""The conversation front on PostgreSQL + Redis + real `celery worker` processes:
a message with an employee list starts the plan, an approver approves, the workers
finish it and assign the employees; a run waiting for input resumes on "continue" in a
later turn; the reply reaches the event log in order."""
import asyncio
import json
import time
import urllib.request
import uuid

import psycopg
import pytest
import websockets

from tests.fake_openai import FakeOpenAI
from tests.support import Api, Session, keel_running

COMPLETE = "set up a monthly payroll group for our Shanghai sales team with commission"
FINISHED = {"completed", "failed", "blocked", "rolled_back", "stopped"}


FAST = {"KEEL_LEASE_SECONDS": "3", "KEEL_SWEEP_SECONDS": "1"}
pytestmark = pytest.mark.keel("production", FAST, workers=2, beat=True)


@pytest.fixture(scope="module")
def apis(keel):
    return Api(keel.base_url, "alice"), Api(keel.base_url, "bob")


def multipart(api: Api, path: str, fields: dict[str, str], files: dict[str, tuple[str, bytes]]):
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, (filename, content) in files.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    req = urllib.request.Request(api.base_url + path, data=body, method="POST", headers={
        "Authorization": f"Token {api.token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def conversation(api: Api) -> str:
    status, body = api.post("/api/v1/conversations/", {"title": "integration"})
    assert status == 201
    return body["id"]


def test_a_message_with_an_employee_list_sets_up_the_group_and_assigns_them(keel, apis):
    alice, bob = apis
    conv = conversation(alice)
    csv = b"employee_no,name\nD-0011,\nD-0012,\n"
    status, reply = multipart(alice, f"/api/v1/conversations/{conv}/messages/",
                              {"text": COMPLETE.replace("Shanghai sales team", "Shanghai sales team, called 'Integration Sales',")},
                              {"attachment": ("team.csv", csv)})
    assert status == 201, reply
    assert reply["intent"] == "resolve" and reply["run_id"]
    run = alice.wait_for_run(reply["run_id"], {"awaiting_approval"})
    assert [n["key"] for n in run["nodes"] if n["key"] == "assign"] == ["assign"]
    approval = next(a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run["id"])
    status, _ = bob.post(f"/api/v1/approvals/{approval['id']}/approve/", {"comment": "ok"})
    assert status == 200
    run = alice.wait_for_run(run["id"], FINISHED)
    assert run["status"] == "completed", run["status_reason"]
    group = next(g for g in alice.get("/api/v1/payroll/groups/")["results"] if g["name"] == "Integration Sales")
    assert group["employee_count"] == 2
    # The agent told the conversation what happened, from the engine's events (agents.news):
    # who must approve, then that it is done.
    deadline, told = time.monotonic() + 30, []
    while time.monotonic() < deadline:
        told = [e["data"]["text"] for e in alice.get(f"/api/v1/conversations/{conv}/events/?after=0")["results"]
                if e["type"] == "message.news"]
        if len(told) >= 2:
            break
        time.sleep(0.2)
    assert told[:1] and "waiting for" in told[0], told
    assert told[-1].startswith("Done: the payroll group “Integration Sales” has been created."), told
    assert "Trial payroll for 2 employees" in told[-1], told  # the trial's totals

    status, chat = alice.post(f"/api/v1/conversations/{conv}/messages/", {"text": "thanks!"})
    assert status == 201 and chat["intent"] == "chat" and chat["run_id"] is None
    events = alice.get(f"/api/v1/conversations/{conv}/events/?after=0")["results"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    mine = [e for e in events if e["type"].startswith("message.")]
    assert [e["type"] for e in mine][:1] == ["message.received"]
    assert [e["data"]["text"] for e in mine if e["type"] == "message.reply"][-1] == chat["reply"]


def test_a_run_waiting_for_input_resumes_on_continue_in_a_later_turn(keel, apis):
    alice, bob = apis
    conv = conversation(alice)
    status, reply = alice.post(f"/api/v1/conversations/{conv}/messages/",
                               {"text": "set up payroll for our US employees"})  # a genuine tie
    assert status == 201 and reply["run_id"], reply
    run = alice.wait_for_run(reply["run_id"], {"awaiting_input"})
    assert [n["key"] for n in run["nodes"] if n["status"] == "awaiting_input"] == ["match"]
    status, resumed = alice.post(f"/api/v1/conversations/{conv}/messages/", {"text": "continue"})
    assert status == 201 and resumed["run_id"] == run["id"]
    run = alice.wait_for_run(run["id"], {"awaiting_approval"})
    assert {n["key"]: n["status"] for n in run["nodes"]}["match"] == "completed"

    # The replay posts both turns again (the request, then "continue" answering the
    # run's question) in a sandbox, beside the workers, and goes the same way.
    status, replayed = Api(keel.base_url, "dora").post(f"/api/v1/runs/{run['id']}/replay/")
    assert status == 200, replayed
    assert replayed["identical"] is True, replayed["differences"]
    assert [(t["text"], t["route"]) for t in replayed["replayed"]["turns"]] == [
        ("set up payroll for our US employees", replayed["recorded"]["turns"][0]["route"]),
        ("continue", "resume_run")]


def test_bad_input_is_refused_and_another_tenant_sees_nothing(keel, apis):
    alice, _ = apis
    conv = conversation(alice)
    before = alice.get(f"/api/v1/conversations/{conv}/events/?after=0")["last_seq"]
    status, body = multipart(alice, f"/api/v1/conversations/{conv}/messages/", {"text": COMPLETE},
                             {"attachment": ("team.csv", b"employee_no\nD-0001\nNOPE-1\n")})
    assert status == 400 and "Line 3" in body["detail"]
    status, _ = alice.post(f"/api/v1/conversations/{conv}/messages/", {"text": ""})
    assert status == 400
    assert alice.get(f"/api/v1/conversations/{conv}/events/?after=0")["last_seq"] == before
    oscar = Api(keel.base_url, "oscar")
    status, _ = oscar.post(f"/api/v1/conversations/{conv}/messages/", {"text": "hi"})
    assert status == 404


# --- the same conversation on the `openai` backend ----------------------
# A loopback OpenAI-protocol server (tests/fake_openai.py) answers the server process and
# the workers; each test scripts what the model says.



@pytest.fixture(scope="module")
def model_server():
    fake = FakeOpenAI.start()
    yield fake
    fake.stop()


@pytest.fixture(scope="module")
def keel_openai(model_server):
    """A second Keel whose model is the fake OpenAI server (its address is known only once it runs)."""
    with keel_running("production", {**FAST, "KEEL_LLM": "openai", "OPENAI_BASE_URL": model_server.base_url,
                                     "KEEL_LLM_MODEL": "fake-model", "OPENAI_API_KEY": "", "KEEL_LLM_TIMEOUT": "20"},
                      workers=1, beat=True) as keel:
        yield keel


@pytest.fixture
def model(model_server):
    model_server.reset()
    model_server.chunk, model_server.delay = 4, 0.0
    return model_server


def frame_names(keel, activity_id: str) -> list[tuple[str, str]]:
    with psycopg.connect(keel.env["DATABASE_URL"]) as conn:
        return conn.execute("SELECT name, status FROM timeline_frame WHERE activity_id = %s ORDER BY started_at, id",
                            (int(activity_id),)).fetchall()


def test_openai_a_payroll_request_goes_from_intent_to_a_started_run(keel_openai, model):
    alice, bob = Api(keel_openai.base_url, "alice"), Api(keel_openai.base_url, "bob")
    model.script("intent", [json.dumps({"signal": "resolve", "reason": "asks to set up a payroll group"})])
    model.script("requirements", [json.dumps({
        "region": "CN-SH", "city": "Shanghai", "pay_frequency": "monthly", "population": "sales",
        "items_named": ["commission"], "group_name": "Model Sales", "name_stated": True, "headcount": None,
        "legacy": False})])
    conv = conversation(alice)
    status, reply = alice.post(f"/api/v1/conversations/{conv}/messages/",
                               {"text": "pls set up monthly pay for the shanghai sales ppl w/ commission, call it Model Sales"})
    assert status == 201, reply
    assert reply["intent"] == "resolve" and reply["run_id"]
    assert "Model Sales" in reply["reply"]
    run = alice.wait_for_run(reply["run_id"], {"awaiting_approval"})
    match = next(n for n in run["nodes"] if n["key"] == "match")
    assert match["status"] == "completed"
    approval = next(a for a in bob.get("/api/v1/approvals/?status=pending")["results"] if a["run"] == run["id"])
    assert approval["arguments"]["group_name"] == "Model Sales"
    # the template the chat named is the one the run imports: one decision, one path
    template = approval["summary"].split("“")[1].split("”")[0]
    assert f"“{template}”" in reply["reply"] and "commission" in template.lower()
    # structured output was asked of the model, once each: the worker decided on the same reading
    assert [r["body"]["response_format"]["json_schema"]["name"] for r in model.requests
            if r["body"].get("response_format")] == ["intent", "requirements"]
    # The replay answers the turn's structured calls from the record, never the model.
    asked = len(model.requests)
    status, replayed = Api(keel_openai.base_url, "dora").post(f"/api/v1/runs/{run['id']}/replay/")
    assert status == 200, replayed
    assert replayed["identical"] is True, replayed["differences"]
    assert replayed["replayed"]["turns"][0]["intent"] == "resolve" and "Model Sales" in \
        replayed["replayed"]["turns"][0]["reply"]
    assert len(model.requests) == asked


def test_openai_malformed_json_is_repaired_once_then_the_fallback_is_recorded(keel_openai, model):
    alice = Api(keel_openai.base_url, "alice")
    model.script("intent", ["resolve!", json.dumps({"signal": "resolve", "reason": "a set-up request"})])
    model.script("requirements", ["```json\n{\"region\": \"CN-SH\",", "{\"region\": 7}"])
    conv = conversation(alice)
    status, reply = alice.post(f"/api/v1/conversations/{conv}/messages/", {"text": COMPLETE})
    assert status == 201 and reply["intent"] == "resolve" and reply["run_id"], reply
    names = dict(frame_names(keel_openai, reply["activity_id"]))
    assert names["intent: repaired"] == "ok"
    assert names["requirements: fallback to rules"] == "error"
    assert len(model.seen("intent")) == 2 and len(model.seen("requirements")) == 2
    run = alice.wait_for_run(reply["run_id"], {"awaiting_approval"})
    assert run["status"] == "awaiting_approval"  # the rules' reading carried the run on


async def _watch(keel, session: Session, conv: str, post):
    """Collect the conversation's events over the websocket while `post` runs in a thread."""
    url = keel.base_url.replace("http://", "ws://") + f"/ws/conversations/{conv}/?after=0"
    seen: list[tuple[float, dict]] = []
    async with websockets.connect(url, additional_headers={"Cookie": session.cookie_header(),
                                                           "Origin": keel.base_url}) as ws:
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "resumed"
        task = asyncio.create_task(asyncio.to_thread(post))
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if message.get("type") != "timeline.event":
                continue
            seen.append((time.monotonic(), message["event"]))
            if message["event"]["type"] == "message.reply":
                break
        posted = await task
    return seen, posted


def test_openai_a_question_is_answered_by_a_tool_call_streamed_to_the_websocket(keel_openai, model):
    alice = Session(keel_openai.base_url, "alice")
    api = Api(keel_openai.base_url, "alice")
    model.chunk, model.delay = 5, 0.08
    answer = "You have these payroll groups right now; the list comes from the records."
    model.script("intent", [json.dumps({"signal": "analyze", "reason": "asks which groups exist"})])
    model.script("tools", [{"content": "", "tool_calls": [{"name": "list_groups", "arguments": {}}]}])
    model.script("tool_result", [answer])
    conv = conversation(api)
    done: dict = {}

    def post():
        done["status"], done["reply"] = api.post(f"/api/v1/conversations/{conv}/messages/",
                                                 {"text": "which payroll groups do we have?"})
        done["at"] = time.monotonic()

    seen, _ = asyncio.run(_watch(keel_openai, alice, conv, post))
    assert done["status"] == 201 and done["reply"]["reply"] == answer
    deltas = [(t, e) for t, e in seen if e["type"] == "message.delta"]
    final = [e for _, e in seen if e["type"] == "message.reply"]
    assert len(deltas) >= 3, [e["type"] for _, e in seen]
    assert "".join(e["data"]["text"] for _, e in deltas) == answer == final[0]["data"]["text"]
    # they arrived as the model produced them: the first well before the last
    assert deltas[-1][0] - deltas[0][0] > 0.2
    assert model.seen("tools")[0]["body"]["tools"] and model.seen("tool_result")[0]["body"]["stream"] is True
    names = [n for n, _ in frame_names(keel_openai, done["reply"]["activity_id"])]
    assert "action: list_groups" in names and "observation: list_groups" in names
    # the reply is stored once
    events = api.get(f"/api/v1/conversations/{conv}/events/?after=0")["results"]
    assert [e["type"] for e in events].count("message.reply") == 1

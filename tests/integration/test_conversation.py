"""The conversation front on PostgreSQL + Redis + real `celery worker` processes:
a message with an employee list starts the plan, an approver approves, the workers
finish it and assign the employees; a run waiting for input resumes on "continue" in a
later turn; the reply reaches the event log in order."""
import json
import urllib.request
import uuid

import pytest

from tests.support import Api, keel_start, keel_stop

COMPLETE = "set up a monthly payroll group for our Shanghai sales team with commission"
FINISHED = {"completed", "failed", "blocked", "rolled_back", "stopped"}


@pytest.fixture(scope="module")
def keel(tmp_path_factory):
    keel = keel_start("production", tmp_path_factory.mktemp("conversation"),
                      {"KEEL_LEASE_SECONDS": "3", "KEEL_SWEEP_SECONDS": "1"})
    keel.worker_start(concurrency=2)
    keel.worker_start(concurrency=2)
    keel.beat_start()
    yield keel
    keel_stop(keel)


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
                               {"text": "set up payroll for our US employees"})  # a genuine tie (issue 11)
    assert status == 201 and reply["run_id"], reply
    run = alice.wait_for_run(reply["run_id"], {"awaiting_input"})
    assert [n["key"] for n in run["nodes"] if n["status"] == "awaiting_input"] == ["match"]
    status, resumed = alice.post(f"/api/v1/conversations/{conv}/messages/", {"text": "continue"})
    assert status == 201 and resumed["run_id"] == run["id"]
    run = alice.wait_for_run(run["id"], {"awaiting_approval"})
    assert {n["key"]: n["status"] for n in run["nodes"]}["match"] == "completed"


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

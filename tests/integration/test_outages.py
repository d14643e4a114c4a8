"""Outages lose no word and lie to no client. A production-topology Keel (server, two
`celery worker` processes of four slots each, as the README starts them, beat) on a Redis and a PostgreSQL of the test's own, which it
SIGKILLs and starts again:

- the broker killed while runs wait for their approvals, which are decided during the
  outage (each 2xx, recorded); then the database killed while the runs are working —
  every run completes, once (one group each, however often a client retried its start
  with its Idempotency-Key), no response is a 500, every news message the chat owes is
  posted exactly once, and every run moves again within 5 s of each service's return, or
  of a slot coming free for it (the import holds a slot a second; a worker runs a chain in
  place for a second at most, workflows.hop.in_place_budget, so no run waits for another's
  whole chain on a busy slot);
- with the database down, `GET runs/` answers 503 with Retry-After in under 2 s and
  /readyz names the database;
- every write door (approve, reject, runs/, messages, cancel, retry, input) answers 2xx
  with its decision recorded while the broker is down, and what follows it is delivered
  once the broker is back.

`KEEL_OUTAGE_RUNS` runs per outage (20) and `KEEL_OUTAGE_SECONDS` per outage (10) size
the first test, as the outage was first measured; it prints its figures as one JSON line."""
from __future__ import annotations

import json
import os
import threading
import time
import uuid
from datetime import datetime

import psycopg
import pytest

from agents.models import Message
from outbox.models import OutboxMessage
from payroll.models import PayrollGroup
from tests.integration.outage_services import OwnPostgres, OwnRedis
from tests.support import PYTHON, Api, Keel, _base_env, _spawn, _wait_for_http, free_port, template
from timeline.models import Event
from workflows.models import Node, Run, ToolCall

# The tables by their models' names: another branch may rename one.
EVENTS, MESSAGES, OUTBOX = Event._meta.db_table, Message._meta.db_table, OutboxMessage._meta.db_table
RUNS_TABLE, CALLS, GROUPS = Run._meta.db_table, ToolCall._meta.db_table, PayrollGroup._meta.db_table
NODES = Node._meta.db_table

pytestmark = pytest.mark.long(150)  # seconds (the session's templates made); started first (conftest.py)

RUNS = int(os.environ.get("KEEL_OUTAGE_RUNS", "20"))
OUTAGE_SECONDS = float(os.environ.get("KEEL_OUTAGE_SECONDS", "10"))
RESUME_WITHIN = 5.0  # from the service's return to a run's first sign of moving, while a slot is free
SLOTS = 2 * 4  # the deployment's worker slots
STEP_HOLD = 1.0  # seconds the import holds its slot (KEEL_FAULTS below)
REQUEST = "set up a monthly payroll group for our Shanghai sales team with commission"
PROGRESS = ("node.status", "run.status", "node.reclaimed")  # a run moving, not a message about it


@pytest.fixture(scope="module")
def deployment():
    redis, pg = OwnRedis(), OwnPostgres()
    keel = None
    try:
        redis.start()
        pg.start()
        pg.load_copy_of(template("production"))
        env = _base_env()
        env.update({"DATABASE_URL": pg.url, "REDIS_URL": redis.url, "KEEL_QUEUE": f"keel-{uuid.uuid4().hex[:8]}",
                    "KEEL_CHANNEL_PREFIX": f"keel-test-{uuid.uuid4().hex[:8]}",
                    # The import takes a while, as a remote system of record's would: the database
                    # dies under steps at work.
                    "KEEL_FAULTS": f"import_template.after=sleep:{STEP_HOLD:g}"})
        port = free_port()
        keel = Keel(base_url=f"http://127.0.0.1:{port}", env=env)
        server = _spawn([PYTHON, "manage.py", "serve", "--port", str(port)], env, f"server-outages-{port}")
        keel.procs.append(server)
        _wait_for_http(keel.base_url + "/login/", server)
        # Two worker processes of four slots each, as the README's production section starts them.
        for _ in range(SLOTS // 4):
            keel.worker_start(concurrency=4)
        keel.beat_start()
        yield keel, redis, pg
    finally:
        if keel is not None:
            keel.stop()
        redis.stop()
        pg.stop()


class Client(Api):
    """An API client that notes every answer's status and time, and retries what an
    outage refuses (no answer, 503) with the same request and Idempotency-Key."""

    answers: list[tuple[str, str, int, float]] = []
    lock = threading.Lock()

    def request(self, method, path, body=None, headers=None):
        started = time.monotonic()
        try:
            status, answer = super().request(method, path, body, headers)
        except OSError as err:  # the server is never killed; a reset connection is still noted
            status, answer = 0, {"error": str(err)}
        with self.lock:
            self.answers.append((method, path, status, time.monotonic() - started))
        return status, answer

    def until_answered(self, method, path, body=None, headers=None, timeout=120) -> tuple[int, dict]:
        deadline = time.monotonic() + timeout
        while True:
            status, answer = self.request(method, path, body, headers)
            if status not in (0, 503) or time.monotonic() > deadline:
                return status, answer
            time.sleep(0.3)

    def wait_for(self, predicate, what: str, timeout: float = 180, report=lambda: ""):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status, answer = self.request("GET", "/api/v1/runs/?limit=500")
            if status == 200 and predicate(answer["results"]):
                return answer["results"]
            time.sleep(0.3)
        raise AssertionError(f"timed out waiting for {what}: {report()}")


def start_runs(alice: Client, names: list[str]) -> list[str]:
    ids = []
    for name in names:
        key = f"start-{name}-{uuid.uuid4().hex[:6]}"  # every retry of this start sends it
        status, run = alice.until_answered("POST", "/api/v1/runs/", {
            "blueprint": "payroll_group_setup", "params": {"request": REQUEST, "group_name": name}},
            headers={"Idempotency-Key": key})
        assert status == 201, run
        ids.append(run["id"])
    return ids


def pending_for(bob: Client, run_ids: list[str]) -> list[dict]:
    status, answer = bob.request("GET", "/api/v1/approvals/?status=pending")
    return [a for a in answer["results"] if a["run"] in run_ids] if status == 200 else []


def wait_pending(bob: Client, run_ids: list[str], timeout: float = 180, report=lambda: "") -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = pending_for(bob, run_ids)
        if {a["run"] for a in pending} == set(run_ids):
            return pending
        time.sleep(0.3)
    raise AssertionError(f"not every run asked for its approval: {pending_for(bob, run_ids)}; {report()}")


def approve_all(bob: Client, approvals: list[dict]) -> list[int]:
    return [bob.until_answered("POST", f"/api/v1/approvals/{a['id']}/approve/", {"comment": "outage"})[0]
            for a in approvals]


def steps_not_done(url: str, run_ids: list[str]) -> list[tuple]:
    """What a run that did not finish is waiting on: its steps not completed, with their
    status, reason, attempts, lease and the state of their tool calls."""
    with psycopg.connect(url) as conn:
        return conn.execute(
            f"SELECT n.run_id, n.key, n.status, left(n.status_reason, 160), n.attempts, n.lease_owner, "
            f"n.lease_expires_at, n.dispatched_at, array_agg(c.status || ': ' || left(c.error, 120)) "
            f"FROM {NODES} n LEFT JOIN {CALLS} c ON c.node_id = n.id WHERE n.run_id = ANY(%s) "
            f"AND n.status NOT IN ('completed', 'skipped') AND n.retired_in IS NULL GROUP BY n.id",
            ([int(r) for r in run_ids],)).fetchall()


def finished(results: list[dict], run_ids: list[str], statuses=("completed",)) -> bool:
    by_id = {r["id"]: r["status"] for r in results}
    return all(by_id.get(r) in statuses for r in run_ids)


def first_progress_after(url: str, run_ids: list[str], moment: float) -> dict[str, float]:
    """Per run, seconds from `moment` to the first sign of it moving after it: a step's tool
    starting, or a step or status change."""
    since = datetime.fromtimestamp(moment).astimezone()
    ids = [int(r) for r in run_ids]
    with psycopg.connect(url) as conn:
        rows = conn.execute(f"SELECT run_id, min(at) FROM ("
                            f"SELECT run_id, created_at AS at FROM {EVENTS} WHERE run_id = ANY(%s) AND type = ANY(%s) "
                            f"AND created_at > %s UNION ALL SELECT run_id, started_at FROM {CALLS} "
                            f"WHERE run_id = ANY(%s) AND started_at > %s) moved GROUP BY run_id",
                            (ids, list(PROGRESS), since, ids, since)).fetchall()
    return {str(run_id): round(at.timestamp() - moment, 2) for run_id, at in rows}


def resumed_figures(resumed: dict[str, float]) -> dict:
    latencies = sorted(resumed.values()) or [float("nan")]
    return {"resumed_first_s": latencies[0], "resumed_median_s": latencies[len(latencies) // 2],
            "resumed_last_s": latencies[-1]}


def assert_resumed(resumed: dict[str, float], run_ids: list[str], figures: dict) -> None:
    """Every run moved again, the first SLOTS of them within RESUME_WITHIN of the service's
    return: the recovery waited for no lease. A later run waits its turn for a slot as well:
    each wave before its own holds every slot for an import (STEP_HOLD), so the k-th run to
    move is allowed a wave more per SLOTS runs before it."""
    assert set(resumed) == set(run_ids), (resumed, figures)
    late = {run: seconds for k, (run, seconds) in enumerate(sorted(resumed.items(), key=lambda item: item[1]))
            if seconds > RESUME_WITHIN + (k // SLOTS) * STEP_HOLD}
    assert not late, (late, figures)


def news_owed_and_posted(url: str, run_ids: list[str]) -> tuple[int, int, int, int]:
    """(news owed, posted once, missing, left in the outbox) for these runs' approval
    requests and completions."""
    with psycopg.connect(url) as conn:
        owed = [f"event:{e}" for (e,) in conn.execute(
            f"SELECT id FROM {EVENTS} WHERE run_id = ANY(%s) AND (type = 'approval.requested' "
            "OR (type = 'run.status' AND data->>'to' = 'completed'))", ([int(r) for r in run_ids],)).fetchall()]
        posted = dict(conn.execute(f"SELECT news_of, count(*) FROM {MESSAGES} WHERE news_of = ANY(%s) "
                                   "GROUP BY news_of", (owed,)).fetchall())
        left = conn.execute(f"SELECT count(*) FROM {OUTBOX}").fetchone()[0]
    once = sum(1 for key in owed if posted.get(key) == 1)
    return len(owed), once, sum(1 for key in owed if key not in posted), left


@pytest.mark.timeout(900)
def test_runs_survive_a_broker_kill_then_a_database_kill(deployment):
    keel, redis, pg = deployment
    Client.answers = []
    alice, bob = Client(keel.base_url, "alice"), Client(keel.base_url, "bob")
    tag = uuid.uuid4().hex[:4]
    figures: dict = {"runs_per_outage": RUNS, "outage_seconds": OUTAGE_SECONDS}

    # 1. The broker: runs wait for approvals; the broker dies; the approvals are decided
    #    meanwhile (committed, answered 2xx; their steps' messages cannot be sent).
    first = start_runs(alice, [f"Outage {tag} B{i}" for i in range(RUNS)])
    approvals = wait_pending(bob, first, report=lambda: steps_not_done(pg.url, first))
    redis.kill()
    killed = time.monotonic()
    decided = approve_all(bob, approvals)
    assert decided == [200] * RUNS, decided
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - killed)))
    back = redis.start()
    alice.wait_for(lambda rs: finished(rs, first), "the broker phase's runs to complete",
                   report=lambda: steps_not_done(pg.url, first))
    resumed = first_progress_after(pg.url, first, back)
    figures["broker"] = {"approvals_during_outage": decided.count(200), **resumed_figures(resumed)}
    assert_resumed(resumed, first, figures)

    # 2. The database: runs approved and at work; the database dies under them.
    second = start_runs(alice, [f"Outage {tag} D{i}" for i in range(RUNS)])
    assert approve_all(bob, wait_pending(bob, second, report=lambda: steps_not_done(pg.url, second))) == [200] * RUNS
    pg.kill()
    killed_at = time.time()
    status, answer = alice.request("GET", "/api/v1/runs/")
    refused_in = Client.answers[-1][3]
    health = alice.request("GET", "/healthz")[0]
    ready_status, ready = alice.request("GET", "/readyz")
    figures["database_down"] = {"runs_status": status, "runs_seconds": round(refused_in, 3),
                                "readyz": ready_status, "readyz_database": ready.get("checks", {}).get("database")}
    assert status == 503 and answer["code"] == "database_unavailable" and refused_in < 2, figures
    assert health == 200 and ready_status == 503 and ready["checks"]["database"].startswith("down"), ready
    assert ready["checks"]["broker"] == "ok", ready
    time.sleep(max(0.0, OUTAGE_SECONDS - (time.time() - killed_at)))
    back = pg.start()
    results = alice.wait_for(lambda rs: finished(rs, second), "the database phase's runs to complete",
                             report=lambda: steps_not_done(pg.url, second))
    with psycopg.connect(pg.url) as conn:
        in_flight = [str(r) for (r,) in conn.execute(
            f"SELECT id FROM {RUNS_TABLE} WHERE id = ANY(%s) AND finished_at > %s",
            ([int(r) for r in second], datetime.fromtimestamp(killed_at).astimezone())).fetchall()]
    resumed = first_progress_after(pg.url, in_flight, back)
    assert in_flight, "every run finished before the database was killed: nothing was in flight"
    figures["database"] = {"runs_in_flight_at_kill": len(in_flight), **resumed_figures(resumed)}
    assert_resumed(resumed, in_flight, figures)

    # 3. What everyone got: every run once, complete; no 500; the news, once each.
    everyone = first + second
    mine = [r for r in results if r["id"] in everyone]
    with psycopg.connect(pg.url) as conn:
        groups = dict(conn.execute(f"SELECT name, count(*) FROM {GROUPS} WHERE name LIKE %s GROUP BY name",
                                   (f"Outage {tag} %",)).fetchall())
        runs_made = conn.execute(f"SELECT count(*) FROM {RUNS_TABLE} WHERE params->>'group_name' LIKE %s",
                                 (f"Outage {tag} %",)).fetchone()[0]
    deadline = time.monotonic() + 30
    while (news := news_owed_and_posted(pg.url, everyone))[2] and time.monotonic() < deadline:
        time.sleep(0.5)  # the outbox's sweep posts what a lost message left behind
    figures.update({
        "runs": len(everyone), "completed": sum(r["status"] == "completed" for r in mine),
        "stuck": sum(r["status"] != "completed" for r in mine), "runs_made": runs_made,
        "duplicate_groups": sum(count - 1 for count in groups.values()), "groups": len(groups),
        "responses_500": sum(1 for a in Client.answers if a[2] == 500),
        "responses_503": sum(1 for a in Client.answers if a[2] == 503),
        "news_owed": news[0], "news_posted_once": news[1], "news_missing": news[2], "outbox_left": news[3]})
    print(json.dumps(figures))
    assert figures["completed"] == figures["runs"] == runs_made == len(groups) == 2 * RUNS, figures
    assert figures["duplicate_groups"] == 0 and figures["responses_500"] == 0, figures
    assert news[0] == news[1] and news[2] == 0, figures


@pytest.mark.timeout(300)
def test_a_burst_on_a_healthy_database_waits_its_turn_and_gets_no_503(deployment):
    """Forty requests at once on a server whose pool holds ten connections (KEEL_DB_POOL's
    default): the database is up, so the pool is a queue, not an outage."""
    keel, _redis, _pg = deployment
    alice = Client(keel.base_url, "alice")
    statuses: list[int] = []

    def read():
        status, _ = alice.request("GET", "/api/v1/runs/?limit=100")
        with Client.lock:
            statuses.append(status)

    threads = [threading.Thread(target=read) for _ in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(set(statuses)) == [200] and len(statuses) == 40, statuses


@pytest.mark.timeout(600)
def test_every_write_door_answers_its_decision_while_the_broker_is_down(deployment):
    keel, redis, pg = deployment
    alice, bob = Client(keel.base_url, "alice"), Client(keel.base_url, "bob")
    tag = uuid.uuid4().hex[:4]
    approve, reject, cancel = start_runs(alice, [f"Door {tag} {what}" for what in ("approve", "reject", "cancel")])
    by_run = {a["run"]: a for a in wait_pending(bob, [approve, reject, cancel],
                                                report=lambda: steps_not_done(pg.url, [approve, reject, cancel]))}
    # Its group's name is taken by the first run: it asks for another, and waits.
    clash = start_runs(alice, [f"Door {tag} approve"])[0]
    alice.wait_for(lambda rs: finished(rs, [clash], ("awaiting_input",)), "the clash to ask for another name")
    status, conversation = alice.request("POST", "/api/v1/conversations/", {"title": "door"})
    assert status == 201

    redis.kill()
    try:
        doors = {
            "approve": bob.request("POST", f"/api/v1/approvals/{by_run[approve]['id']}/approve/", {"comment": "ok"}),
            "reject": bob.request("POST", f"/api/v1/approvals/{by_run[reject]['id']}/reject/", {"comment": "no"}),
            "cancel": alice.request("POST", f"/api/v1/runs/{cancel}/cancel/", {"reason": "not now"}),
            "input": alice.request("POST", f"/api/v1/runs/{clash}/input/", {"answer": f"Door {tag} renamed"}),
            "runs": alice.request("POST", "/api/v1/runs/", {"blueprint": "payroll_group_setup", "params": {
                "request": REQUEST, "group_name": f"Door {tag} started"}}, {"Idempotency-Key": f"door-{tag}"}),
            "messages": alice.request("POST", f"/api/v1/conversations/{conversation['id']}/messages/",
                                      {"text": f"{REQUEST}, call it Door {tag} chat"}),
        }
        statuses = {door: status for door, (status, _) in doors.items()}
        assert all(200 <= s < 300 for s in statuses.values()), (statuses, doors)
        # The decisions are recorded, and said so in the answers.
        assert doors["approve"][1]["status"] == "approved" and doors["reject"][1]["status"] == "rejected", doors
        started, chat_run = doors["runs"][1]["id"], doors["messages"][1]["run_id"]
        assert chat_run
        # The rejection blocked its run in the deciding transaction: retry it, a new attempt.
        assert alice.request("GET", f"/api/v1/runs/{reject}/")[1]["status"] == "blocked"
        doors["retry"] = alice.request("POST", f"/api/v1/runs/{reject}/retry/", {"reason": "try again"})
        assert doors["retry"][0] == 200, doors["retry"]
    finally:
        redis.start()

    # What follows each decision is delivered once the broker is back.
    results = alice.wait_for(lambda rs: finished(rs, [approve]) and finished(rs, [cancel], ("cancelled",))
                             and finished(rs, [clash, started, chat_run, reject], ("awaiting_approval", "completed")),
                             "every door's follow-up", timeout=120)
    assert {r["id"]: r["status"] for r in results}[approve] == "completed"
    with psycopg.connect(pg.url) as conn:
        told = conn.execute(f"SELECT count(*) FROM {MESSAGES} m JOIN {EVENTS} e ON m.news_of = 'event:' || e.id "
                            "WHERE e.run_id = %s AND e.type = 'approval.rejected'", (int(reject),)).fetchone()[0]
    assert told == 1  # the rejection is told in the chat, once

"""The engine's statements, and the one writer of a node's or a run's status.

Every status change, its Transition row and its count against the run's transition cap
are written here: by the hop's hand-written PostgreSQL (the hot path, no ORM query) or by
the general path's compare-and-set (node_status_set, run_status_set, through the ORM).
workflows.transitions decides them — the allowed-transition table, the events, what the
cap stops — and writes nothing of its own.

A hop — complete a node, record it, promote its successors, claim the next — costs one
prepared statement (a transaction of its own) or a handful in one transaction. Each
statement is a data-modifying CTE whose parts hang on its compare-and-set UPDATE: a lost
race writes nothing and returns no row. Timeline rows are the timeline's SQL (timeline/sql.py).
Each function's docstring says what its statement writes, why a concurrent worker and a kill
leave it whole ("Safe:"), and the test that proves it ("Proof:")."""
from __future__ import annotations

from functools import lru_cache
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import F

from config import sql
from config.ids import new_id
from timeline.services import events_owed_params
from timeline.sql import EVENTS_WRITTEN, activities_close, activities_open, events_insert_ctes

from .call_sql import call_ctes, call_params
from .models import RUN_TERMINAL, Node, Run, Transition

_TERMINAL = sorted(str(s) for s in RUN_TERMINAL)
_NODE_COLS = [f.column for f in Node._meta.concrete_fields]
_RUN_COLS = [f.column for f in Run._meta.concrete_fields]
_JSON_NODE = {f.column for f in Node._meta.concrete_fields if f.get_internal_type() == "JSONField"}
_JSON_RUN = {f.column for f in Run._meta.concrete_fields if f.get_internal_type() == "JSONField"}


_TERMINAL_ARRAY = sql.text_array(_TERMINAL)
_NONE = "SELECT 0::bigint WHERE false"  # no node ids, as an SQL set


@lru_cache(maxsize=64)
def _text_array_of(values: tuple[str, ...]) -> str:
    return sql.text_array(list(values))


def _text_array(values: list[str]) -> str:
    """The tools a statement may claim, as an array literal formatted once per set."""
    return _text_array_of(tuple(values))


@dataclass
class Claimed:
    """A node this worker holds the lease of, with its run as loaded at the claim."""

    node: Node
    run: Run
    busy: bool = False  # claimed in place while other nodes of its run were active


_JSON_NODE_AT = [i for i, c in enumerate(_NODE_COLS) if c in _JSON_NODE]
_JSON_RUN_AT = [i for i, c in enumerate(_RUN_COLS) if c in _JSON_RUN]


def _loaded(model, values: list, json_at: list[int]):
    """A model instance from a row of all its concrete columns, in their order (as a
    queryset loads one: positional, no keyword matching)."""
    for i in json_at:
        values[i] = sql.json_value(values[i])
    return model.from_db("default", None, values)


def _node_and_run(row) -> tuple[Node, Run]:
    """A node and its run from a row of the node's columns, then the run's."""
    n = len(_NODE_COLS)
    run = _loaded(Run, list(row[n:n + len(_RUN_COLS)]), _JSON_RUN_AT)
    node = _loaded(Node, list(row[:n]), _JSON_NODE_AT)
    node.run = run
    return node, run


def _rows_to_claimed(rows) -> list[Claimed]:
    return [Claimed(*_node_and_run(row)) for row in rows]


def _others_active(run: str, besides: str) -> str:
    """SQL: whether nodes of run `run` other than those `besides` (an SQL set) are ready or
    in progress — what decides whether a hop may promote on its own snapshot."""
    return (f"EXISTS (SELECT 1 FROM workflows_node o WHERE o.run_id = {run} AND o.retired_in IS NULL"
            f" AND o.status IN ('ready', 'in_progress') AND o.id NOT IN ({besides}))")


# Status writes: what every statement composes (a CTE each), and the general path's own.


def transitions_insert(name: str, rows: str) -> str:
    """A CTE `name` writing the Transition rows that the SELECT `rows` lists: (run, node,
    from, to, reason, worker, at), one a status change."""
    return f"""{name} AS (
  INSERT INTO workflows_transition (run_id, node_id, from_status, to_status, reason, worker, at)
  {rows}
)"""


def transitions_counted(name: str, run: str, n: str, when: str = "true") -> str:
    """A CTE `name` counting `n` more transitions of run `run` (SQL expressions) against its
    cap, when `when` holds: a row when they stay within it; none, and nothing counted, when
    they would pass it (the caller stops the run: workflows.transitions.cap_overrun)."""
    return f"""{name} AS (
  UPDATE workflows_run SET transition_count = transition_count + {n}
   WHERE ({when}) AND workflows_run.id = {run} AND transition_count <= transition_cap - {n}
  RETURNING 1
)"""


_COUNT = sql.Statement(f"WITH {transitions_counted('counted', '%(run)s', '%(n)s::int')} SELECT count(*) FROM counted")


def transitions_count(run_id: int, n: int) -> bool:
    """n more transitions against the run's cap; False when it would pass the cap. Safe: one
    conditional UPDATE of the run's row, in the caller's transaction. Proof: test_hot_path.py::
    test_a_chain_stops_at_its_transition_cap_and_nothing_runs_after_it."""
    return bool(sql.execute(_COUNT, {"run": run_id, "n": n}, fetch="one")[0])


def transitions_count_full(run_id: int) -> None:
    """The run's count at its cap: a count that would pass it stopped the run there."""
    Run.objects.filter(id=run_id).update(transition_count=F("transition_cap"))


def node_status_set(node: Node, frm: str, to: str, *, reason: str, worker: str, fields: dict[str, Any]) -> bool:
    """frm → to for one node, with `fields`, and its Transition row, in the caller's
    transaction (workflows.transitions.node_transition checks and counts it). False, nothing
    written, when the node is not `frm` any more. Safe: the compare-and-set (WHERE status =
    frm) gives the change to one writer; a kill before commit undoes both. Proof:
    test_lock_order.py, test_engine.py::test_every_transition_is_a_gapless_timeline_event."""
    if not Node.objects.filter(id=node.id, status=frm).update(status=to, status_reason=reason, **fields):
        return False
    Transition.objects.create(run_id=node.run_id, node=node, from_status=frm, to_status=to, reason=reason,
                              worker=worker)
    return True


def run_status_set(run: Run, frm: str, to: str, *, reason: str, fields: dict[str, Any]) -> bool:
    """frm → to for a run, with `fields`, and its Transition row (no node), as node_status_set.
    Proof: test_run_control.py, test_engine.py::test_the_transition_cap_stops_the_run."""
    if not Run.objects.filter(id=run.id, status=frm).update(status=to, status_reason=reason, **fields):
        return False
    Transition.objects.create(run=run, node=None, from_status=frm, to_status=to, reason=reason)
    return True


_READY = sql.Statement(f"""
SELECT {", ".join("n." + c for c in _NODE_COLS)}, {", ".join("r." + c for c in _RUN_COLS)},
       {_others_active("n.run_id", "n.id")}
  FROM workflows_node n JOIN workflows_run r ON r.id = n.run_id
 WHERE n.id = %(id)s AND n.status = 'ready' AND n.retired_in IS NULL AND r.status <> ALL(%(terminal)s::text[])
   AND n.tool = ANY(%(tools)s::text[])
""")


@dataclass
class Ready:
    """A ready node as read, with its run."""

    node: Node
    run: Run
    busy: bool  # whether other nodes of the run are active


def node_ready_read(node_id: int, *, tools: list[str]) -> Ready | None:
    """The node and its run if the node is ready, of a live run and has one of `tools`, and
    whether another node of the run is active: what a plain node's hop needs to run its tool
    before inline_hop claims and completes it. Safe: it reads only; inline_hop's compare-and-set
    decides. Proof: test_hot_path.py::test_a_node_run_twice_at_once_is_recorded_once."""
    row = sql.execute(_READY, {"id": node_id, "terminal": _TERMINAL_ARRAY, "tools": _text_array(tools)},
                      fetch="one")
    return None if row is None else Ready(*_node_and_run(row), bool(row[-1]))


# `all_runs_locked` is an InitPlan evaluated once, before the UPDATE reads its first row:
# every run is locked (in id order) before any node is.
def _claim_ctes() -> str:
    return f"""runs_locked AS (
  SELECT {", ".join("r." + c for c in _RUN_COLS)} FROM workflows_run r
   WHERE r.id IN (SELECT run_id FROM workflows_node WHERE id = ANY(%(ids)s::bigint[]))
   ORDER BY r.id FOR NO KEY UPDATE OF r
), all_runs_locked AS (
  SELECT count(*) AS locked FROM runs_locked
), claimed AS (
  UPDATE workflows_node n SET status = 'in_progress', status_reason = 'claimed', attempts = n.attempts + 1,
         lease_owner = %(me)s, lease_expires_at = %(lease)s, started_at = %(now)s,
         activity_id = COALESCE(n.activity_id, x.act)
    FROM unnest(%(ids)s::bigint[], %(acts)s::bigint[]) AS x(id, act), runs_locked r
   WHERE n.id = x.id AND n.status = 'ready' AND n.retired_in IS NULL AND r.id = n.run_id
     AND (SELECT locked FROM all_runs_locked) > 0 AND r.status <> ALL(%(terminal)s::text[]) AND n.tool = ANY(%(tools)s::text[])
  RETURNING {", ".join("n." + c for c in _NODE_COLS)}, {", ".join("r." + c + " AS r_" + c for c in _RUN_COLS)},
            (n.activity_id = x.act) AS opened
), {activities_open("activities", "SELECT claimed.activity_id AS id, claimed.r_conversation_id AS conversation_id, "
                                  "claimed.run_id, claimed.key, claimed.goal, claimed.goal_words FROM claimed WHERE claimed.opened")},
{transitions_insert("transitions", "SELECT claimed.run_id, claimed.id, 'ready', 'in_progress', 'claimed', %(me)s, %(now)s"
                                   " FROM claimed")}"""


_CLAIMED_COLUMNS = f'{", ".join("claimed." + c for c in _NODE_COLS)}, {", ".join("claimed.r_" + c for c in _RUN_COLS)}'
_CLAIM = sql.Statement(f"WITH {_claim_ctes()}\nSELECT {_CLAIMED_COLUMNS} FROM claimed")

# One node claimed outside a transaction, in one statement that is a transaction of its
# own (no BEGIN, no COMMIT round trip): the claim as _CLAIM, and what a transaction's end
# would add to it — the node.status event, numbered on its conversation, and the
# transition counted against the run's cap (within it or not: the second last column).
_CLAIM_ALONE = sql.Statement(f"""
WITH {_claim_ctes()}, events_numbered AS (
  SELECT 1::bigint AS o, claimed.run_id, 'node.status'::text AS type,
         jsonb_build_object('node', claimed.key, 'plan_version', claimed.plan_version, 'from', 'ready', 'to', 'in_progress',
                            'reason', 'claimed') AS data
    FROM claimed
), {events_insert_ctes("events_numbered", "(SELECT r_conversation_id FROM claimed)")},
{transitions_counted("counted", "(SELECT run_id FROM claimed)", "1")}
SELECT {_CLAIMED_COLUMNS}, EXISTS (SELECT 1 FROM counted), {EVENTS_WRITTEN}
  FROM claimed
""")


@dataclass
class ClaimedAlone:
    claimed: Claimed
    within_cap: bool  # whether its transition stayed within the run's cap
    events: list[tuple]  # written: (id, seq, run, type, data, outbox rows owed), timeline.sql.EVENTS_WRITTEN


def node_claim_alone(node_id: int, *, me: str, lease: datetime, now: datetime,
                     tools: list[str]) -> ClaimedAlone | None:
    """Claim a ready node outside a transaction, its event and count with it (_CLAIM_ALONE),
    in one statement that commits by itself before the node's tool runs. None when it was not
    ready, or not ours to claim here. Safe: as nodes_claim; a kill before it commits leaves the
    node ready. Proof: test_hot_path.py::test_a_claim_first_step_is_claimed_once_with_its_event_
    and_count_and_a_rival_claim_writes_nothing, ::test_a_claim_first_step_past_the_runs_cap_…"""
    row = sql.execute(_CLAIM_ALONE, {**_claim_params([node_id], me, lease, now, tools), **events_owed_params()},
                      fetch="one")
    if row is None:
        return None
    width = len(_NODE_COLS) + len(_RUN_COLS)
    return ClaimedAlone(Claimed(*_node_and_run(list(row[:width]))), bool(row[width]),
                        [tuple(e) for e in sql.json_value(row[width + 1]) or []])


def nodes_claim(node_ids: list[int], *, me: str, lease: datetime, now: datetime, tools: list[str]) -> list[Claimed]:
    """ready → in_progress for the given nodes still ready, in the current plan, of a live run
    and with one of `tools`: the lease, the node's Activity (opened unless an earlier attempt
    opened it) and the transition row. Returns those won. Safe: the runs' rows are locked
    first, in id order, as every hop and a cancel take them (run, node, conversation): locked
    last, a cancel and a chunk each held what the other waited for; the status
    compare-and-set gives a node to one worker. A kill before the caller commits leaves the
    nodes ready (the message comes back); after, their leases run out and the sweeper reclaims
    them. Proof: test_lock_order.py::test_a_fan_out_chunk_claimed_as_the_run_is_cancelled_…,
    test_hot_path.py::test_a_redelivered_chunk_runs_nothing_twice."""
    return _rows_to_claimed(sql.execute(_CLAIM, _claim_params(node_ids, me, lease, now, tools), fetch="all"))


def _claim_params(node_ids: list[int], me: str, lease: datetime, now: datetime, tools: list[str]) -> dict[str, Any]:
    return {"ids": node_ids, "acts": [new_id() for _ in node_ids], "me": me, "lease": lease, "now": now,
            "terminal": _TERMINAL_ARRAY, "tools": _text_array(tools)}


_FINISH_HEAD = sql.Statement(f"""
WITH run_locked AS (
  SELECT id, status FROM workflows_run WHERE id = %(run)s FOR NO KEY UPDATE
), finished AS (
  UPDATE workflows_node n SET status = x.to_status, status_reason = x.reason, result_ref = x.ref,
         acceptance_results = COALESCE(x.acc, n.acceptance_results), lease_owner = '', lease_expires_at = NULL,
         finished_at = %(now)s
    FROM unnest(%(ids)s::bigint[], %(tos)s::text[], %(reasons)s::text[], %(refs)s::text[], %(accs)s::jsonb[])
         AS x(id, to_status, reason, ref, acc)
   WHERE n.id = x.id AND n.status = 'in_progress' AND EXISTS (SELECT 1 FROM run_locked)
  RETURNING n.id, n.key, n.activity_id, x.to_status
), {transitions_insert("transitions", "SELECT %(run)s, finished.id, 'in_progress', finished.to_status, x.reason, %(me)s,"
                                     " %(now)s FROM finished JOIN unnest(%(ids)s::bigint[], %(reasons)s::text[])"
                                     " AS x(id, reason) ON x.id = finished.id")},
{activities_close("activities", "SELECT finished.activity_id AS id, finished.to_status AS status FROM finished")}
SELECT (SELECT status FROM run_locked), array_agg(finished.id), array_agg(finished.key) FROM finished
""")


def nodes_finish(run_id: int, finished: list[dict[str, Any]], *, me: str, now: datetime) -> tuple[str, list[int]]:
    """in_progress → completed|failed for the given nodes this worker holds, their transitions,
    their Activities closed. Returns (the run's status, read under its lock; the ids whose
    compare-and-set won). Safe: the run's row is locked first (NO KEY UPDATE: no block on the
    foreign-key checks others take at commit), so of two siblings finishing at once the second
    waits and its promotion (successors_promote, same transaction) sees the first's. A kill
    before commit undoes both; the lease runs out and the step runs again under its
    idempotency key. Proof: test_hot_path.py::test_two_branches_finishing_at_once_still_start_
    their_join, test_siblings_finishing_at_once.py."""
    row = sql.execute(_FINISH_HEAD, {
        "run": run_id, "me": me, "now": now, "ids": [f["id"] for f in finished], "tos": [f["to"] for f in finished],
        "reasons": [f["reason"] for f in finished], "refs": [f.get("result_ref", "") for f in finished],
        "accs": [sql.jsonb(f["acceptance_results"]) if f.get("acceptance_results") is not None else None
                 for f in finished]}, fetch="one")
    return row[0], list(row[1] or [])


# The promotion (successors_promote). `gate`: an SQL condition all of it waits on; `done`:
# the ids of nodes the same statement completed (its snapshot still sees them in progress).
def _promotion_ctes(gate: str = "true", done: str = _NONE) -> str:
    return f"""promotable AS (
  SELECT c.id, c.tool FROM workflows_node c
   WHERE ({gate}) AND c.run_id = %(run)s AND c.status = 'pending' AND c.retired_in IS NULL
     AND (%(keys)s::text[] IS NULL OR c.depends_on ?| %(keys)s::text[])
     AND CASE WHEN c.run_when = 'failed' THEN EXISTS (
               SELECT 1 FROM jsonb_array_elements_text(c.depends_on) k(key)
                 JOIN workflows_node d ON d.run_id = c.run_id AND d.key = k.key AND d.retired_in IS NULL
                WHERE d.status = 'failed')
         ELSE NOT EXISTS (
               SELECT 1 FROM jsonb_array_elements_text(c.depends_on) k(key)
                WHERE NOT EXISTS (SELECT 1 FROM workflows_node d WHERE d.run_id = c.run_id AND d.key = k.key
                                     AND d.retired_in IS NULL AND (d.status = 'completed' OR d.id IN ({done}))))
         END
), in_place AS (
  SELECT CASE WHEN %(claim)s AND count(*) = 1 AND bool_and(promotable.tool = ANY(%(tools)s::text[]))
              THEN min(promotable.id) END AS id FROM promotable
), promoted AS (
  UPDATE workflows_node c SET
         status = CASE WHEN c.id = in_place.id THEN 'in_progress' ELSE 'ready' END,
         status_reason = CASE WHEN c.id = in_place.id THEN 'claimed' ELSE 'dependencies met' END,
         dispatched_at = %(now)s,
         attempts = CASE WHEN c.id = in_place.id THEN c.attempts + 1 ELSE c.attempts END,
         lease_owner = CASE WHEN c.id = in_place.id THEN %(me)s ELSE c.lease_owner END,
         lease_expires_at = CASE WHEN c.id = in_place.id THEN %(lease)s::timestamptz ELSE c.lease_expires_at END,
         started_at = CASE WHEN c.id = in_place.id THEN %(now)s ELSE c.started_at END,
         activity_id = CASE WHEN c.id = in_place.id THEN COALESCE(c.activity_id, %(new_act)s::bigint) ELSE c.activity_id END
    FROM in_place
   -- by id (`|| ''`: not a condition the status index can serve; given it, a generic plan
   -- on young statistics scanned every pending node of every run, a hop O(pending nodes))
   WHERE c.id IN (SELECT id FROM promotable) AND c.status || '' = 'pending'
  RETURNING {", ".join("c." + c for c in _NODE_COLS)}, (c.id = in_place.id) IS TRUE AS claimed,
            (c.id = in_place.id AND c.activity_id = %(new_act)s::bigint) IS TRUE AS opened
), {activities_open("promoted_activities", "SELECT promoted.activity_id AS id, r.conversation_id, promoted.run_id, promoted.key, promoted.goal, promoted.goal_words "
                             "FROM promoted JOIN workflows_run r ON r.id = promoted.run_id WHERE promoted.opened")},
{transitions_insert("promoted_transitions",
                    "SELECT %(run)s, promoted.id, 'pending', 'ready', 'dependencies met', '', %(now)s FROM promoted"
                    " UNION ALL SELECT %(run)s, promoted.id, 'ready', 'in_progress', 'claimed', %(me)s, %(now)s"
                    " FROM promoted WHERE promoted.claimed")}, events_due AS (
  -- with %(emit)s: the batch's pending events (handed over by timeline.events_take), then
  -- this statement's own, numbered on from the conversation's counter
  SELECT 0 AS g, x.o, x.run_id, x.type, x.data
    FROM unnest(%(ev_runs)s::bigint[], %(ev_types)s::text[], %(ev_datas)s::jsonb[]) WITH ORDINALITY
         AS x(run_id, type, data, o)
  UNION ALL
  SELECT 1, row_number() OVER (ORDER BY promoted.position, promoted.plan_version), %(run)s, 'node.status',
         jsonb_build_object('node', promoted.key, 'plan_version', promoted.plan_version, 'from', 'pending', 'to', 'ready',
                            'reason', 'dependencies met')
    FROM promoted
  UNION ALL
  SELECT 2, 1, %(run)s, 'node.status',
         jsonb_build_object('node', promoted.key, 'plan_version', promoted.plan_version, 'from', 'ready', 'to', 'in_progress',
                            'reason', 'claimed')
    FROM promoted WHERE promoted.claimed
), events_numbered AS (
  SELECT row_number() OVER (ORDER BY events_due.g, events_due.o) AS o, events_due.run_id, events_due.type, events_due.data FROM events_due WHERE %(emit)s AND ({gate})
), {events_insert_ctes("events_numbered")}, hop_count AS (
  SELECT %(count)s::int + (SELECT count(*) FROM promoted)::int + (SELECT count(*) FROM promoted WHERE promoted.claimed)::int AS n
), {transitions_counted("counted", "%(run)s", "(SELECT n FROM hop_count)", f"%(counting)s AND ({gate})")}"""


def _promotion_columns(done: str = _NONE) -> str:
    """What a promoting statement returns, a row per node promoted (one row of NULLs if
    none): the node's columns, claimed, busy (other nodes of the run active), within
    the cap, the events written, the columns of the claimed node's run."""
    return f"""{", ".join("promoted." + c for c in _NODE_COLS)}, promoted.claimed,
       {_others_active("%(run)s", done)},
       EXISTS (SELECT 1 FROM counted),
       {EVENTS_WRITTEN},
       {", ".join("r." + c for c in _RUN_COLS)}"""


_PROMOTED_FROM = """FROM (SELECT 1) AS x LEFT JOIN promoted ON true LEFT JOIN workflows_run r ON promoted.claimed AND r.id = promoted.run_id
 ORDER BY promoted.position, promoted.plan_version"""

_PROMOTE = sql.Statement(f"WITH {_promotion_ctes()}\nSELECT {_promotion_columns()}\n{_PROMOTED_FROM}")


_PROMOTED_AT = [_NODE_COLS.index(c) for c in ("id", "key", "tool", "plan_version", "acceptance")]


@dataclass
class Promoted:
    id: int
    key: str
    tool: str
    plan_version: int
    acceptance: list  # its criteria: with none, a side-effect-free tool needs no accepting step


@dataclass
class Promotion:
    promoted: list[Promoted]  # the nodes made ready, in plan order (the claimed one included)
    busy: bool  # whether other nodes of the run are active
    claimed: Claimed | None  # the one claimed for this worker
    within_cap: bool  # whether the counted transitions stayed within the run's cap
    events: list[tuple]  # with `events`: those written, as timeline.sql.EVENTS_WRITTEN returns them


def _promotion_params(run_id: int, keys: list[str] | None, now: datetime,
                      claim_for: tuple[str, datetime, list[str]] | None, count: int | None,
                      events: tuple[int, list[dict[str, Any]]] | None) -> dict[str, Any]:
    me, lease, tools = claim_for or ("", None, [])
    conversation, pending = events if events is not None else (0, [])
    return {"run": run_id, "keys": keys, "now": now, "claim": claim_for is not None,
            "me": me, "lease": lease, "tools": _text_array(tools), "new_act": new_id(),
            "counting": count is not None, "count": count or 0,
            "emit": events is not None, "conv": conversation,
            "ev_runs": [e["run_id"] for e in pending],
            "ev_types": [e["type"] for e in pending],
            "ev_datas": [sql.jsonb(e["data"]) for e in pending], **events_owed_params()}


_PROMOTION_WIDTH = len(_NODE_COLS) + 4 + len(_RUN_COLS)  # the columns of _promotion_columns


def _promotion(rows: list, counting: bool) -> Promotion:
    n = len(_NODE_COLS)
    promoted, claimed = [], None
    for row in rows:
        if row[0] is None:
            continue  # nothing was promoted
        node_id, key, tool, plan_version, acceptance = (row[i] for i in _PROMOTED_AT)
        promoted.append(Promoted(node_id, key, tool, plan_version, sql.json_value(acceptance)))
        if row[n]:
            claimed = _rows_to_claimed([row[:n] + row[n + 4:_PROMOTION_WIDTH]])[0]
    written = [tuple(e) for e in sql.json_value(rows[0][n + 3]) or []]
    return Promotion(promoted, bool(rows[0][n + 1]), claimed, not counting or bool(rows[0][n + 2]), written)


def successors_promote(run_id: int, keys: list[str] | None, *, now: datetime,
                       claim_for: tuple[str, datetime, list[str]] | None = None,
                       count: int | None = None,
                       events: tuple[int, list[dict[str, Any]]] | None = None) -> Promotion:
    """pending → ready for the successors of `keys` (None: every pending node) whose
    dependencies allow it, their transitions, and whether anything of the run is still active.
    With claim_for = (this worker, its lease, the tools it may run), a single successor with
    one of those tools is claimed at once, Activity opened. With `count`, that many transitions
    plus its own are counted against the run's cap. With events = (conversation, pending
    events), those and its own node.status events are written here (timeline.services.
    events_take); without, the caller appends the latter. Safe: it runs after the run's lock
    (the caller's completion took it), so a fan-in sees every committed predecessor; nodes are
    found by run and id and updated only while still pending. A kill: as nodes_finish. Proof:
    test_hot_path.py::test_two_branches_finishing_at_once_still_start_their_join,
    ::test_a_chain_stops_at_its_transition_cap_and_nothing_runs_after_it."""
    rows = sql.execute(_PROMOTE, _promotion_params(run_id, keys, now, claim_for, count, events), fetch="all")
    return _promotion(rows, count is not None)


# Whether a hop may promote on its statement's snapshot (taken before the run's lock): no
# other node of the run active (its completion may have committed since: a fan-in would miss
# it), no successor waiting on a dependency not completed in that snapshot, and a successor
# that goes on (a hop that leaves nothing running settles the run in its own transaction).
_MAY_PROMOTE = f"""may_promote AS (
  SELECT (SELECT status FROM run_locked) <> ALL(%(terminal)s::text[])
     AND NOT {_others_active("%(run)s", "%(node)s")}
     AND NOT EXISTS (SELECT 1 FROM workflows_node c, jsonb_array_elements_text(c.depends_on) k(key)
                      WHERE c.run_id = %(run)s AND c.status = 'pending' AND c.retired_in IS NULL
                        AND c.depends_on ?| %(keys)s::text[] AND k.key <> ALL(%(keys)s::text[])
                        AND NOT EXISTS (SELECT 1 FROM workflows_node d WHERE d.run_id = c.run_id AND d.key = k.key
                                           AND d.retired_in IS NULL AND d.status = 'completed'))
     AND EXISTS (SELECT 1 FROM workflows_node c WHERE c.run_id = %(run)s AND c.status = 'pending'
                    AND c.retired_in IS NULL AND c.depends_on ?| %(keys)s::text[] AND c.run_when <> 'failed') AS ok
)"""
_DONE = "SELECT id FROM finished"
_COMPLETED_ROWS = "SELECT %(run)s, finished.id, 'in_progress', 'completed', %(reason)s, %(me)s, %(now)s FROM finished"


def _inline_hop_statement(ready: bool) -> sql.Statement:
    if ready:  # ready → in_progress → completed: the claim's changes too, and its activity opened
        expected = "n.status = 'ready' AND n.retired_in IS NULL"
        claim = (", attempts = n.attempts + 1, started_at = %(started)s,"
                 " activity_id = COALESCE(n.activity_id, %(open_act)s::bigint)")
        opened = "n.activity_id = %(open_act)s::bigint"
        claimed = "SELECT %(run)s, finished.id, 'ready', 'in_progress', 'claimed', %(me)s, %(started)s FROM finished UNION ALL "
    else:  # in_progress → completed, by the worker holding the lease
        expected, claim, opened, claimed = "n.status = 'in_progress' AND n.lease_owner = %(me)s", "", "false", ""
    return sql.Statement(f"""
WITH run_locked AS (
  SELECT id, status FROM workflows_run WHERE id = %(run)s FOR NO KEY UPDATE
), {_MAY_PROMOTE}, finished AS (
  UPDATE workflows_node n SET status = 'completed', status_reason = %(reason)s, acceptance_results = '[]'::jsonb,
         result_ref = COALESCE((SELECT c.id FROM workflows_toolcall c WHERE c.node_id = %(node)s
                                   AND c.idempotency_key = %(key)s), %(call)s)::text,
         lease_owner = '', lease_expires_at = NULL, finished_at = %(now)s{claim}
   WHERE n.id = %(node)s AND {expected} AND ((SELECT ok FROM may_promote) OR %(anyway)s)
  RETURNING n.id, n.key, n.goal, n.goal_words, n.activity_id, {opened} AS opened
), {call_ctes("FROM finished", "(SELECT activity_id FROM finished)")},
{transitions_insert("transitions", claimed + _COMPLETED_ROWS)}, {activities_open("opened_activity", "SELECT finished.activity_id AS id, %(run_conv)s::bigint AS conversation_id, "
                          "%(run)s::bigint AS run_id, finished.key, finished.goal, finished.goal_words FROM finished WHERE finished.opened", completed=True)},
{activities_close("activities", "SELECT finished.activity_id AS id, 'completed' AS status FROM finished WHERE NOT finished.opened", rolled_up=True)},
{_promotion_ctes("(SELECT ok FROM may_promote) AND EXISTS (SELECT 1 FROM finished)", _DONE)}
SELECT {_promotion_columns(_DONE)}, (SELECT status FROM run_locked), EXISTS (SELECT 1 FROM finished), (SELECT id FROM tool_call),
       (SELECT ok FROM may_promote)
{_PROMOTED_FROM}
""")


_INLINE_HOP = {ready: _inline_hop_statement(ready) for ready in (False, True)}


@dataclass
class InlineHop:
    won: bool  # whether the completion's compare-and-set won
    run_status: str  # read under the run's lock
    call_id: int | None  # the node's result
    promotion: Promotion | None  # None: nothing promoted, counted or written (not `may_promote`)


def inline_hop(*, ready: bool, anyway: bool, me: str, reason: str,
               claim_for: tuple[str, datetime, list[str]] | None, count: int,
               events: tuple[int, list[dict[str, Any]]] | None, **call: Any) -> InlineHop:
    """A plain node's hop in one statement, a transaction of its own: completed (`ready`:
    claimed too, its tool having run before), its call recorded, its Activity opened or closed,
    its successors promoted and the one to run in place claimed (as successors_promote) when
    _MAY_PROMOTE holds; else nothing is written unless `anyway` (in the caller's transaction,
    which then promotes after the run's lock). `count`: transitions to count besides its own;
    `events`: the events to write before its own (None: none, as successors_promote). Safe: a
    rival run of the side-effect-free tool loses the compare-and-set and writes nothing; a kill
    before the statement leaves the node as it was (redelivery, or the lease runs out). Proof:
    test_hot_path.py::test_a_chains_hop_is_one_statement_that_commits_by_itself,
    ::test_a_hop_that_finds_another_branch_active_…, ::test_a_worker_killed_as_a_runs_last_…"""
    node, run = call["node"], call["run"]
    params = {**call_params(**call), **_promotion_params(run.id, [node.key], call["now"], claim_for, count, events),
              "me": me,  # this worker, the promotion's own ("" when it claims nothing) notwithstanding
              "reason": reason, "terminal": _TERMINAL_ARRAY, "anyway": anyway, "run_conv": run.conversation_id,
              "open_act": new_id()}
    rows = sql.execute(_INLINE_HOP[ready], params, fetch="all")
    status, won, call_id, go = rows[0][_PROMOTION_WIDTH:]
    return InlineHop(bool(won), status, call_id, _promotion(rows, True) if won and go else None)


_COMPLETE_HOP = sql.Statement(f"""
WITH run_locked AS (
  SELECT id, status FROM workflows_run WHERE id = %(run)s FOR NO KEY UPDATE
), {_MAY_PROMOTE}, finished AS (
  UPDATE workflows_node n SET status = 'completed', status_reason = %(reason)s, result_ref = %(ref)s,
         acceptance_results = COALESCE(%(acc)s::jsonb, n.acceptance_results), lease_owner = '',
         lease_expires_at = NULL, finished_at = %(now)s
   WHERE n.id = %(node)s AND n.status = 'in_progress' AND (SELECT ok FROM may_promote)
  RETURNING n.id, n.key, n.activity_id
), {transitions_insert("transitions", _COMPLETED_ROWS)},
{activities_close("activities", "SELECT finished.activity_id AS id, 'completed' AS status FROM finished")},
{_promotion_ctes("(SELECT ok FROM may_promote) AND EXISTS (SELECT 1 FROM finished)", _DONE)}
SELECT {_promotion_columns(_DONE)}, (SELECT status FROM run_locked), EXISTS (SELECT 1 FROM finished), (SELECT ok FROM may_promote)
{_PROMOTED_FROM}
""")


def complete_hop(*, node: Node, run: Run, me: str, reason: str, result_ref: str, acceptance_results: list | None,
                 now: datetime, claim_for: tuple[str, datetime, list[str]] | None,
                 events: tuple[int, list[dict[str, Any]]]) -> InlineHop | None:
    """A step with effects completed (its call recorded as it ran, its acceptance checked)
    and its hop, in one statement that commits by itself: the completion (as nodes_finish),
    its successors promoted and the one to run in place claimed (as successors_promote), its
    events (`events`: the completion's own, first) and its count. None: _MAY_PROMOTE did not
    hold, nothing was written; that or a lost compare-and-set (`won` false) sends the caller
    to the transaction, which decides under the run's lock. Safe: as inline_hop; a kill before
    it commits leaves the node in progress, and its rerun finds its call by idempotency key.
    Proof: test_hot_path.py::test_a_step_with_effects_completes_and_hops_in_one_statement_that_
    commits_by_itself, ::test_a_step_with_effects_that_finds_another_branch_active_…"""
    params = {**_promotion_params(run.id, [node.key], now, claim_for, 1, events),
              "me": me,  # this worker, the promotion's own ("" when it claims nothing) notwithstanding
              "node": node.id, "reason": reason, "ref": result_ref, "terminal": _TERMINAL_ARRAY,
              "acc": sql.jsonb(acceptance_results) if acceptance_results is not None else None}
    rows = sql.execute(_COMPLETE_HOP, params, fetch="all")
    status, won, go = rows[0][_PROMOTION_WIDTH:]
    if not go:
        return None
    return InlineHop(bool(won), status, None, _promotion(rows, True) if won else None)


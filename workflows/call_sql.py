"""A plain tool's call as SQL: the call row, its frame, payload and link, which the hop's
statements (workflows.sql) compose, and the call recorded by itself (a fan-out's chunk).
Each function's docstring says what its statement writes, why a concurrent worker and a
kill leave it whole ("Safe:"), and the test that proves it ("Proof:")."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from config import sql
from config.ids import new_id
from config.words import Stored
from timeline.masking import payload_mask
from timeline.services import summary_columns
from timeline.sql import activity_rollup, call_frame_ctes

from .models import Node, Run


# A plain tool's call: the call row, its frame, payload and link; `source`: a FROM clause
# its rows follow (a hop's completion: nothing is recorded unless it won); `act`: the Activity.
def call_ctes(source: str = "", act: str = "%(act)s") -> str:
    return f"""tool_call AS (
  INSERT INTO workflows_toolcall (id, tenant_id, run_id, node_id, tool, arguments, result, status, error,
         idempotency_key, approval_id, started_at, ended_at, latency_ms)
  SELECT %(call)s, %(tenant)s, %(run)s, %(node)s, %(tool)s, %(args)s, %(result)s, 'succeeded', '', %(key)s, NULL,
         %(started)s, %(now)s, %(lat)s {source}
  ON CONFLICT (node_id, idempotency_key) DO UPDATE SET arguments = EXCLUDED.arguments, result = EXCLUDED.result,
         status = 'succeeded', error = '', ended_at = EXCLUDED.ended_at, latency_ms = EXCLUDED.latency_ms
  RETURNING id
), {call_frame_ctes("tool_call", act)}"""


_INLINE_CALL = sql.Statement(f"""
WITH {call_ctes()}, {activity_rollup("rollup", "%(act)s")}
SELECT id FROM tool_call
""")


def call_params(*, node: Node, run: Run, tool, arguments: dict, output: dict, idempotency_key: str,
                 started: datetime, now: datetime, latency_ms: float, summary: Stored) -> dict[str, Any]:
    """`summary`: words (config.words) or prose, stored as timeline.services.frame_record stores it."""
    summary_text, summary_words = summary_columns(summary)
    payload = payload_mask({"arguments": arguments, "result": output, "error": "", "idempotency_key": "",
                            "consumed": [], "produces": list(tool.produces)})
    return {"call": new_id(), "frame": new_id(), "tenant": run.tenant_id, "run": run.id, "node": node.id,
            "tool": tool.name, "args": sql.jsonb(arguments), "result": sql.jsonb(output), "key": idempotency_key,
            "started": started, "now": now, "lat": latency_ms, "act": node.activity_id, "summary": summary_text,
            "summary_words": sql.jsonb(summary_words) if summary_words is not None else None,
            "payload": sql.jsonb(payload)}


def inline_call_record(**call: Any) -> int:
    """A plain tool's call recorded in one statement, its Activity rolled up; the call's id.
    Safe: the call row is keyed by (node, idempotency key), so a rerun (a rival worker, a
    redelivered message) updates the same row. Proof: test_hot_path.py::test_it_completes_a_
    fan_out_chunk_together_with_every_record, ::test_a_redelivered_chunk_runs_nothing_twice."""
    return sql.execute(_INLINE_CALL, call_params(**call), fetch="one")[0]

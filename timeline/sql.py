"""The timeline's SQL for other statements to embed: how a hand-written statement appends a
conversation's events, opens, closes and rolls up a node's Activity and records a tool call's
frame (config.sql runs the statements). With timeline.services, the only writer of the
timeline's tables."""


def events_insert_ctes(rows: str, conv: str = "%(conv)s") -> str:
    """The CTEs `sq`, `ins` and `owed` that append a conversation's events with gapless
    numbers, for a statement whose CTE `rows` holds them as (o, run_id, type, data), o
    numbering them 1..n in order: the conversation's counter moves on by n (its row stays
    locked until commit, so nobody else numbers in between) and the events are inserted under
    the numbers it moved over. `conv`: the conversation (an SQL expression; by default
    the parameter %(conv)s); parameter %(now)s. `ins` returns each event's (id, seq,
    run_id, type, data). The one place that numbers events in SQL.

    `owed`: the outbox rows the events' subscribers are owed (timeline.services.
    events_owed_params: %(owe_types)s and %(owe_tasks)s, a subscriber's type prefix and task
    pairwise), one per event and task, written by the same statement — a statement that
    commits by itself leaves no moment in which its events are committed and their news is
    not. Each row is (id, event id)."""
    return f"""sq AS (
  UPDATE timeline_conversation SET last_seq = last_seq + (SELECT count(*) FROM {rows})
   WHERE id = {conv} AND EXISTS (SELECT 1 FROM {rows})
  RETURNING id, last_seq
), ins AS (
  INSERT INTO timeline_event (conversation_id, run_id, seq, type, data, created_at)
  SELECT sq.id, e.run_id, sq.last_seq - (SELECT count(*) FROM {rows}) + e.o, e.type, e.data, %(now)s
    FROM {rows} e, sq
  RETURNING id, seq, run_id, type, data
), owed AS (
  INSERT INTO outbox_outboxmessage (task, args, created_at, attempts, last_error)
  SELECT DISTINCT s.task, jsonb_build_array(ins.id), %(now)s::timestamptz, 0, ''
    FROM ins JOIN unnest(%(owe_types)s::text[], %(owe_tasks)s::text[]) AS s(prefix, task)
         ON starts_with(ins.type, s.prefix)
  RETURNING id, (args->>0)::bigint AS event
)"""


# What a statement that wrote events returns of them (after events_insert_ctes): each
# event's (id, seq, run_id, type, data, [outbox row ids owed for it]) in order, for
# timeline.services.events_written.
EVENTS_WRITTEN = """(SELECT jsonb_agg(jsonb_build_array(ins.id, ins.seq, ins.run_id, ins.type, ins.data,
          COALESCE((SELECT jsonb_agg(owed.id) FROM owed WHERE owed.event = ins.id), '[]'::jsonb)) ORDER BY ins.seq)
   FROM ins)"""


# The engine's statements open, close and roll up node Activities and record a tool call's
# frame in the same statement as the hop that causes them; the SQL for those rows is the
# timeline's own, here (beside timeline.services, the other writer of these tables).

def activities_open(name: str, rows: str, *, completed: bool = False) -> str:
    """CTE `name`: a node's Activity opened for each row of the query `rows`, which gives
    (id, conversation_id, run_id, key, goal, goal_words): in progress since %(now)s — or,
    `completed`, a plain step's whole life at once: from %(started)s to %(now)s, its one
    call's frame rolled up (%(lat)s ms)."""
    if completed:
        life = "'completed', %(started)s, %(now)s, 1, %(lat)s, %(started)s, %(now)s"
    else:
        life = "'in_progress', %(now)s, NULL::timestamptz, 0, 0, NULL::timestamptz, NULL::timestamptz"
    return f"""{name} AS (
  INSERT INTO timeline_activity (id, conversation_id, kind, title, summary, summary_words, intent, route, run_id,
         node_key, cost, error_count, tokens_in, tokens_out,
         status, started_at, ended_at, frame_count, latency_ms, frames_from, frames_until)
  SELECT o.id, o.conversation_id, 'node', left('node ' || o.key, 200), o.goal, o.goal_words, '', '', o.run_id,
         o.key, 0, 0, 0, 0, {life}
    FROM ({rows}) o
)"""


# An Activity's roll-up of one tool call's frame (%(lat)s ms from %(started)s to %(now)s).
ROLLUP = """frame_count = frame_count + 1, latency_ms = latency_ms + %(lat)s,
         frames_from = LEAST(COALESCE(frames_from, %(started)s), %(started)s),
         frames_until = GREATEST(COALESCE(frames_until, %(now)s), %(now)s)"""


def activity_rollup(name: str, act: str) -> str:
    """CTE `name`: Activity `act` (an SQL expression) with the frame of call_frame_ctes
    rolled up, if one was written."""
    return f"""{name} AS (
  UPDATE timeline_activity SET {ROLLUP} FROM call_frame WHERE timeline_activity.id = {act}
)"""


def activities_close(name: str, rows: str, *, rolled_up: bool = False) -> str:
    """CTE `name`: each Activity of the query `rows`, which gives (id, status), ended at
    %(now)s with that status — `rolled_up`: with its call's frame added (ROLLUP). One
    UPDATE of a row per statement: PostgreSQL applies only one of two in one statement."""
    rollup = f"{ROLLUP}, " if rolled_up else ""
    return f"""{name} AS (
  UPDATE timeline_activity SET {rollup}status = x.status, ended_at = %(now)s
    FROM ({rows}) x WHERE timeline_activity.id = x.id
)"""


def call_frame_ctes(call: str, act: str) -> str:
    """CTEs `call_frame`, `call_payload`, `call_link`: the `tool_call` frame of the call the
    CTE `call` returns (its id), in Activity `act` (an SQL expression), with its masked
    payload and the Activity's link to the call — what timeline.services.frame_record
    writes for a tool call. Parameters: %(frame)s, %(tool)s, %(summary)s, %(summary_words)s,
    %(started)s, %(now)s, %(lat)s, %(payload)s, %(key)s (the idempotency key, put in the payload)."""
    return f"""call_frame AS (
  INSERT INTO timeline_frame (id, activity_id, parent_id, kind, name, status, level, summary, summary_words,
         started_at, first_token_at, ended_at, latency_ms, gen_ai_operation_name, gen_ai_provider_name,
         gen_ai_request_model, gen_ai_usage_input_tokens, gen_ai_usage_output_tokens, gen_ai_tool_name,
         gen_ai_tool_call_id, cost)
  SELECT %(frame)s, {act}, NULL, 'tool_call', left(%(tool)s, 120), 'ok', 'info', %(summary)s,
         %(summary_words)s::jsonb, %(started)s, NULL, %(now)s, %(lat)s, 'execute_tool', '', '', 0, 0, %(tool)s,
         {call}.id::text, 0 FROM {call}
  RETURNING id, gen_ai_tool_call_id
), call_payload AS (
  INSERT INTO timeline_framepayload (frame_id, data)
  SELECT call_frame.id, jsonb_set(%(payload)s::jsonb, '{{idempotency_key}}', to_jsonb(%(key)s::text)) FROM call_frame
), call_link AS (
  INSERT INTO timeline_activitylink (activity_id, kind, object_id)
  SELECT {act}, 'tool_call', call_frame.gen_ai_tool_call_id FROM call_frame
  ON CONFLICT DO NOTHING
)"""

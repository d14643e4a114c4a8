"""The timeline's SQL for other statements to embed: how a hand-written statement
appends a conversation's events (config.sql runs the statements)."""


def events_insert_ctes(rows: str, conv: str = "%(conv)s") -> str:
    """The CTEs `sq` and `ins` that append a conversation's events with gapless numbers,
    for a statement whose CTE `rows` holds them as (o, run_id, type, data), o numbering
    them 1..n in order: the conversation's counter moves on by n (its row stays locked
    until commit, so nobody else numbers in between) and the events are inserted under
    the numbers it moved over. `conv`: the conversation (an SQL expression; by default
    the parameter %(conv)s); parameter %(now)s. `ins` returns each event's (id, seq,
    run_id, type, data). The one place that numbers events in SQL."""
    return f"""sq AS (
  UPDATE timeline_conversation SET last_seq = last_seq + (SELECT count(*) FROM {rows})
   WHERE id = {conv} AND EXISTS (SELECT 1 FROM {rows})
  RETURNING id, last_seq
), ins AS (
  INSERT INTO timeline_event (conversation_id, run_id, seq, type, data, created_at)
  SELECT sq.id, e.run_id, sq.last_seq - (SELECT count(*) FROM {rows}) + e.o, e.type, e.data, %(now)s
    FROM {rows} e, sq
  RETURNING id, seq, run_id, type, data
)"""

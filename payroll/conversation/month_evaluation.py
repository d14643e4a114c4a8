"""The month request's measures of the first step (`manage.py eval_requests`, beside every
domain's): the labelled rows of payroll/data/eval_requests.jsonl that carry "mo" (the month the
text asks to pay, 0 when it asks none — a setup, a question, chatter) and "g" (the group it
names, in English; null when it names none). For each row: `month` — the month read is the
labelled one (or none is read), `group` — the group named is among the names read. The
reading is dated on a fixed day so that "last month" means the same on every run."""
from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any, Callable

from workflows.conversation import Evaluation

from payroll.reading.month_request import month_request_read

DATA = Path(__file__).parent.parent / "data" / "eval_requests.jsonl"
MEASURES = ("month", "group")
READ_ON = date(2026, 12, 6)


def labelled_month_requests(path: Path = DATA) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if "_about" not in r and "mo" in r]


def step(text: str, prepared: Any, call: Callable[..., Any]) -> dict[str, Any]:
    read = month_request_read(text, READ_ON)
    return {"month": read.month if read else 0, "groups": list(read.group_names) if read else []}


def score(add: Callable[..., None], row: dict[str, Any], got: dict[str, Any]) -> None:
    add("month", got.get("month", 0) == row["mo"], row, got.get("month", 0), row["mo"])
    if row["mo"]:
        groups = got.get("groups") or []
        ok = row.get("g") in groups if row.get("g") else not groups
        add("group", ok, row, groups, row.get("g"))


MONTH_EVALUATION = Evaluation(labelled=labelled_month_requests, measures=MEASURES, prepare=lambda: None, step=step,
                              score=score)

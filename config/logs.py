"""One log format for the server, the workers and beat, readable after an incident.

Every line says when (UTC, to the millisecond), how bad, which logger, which process,
and — where the code knows it — which run and node it is about:

    2026-12-06T08:01:02.345Z WARNING workflows.tasks [4242] node=77 nodes [77]: the database went away …

`KEEL_LOG_JSON=1` writes the same as one JSON object a line (time, level, logger,
process, thread, run, node, message, exception) for a log shipper. The run and node come
from `log_context(run=…, node=…)`, which the workers' tasks set around each step; a
record may also carry them itself (`extra={"run": …}`).
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

CONTEXT_KEYS = ("run", "node")
_context: ContextVar[dict[str, Any]] = ContextVar("keel_log_context", default={})


@contextmanager
def log_context(**ids: Any) -> Iterator[None]:
    """Within, every log record of this thread (or task) names these ids."""
    token = _context.set({**_context.get(), **{k: v for k, v in ids.items() if v is not None}})
    try:
        yield
    finally:
        _context.reset(token)


class ContextFilter(logging.Filter):
    """Puts the current run and node on each record (`record.context`: "run=1 node=2 ")."""

    def filter(self, record: logging.LogRecord) -> bool:
        known = _context.get()
        for key in CONTEXT_KEYS:
            if getattr(record, key, None) is None:
                setattr(record, key, known.get(key))
        record.context = "".join(f"{key}={getattr(record, key)} " for key in CONTEXT_KEYS
                                 if getattr(record, key) is not None)
        return True


def _utc(record: logging.LogRecord) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(utc)s %(levelname)s %(name)s [%(process)d] %(context)s%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        record.utc = _utc(record)
        if not hasattr(record, "context"):  # a handler without the filter
            ContextFilter().filter(record)
        return super().format(record)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        if not hasattr(record, "context"):
            ContextFilter().filter(record)
        out: dict[str, Any] = {"time": _utc(record), "level": record.levelname, "logger": record.name,
                               "process": record.process, "thread": record.threadName}
        out.update({key: getattr(record, key) for key in CONTEXT_KEYS if getattr(record, key) is not None})
        out["message"] = record.getMessage()
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


def logging_config(*, level: str, json_lines: bool) -> dict[str, Any]:
    """settings.LOGGING: one handler on the root logger, in the chosen format."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {"keel": {"()": JsonFormatter if json_lines else TextFormatter}},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "keel", "filters": ["context"]}},
        "root": {"handlers": ["console"], "level": level},
    }

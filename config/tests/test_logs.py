"""One log format for the server, the workers and beat: UTC time to the millisecond, level,
logger, process, and the run and node a line is about; JSON lines with KEEL_LOG_JSON=1."""
import json
import logging
import re

from config.logs import ContextFilter, JsonFormatter, TextFormatter, log_context, logging_config


def record(message: str = "the step %s failed", args: tuple = ("import",), exc_info=None) -> logging.LogRecord:
    made = logging.LogRecord("workflows.tasks", logging.WARNING, __file__, 1, message, args, exc_info)
    ContextFilter().filter(made)
    return made


def test_a_line_says_when_how_bad_who_and_which_run_and_node():
    with log_context(run=11, node=22):
        line = TextFormatter().format(record())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARNING workflows\.tasks \[\d+\] run=11 node=22 "
                        r"the step import failed", line), line


def test_a_line_outside_a_step_names_no_run():
    line = TextFormatter().format(record())
    assert " [" in line and "run=" not in line and line.endswith("] the step import failed")


def test_json_lines_carry_the_same_fields_and_the_traceback():
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        with log_context(node=5):
            made = record("failed", (), exc_info=sys.exc_info())
    out = json.loads(JsonFormatter().format(made))
    assert out["level"] == "WARNING" and out["logger"] == "workflows.tasks" and out["node"] == 5
    assert "run" not in out and out["message"] == "failed" and "ValueError: boom" in out["exception"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", out["time"])


def test_the_settings_choose_the_format():
    assert logging_config(level="INFO", json_lines=True)["formatters"]["keel"]["()"] is JsonFormatter
    assert logging_config(level="INFO", json_lines=False)["formatters"]["keel"]["()"] is TextFormatter

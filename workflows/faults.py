"""Fault injection at named points around each tool call, for the recovery tests.

Off unless KEEL_FAULTS is set, e.g.
    KEEL_FAULTS="<a tool>.after=sleep:30,<another tool>.before=sleep:0.3"
`<tool>.before` runs before the tool's call, `<tool>.after` after the system of
record answered and before the node's completion is written — the window in
which a killed worker must lose nothing and duplicate nothing. A point may name
a tag, `<tool>.after#<tag>=fail`: it fires only where the caller passes that tag
(the pipeline passes the run's string parameters), so one deployment can fail
one run's step and no other's. `=timeout` raises TimeoutError, a transient failure."""
import os
import time


def fault_point(name: str, tags: tuple[str, ...] = ()) -> None:
    spec = os.environ.get("KEEL_FAULTS", "")
    if not spec:
        return
    for rule in spec.split(","):
        point, _, action = rule.strip().partition("=")
        point, _, tag = point.partition("#")
        if point != name or (tag and tag not in tags):
            continue
        kind, _, arg = action.partition(":")
        if kind == "sleep":
            time.sleep(float(arg))
        elif kind == "fail":
            raise RuntimeError(f"injected fault at {name}")
        elif kind == "timeout":  # a passing failure: the engine retries it with backoff, up to a cap
            raise TimeoutError(f"injected timeout at {name}")

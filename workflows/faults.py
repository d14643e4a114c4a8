"""Fault injection at named points around each tool call, for the recovery tests.

Off unless KEEL_FAULTS is set, e.g.
    KEEL_FAULTS="<a tool>.after=sleep:30,<another tool>.before=sleep:0.3"
`<tool>.before` runs before the tool's call, `<tool>.after` after the system of
record answered and before the node's completion is written — the window in
which a killed worker must lose nothing and duplicate nothing. A point may name
a tag, `<tool>.after#<tag>=fail`: it fires only where the caller passes that tag
(the pipeline passes the run's string parameters), so one deployment can fail
one run's step and no other's; `#<tag>+<tag>` needs both. `=timeout` raises TimeoutError, a transient failure.
`<point>=on` raises nothing: a tool asks `fault_flag` and alters what it reads (a
verification that finds an item short), so an acceptance criterion fails."""
import os
import time


def _actions(name: str, tags: tuple[str, ...]):
    """The (kind, argument) of each rule that names this point (and one of its tags)."""
    spec = os.environ.get("KEEL_FAULTS", "")
    for rule in spec.split(",") if spec else ():
        point, _, action = rule.strip().partition("=")
        point, _, tag = point.partition("#")
        if point == name and (not tag or all(t in tags for t in tag.split("+"))):
            kind, _, arg = action.partition(":")
            yield kind, arg


def fault_flag(name: str, tags: tuple[str, ...] = ()) -> bool:
    """Is the point `name` switched on (`=on`) for these tags?"""
    return any(kind == "on" for kind, _ in _actions(name, tags))


def fault_point(name: str, tags: tuple[str, ...] = ()) -> None:
    for kind, arg in _actions(name, tags):
        if kind == "sleep":
            time.sleep(float(arg))
        elif kind == "fail":
            raise RuntimeError(f"injected fault at {name}")
        elif kind == "timeout":  # a passing failure: the engine retries it with backoff, up to a cap
            raise TimeoutError(f"injected timeout at {name}")

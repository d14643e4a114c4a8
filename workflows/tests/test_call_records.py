"""What a tool call leaves behind: the coordinates it produced (one per key and scope), what
it consumed, and the step's working memory — each written once, whatever is run again."""
import pytest

from memory.services import working_memory_record
from timeline.models import Frame
from workflows.blueprints import BLUEPRINTS, blueprint_register
from workflows.models import CoordinateConsumption, Node, Run, StateCoordinate, ToolCall
from workflows.pipeline import arguments_resolve, tool_call_execute
from workflows.services import run_start
from tests.helpers import drive, membership, no_broker, statuses
from workflows.tools import TOOLS, Tool, ToolError, tool_register
from tests.demo import demo_ensure

pytestmark = pytest.mark.django_db
VALUES = iter(range(1000))


def _make(ctx, arguments):
    n = next(VALUES)
    return {"x": f"x{n}", "y": f"y{n}", "receipt_ref": f"receipt/{n}"}


@pytest.fixture(autouse=True)
def blueprints():
    demo_ensure()
    tool_register(Tool(name="make_xy", description="makes x and y", input_schema={"type": "object"},
                       output_schema={"type": "object"}, fn=_make, produces=["x", "y"]))
    tool_register(Tool(name="use_xy", description="uses x and y", input_schema={"type": "object"},
                       output_schema={"type": "object"}, fn=lambda ctx, a: {"seen": f"{a['x']}+{a['y']}"},
                       consumes=["x", "y"]))
    node = {"goal": "step", "arguments": {}}
    start = {"roles": ["business", "approver", "developer", "admin"], "doors": ["runs"]}
    blueprint_register({"name": "xy_chain", "title": "xy", "params": {}, "required": [], "start": start, "nodes": [
        {**node, "key": "make", "tool": "make_xy", "depends_on": []},
        {**node, "key": "use", "tool": "use_xy", "depends_on": ["make"]}]})
    blueprint_register({"name": "xy_twice", "title": "xy twice", "params": {}, "required": [], "start": start, "nodes": [
        {**node, "key": "first", "tool": "make_xy", "depends_on": []},
        {**node, "key": "second", "tool": "make_xy", "depends_on": ["first"]}]})
    with no_broker():
        yield
    for name in ("make_xy", "use_xy"):
        TOOLS.pop(name)
    for name in ("xy_chain", "xy_twice"):
        BLUEPRINTS.pop(name)


def start(blueprint: str) -> Run:
    return drive(run_start(membership=membership("alice"), blueprint=blueprint, params={}))


def test_a_call_produces_its_coordinates_and_the_next_consumes_them_once():
    run = start("xy_chain")
    assert statuses(run) == {"make": "completed", "use": "completed"}
    make = ToolCall.objects.get(run=run, node__key="make")
    coordinates = {c.key: c for c in StateCoordinate.objects.filter(run=run)}
    assert {k: (c.value, c.call_id, c.receipt_ref) for k, c in coordinates.items()} == {
        "x": (make.result["x"], make.id, make.result["receipt_ref"]),
        "y": (make.result["y"], make.id, make.result["receipt_ref"])}
    use = ToolCall.objects.get(run=run, node__key="use")
    assert use.result == {"seen": f"{make.result['x']}+{make.result['y']}"}
    assert sorted(CoordinateConsumption.objects.filter(call=use).values_list("coordinate__key", flat=True)) == ["x", "y"]
    # Delivered again, the same call records what it consumed once, and is not run again.
    node = Node.objects.get(run=run, key="use")
    arguments, consumed = arguments_resolve(node, run)
    again, output = tool_call_execute(node=node, run=run, arguments=arguments, consumed=consumed, approval_id=None)
    assert again.id == use.id and output == use.result
    assert CoordinateConsumption.objects.filter(call=use).count() == 2


def test_a_key_another_step_already_wrote_in_the_scope_fails_the_call_and_writes_nothing():
    run = start("xy_twice")
    first = ToolCall.objects.get(run=run, node__key="first")
    second = ToolCall.objects.get(run=run, node__key="second")
    assert statuses(run)["second"] == "failed"
    reason = Node.objects.get(run=run, key="second").status_reason
    assert "conflict: x was already written in this scope by make_xy" in reason
    # The call says what happened to it: failed, with the same reason, and the frame shows it.
    assert second.status == "failed" and "conflict: x was already written" in second.error
    frame = Frame.objects.get(kind="tool_call", gen_ai_tool_call_id=str(second.id))
    assert frame.status == "error" and "conflict: x" in frame.payload.data["error"]
    assert {c.key: c.call_id for c in StateCoordinate.objects.filter(run=run)} == {"x": first.id, "y": first.id}


def test_a_step_run_again_as_a_new_attempt_makes_its_receipt_the_values_provenance():
    run = start("xy_chain")
    node = Node.objects.get(run=run, key="make")
    earlier = ToolCall.objects.get(node=node)
    Node.objects.filter(id=node.id).update(attempt=node.attempt + 1)  # a person's retry: a new key
    node.refresh_from_db()
    call, output = tool_call_execute(node=node, run=run, arguments={}, consumed=[], approval_id=None)
    assert call.id != earlier.id and output["x"] != earlier.result["x"]
    assert {c.key: (c.value, c.call_id, c.receipt_ref) for c in StateCoordinate.objects.filter(run=run)} == {
        "x": (output["x"], call.id, output["receipt_ref"]), "y": (output["y"], call.id, output["receipt_ref"])}


def test_a_steps_working_memory_is_one_record_rewritten_when_the_step_runs_again():
    run = start("xy_chain")
    node = Node.objects.get(run=run, key="make")
    first = working_memory_record(tenant_id=run.tenant_id, run_id=run.id, node_id=node.id, step="make",
                                  items=[{"kind": "requirements", "text": "a"}], decision="chose A")
    second = working_memory_record(tenant_id=run.tenant_id, run_id=run.id, node_id=node.id, step="make",
                                   items=[{"kind": "requirements", "text": "b"}], decision="chose B")
    from memory.models import WorkingMemory

    stored = WorkingMemory.objects.get(node=node)
    assert stored.id == first.id == second.id
    assert (stored.items, stored.decision) == ([{"kind": "requirements", "text": "b"}], "chose B")
    assert stored.updated_at >= first.updated_at


def test_a_call_is_opened_by_one_insert_and_found_again_when_delivered_again():
    """A new call is one INSERT that skips a key already there (no read before it, no
    transaction around it); delivered again, the call already there is found and reused."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = start("xy_chain")
    node = Node.objects.get(run=run, key="make")
    Node.objects.filter(id=node.id).update(attempt=node.attempt + 1)  # a new key: a new call
    node.refresh_from_db()
    with CaptureQueriesContext(connection) as queries:
        call, _ = tool_call_execute(node=node, run=run, arguments={}, consumed=[], approval_id=None)
    on_calls = [q["sql"].split()[0] for q in queries.captured_queries
                if q["sql"].split()[:3] in (["INSERT", "INTO", '"workflows_toolcall"'], ["UPDATE", '"workflows_toolcall"', "SET"])
                or 'FROM "workflows_toolcall"' in q["sql"]]
    assert on_calls == ["INSERT", "UPDATE"], on_calls  # opened, then succeeded
    assert ToolCall.objects.filter(node=node).count() == 2
    again, output = tool_call_execute(node=node, run=run, arguments={}, consumed=[], approval_id=None)
    assert again.id == call.id and output == call.result and ToolCall.objects.filter(node=node).count() == 2


def test_a_stale_attempts_failure_written_while_this_one_succeeded_runs_the_step_again_not_fails_it():
    """Two attempts at one call (a lease taken over from a worker the database dropped):
    the slow one writes its failure while the other does the work. The step is not failed
    by that stale word: it runs again and ends with the receipt."""
    from workflows.pipeline import tool_call_transition
    from workflows.tools import ToolBusy

    effects: list[str] = []

    def work(ctx, arguments):
        if not effects:  # the first time only: the other attempt's failure lands meanwhile
            assert tool_call_transition(ctx.call_id, expected=ToolCall.Status.STARTED, to=ToolCall.Status.FAILED,
                                        error="connection lost")
        effects.append("done")
        return {"x": "x-kept", "y": "y-kept", "receipt_ref": "receipt/kept"}

    TOOLS.pop("make_xy")
    tool_register(Tool(name="make_xy", description="makes x and y", input_schema={"type": "object"},
                       output_schema={"type": "object"}, fn=work, produces=["x", "y"]))
    run = run_start(membership=membership("alice"), blueprint="xy_chain", params={})
    node = Node.objects.get(run=run, key="make")
    with pytest.raises(ToolBusy):
        tool_call_execute(node=node, run=run, arguments={}, consumed=[], approval_id=None)
    assert not StateCoordinate.objects.filter(run=run).exists()  # nothing of the lost write kept
    run = drive(run)
    assert statuses(run) == {"make": "completed", "use": "completed"}
    call = ToolCall.objects.get(node=node)
    assert call.status == "succeeded" and call.result["x"] == "x-kept"

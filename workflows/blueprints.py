"""Declarative blueprints: a goal becomes a task graph with dependencies and
acceptance criteria (the Planner of seed 001). Data, not code paths."""
from __future__ import annotations

from typing import Any

from config.api import DomainError

BLUEPRINTS: dict[str, dict[str, Any]] = {
    "payroll_group_setup": {
        "title": "Payroll group setup",
        "params": {"request": {"type": "string", "minLength": 3, "maxLength": 4000},
                   "group_name": {"type": "string", "minLength": 1, "maxLength": 120},
                   "template_code": {"type": "string", "maxLength": 60},
                   # From an attached employee list (agents.attachments), exact ids as strings.
                   "employee_ids": {"type": "array", "items": {"type": "string", "pattern": "^[0-9]{1,19}$"},
                                    "minItems": 1, "maxItems": 5000}},
        "required": ["request", "group_name"],
        "nodes": [
            {"key": "interpret", "tool": "interpret_request", "goal": "Understand the request",
             "depends_on": [], "arguments": {"request": "$params.request"}},
            {"key": "match", "tool": "match_salary_template", "goal": "Match a salary template",
             "depends_on": ["interpret"],
             "arguments": {"template_code": "$params.template_code", "exclude_template_ids": "$params.excluded_templates",
                           "answer": "$params.answer"}},
            {"key": "snapshot", "tool": "snapshot_payroll_groups", "goal": "Snapshot the current payroll groups",
             "depends_on": ["interpret"], "arguments": {}},
            {"key": "import", "tool": "import_template", "goal": "Import the template into a new group",
             "depends_on": ["match", "snapshot"],
             "arguments": {"group_name": "$params.group_name", "template_id": "$params.template_id"}},
            {"key": "verify", "tool": "verify_import", "goal": "Verify the imported group", "depends_on": ["import"],
             "arguments": {}},
            # Only when an employee list was attached: assign them to the verified new group.
            {"key": "assign", "tool": "assign_employees", "goal": "Assign the listed employees to the new group",
             "depends_on": ["verify"], "when": "employee_ids", "arguments": {"employee_ids": "$params.employee_ids"}},
            {"key": "restore", "tool": "restore_snapshot", "goal": "Restore the snapshot after a failed import",
             "depends_on": ["import"], "run_when": "failed", "arguments": {}},
        ],
        # What a rejection with replan replaces (interpret and snapshot keep their receipts).
        "replan_on_reject": ["match", "import", "verify", "assign", "restore"],
        # What a changed precondition at approval replaces: a fresh snapshot and a new approval.
        "replan_on_stale": ["snapshot", "import", "verify", "assign", "restore"],
    },
    # Benchmarks: no-op nodes, to measure the engine's own cost per hop.
    "noop_chain": {
        "title": "No-op chain", "params": {"n": {"type": "integer", "minimum": 1, "maximum": 1000}},
        "required": ["n"], "nodes": "chain",
    },
    "noop_fanout": {
        "title": "No-op fan-out", "params": {"n": {"type": "integer", "minimum": 1, "maximum": 5000}},
        "required": ["n"], "nodes": "fanout",
    },
}


class BlueprintError(DomainError):
    code = "invalid_blueprint"


def blueprint_get(name: str) -> dict[str, Any]:
    if name not in BLUEPRINTS:
        raise BlueprintError(f"Unknown blueprint {name!r}; known: {', '.join(sorted(BLUEPRINTS))}.")
    return BLUEPRINTS[name]


def blueprint_nodes(name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The node specs of a blueprint for these params, arguments bound."""
    spec = blueprint_get(name)["nodes"]
    if spec == "chain":
        n = params["n"]
        return [{"key": f"n{i}", "tool": "noop", "goal": f"No-op {i}", "depends_on": [f"n{i - 1}"] if i else [],
                 "arguments": {}, "position": i} for i in range(n)]
    if spec == "fanout":
        return [{"key": f"n{i}", "tool": "noop", "goal": f"No-op {i}", "depends_on": [], "arguments": {},
                 "position": i} for i in range(params["n"])]
    # A node with `when` exists only if that param is given (an optional step).
    return [{**{k: v for k, v in node.items() if k != "when"}, "arguments": _bind(node["arguments"], params),
             "position": position}
            for position, node in enumerate(spec) if not node.get("when") or params.get(node["when"])]


def _bind(arguments: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    bound = {}
    for name, value in arguments.items():
        if isinstance(value, str) and value.startswith("$params."):
            value = params.get(value.removeprefix("$params."))
            if value is None:
                continue
        bound[name] = value
    return bound


def params_validate(name: str, params: Any) -> dict[str, Any]:
    import jsonschema

    spec = blueprint_get(name)
    schema = {"type": "object", "properties": spec["params"], "required": spec["required"]}
    if not isinstance(params, dict):
        raise BlueprintError("params must be a JSON object.")
    try:
        jsonschema.validate(params, schema)
    except jsonschema.ValidationError as err:
        where = ".".join(str(p) for p in err.absolute_path) or "params"
        raise BlueprintError(f"{where}: {err.message}") from err
    return params

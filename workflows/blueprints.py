"""Blueprints are data (the Planner, DESIGN.md §2): a goal becomes a task graph of
nodes with tools, dependencies, `run_when`, optional steps and acceptance criteria.

The engine knows no domain's blueprint: a domain app registers its own
(`blueprint_register`, usually from a JSON file) when Django starts. The engine's
own benchmark blueprints (no-op chain and fan-out) are generated here.

Each blueprint declares who may start it (`start`: roles, and the doors it may be
started through), and `blueprint_start_check` is the one rule every entry point obeys
(workflows.services.run_create calls it): a run that makes a write is started only by
whom that write's own endpoint admits, and a run that is the consequence of a domain's
endpoint or event is never started from `runs/` or a conversation."""
from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import jsonschema
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.api import DomainError, Forbidden
from config.names import name_normalised
from config.words import localised, words
from tenants.models import Role


class Door(StrEnum):
    """Where a run's start comes from. A blueprint names the doors it may be started through."""

    RUNS = "runs"  # POST /api/v1/runs/: any member, any params the schema admits
    CONVERSATION = "conversation"  # a chat message the agent understood
    ENDPOINT = "endpoint"  # a domain's own endpoint, after that endpoint's own checks
    EVENT = "event"  # a domain event (an outbox row), after the domain's own checks
    # A replay re-enacts a recorded run in a sandbox tenant (agents.replay, which admits only
    # developers and admins). The record does not say which door the run came through, so a
    # replay is held to the roles only; it is never declared by a blueprint.
    REPLAY = "replay"


DECLARABLE_DOORS = [door.value for door in Door if door != Door.REPLAY]

# What a registered blueprint must look like; checked once, at registration.
BLUEPRINT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name", "title", "params", "required", "nodes", "start"],
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
        "title": {"type": "string"},
        "titled_by": {"type": "string",
                      "description": "the param whose value titles a run's conversation and activity (a name)"},
        "start": {
            "type": "object", "required": ["roles", "doors"], "additionalProperties": False,
            "description": "who may start a run of this blueprint (blueprint_start_check)",
            "properties": {
                "roles": {"type": "array", "minItems": 1, "uniqueItems": True,
                          "items": {"enum": [role.value for role in Role]}},
                "doors": {"type": "array", "minItems": 1, "uniqueItems": True,
                          "items": {"enum": DECLARABLE_DOORS}},
                "via": {"type": "string", "minLength": 1,
                        "description": "the request that starts it instead, named when another door is refused"},
            }},
        "params": {"type": "object"},
        "required": {"type": "array", "items": {"type": "string"}},
        "nodes": {"oneOf": [
            {"enum": ["chain", "fanout"]},
            {"type": "array", "minItems": 1, "items": {
                "type": "object", "required": ["key", "tool", "goal", "depends_on", "arguments"],
                "properties": {
                    "key": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
                    "tool": {"type": "string"}, "goal": {"type": "string"},
                    "goal_zh": {"type": "string", "description": "the goal in Chinese, for Chinese readers"},
                    "title": {"type": "string", "description": "a short name of the step (the task graph's box)"},
                    "title_zh": {"type": "string"},
                    "depends_on": {"type": "array", "items": {"type": "string"}},
                    "run_when": {"enum": ["completed", "failed"]},
                    "when": {"type": ["string", "array"], "items": {"type": "string"},
                             "description": "the node exists only if this param (or any of these) is given"},
                    "arguments": {"type": "object"},
                    "acceptance": {"type": "array", "items": {"type": "string"}},
                }}},
        ]},
        "replan_on_reject": {"type": "array", "items": {"type": "string"}},
        "replan_on_stale": {"type": "array", "items": {"type": "string"}},
        "replan_after_undo": {"type": "array", "items": {"type": "string"},
                              "description": "the steps a failed step's domain may replace once its undo committed"},
    },
}

# Its validator, made once: jsonschema.validate() checks the schema itself on every call
# (23 ms a blueprint, at every Python start-up). The schema's own check is a unit test.
BLUEPRINT_VALIDATOR = jsonschema.Draft202012Validator(BLUEPRINT_SCHEMA)

BLUEPRINTS: dict[str, dict[str, Any]] = {}


class BlueprintError(DomainError):
    code = "invalid_blueprint"


def blueprint_register(spec: dict[str, Any]) -> dict[str, Any]:
    """Add a blueprint. Refuses a malformed one, a second one of the same name, a node
    that depends on a key the blueprint does not have, and a title from an undeclared param."""
    error = jsonschema.exceptions.best_match(BLUEPRINT_VALIDATOR.iter_errors(spec))
    if error is not None:
        raise error
    name = spec["name"]
    if name in BLUEPRINTS:
        raise ValueError(f"blueprint {name} registered twice")
    if isinstance(spec["nodes"], list):
        keys = {n["key"] for n in spec["nodes"]}
        for node in spec["nodes"]:
            missing = set(node["depends_on"]) - keys
            if missing:
                raise ValueError(f"blueprint {name}: node {node['key']} depends on unknown {sorted(missing)}")
    titled_by = spec.get("titled_by")
    if titled_by is not None and titled_by not in spec["params"]:
        raise ValueError(f"blueprint {name}: titled_by names {titled_by!r}, which is not one of its params")
    BLUEPRINTS[name] = spec
    return spec


def blueprint_load(path: Path) -> dict[str, Any]:
    """Register the blueprint a JSON file holds."""
    return blueprint_register(json.loads(Path(path).read_text(encoding="utf-8")))


def blueprint_get(name: str) -> dict[str, Any]:
    if name not in BLUEPRINTS:
        raise BlueprintError(_("Unknown blueprint %(name)s; known: %(choices)s.")
                             % {"name": repr(name), "choices": ', '.join(sorted(BLUEPRINTS))})
    return BLUEPRINTS[name]


def blueprint_title(name: str) -> str:
    """The blueprint's title in the reader's language (its "title_zh" for Chinese)."""
    spec = blueprint_get(name)
    chinese = (translation.get_language() or "").lower().startswith("zh")
    return spec.get("title_zh") or spec["title"] if chinese else spec["title"]


def _door_words(door: str) -> str:
    return {Door.RUNS: _("through POST /api/v1/runs/"), Door.CONVERSATION: _("from a conversation"),
            Door.ENDPOINT: _("from this request"), Door.EVENT: _("from this event")}.get(door, door)


def blueprint_start_check(name: str, *, role: str, door: str) -> None:
    """Refuse (403) a start the blueprint does not declare: a role it does not name, or a
    door it is not started through. The role is checked first: the person it refuses is
    told whom to ask; one with the role is told which request starts it instead."""
    start = blueprint_get(name)["start"]
    title = blueprint_title(name)
    if role not in start["roles"]:
        raise Forbidden(_("Your role may not start “%(title)s”; the roles that may: %(roles)s. "
                          "Ask one of them to start it.")
                        % {"title": title, "roles": ", ".join(str(Role(r).label) for r in start["roles"])},
                        code="role_required", extra={"roles": list(start["roles"])})
    if door != Door.REPLAY and door not in start["doors"]:
        via = start.get("via")
        words = {"title": title, "door": _door_words(door), "via": via}
        message = (_("“%(title)s” is not started %(door)s; it starts through %(via)s.") % words if via else
                   _("“%(title)s” is not started %(door)s; it starts only as the consequence of another request.")
                   % words)
        raise Forbidden(message, code="start_elsewhere", extra={"doors": list(start["doors"]), "via": via})


def blueprint_nodes(name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The node specs of a blueprint for these params, arguments bound."""
    spec = blueprint_get(name)["nodes"]
    if spec == "chain":
        n = params["n"]
        return [{"key": f"n{i}", "tool": "noop", "goal": f"No-op {i}", "goal_zh": f"空操作 {i}",
                 "depends_on": [f"n{i - 1}"] if i else [], "arguments": {}, "position": i} for i in range(n)]
    if spec == "fanout":
        return [{"key": f"n{i}", "tool": "noop", "goal": f"No-op {i}", "goal_zh": f"空操作 {i}", "depends_on": [],
                 "arguments": {}, "position": i} for i in range(params["n"])]
    # A node with `when` exists only if that param is given (an optional step). A step
    # that depended on an absent one depends on what the absent one depended on instead.
    present = {node["key"] for node in spec if not node.get("when") or any(
        params.get(w) for w in ([node["when"]] if isinstance(node["when"], str) else node["when"]))}
    deps_of = {node["key"]: node["depends_on"] for node in spec}

    def through(keys: list[str]) -> list[str]:
        found: list[str] = []
        for key in keys:
            for dep in ([key] if key in present else through(deps_of[key])):
                if dep not in found:
                    found.append(dep)
        return found

    return [{**{k: v for k, v in node.items() if k != "when"}, "arguments": _bind(node["arguments"], params),
             "depends_on": through(node["depends_on"]), "position": position}
            for position, node in enumerate(spec) if node["key"] in present]


# --- a step's words: the blueprint speaks both languages ("goal"/"goal_zh", "title"/"title_zh",
# "acceptance"/"acceptance_zh"), so a domain's steps read in Chinese with no catalog entry and no
# engine code naming the domain. Stored as words (config.words) where a summary is written.

def goal_words(step: dict[str, Any]) -> dict[str, Any]:
    """A node spec's goal as words: its English and Chinese, rendered for each reader."""
    return words(gettext_noop("%(goal)s"), goal=localised(step["goal"], step.get("goal_zh")))


def step_spec(blueprint: str, key: str) -> dict[str, Any] | None:
    """The blueprint's own spec of a step (None: an engine blueprint, or one no longer registered)."""
    nodes = BLUEPRINTS.get(blueprint, {}).get("nodes")
    if not isinstance(nodes, list):
        return None
    return next((node for node in nodes if node["key"] == key), None)


def step_title(blueprint: str, key: str) -> dict[str, str] | str:
    """A step's short name in both languages (its key when the blueprint names it not)."""
    step = step_spec(blueprint, key)
    if step is None or not step.get("title"):
        return key
    return localised(step["title"], step.get("title_zh"))


def criterion_words(blueprint: str, key: str, criterion: str) -> dict[str, str] | str:
    """An acceptance criterion of a step in both languages (the blueprint's "acceptance_zh")."""
    step = step_spec(blueprint, key) or {}
    for english, chinese in zip(step.get("acceptance", []), step.get("acceptance_zh", []), strict=False):
        if english == criterion:
            return localised(english, chinese)
    return criterion


def _bind(arguments: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    bound = {}
    for name, value in arguments.items():
        if isinstance(value, str) and value.startswith("$params."):
            value = params.get(value.removeprefix("$params."))
            if value is None:
                continue
        bound[name] = value
    return bound


_params_validators: dict[str, tuple[dict, Any]] = {}

# A param declared `"format": "name"` is a name a person gives (a group's, say): it is
# refused at the door when it hides an invisible or text-direction character, and stored
# as people read it (config.names), before it titles a conversation or reaches a card.
PARAM_FORMATS = jsonschema.FormatChecker([])


@PARAM_FORMATS.checks("name", raises=DomainError)
def _is_name(value: Any) -> bool:
    if isinstance(value, str):
        name_normalised(value, field="name")
    return True


def params_validate(name: str, params: Any) -> dict[str, Any]:
    """The params as the blueprint's JSON schema admits them (400 naming the param), its
    names normalised."""
    spec = blueprint_get(name)
    if not isinstance(params, dict):
        raise BlueprintError(_("params must be a JSON object."))
    cached = _params_validators.get(name)
    if cached is None or cached[0] is not spec:  # built (and its schema checked) once per blueprint
        schema = {"type": "object", "properties": spec["params"], "required": spec["required"]}
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        cached = _params_validators[name] = (spec, cls(schema, format_checker=PARAM_FORMATS))
    try:
        cached[1].validate(params)
    except jsonschema.ValidationError as err:
        where = ".".join(str(p) for p in err.absolute_path) or "params"
        if isinstance(err.cause, DomainError):  # a name: its own sentence, naming the param
            try:
                name_normalised(err.instance, field=where.replace("_", " "))
            except DomainError as refusal:
                raise BlueprintError(refusal.message, code=refusal.code, extra={"field": f"params.{where}"}) from err
        raise BlueprintError(_("%(where)s: %(message)s") % {"where": where, "message": err.message}) from err
    names = {key for key, prop in spec["params"].items() if prop.get("format") == "name"}
    return {key: name_normalised(value, field=key) if key in names and isinstance(value, str) else value
            for key, value in params.items()}


# The engine's own: no-op nodes, to measure the engine's cost per hop (bench/). They write
# nothing, but a run of a thousand nodes is load on everyone's workers: developers and
# admins measure, through runs/ only, and n stays within what the benchmarks use.
BENCHMARK_START = {"roles": [Role.DEVELOPER.value, Role.ADMIN.value], "doors": [Door.RUNS.value]}
blueprint_register({"name": "noop_chain", "title": "No-op chain", "title_zh": "空操作链", "nodes": "chain",
                    "required": ["n"], "start": BENCHMARK_START,
                    "params": {"n": {"type": "integer", "minimum": 1, "maximum": 1000}}})
blueprint_register({"name": "noop_fanout", "title": "No-op fan-out", "title_zh": "空操作扇出", "nodes": "fanout",
                    "required": ["n"], "start": BENCHMARK_START,
                    "params": {"n": {"type": "integer", "minimum": 1, "maximum": 1000}}})

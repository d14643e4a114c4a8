"""What the generic apps need to know about payroll's tools, declared on the tools
(payroll/agent/tools/) so that approvals, memory and metrics never name one: the
approval card (sentence, diff, the size of what the import touches), the
preconditions re-checked when an approver decides, how arguments read on the
card, what a rejection changes in the plan, what memory learns, and how many
groups an import created."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

from django.utils import timezone
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.names import name_visible
from config.words import localised, ngettext_noop, words, words_render
from memory.models import MemoryItem
from memory.services import memory_recall
from workflows.models import StateCoordinate
from workflows.tools import Experience, Preview

from payroll.models import ClaimKind, Employee, PayrollGroup, PayrollTemplate, RecordClaim, Snapshot, group_name_key
from payroll.reading.requirements import REGION_NAMES, requirements_extract
from payroll.agent.proposals import moved_proposed, pay_changes_proposed, with_salaries
from payroll.records.selectors import (
    checksum_of,
    configuration_checksum,
    configuration_of,
    import_diff,
    import_scope,
    listed_scope,
    restore_diff,
    scope_checksum,
)
from payroll.records.evaluator import FormulaError
from payroll.records.trial import (
    SAMPLE_PAYSLIPS,
    NoCityRules,
    city_of_params,
    people_of_params,
    region_place,
    template_structure,
    trial_applies,
    trial_of,
)

def import_preview(tenant_id: int, arguments: dict[str, Any], params: dict[str, Any]) -> Preview:
    salaries = arguments.get("salaries") or []
    # The salaries answered before the approval are part of what it approves: the card shows
    # them, and the trial on it computes with them.
    params = with_salaries(params, salaries)
    diff = import_diff(tenant_id=tenant_id, template_id=int(arguments["template_id"]),
                       group_name=arguments["group_name"])
    diff = {**diff, "moved": moved_proposed(tenant_id=tenant_id, employee_ids=params.get("employee_ids") or []),
            "pay_changes": pay_changes_proposed(tenant_id=tenant_id, params=params, salaries=salaries)}
    name = diff.get("template", {}).get("name", "the matched template")
    measures = import_scope(tenant_id=tenant_id, template_id=int(arguments["template_id"]))
    if params.get("employee_ids") or params.get("new_employees"):
        # An attached employee list says exactly who the new group is for.
        measures = listed_scope(tenant_id=tenant_id, employee_ids=params.get("employee_ids") or [],
                                currency=measures.get("currency", ""))
    new = new_employees_proposed(tenant_id=tenant_id, rows=params.get("new_employees") or [])
    if new:
        # People of the attached HR export not yet in the system of record: created on approval.
        diff = {**diff, "new_employees": new}
        measures = {**measures, "headcount": measures.get("headcount", 0) + len(new), "listed": True}
    measures = {**measures, "context": request_context(arguments, params)}
    trial = import_trial(tenant_id=tenant_id, template_id=int(arguments["template_id"]), params=params)
    if trial is not None:
        diff = {**diff, "trial": trial}
    return Preview(summary=import_summary_words(tenant_id, arguments), diff=diff, measures=measures)


def import_trial(*, tenant_id: int, template_id: int, params: dict[str, Any]) -> dict[str, Any] | None:
    """The trial the run will compute after the import, computed now for the people it will
    assign (payroll.records.trial): totals per month, three sample payslips (month 1), who has no
    salary yet, or why nothing can be computed (no rules for the city). None: no list attached."""
    if not (params.get("employee_ids") or params.get("new_employees")):
        return None
    template = PayrollTemplate.objects.filter(id=template_id).first()
    if template is None:
        return None
    if not trial_applies(template.region):
        place, place_zh = region_place(template.region)
        return {"not_modelled": {"en": place, "zh-hans": place_zh}, "count": 0, "missing": [], "totals": [],
                "samples": []}
    people = people_of_params(tenant_id, params, timezone.localdate())
    try:
        # The template's items, which the import copies into the group, under the requested city's rules.
        out = trial_of(people, template.region, city=city_of_params(params), structure=template_structure(template))
    except FormulaError:
        return None  # the import itself refuses the item and says why
    except NoCityRules as none:
        return {"blocked": {"en": none.place, "zh-hans": none.place_zh}, "count": len(people),
                "missing": [], "totals": [], "samples": []}
    samples = [{"name": e["name"], "employee_no": e["employee_no"], **e["months"][0]}
               for e in out["employees"][:SAMPLE_PAYSLIPS]]
    rules = out.get("rules") or {}
    return {"year": out["year"], "count": out["count"], "city_name": out.get("city_name"),
            "rules_current": rules.get("current", True), "rules_source": rules.get("source"),
            "rules_from": rules.get("effective_from"), "totals": out["totals"], "samples": samples,
            "missing": out["missing"], "missing_inputs": out.get("missing_inputs") or [],
            "currency": template.currency}


def import_summary(tenant_id: int, arguments: dict[str, Any], diff: dict[str, Any] | None = None) -> str:
    template = PayrollTemplate.objects.filter(id=int(arguments["template_id"])).first()
    return _("Import template “%(template)s” into a new group “%(group)s”.") % {
        "template": local_name(template) if template else _("the matched template"),
        "group": name_visible(arguments["group_name"])}


def import_summary_words(tenant_id: int, arguments: dict[str, Any]) -> dict[str, Any]:
    """The card's sentence as meaning: each reader sees it in their own language."""
    template = PayrollTemplate.objects.filter(id=int(arguments["template_id"])).first()
    return words(gettext_noop("Import template “%(template)s” into a new group “%(group)s”."),
                 template=(localised(template.name, template.name_zh or template.name) if template
                           else words(gettext_noop("the matched template"))),
                 group=name_visible(arguments["group_name"]))


def new_employees_proposed(*, tenant_id: int, rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The attached export's rows whose employee number the tenant does not have yet."""
    numbers = [str(r.get("employee_no") or "").strip() for r in rows]
    existing = set(Employee.objects.filter(tenant_id=tenant_id, employee_no__in=numbers)
                   .values_list("employee_no", flat=True))
    return [{"employee_no": str(r["employee_no"]).strip(), "name": str(r.get("name") or "").strip(),
             "department": str(r.get("department") or "").strip(), "location": str(r.get("location") or "").strip(),
             **({"pay": dict(r["pay"])} if isinstance(r.get("pay"), dict) else {})}
            for r in rows if str(r.get("employee_no") or "").strip() not in existing]


# "assumed a monthly pay cycle…" per template frequency: one sentence each, so each language words it whole.
FREQUENCY_ASSUMED = {
    "monthly": gettext_noop("assumed a monthly pay cycle; no pay cycle was stated"),
    "semi_monthly": gettext_noop("assumed a semi-monthly pay cycle; no pay cycle was stated"),
    "biweekly": gettext_noop("assumed a biweekly pay cycle; no pay cycle was stated"),
    "weekly": gettext_noop("assumed a weekly pay cycle; no pay cycle was stated"),
}


def _place_words(region: str | None, city: dict | None) -> Any:
    """A place as the reader reads it: a stated city, else the region's name."""
    if city:
        return localised(city.get("en") or region or "", city.get("zh") or city.get("en") or region or "")
    if region == "CN":
        return words(gettext_noop("nationwide"))
    en, cn = REGION_NAMES.get(region or "", (region or "", region or ""))
    return localised(en, cn)


def request_context(arguments: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """What the approver reads about where the run came from: the user's own words (as typed,
    in `lang`) and every assumption the agent made to get from them to this template and name,
    as words each approver reads in their own language."""
    request = (params.get("request") or "").strip()
    requirements = params.get("requirements") or requirements_extract(request)
    zh = requirements.get("lang") == "zh"
    template = PayrollTemplate.objects.filter(id=int(arguments.get("template_id") or 0)).first()
    assumptions: list[dict[str, Any]] = []
    if template is not None:
        frequency = requirements.get("pay_frequency")
        if not frequency or frequency == "hourly":
            assumptions.append(words(FREQUENCY_ASSUMED[template.pay_frequency]) if template.pay_frequency
                               in FREQUENCY_ASSUMED else words(gettext_noop(
                                   "assumed the pay cycle “%(cycle)s”; no pay cycle was stated"),
                                   cycle=template.pay_frequency))
        region = requirements.get("region")
        template_region = {"CN-Shanghai": "CN-SH", "CN-Beijing": "CN-BJ", "CN-Shenzhen": "CN-SZ",
                           "CN-Guangzhou": "CN-GZ"}.get(template.region, template.region)
        template_place = _place_words(template_region, None)
        if not region:
            assumptions.append(words(gettext_noop("assumed %(place)s; no city or region was stated"),
                                     place=template_place))
        elif region != template_region:
            asked = _place_words(region, requirements.get("city"))
            if template.region == "CN":
                assumptions.append(words(gettext_noop(
                    "used the nationwide template; there is no template for %(asked)s yet"), asked=asked))
            else:
                assumptions.append(words(gettext_noop(
                    "used a %(place)s template; there is no template for %(asked)s"), place=template_place,
                    asked=asked))
    if not requirements.get("name_stated") and arguments.get("group_name"):
        assumptions.append(words(gettext_noop("named the group “%(name)s”; no name was stated"),
                                 name=name_visible(arguments["group_name"])))
    return {"request": request[:2000], "assumptions": assumptions, "lang": "zh" if zh else "en"}


def import_preconditions(tenant_id: int, run_id: int, arguments: dict[str, Any]) -> str:
    """The records this import touches are as the snapshot froze them, and its name is
    still reserved for this run. Only this run's scope: another run's import elsewhere in
    the tenant never makes this approval stale."""
    snapshot = Snapshot.objects.filter(id=int(arguments.get("snapshot_id") or 0), tenant_id=tenant_id).first()
    if snapshot is not None and snapshot.scope is not None:
        if snapshot.checksum != scope_checksum(tenant_id=tenant_id, scope=snapshot.scope):
            return "the records this import touches changed after the snapshot"
    elif snapshot is None:
        return "the snapshot taken before the import is missing"
    name = (arguments.get("group_name") or "").strip()
    holder = RecordClaim.objects.filter(tenant_id=tenant_id, kind=ClaimKind.GROUP_NAME,
                                        key=group_name_key(name)).first()
    if holder is None or holder.run_id != run_id:
        return f"the name “{name_visible(name)}” is no longer reserved for this run"
    return ""


def scope_release(tenant_id: int, run_id: int) -> None:
    """A run that ended for good gives back the names and employees it reserved."""
    RecordClaim.objects.filter(tenant_id=tenant_id, run_id=run_id).delete()


SNAPSHOT_BEFORE_RUN = re.compile(r"^before run (?P<run>\d+): “(?P<name>.*)”$")


def snapshot_label(label: str) -> str:
    """A snapshot's stored label; the ones Keel writes itself ("before run …") in the reader's language."""
    m = SNAPSHOT_BEFORE_RUN.match(label or "")
    return _("before run %(run)s: “%(name)s”") % m.groupdict() if m else label


def local_name(record: Any) -> str:
    """A record's name in the reader's language: its name_zh for a Chinese reader, when it has one."""
    chinese = (translation.get_language() or "").lower().startswith("zh")
    return (getattr(record, "name_zh", "") or record.name) if chinese else record.name


def _snapshot_words(snapshot: Snapshot | None) -> str:
    return words_render(snapshot_words(snapshot))


def snapshot_label_words(label: str) -> Any:
    """A snapshot's label as words: the ones Keel writes itself ("before run …") in the reader's language."""
    m = SNAPSHOT_BEFORE_RUN.match(label or "")
    if not m:
        return name_visible(label or "")
    return words(gettext_noop("before run %(run)s: “%(name)s”"), run=m["run"], name=name_visible(m["name"]))


def snapshot_words(snapshot: Snapshot | None) -> dict[str, Any]:
    if snapshot is None:
        return words(gettext_noop("missing snapshot"))
    return words(gettext_noop("“%(label)s”, taken %(at)s"), label=snapshot_label_words(snapshot.label),
                 at=f"{timezone.localtime(snapshot.created_at):%Y-%m-%d %H:%M}")


def import_argument(tenant_id: int, name: str, value: Any) -> tuple[str, str]:
    if name == "template_id":
        template = PayrollTemplate.objects.filter(id=value).first()
        return _("Template"), (_("%(name)s (%(code)s, version %(version)s)")
                               % {"name": local_name(template), "code": template.code, "version": template.version}
                               if template else _("unknown template"))
    if name == "snapshot_id":
        snapshot = Snapshot.objects.filter(id=value, tenant_id=tenant_id).first()
        return _("Safety snapshot"), _snapshot_words(snapshot)
    if name == "group_name":
        # Shown as people must read it: a name from before names were checked shows its hidden characters.
        return _("New payroll group"), f"“{name_visible(str(value))}”"
    return name.replace("_", " ").capitalize(), str(value)


def import_rejection_replan(params: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Reject and replan: match again, without the rejected template and without a pinned code."""
    excluded = [*params.get("excluded_templates", []), str(arguments.get("template_id", ""))]
    return {"excluded_templates": excluded, "template_code": None}


def import_effects(tenant_id: int, keys: list[str]) -> dict[str, int]:
    """Payroll groups created under each idempotency key (more than one is a duplicate)."""
    return dict(Counter(PayrollGroup.objects.filter(
        tenant_id=tenant_id, idempotency_record__operation="template_import",
        idempotency_record__key__in=keys).values_list("idempotency_record__key", flat=True)))


# --- memory: what an approved import teaches ----------------------------------------------

POPULATION_WORDS = {"sales": "sales", "executive": "executives", "intern": "interns", "shift": "shift workers",
                    "engineering": "engineering", "salaried": "salaried staff", "hourly": "hourly staff"}
ITEM_WORDS = {"commission": "commission", "overtime": "overtime", "annual_bonus": "an annual bonus",
              "housing_fund": "a housing fund", "social_insurance": "social insurance", "cpf": "CPF",
              "mpf": "MPF", "performance_bonus": "a performance bonus", "allowance": "allowances", "tips": "tips",
              "bonus": "a bonus"}
REGION_WORDS = {"CN-SH": "Shanghai", "CN-BJ": "Beijing", "CN-SZ": "Shenzhen", "CN-GZ": "Guangzhou",
                "HK": "Hong Kong", "SG": "Singapore", "US": "the US"}


def request_signature(requirements: dict[str, Any]) -> dict[str, Any]:
    """What kind of request it was, in words-free keys (no free text, no ids)."""
    return {"region": requirements.get("region"), "pay_frequency": requirements.get("pay_frequency"),
            "population": requirements.get("population"),
            "items_named": sorted(requirements.get("items_named") or [])}


def request_words(signature: dict[str, Any]) -> str:
    population = POPULATION_WORDS.get(signature.get("population") or "", "payroll")
    items = [ITEM_WORDS.get(i, i) for i in signature.get("items_named") or []]
    text = f"a {population} request" + (f" with {' and '.join(items)}" if items else "")
    where = [w for w in [REGION_WORDS.get(signature.get("region") or ""),
                         (signature.get("pay_frequency") or "").replace("_", "-")] if w]
    return text + (f" ({', '.join(where)})" if where else "")


def request_similarity(a: dict[str, Any], b: dict[str, Any]) -> float:
    """How alike two requests are; 0 when they are about different people or places."""
    if not a.get("population") or a.get("population") != b.get("population"):
        return 0.0
    score = 1.0
    for key in ("region", "pay_frequency"):
        if a.get(key) and b.get(key):
            if a[key] != b[key]:
                return 0.0
            score += 1
    items_a, items_b = set(a.get("items_named") or []), set(b.get("items_named") or [])
    if items_a or items_b:
        overlap = len(items_a & items_b) / len(items_a | items_b)
        if overlap < 0.5:
            return 0.0
        score += overlap
    return score


def import_experience(tenant_id: int, run_id: int, arguments: dict[str, Any], approved_by: str) -> Experience | None:
    requirements = (StateCoordinate.objects.filter(run_id=run_id, key="requirements")
                    .order_by("-plan_version").values_list("value", flat=True).first()) or {}
    template = PayrollTemplate.objects.filter(id=int(arguments.get("template_id", 0))).first()
    if template is None:
        return None
    signature = request_signature(requirements)
    words = request_words(signature)
    return Experience(signature=signature, data={"template_id": str(template.id)}, kind="template_approved",
                      fact=f"The template “{template.name}” was approved by {approved_by} for {words}.",
                      preference=f"For {words}, the approved choice was “{template.name}”.")


def requirements_words(requirements: dict[str, Any]) -> str:
    """The requirements in words: what a prompt may say about them."""
    parts = []
    if requirements.get("population"):
        parts.append(POPULATION_WORDS.get(requirements["population"], requirements["population"]))
    if requirements.get("region"):
        parts.append("in " + REGION_WORDS.get(requirements["region"], requirements["region"]))
    if requirements.get("pay_frequency"):
        parts.append("paid " + requirements["pay_frequency"].replace("_", "-"))
    items = [ITEM_WORDS.get(i, i.replace("_", " ")) for i in requirements.get("items_named") or []]
    if items:
        parts.append("with " + " and ".join(items))
    return " ".join(parts) or "no details yet"


def template_memories(*, tenant_id: int, requirements: dict[str, Any], limit: int = 3) -> list[MemoryItem]:
    """L3 experience of this tenant for requests like this one: approved template choices."""
    return memory_recall(tenant_id=tenant_id, signature=request_signature(requirements),
                         similarity=request_similarity, limit=limit)


# --- the whole-tenant restore -------------------------------------------------------------

def restore_preview(tenant_id: int, arguments: dict[str, Any], params: dict[str, Any]) -> Preview:
    snapshot = Snapshot.objects.get(id=int(arguments["snapshot_id"]), tenant_id=tenant_id)
    diff = restore_diff(tenant_id=tenant_id, snapshot=snapshot)
    # Beside the English `lines`, the same changes as words: each approver reads them in their language.
    diff = {**diff, "changes": restore_changes(tenant_id, snapshot),
            "heading_words": words(gettext_noop("Exactly what restoring “%(label)s” will change, for the whole tenant"),
                                   label=snapshot_label_words(snapshot.label))}
    return Preview(summary=restore_summary_words(snapshot, diff["groups_deleted"]), diff=diff,
                   measures={"headcount": diff["employees_moved"]})


def restore_changes(tenant_id: int, snapshot: Snapshot) -> list[dict[str, Any]]:
    """What restoring changes, line by line, as words (the counts `restore_diff` words in English)."""
    now, then = configuration_of(tenant_id=tenant_id), snapshot.configuration
    now_groups = {g["id"]: g for g in now["groups"]}
    then_groups = {g["id"]: g for g in then["groups"]}
    now_assigned = {a["employee_id"]: a["group_id"] for a in now["assignments"]}
    then_assigned = {a["employee_id"]: a["group_id"] for a in then["assignments"]}
    moved = {e for e in set(now_assigned) | set(then_assigned) if now_assigned.get(e) != then_assigned.get(e)}
    members = Counter(now_assigned.values())
    changes = [{"sign": "−", "words": words(gettext_noop(
        "Group “%(name)s” is deleted (%(items)s, %(members)s)"), name=name_visible(now_groups[g]["name"]),
        items=words(ngettext_noop("%(n)s item", "%(n)s items"), n=len(now_groups[g]["items"])),
        members=words(ngettext_noop("%(n)s employee taken out of it", "%(n)s employees taken out of it"),
                      n=members[g]))}
        for g in sorted(set(now_groups) - set(then_groups), key=int)]
    changes += [{"sign": "+", "words": words(ngettext_noop("Group “%(name)s” comes back (%(items)s item)",
                                                                 "Group “%(name)s” comes back (%(items)s items)", "items"),
                                             name=name_visible(then_groups[g]["name"]),
                                             items=len(then_groups[g]["items"]))}
                for g in sorted(set(then_groups) - set(now_groups), key=int)]
    changes += [{"sign": "~", "words": words(gettext_noop("Group “%(name)s” is put back as it was"),
                                             name=name_visible(then_groups[g]["name"]))}
                for g in sorted(set(now_groups) & set(then_groups), key=int)
                if checksum_of(now_groups[g]) != checksum_of(then_groups[g])]
    if moved:
        changes.append({"sign": "~", "words": words(ngettext_noop("%(n)s employee changes group",
                                                                      "%(n)s employees change group"), n=len(moved))})
    if not changes:
        changes.append({"sign": "=", "words": words(gettext_noop(
            "Nothing: the tenant is already as the snapshot froze it"))})
    return changes


def restore_summary_words(snapshot: Snapshot, deleted: list[str]) -> dict[str, Any]:
    label = snapshot_label_words(snapshot.label)
    if not deleted:
        return words(gettext_noop("Restore the whole tenant to the snapshot “%(label)s”."), label=label)
    return words(gettext_noop("Restore the whole tenant to the snapshot “%(label)s”: deletes %(groups)s, "
                              "whoever created them."), label=label,
                 groups=[f"“{name_visible(n)}”" for n in deleted])


def _restore_words(snapshot: Snapshot, deleted: list[str]) -> str:
    return words_render(restore_summary_words(snapshot, deleted))


def restore_summary(tenant_id: int, arguments: dict[str, Any], diff: dict[str, Any] | None = None) -> str:
    """The card's summary as the reader reads it (what it deletes, as the approver was told)."""
    snapshot = Snapshot.objects.filter(id=int(arguments["snapshot_id"]), tenant_id=tenant_id).first()
    if snapshot is None:
        return ""
    return _restore_words(snapshot, (diff or {}).get("groups_deleted") or [])


def restore_preconditions(tenant_id: int, run_id: int, arguments: dict[str, Any]) -> str:
    """Whole-tenant by nature: the approver decided on the tenant as it was when asked."""
    if configuration_checksum(tenant_id=tenant_id) != arguments.get("tenant_checksum"):
        return "the tenant's payroll configuration changed after the restore was asked for"
    return ""


def restore_argument(tenant_id: int, name: str, value: Any) -> tuple[str, str]:
    if name == "tenant_checksum":
        return _("Tenant as the approver sees it"), _("checksum %(checksum)s…") % {"checksum": str(value)[:12]}
    if name == "snapshot_id":
        snapshot = Snapshot.objects.filter(id=value, tenant_id=tenant_id).first()
        return _("Restore to snapshot"), _snapshot_words(snapshot)
    return name.replace("_", " ").capitalize(), str(value)

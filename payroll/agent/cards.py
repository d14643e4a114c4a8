"""Payroll's approval cards as typed rows (workflows.cards): the import (the group, each
item it creates, the new employees of an attached export, the people it is for, the
problems it will hit) and the whole-tenant restore. Computed from what the approval
stored, so each approver reads it in their own language; registered in PayrollConfig.ready()."""
from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django.utils.translation import gettext_noop

from config.names import name_visible
from config.words import localised, ngettext_noop, words
from workflows import cards

from payroll.models import Snapshot
from payroll.reading.requirements import REGION_NAMES, gazetteer
from .previews import snapshot_words

PLACES = {en: zh for en, zh in REGION_NAMES.values()}


def place(location: Any) -> Any:
    """A location as employees carry it ("Shanghai"), in the reader's language when known."""
    if not isinstance(location, str) or not location:
        return location or "—"
    if location in PLACES:
        return localised(location, PLACES[location])
    city = gazetteer()["by_pinyin"].get(location.lower().replace(" ", "").replace("'", ""))
    return localised(location, city["zh"]) if city else location


def _snapshot(approval: Any, snapshot_id: Any) -> cards.Row:
    snapshot = Snapshot.objects.filter(id=snapshot_id, tenant_id=approval.tenant_id).first() if str(
        snapshot_id).isdigit() else None
    return cards.text(snapshot_words(snapshot))


def _rate(rate: Any) -> str:
    try:
        return f"{(Decimal(str(rate)) * 100).normalize():f}%"
    except (InvalidOperation, TypeError, ValueError):
        return ""


KIND_WORDS = {"earning": gettext_noop("earning"), "deduction": gettext_noop("deduction"),
              "employer_contribution": gettext_noop("employer contribution"), "tax": gettext_noop("tax")}


def _kind(kind: str) -> cards.Row:
    return cards.tag(words(KIND_WORDS[kind]) if kind in KIND_WORDS else (kind or "—"), tone=kind)


def _item_row(item: dict[str, Any], evaluated: dict[str, Any] | None = None) -> list[cards.Row]:
    """A template item the import creates. Its rate is the one the trial used (the city rules'
    for a rule parameter), never a figure the template carries for another city."""
    how = (cards.code(item["formula"]) if item.get("formula") else
           cards.line(cards.text(words(gettext_noop("of"))), cards.code(item["base"])) if item.get("base") else
           cards.text(""))
    if evaluated is not None and evaluated.get("rate") is not None:
        rate = cards.text(_rate(evaluated["rate"]))
    elif item.get("rate_name"):
        rate = cards.code(item["rate_name"])
    else:
        rate = cards.text(_rate(item["rate"]) if item.get("rate") is not None else "—")
    return [cards.text(item_name(item)), cards.code(item["code"]), _kind(item.get("kind", "")), rate, how]


def item_name(item: dict[str, Any]) -> Any:
    return localised(item["name"], item.get("name_zh") or item["name"])


def _evaluated_items_table(sample: dict[str, Any], currency: str) -> cards.Row:
    """One employee's month as the payslip will compute it: every item with its formula, the
    base and rate actually used, and the amount."""
    found = sample.get("items") or []
    return cards.table(
        [words(gettext_noop("Item")), words(gettext_noop("Formula")), words(gettext_noop("Base")),
         words(gettext_noop("Rate")), words(gettext_noop("Amount"))],
        [[cards.line(cards.text(item_name(i)), cards.code(i["code"])), cards.code(i["formula"]),
          cards.amount(i["base"], currency) if i.get("base") is not None else cards.text("—"),
          cards.text(_rate(i["rate"]) if i.get("rate") is not None else "—"), cards.amount(i["amount"], currency)]
         for i in found],
        keys=[i["code"] for i in found], mark="trial-items", row_mark="trial-item",
        caption=words(gettext_noop("Every item for %(name)s in January, as the payslip will compute it"),
                      name=sample.get("name") or sample.get("employee_no") or ""))


def _scope_words(scope: dict[str, Any]) -> dict[str, Any]:
    n = int(scope.get("headcount") or 0)
    gross = cards.money_text(scope.get("monthly_gross") or 0)
    if scope.get("listed"):
        key = (gettext_noop("%(n)s employee from the attached list will be assigned to it after the import is "
                            "verified (monthly gross %(gross)s %(currency)s)") if n == 1 else
               gettext_noop("%(n)s employees from the attached list will be assigned to it after the import is "
                            "verified (monthly gross %(gross)s %(currency)s)"))
        return words(key, n=n, gross=gross, currency=scope.get("currency", ""))
    key = (gettext_noop("%(n)s employee in %(location)s not yet in a group (monthly gross %(gross)s %(currency)s) "
                        "can be assigned to it; the import itself assigns none") if n == 1 else
           gettext_noop("%(n)s employees in %(location)s not yet in a group (monthly gross %(gross)s %(currency)s) "
                        "can be assigned to it; the import itself assigns none"))
    return words(key, n=n, location=place(scope.get("location")), gross=gross, currency=scope.get("currency", ""))


def import_card(approval: Any) -> list[cards.Row]:
    diff = approval.diff or {}
    template = diff.get("template") or {}
    template_name = localised(template.get("name", ""), template.get("name_zh") or template.get("name", ""))
    rows = [cards.arguments_section(approval, {
        "template_id": (words(gettext_noop("Template")), cards.text(words(
            gettext_noop("%(name)s (%(code)s, version %(version)s)"), name=template_name,
            code=template.get("code", ""), version=template.get("version", "")))),
        "snapshot_id": (words(gettext_noop("Safety snapshot")), _snapshot(approval, approval.arguments.get("snapshot_id"))),
        "group_name": (words(gettext_noop("New payroll group")),
                       cards.text(f"“{name_visible(str(approval.arguments.get('group_name', '')))}”")),
        "salaries": (words(gettext_noop("Salaries answered before the approval")), cards.text(words(
            gettext_noop("%(count)s, each on its own line under “Salaries this approval sets”"),
            count=len(approval.arguments.get("salaries") or [])))),
    })]
    if not diff:
        return rows
    change: list[cards.Row] = [cards.diff([("+", cards.text(words(
        gettext_noop("New payroll group “%(name)s” from %(template)s (%(code)s v%(version)s)"),
        name=name_visible(g["name"]), template=template_name, code=template.get("code", ""),
        version=template.get("version", "")))) for g in diff.get("groups") or []], line_mark="diff-group")]
    found = diff.get("items") or []
    samples = (diff.get("trial") or {}).get("samples") or []
    used = {i["code"]: i for i in (samples[0].get("items") or [])} if samples else {}
    change.append(cards.table(
        [words(gettext_noop("Item")), words(gettext_noop("Code")), words(gettext_noop("Kind")),
         words(gettext_noop("Rate")), words(gettext_noop("Base / formula"))],
        [_item_row(i, used.get(i["code"])) for i in found], signs=["+"] * len(found), keys=[i["code"] for i in found],
        mark="diff-items", row_mark="diff-item"))
    new = diff.get("new_employees") or []
    currency = (diff.get("trial") or {}).get("currency") or template.get("currency") or "CNY"
    salary = {p["employee_no"]: p["new"] for p in diff.get("pay_changes") or []}
    if new:
        change.append(cards.table(
            [words(gettext_noop("Name")), words(gettext_noop("Number")), words(gettext_noop("Department")),
             words(gettext_noop("City")), words(gettext_noop("Base salary"))],
            [[cards.line(cards.tag(words(gettext_noop("new employee"))), cards.person(e["name"])),
              cards.code(e["employee_no"]), cards.text(e.get("department") or "—"), cards.text(place(e.get("location"))),
              cards.amount(salary[e["employee_no"]], currency) if e["employee_no"] in salary else cards.text("—")]
             for e in new],
            signs=["+"] * len(new), keys=[e["employee_no"] for e in new], mark="new-employees", row_mark="new-employee",
            caption=words(gettext_noop("New employees from the attached list, created on approval and assigned to "
                                       "the group"))))
    total = words(gettext_noop("%(n)s item added") if len(found) == 1 else gettext_noop("%(n)s items added"),
                  n=len(found))
    moved = diff.get("moved") or []
    if moved:
        change.append(_moved_lines(moved, str(approval.arguments.get("group_name", ""))))
        change.append(cards.text(words(
            gettext_noop("%(items)s · %(n)s employee moves out of another group") if len(moved) == 1 else
            gettext_noop("%(items)s · %(n)s employees move out of other groups"), items=total, n=len(moved))))
    else:
        change.append(cards.text(words(gettext_noop("%(items)s · no existing group or item changes"), items=total)))
    if diff.get("pay_changes"):
        change.append(_pay_table(diff["pay_changes"], currency))
    scope = {k: v for k, v in (approval.measures or {}).items() if k != "context"}
    if scope.get("headcount") is not None:
        change.append(cards.text(_scope_words(scope), mark="employees-affected"))
    rows.append(cards.section(words(gettext_noop("Exactly what the import will change")), change, mark="diff"))
    if diff.get("trial"):
        rows.append(_trial_section(diff["trial"]))
    if diff.get("problems"):
        rows.append(cards.section(words(gettext_noop("Problems the import will hit:")),
                                  [cards.items([cards.text(p["message"]) for p in diff["problems"]])],
                                  mark="diff-problems", alert=True))
    return rows


def _moved_lines(moved: list[dict[str, Any]], into: str) -> cards.Row:
    """Each employee the import takes out of another group: from which group, whose it is."""
    def line(m: dict[str, Any]) -> Any:
        values = {"employee": m["name"], "number": m["employee_no"], "from": name_visible(m["from_group"]),
                  "into": name_visible(into)}
        if m.get("owner"):
            return words(gettext_noop("%(employee)s (%(number)s): “%(from)s” → “%(into)s” — moved out of "
                                      "%(owner)s's group"), owner=m["owner"], **values)
        return words(gettext_noop("%(employee)s (%(number)s): “%(from)s” → “%(into)s” — moved out of that group"),
                     **values)

    return cards.diff([("~", cards.text(line(m))) for m in moved], mark="moved-employees", line_mark="moved-employee")


def _pay_table(changes: list[dict[str, Any]], currency: str) -> cards.Row:
    """Each base salary the approval sets, old → new, or new for a new employee; a salary the
    run's starter answered before the approval says so."""
    def salary(p: dict[str, Any]) -> Any:
        if p.get("old") is None:
            return words(gettext_noop("new: %(new)s"), new=cards.money_text(p["new"]))
        return words(gettext_noop("%(old)s → %(new)s"), old=cards.money_text(p["old"]), new=cards.money_text(p["new"]))

    return cards.table(
        [words(gettext_noop("Name")), words(gettext_noop("Number")),
         words(gettext_noop("Monthly base salary (%(currency)s)"), currency=currency), words(gettext_noop("From"))],
        [[cards.person(p["name"]), cards.code(p["employee_no"]), cards.text(salary(p)),
          cards.text(words(gettext_noop("answered before the approval") if p.get("answered") else
                           gettext_noop("the attached list")))] for p in changes],
        signs=["~" if p.get("old") is not None else "+" for p in changes], keys=[p["employee_no"] for p in changes],
        mark="pay-changes", row_mark="pay-change",
        caption=words(gettext_noop("Salaries this approval sets")))


MONTHS = {1: gettext_noop("January"), 2: gettext_noop("February"), 3: gettext_noop("March")}


def _month(month: int) -> Any:
    return words(MONTHS[month]) if month in MONTHS else str(month)


def _trial_section(trial: dict[str, Any]) -> cards.Row:
    """The trial the run computes after the import, computed for the approver now: the totals
    per month, three sample payslips, and who has no salary yet (asked after approval)."""
    heading = words(gettext_noop("Trial payroll, %(year)s (months 1–3)"), year=trial.get("year", ""))
    if trial.get("not_modelled"):
        return cards.section(heading, [cards.text(words(gettext_noop(
            "The trial covers mainland China's social insurance, housing fund and income tax; %(place)s's are not "
            "modelled, so no trial is computed for this group."), place=trial["not_modelled"]),
            mark="trial-not-modelled")], mark="trial")
    if trial.get("blocked"):
        return cards.section(heading, [cards.text(words(gettext_noop(
            "No social insurance and housing fund rules for %(city)s: the trial after the import will stop, "
            "and the group will not be set up."), city=trial["blocked"]), mark="trial-blocked")],
            mark="trial", alert=True)
    currency = trial.get("currency") or "CNY"
    rows: list[cards.Row] = []
    if trial.get("totals"):
        rows.append(cards.table(
            [words(gettext_noop("Month")), words(gettext_noop("Gross")), words(gettext_noop("Employer cost")),
             words(gettext_noop("Tax")), words(gettext_noop("Net"))],
            [[cards.text(_month(t["month"])), cards.amount(t["gross"], currency),
              cards.amount(t["employer_cost"], currency), cards.amount(t["tax"], currency),
              cards.amount(t["net"], currency)] for t in trial["totals"]],
            keys=[str(t["month"]) for t in trial["totals"]], mark="trial-totals", row_mark="trial-total",
            caption=words(ngettext_noop("Totals for %(n)s employee in %(city)s", "Totals for %(n)s employees in %(city)s"),
                          n=int(trial.get("count") or 0) - len(trial.get("missing") or []),
                          city=trial.get("city_name") or "—")))
    if trial.get("samples"):
        rows.append(cards.table(
            [words(gettext_noop("Sample payslip (January)")), words(gettext_noop("Gross")),
             words(gettext_noop("Employee contributions")), words(gettext_noop("Tax")), words(gettext_noop("Net"))],
            [[cards.line(cards.person(p["name"]), cards.code(p["employee_no"])), cards.amount(p["gross"], currency),
              cards.amount(p["employee_contributions"], currency), cards.amount(p["tax"], currency),
              cards.amount(p["net"], currency)] for p in trial["samples"]],
            keys=[p["employee_no"] for p in trial["samples"]], mark="trial-payslips", row_mark="trial-payslip"))
    if trial.get("samples"):
        rows.append(_evaluated_items_table(trial["samples"][0], currency))
    if trial.get("missing_inputs"):
        rows.append(cards.text(words(gettext_noop("Not given, so computed as zero: %(inputs)s. Give them with the "
                                                  "month's inputs."), inputs=", ".join(trial["missing_inputs"])),
                               mark="trial-missing-inputs"))
    if trial.get("rules_source"):
        rows.append(cards.text(words(gettext_noop("Rates from %(source)s, in force from %(start)s."),
                                     source=trial["rules_source"], start=trial.get("rules_from") or "—"),
                               mark="trial-rules"))
    missing = trial.get("missing") or []
    if missing and not trial.get("totals"):
        rows.append(cards.text(words(gettext_noop("Nobody on the list has a salary yet: the trial will ask for the "
                                                  "salaries after the approval.")), mark="trial-missing"))
    elif missing:
        rows.append(cards.text(words(gettext_noop("No salary yet for %(names)s: the trial will ask for it after the "
                                                  "approval."), names=[m["name"] for m in missing[:8]]),
                               mark="trial-missing"))
    if trial.get("rules_current") is False:
        rows.append(cards.text(words(gettext_noop("The city's rules for this year are not published yet: the latest "
                                                  "known ones were used. Keel's staff enter the new period on the "
                                                  "rules page.")), mark="trial-rules-old"))
    return cards.section(heading, rows, mark="trial")


def restore_card(approval: Any) -> list[cards.Row]:
    diff = approval.diff or {}
    rows = [cards.arguments_section(approval, {
        "tenant_checksum": (words(gettext_noop("Tenant as the approver sees it")), cards.text(words(
            gettext_noop("checksum %(checksum)s…"), checksum=str(approval.arguments.get("tenant_checksum", ""))[:12]))),
        "snapshot_id": (words(gettext_noop("Restore to snapshot")),
                        _snapshot(approval, approval.arguments.get("snapshot_id"))),
    })]
    if not diff:
        return rows
    # Stored as words ("changes"); an approval stored before they were keeps its English lines.
    lines = [(c["sign"], cards.text(c["words"])) for c in diff.get("changes") or []] or [
        (ln["sign"], cards.text(ln["text"])) for ln in diff.get("lines") or []]
    heading = diff.get("heading_words") or diff.get("heading") or ""
    rows.append(cards.section(heading, [cards.diff(lines, mark="diff-lines", line_mark="diff-line")], mark="diff"))
    return rows


def cards_register() -> None:
    cards.card_register("import_template", import_card)
    cards.card_register("restore_tenant_snapshot", restore_card)

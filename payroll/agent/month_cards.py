"""The payroll month's approval cards (workflows.cards): the close — totals, each employee's
change against the previous closed month with anomalies flagged, sample payslips, what the tax
withholding started from — and the reopen. Read from the approval's stored review (no bank or
ID numbers: the review holds none), in each approver's language."""
from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_noop

from config.words import localised, words
from workflows import cards

FLAG_WORDS = {"new": gettext_noop("new employee"), "missing": gettext_noop("missing this month"),
              "net_up": gettext_noop("net pay up more than 20 %"), "net_down": gettext_noop("net pay down more than 20 %"),
              "missing_input": gettext_noop("an input missing"), "no_inputs": gettext_noop("no inputs row")}


def _period(review: dict[str, Any]) -> str:
    return f"{review.get('year')}-{int(review.get('month') or 0):02d}"


def _totals(review: dict[str, Any], currency: str) -> cards.Row:
    t = review.get("totals") or {}
    return cards.fields([
        (words(gettext_noop("Headcount")), cards.text(str(t.get("headcount", 0)))),
        (words(gettext_noop("Gross")), cards.amount(t.get("gross", "0"), currency)),
        (words(gettext_noop("Employer cost")), cards.amount(t.get("employer_cost", "0"), currency)),
        (words(gettext_noop("Employee contributions")), cards.amount(t.get("employee_contributions", "0"), currency)),
        (words(gettext_noop("Employer contributions")), cards.amount(t.get("employer_contributions", "0"), currency)),
        (words(gettext_noop("Tax")), cards.amount(t.get("tax", "0"), currency)),
        (words(gettext_noop("Net")), cards.amount(t.get("net", "0"), currency)),
    ], mark="month-totals")


def _changes(review: dict[str, Any], currency: str) -> cards.Row:
    rows = review.get("employees") or []
    previous = review.get("previous")
    caption = (words(gettext_noop("Against %(period)s, the last closed month; %(n)s flagged"),
                     period=_period(previous), n=review.get("anomalies", 0)) if previous else
               words(gettext_noop("No earlier closed month to compare with; %(n)s flagged"), n=review.get("anomalies", 0)))
    return cards.table(
        [words(gettext_noop("Employee")), words(gettext_noop("Net")), words(gettext_noop("Previous net")),
         words(gettext_noop("Change")), words(gettext_noop("Flags"))],
        [[cards.line(cards.person(r["name"]), cards.code(r["employee_no"])),
          cards.amount(r["net"], currency) if r.get("net") is not None else cards.text("—"),
          cards.amount(r["previous_net"], currency) if r.get("previous_net") is not None else cards.text("—"),
          cards.text(f"{r['change_percent']}%" if r.get("change_percent") is not None else "—"),
          cards.line(*[cards.tag(words(FLAG_WORDS.get(f, f)), tone="alert") for f in r.get("flags") or []])
          if r.get("flags") else cards.text("")]
         for r in rows],
        keys=[r["employee_no"] for r in rows], mark="month-changes", row_mark="month-change", caption=caption)


def _sample(review: dict[str, Any], currency: str) -> list[cards.Row]:
    samples = review.get("samples") or []
    if not samples:
        return []
    out = [cards.table(
        [words(gettext_noop("Sample payslip")), words(gettext_noop("Gross")),
         words(gettext_noop("Employee contributions")), words(gettext_noop("Tax")), words(gettext_noop("Net"))],
        [[cards.line(cards.person(p["name"]), cards.code(p["employee_no"])), cards.amount(p["gross"], currency),
          cards.amount(p["employee_contributions"], currency), cards.amount(p["tax"], currency),
          cards.amount(p["net"], currency)] for p in samples],
        keys=[p["employee_no"] for p in samples], mark="month-samples", row_mark="month-sample")]
    first = samples[0]
    out.append(cards.table(
        [words(gettext_noop("Item")), words(gettext_noop("Formula")), words(gettext_noop("Amount"))],
        [[cards.line(cards.text(localised(i["name"], i.get("name_zh") or i["name"])), cards.code(i["code"])), cards.code(i["formula"]),
          cards.amount(i["amount"], currency)] for i in first.get("items") or []],
        keys=[i["code"] for i in first.get("items") or []], mark="month-sample-items", row_mark="month-sample-item",
        caption=words(gettext_noop("Every item of %(name)s's payslip, with its formula"), name=first["name"])))
    return out


def _opening(review: dict[str, Any]) -> cards.Row:
    opening = review.get("opening") or {}
    parts: list[cards.Row] = []
    if opening.get("year_openings"):
        parts.append(cards.text(words(gettext_noop(
            "Tax continues from the previous payroll system's year-to-date figures for %(n)s employees."),
            n=opening["year_openings"]), mark="month-opening-used"))
    if opening.get("closed_months_employees"):
        parts.append(cards.text(words(gettext_noop(
            "Tax continues from this year's closed months for %(n)s employees."),
            n=opening["closed_months_employees"]), mark="month-closed-months"))
    if opening.get("assumed_joined"):
        parts.append(cards.text(words(gettext_noop(
            "%(n)s employees have no year-to-date figures and no closed month this year: each is treated as having "
            "joined this month, so the cumulative basic deduction counts from this month (5,000 a month) and no "
            "earlier income or tax is counted; import the year-to-date figures if they were paid earlier this "
            "year."), n=opening["assumed_joined"]), mark="month-assumed-joined"))
    if opening.get("no_pay"):
        parts.append(cards.text(words(gettext_noop("No salary, so no payslip: %(names)s."),
                                      names=", ".join(p["name"] for p in opening["no_pay"][:10])),
                                mark="month-no-pay"))
    if opening.get("unknown_columns"):
        parts.append(cards.text(words(gettext_noop("Columns of the inputs file that were not read: %(columns)s."),
                                      columns=", ".join(opening["unknown_columns"])), mark="month-unknown-columns"))
    return cards.section(words(gettext_noop("What the computation started from")), parts, mark="month-opening")


def month_card(approval: Any) -> list[cards.Row]:
    review = (approval.diff or {}).get("month") or {}
    if not review:
        return cards.generic_card(approval)
    currency = review.get("currency") or "CNY"
    version = review.get("inputs_version")
    heading = words(gettext_noop("%(group)s, %(period)s: the payroll to close"), group=review.get("group", ""),
                    period=_period(review))
    rows: list[cards.Row] = [cards.section(heading, [
        _totals(review, currency),
        cards.text(words(gettext_noop("Inputs version %(version)s"), version=version) if version else
                   words(gettext_noop("No inputs imported: every input computed as zero")), mark="month-inputs")],
        mark="month")]
    rows.append(cards.section(words(gettext_noop("Change per employee")), [_changes(review, currency)],
                              mark="month-anomalies", alert=bool(review.get("anomalies"))))
    rows.append(cards.section(words(gettext_noop("Sample payslips")), _sample(review, currency), mark="month-sample"))
    rows.append(_opening(review))
    return rows


def reopen_card(approval: Any) -> list[cards.Row]:
    diff = (approval.diff or {}).get("reopen") or {}
    if not diff:
        return cards.generic_card(approval)
    later = diff.get("later") or []
    lines = [("−", cards.text(words(gettext_noop("The %(kind)s becomes void"), kind=kind))) for kind in diff["files"]]
    lines.append(("~", cards.text(words(gettext_noop("%(n)s payslips go back to draft"),
                                        n=(diff.get("totals") or {}).get("headcount", 0)))))
    lines += [("~", cards.text(words(gettext_noop("%(period)s must compute again before it can close"),
                                     period=f"{m['year']}-{m['month']:02d}"))) for m in later]
    return [cards.section(words(gettext_noop("Reopen %(group)s, %(period)s"), group=diff.get("group", ""),
                                period=_period(diff)),
                          [cards.text(words(gettext_noop("Reason: %(reason)s"), reason=diff.get("reason", "")),
                                      mark="reopen-reason"),
                           cards.diff(lines, mark="reopen-lines", line_mark="reopen-line")], mark="reopen")]


def month_cards_register() -> None:
    cards.card_register("close_payroll_month", month_card)
    cards.card_register("reopen_payroll_month", reopen_card)

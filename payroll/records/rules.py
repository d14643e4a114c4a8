"""The cities' social insurance and housing fund rules, as data: CityRulePeriod rows, which
staff change on the rules page (loaded from payroll/data/city_rules.json by a migration; the
file is read instead only while the table is empty, e.g. where no migration has run).

Every look-up reads the periods as one validated set (`rules_all`), re-parsed only when a
row changed; a figure that does not parse, a floor above its cap, a missing insurance kind
or overlapping periods fail loudly (RulesFileError naming the spot) instead of producing a
plausible wrong payslip. A change is checked by the same parser before it is saved
(`period_checked`). Rates are kept as fractions (`Decimal("0.08")` for the data's "8"
percent), amounts in yuan, all `Decimal`.

`city_rules(city, on)` answers the rules of the period in effect on `on`. When no period
covers `on` but an earlier one does (the bureaus publish next year's bases months late),
it answers the latest earlier period with `current=False`, so a trial says it ran on last
year's figures instead of refusing."""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from config.api import NotFound

RULES_PATH = Path(__file__).resolve().parent.parent / "data" / "city_rules.json"
NATIONWIDE = "cn"

# The insurance kinds every period must list, in payslip order; the housing fund comes last.
SOCIAL_KINDS = ("pension", "medical", "unemployment", "injury", "maternity")
HOUSING_FUND = "housing_fund"
KIND_LABELS = {
    "pension": gettext_lazy("pension insurance"),
    "medical": gettext_lazy("medical insurance"),
    "unemployment": gettext_lazy("unemployment insurance"),
    "injury": gettext_lazy("work injury insurance"),
    "maternity": gettext_lazy("maternity insurance"),
    HOUSING_FUND: gettext_lazy("housing fund"),
}
HUNDRED = Decimal(100)
MAX_RATE_PERCENT = Decimal(30)  # a contribution rate above this is a typo, not a city's rule


class RulesFileError(Exception):
    """The rules (the table's periods, or city_rules.json) are malformed: a bug in the data,
    never a caller's mistake; a change that would make them so is refused with it."""


class UnknownCity(NotFound):
    """No rules for this city (404 on the rules API; the trial turns it into a field error)."""

    code = "unknown_city"


class RulesNotInEffect(NotFound):
    code = "rules_not_in_effect"


@dataclass(frozen=True)
class Bounds:
    """A contribution base's floor and cap (社保/公积金缴费基数上下限), yuan a month."""

    floor: Decimal
    cap: Decimal

    def clamp(self, amount: Decimal) -> Decimal:
        return min(max(amount, self.floor), self.cap)


@dataclass(frozen=True)
class Source:
    authority: str
    title: str
    year: int
    url: str = ""


@dataclass(frozen=True)
class ContributionRule:
    """One insurance (or the housing fund): rates as fractions of `base` (clamped)."""

    kind: str
    employee_rate: Decimal
    employer_rate: Decimal
    base: Bounds
    employee_range: tuple[Decimal, Decimal] | None = None  # the rates a company may choose
    employer_range: tuple[Decimal, Decimal] | None = None
    includes: tuple[str, ...] = ()  # medical "includes" maternity where they are merged
    note: Any = ""  # written for an HR reader: {"en", "zh"} (or plain text)


@dataclass(frozen=True)
class CityRules:
    key: str
    name: str
    name_zh: str
    effective_from: date
    effective_to: date | None
    source: Source
    social_base: Bounds
    housing_fund_base: Bounds
    contributions: tuple[ContributionRule, ...]  # social insurances, then the housing fund
    merged: dict[str, str] = field(default_factory=dict)  # {"maternity": "medical"}
    notes: tuple[Any, ...] = ()  # each {"en", "zh"} (or plain text), for an HR reader
    verified: bool = False
    current: bool = True  # False: `on` is past this period and the file has no newer one

    @property
    def housing_fund(self) -> ContributionRule:
        return next(rule for rule in self.contributions if rule.kind == HOUSING_FUND)


@dataclass(frozen=True)
class City:
    key: str
    name: str
    name_zh: str
    aliases: tuple[str, ...]
    periods: tuple[CityRules, ...]  # by effective_from


def note_text(note: Any, language: str = "en") -> str:
    """A rule's note in `language` ("zh…" for Chinese), English when it has no such text."""
    if isinstance(note, dict):
        chinese = str(language or "").lower().startswith("zh")
        return str((note.get("zh") if chinese else None) or note.get("en") or "")
    return str(note or "")


# --- Reading the file -------------------------------------------------------------------

def _amount(value: Any, where: str) -> Decimal:
    if not isinstance(value, str):
        raise RulesFileError(f"{where}: amounts are strings, got {value!r}")
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise RulesFileError(f"{where}: {value!r} is not a number") from None
    if not amount.is_finite() or amount < 0:
        raise RulesFileError(f"{where}: {value!r} is not a non-negative number")
    return amount


def _rate(value: Any, where: str) -> Decimal:
    """A percent in the file ("0.5") as a fraction (Decimal("0.005")); at most 30 %."""
    percent = _amount(value, where)
    if percent > MAX_RATE_PERCENT:
        raise RulesFileError(f"{where}: {value!r} % is not a plausible contribution rate")
    return percent / HUNDRED


def _range(value: Any, where: str) -> tuple[Decimal, Decimal] | None:
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2):
        raise RulesFileError(f"{where}: a range is [low, high]")
    low, high = _rate(value[0], where), _rate(value[1], where)
    if low > high:
        raise RulesFileError(f"{where}: {value[0]} is above {value[1]}")
    return low, high


def _bounds(value: Any, where: str) -> Bounds:
    if not isinstance(value, dict):
        raise RulesFileError(f"{where}: expected {{floor, cap}}")
    bounds = Bounds(_amount(value.get("floor"), f"{where}.floor"), _amount(value.get("cap"), f"{where}.cap"))
    if bounds.floor > bounds.cap:
        raise RulesFileError(f"{where}: floor {bounds.floor} is above cap {bounds.cap}")
    return bounds


def _date(value: Any, where: str) -> date:
    try:
        return date.fromisoformat(value)
    except (TypeError, ValueError):
        raise RulesFileError(f"{where}: {value!r} is not a YYYY-MM-DD date") from None


def _in_range(rate: Decimal, allowed: tuple[Decimal, Decimal] | None, where: str) -> None:
    if allowed is not None and not allowed[0] <= rate <= allowed[1]:
        raise RulesFileError(f"{where}: the rate {rate * HUNDRED} % is outside its allowed range")


def _contribution(raw: dict[str, Any], social_base: Bounds, where: str) -> ContributionRule:
    kind = raw["kind"]
    employee_range = _range(raw.get("employee_range"), f"{where}.employee_range")
    employer_range = _range(raw.get("employer_range"), f"{where}.employer_range")
    rule = ContributionRule(
        kind=kind,
        employee_rate=_rate(raw.get("employee_rate"), f"{where}.employee_rate"),
        employer_rate=_rate(raw.get("employer_rate"), f"{where}.employer_rate"),
        base=_bounds(raw["base"], f"{where}.base") if "base" in raw else social_base,
        employee_range=employee_range, employer_range=employer_range,
        includes=tuple(raw.get("includes", ())), note=raw.get("note", ""))
    _in_range(rule.employee_rate, employee_range, where)
    _in_range(rule.employer_rate, employer_range, where)
    if kind == "injury" and rule.employee_rate:
        raise RulesFileError(f"{where}: employees pay no work injury insurance")
    return rule


def _period(key: str, city: dict[str, Any], raw: dict[str, Any], where: str) -> CityRules:
    social_base = _bounds(raw.get("social_base"), f"{where}.social_base")
    housing_fund_base = _bounds(raw.get("housing_fund_base"), f"{where}.housing_fund_base")
    contributions, merged, seen = [], {}, []
    for i, item in enumerate(raw.get("contributions", [])):
        item_where = f"{where}.contributions[{i}]"
        kind = item.get("kind") if isinstance(item, dict) else None
        if kind not in SOCIAL_KINDS or kind in seen:
            raise RulesFileError(f"{item_where}: unknown or repeated kind {kind!r}")
        seen.append(kind)
        if "merged_into" in item:
            merged[kind] = item["merged_into"]
            continue
        contributions.append(_contribution(item, social_base, item_where))
    if sorted(seen) != sorted(SOCIAL_KINDS):
        raise RulesFileError(f"{where}: every period lists {', '.join(SOCIAL_KINDS)}; missing "
                             f"{', '.join(sorted(set(SOCIAL_KINDS) - set(seen)))}")
    for kind, into in merged.items():
        target = next((rule for rule in contributions if rule.kind == into), None)
        if target is None or kind not in target.includes:
            raise RulesFileError(f"{where}: {kind} is merged into {into!r}, which must list it in `includes`")
    fund = raw.get("housing_fund") or {}
    allowed = _range(fund.get("allowed"), f"{where}.housing_fund.allowed")
    housing = ContributionRule(
        kind=HOUSING_FUND,
        employee_rate=_rate(fund.get("employee_rate"), f"{where}.housing_fund.employee_rate"),
        employer_rate=_rate(fund.get("employer_rate"), f"{where}.housing_fund.employer_rate"),
        base=housing_fund_base, employee_range=allowed, employer_range=allowed, note=fund.get("note", ""))
    _in_range(housing.employee_rate, allowed, f"{where}.housing_fund")
    _in_range(housing.employer_rate, allowed, f"{where}.housing_fund")
    source = raw.get("source") or {}
    if not (source.get("authority") and source.get("title") and isinstance(source.get("year"), int)):
        raise RulesFileError(f"{where}.source: authority, title and year are required")
    effective_to = raw.get("effective_to")
    period = CityRules(
        key=key, name=city["name"], name_zh=city["name_zh"],
        effective_from=_date(raw.get("effective_from"), f"{where}.effective_from"),
        effective_to=None if effective_to is None else _date(effective_to, f"{where}.effective_to"),
        source=Source(source["authority"], source["title"], source["year"], source.get("url", "")),
        social_base=social_base, housing_fund_base=housing_fund_base,
        contributions=tuple(contributions) + (housing,), merged=merged,
        notes=tuple(raw.get("notes", ())), verified=bool(raw.get("verified", False)))
    if period.effective_to is not None and period.effective_to < period.effective_from:
        raise RulesFileError(f"{where}: effective_to is before effective_from")
    return period


def rules_parse(data: dict[str, Any]) -> dict[str, City]:
    """The cities of city_rules.json's shape (the file, or the table as rules_data reads it),
    validated; RulesFileError naming the bad spot."""
    cities: dict[str, City] = {}
    names: dict[str, str] = {}
    try:
        for key, raw in data["cities"].items():
            periods = sorted((_period(key, raw, p, f"{key}.periods[{i}]") for i, p in enumerate(raw["periods"])),
                             key=lambda p: p.effective_from)
            if not periods:
                raise RulesFileError(f"{key}: no periods")
            for before, after in zip(periods, periods[1:]):
                if before.effective_to is None or before.effective_to >= after.effective_from:
                    raise RulesFileError(f"{key}: the periods from {before.effective_from} and "
                                         f"{after.effective_from} overlap")
            city = City(key=key, name=raw["name"], name_zh=raw["name_zh"], aliases=tuple(raw.get("aliases", ())),
                        periods=tuple(periods))
            for name in (key, city.name, city.name_zh, *city.aliases):
                folded = name.strip().casefold()
                if names.setdefault(folded, key) != key:
                    raise RulesFileError(f"{key}: the name {name!r} is also {names[folded]!r}'s")
            cities[key] = city
    except (KeyError, TypeError, AttributeError) as exc:
        raise RulesFileError(f"the city rules are malformed: {exc!r}") from exc
    if NATIONWIDE not in cities:
        raise RulesFileError("the city rules have no nationwide default ('cn')")
    return cities


@cache
def rules_file() -> dict[str, City]:
    """city_rules.json, read and validated once per process: the seed of the table, and the
    rules while it is empty."""
    return rules_parse(json.loads(RULES_PATH.read_text(encoding="utf-8")))


# The periods as parsed, with the fingerprint of the rows they were parsed from.
_parsed: tuple[tuple[Any, ...], dict[str, City]] | None = None


def rules_data() -> dict[str, Any] | None:
    """The table's periods in the file's shape ({"cities": {key: {name, …, periods}}}); None when empty."""
    from payroll.models import CityRulePeriod

    cities: dict[str, Any] = {}
    for row in CityRulePeriod.objects.order_by("city", "effective_from"):
        city = cities.setdefault(row.city, {"name": row.name, "name_zh": row.name_zh,
                                            "aliases": list(row.aliases or []), "periods": []})
        city["periods"].append(period_raw(row))
    return {"cities": cities} if cities else None


def period_raw(row: Any) -> dict[str, Any]:
    """A CityRulePeriod as a period of the file."""
    return {**(row.rules or {}), "effective_from": row.effective_from.isoformat(),
            "effective_to": row.effective_to.isoformat() if row.effective_to else None,
            "source": row.source or {}, "verified": row.verified}


def rules_all() -> dict[str, City]:
    """Every city's rules, validated: the table's, else (empty table) the file's. One small query
    a look-up; the rows are parsed again only when one was added, removed or changed (a change
    sets updated_at), so every worker process sees a change at its next look-up."""
    global _parsed
    from django.db.models import Count, Max

    from payroll.models import CityRulePeriod

    stamp = CityRulePeriod.objects.aggregate(n=Count("id"), latest=Max("updated_at"))
    if not stamp["n"]:
        return rules_file()
    fingerprint = (stamp["n"], stamp["latest"])
    parsed = _parsed
    if parsed is None or parsed[0] != fingerprint:
        data = rules_data()
        if data is None:  # emptied between the two reads
            return rules_file()
        parsed = _parsed = (fingerprint, rules_parse(data))
    return parsed[1]


def period_rows(key: str) -> dict[date, Any]:
    """The table's rows of the city `key`, by effective_from (empty while the file is read)."""
    from payroll.models import CityRulePeriod

    return {row.effective_from: row for row in CityRulePeriod.objects.filter(city=key).select_related("updated_by")}


def period_checked(key: str, city: dict[str, Any], raw: dict[str, Any]) -> CityRules:
    """One period (in the file's shape) of the city `key` ({name, name_zh}) validated as a
    look-up would validate it; RulesFileError naming the bad figure."""
    try:
        return _period(key, city, raw, key)
    except (KeyError, TypeError, AttributeError) as exc:
        raise RulesFileError(f"{key}: the period is malformed: {exc!r}") from exc


def _names(cities: dict[str, City]) -> dict[str, str]:
    return {name.strip().casefold(): city.key for city in cities.values()
            for name in (city.key, city.name, city.name_zh, *city.aliases)}


def city_names() -> list[str]:
    """Every spelling a caller may use for a city, from the file: the API's schema lists them,
    and it is built at import, before there is a database to read (a city added to the table
    later is still found by city_find; only the schema's enum would not list it)."""
    return [name for city in rules_file().values() for name in (city.key, city.name_zh, *city.aliases)]


def city_find(city: str, *, fallback: bool = False) -> City:
    """The city called `city` (English or Chinese, any case, blanks around ignored). An unknown
    one is UnknownCity naming it and the known ones, unless `fallback` asks for the
    nationwide default explicitly."""
    cities = rules_all()
    key = _names(cities).get(str(city).strip().casefold())
    if key is None and fallback:
        key = NATIONWIDE
    if key is None:
        known = [f"{c.name} ({c.name_zh})" for c in cities.values()]
        raise UnknownCity(_("No rules for the city “%(city)s”; known: %(known)s.")
                          % {"city": str(city)[:60], "known": ", ".join(known)},
                          extra={"city": str(city)[:60], "known": list(cities)})
    return cities[key]


def city_rules(city: str, on: date, *, fallback: bool = False) -> CityRules:
    """The rules of `city` in effect on `on`. Past the file's last period: that period, with
    current=False. Before its first: RulesNotInEffect."""
    found = city_find(city, fallback=fallback)
    earlier = [p for p in found.periods if p.effective_from <= on]
    if not earlier:
        raise RulesNotInEffect(_("The rules for %(city)s start on %(start)s; none are in effect on %(on)s.")
                               % {"city": found.name, "start": found.periods[0].effective_from.isoformat(),
                                  "on": on.isoformat()})
    period = earlier[-1]
    if period.effective_to is not None and period.effective_to < on:
        return replace(period, current=False)
    return period

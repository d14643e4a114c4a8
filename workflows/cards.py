"""An approval card as typed rows: what a domain returns for its tool's card —
text, amounts with their currency, people, labelled fields, tables, lists, diffs — never a
Python dict. The approver's desk and the admin render the same rows, in the reader's
language, with `rows_html`.

A row is plain JSON ({"row": "table", ...}) so a card can be computed from what the
approval stored (its arguments, diff and measures) and its words rendered at read time:
an English request reads in Chinese to a Chinese approver. A domain registers one
function per tool from its AppConfig.ready() (`card_register`); a tool without one
shows its arguments (and diff) as rows through `value_rows`, the generic fallback.

Words in rows follow config.words: a string is shown as it is, {"key", "params"} is
rendered with gettext, {"en", "zh-hans"} is a name in the reader's language."""
from __future__ import annotations

import logging
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Iterable

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from config.words import Stored, is_words, words, words_render

from .tools import TOOLS

log = logging.getLogger(__name__)

Row = dict[str, Any]
# (approval-like: .tenant_id, .tool, .arguments, .diff, .measures) -> the card's rows
CardFn = Callable[[Any], list[Row]]


# --- the rows ------------------------------------------------------------------------

def text(value: Stored, *, mark: str = "") -> Row:
    """Words, a name in several languages, or a person's own text."""
    return {"row": "text", "words": value, "mark": mark}


def code(value: str) -> Row:
    """An exact code or id, shown as code (never translated)."""
    return {"row": "code", "text": str(value)}


def amount(value: Any, currency: str) -> Row:
    """Money with its currency: "1,250.00 CNY"."""
    return {"row": "amount", "value": str(value), "currency": currency or ""}


def person(name: Stored) -> Row:
    return {"row": "person", "name": name}


def tag(value: Stored, tone: str = "") -> Row:
    """A short label shown as a pill (an item's kind); `tone` picks its colour class."""
    return {"row": "tag", "words": value, "tone": tone}


def line(*parts: Row) -> Row:
    """Several rows on one line (a tag and a name)."""
    return {"row": "line", "parts": list(parts)}


def fields(pairs: Iterable[tuple[Stored, Row] | tuple[Stored, Row, str]], *, mark: str = "") -> Row:
    """Labelled values, one a line; a third element is the exact value shown beside it."""
    entries = []
    for pair in pairs:
        label, value, exact = (*pair, "") if len(pair) == 2 else pair
        entries.append({"label": label, "value": value, "exact": exact})
    return {"row": "fields", "fields": entries, "mark": mark}


def table(columns: list[Stored], rows: list[list[Row]], *, ranked: bool = False, caption: Stored = None,
          signs: list[str] | None = None, keys: list[str] | None = None, mark: str = "", row_mark: str = "") -> Row:
    """A table: `ranked` numbers its rows (1, 2, 3…); `signs` puts a "+"/"−" before each row
    (a diff); `keys` are each row's data-key (what a test or a script finds it by)."""
    return {"row": "table", "columns": columns, "rows": rows, "ranked": ranked, "caption": caption,
            "signs": signs or [], "keys": keys or [], "mark": mark, "row_mark": row_mark}


def items(values: list[Row], *, mark: str = "", item_mark: str = "") -> Row:
    """A bulleted list."""
    return {"row": "list", "items": values, "mark": mark, "item_mark": item_mark}


def diff(lines: list[tuple[str, Row]], *, mark: str = "", line_mark: str = "") -> Row:
    """Changes, each with its sign: "+" added, "−" removed, "~" changed, "=" unchanged."""
    return {"row": "diff", "lines": [{"sign": sign, "value": value} for sign, value in lines], "mark": mark,
            "line_mark": line_mark}


def section(heading: Stored, rows: list[Row], *, mark: str = "", alert: bool = False) -> Row:
    """A titled part of the card; `alert` for what the approver must not miss (problems)."""
    return {"row": "section", "heading": heading, "rows": rows, "mark": mark, "alert": alert}


# --- the registry ----------------------------------------------------------------------

CARDS: dict[str, CardFn] = {}


def card_register(tool_name: str, fn: CardFn) -> None:
    """A domain's card for its tool (called from its AppConfig.ready())."""
    CARDS[tool_name] = fn


def card_rows(approval: Any) -> list[Row]:
    """The card of an approval: its tool's registered card, else its arguments (and diff) as rows.
    A card that cannot read an older approval's shape falls back to the generic rows."""
    fn = CARDS.get(approval.tool)
    if fn is not None:
        try:
            return fn(approval)
        except (KeyError, ValueError, TypeError, AttributeError):
            log.warning("card of %s could not read approval %s; shown as stored", approval.tool,
                        getattr(approval, "id", None), exc_info=True)
    return generic_card(approval)


def generic_card(approval: Any) -> list[Row]:
    rows = [arguments_section(approval)]
    if approval.diff:
        rows.append(section(words(gettext_noop("What will change")), [value_rows(approval.diff)], mark="diff"))
    return rows


def arguments_section(approval: Any, described: dict[str, tuple[Stored, Row]] | None = None) -> Row:
    """"What the agent will do": every resolved argument, as the domain describes it
    (`described`: name → (label, row)), else as the tool's `argument_describe` words it,
    else as a generic row — each with its exact value when the text is not it."""
    tool = TOOLS.get(approval.tool)
    described = described or {}
    pairs = []
    for name, value in (approval.arguments or {}).items():
        exact = value if isinstance(value, str) else ""
        if name in described:
            label, row = described[name]
        else:
            label, row = key_label(name), value_rows(value)
            if tool is not None and tool.argument_describe is not None and row["row"] in ("text", "code"):
                try:
                    label, shown = tool.argument_describe(approval.tenant_id, name, value) or (label, None)
                    row = text(shown) if shown is not None else row
                except (KeyError, ValueError, TypeError):
                    pass
        if row["row"] == "table" and not row.get("mark"):
            row = {**row, "mark": "argument-table"}
        if row["row"] == "text" and words_render(row["words"]) == exact:
            exact = ""
        pairs.append((label, row, exact))
    return section(words(gettext_noop("What the agent will do")), [fields(pairs, mark="arguments")])


# --- any stored value as rows (the fallback) ---------------------------------------------

NAME_KEYS = {"en", "zh-hans", "zh", "zh_hans"}


def is_name(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and set(value) <= NAME_KEYS


def is_row(value: Any) -> bool:
    return isinstance(value, dict) and value.get("row") in RENDERERS


def key_label(key: str) -> str:
    """"group_name" → "Group name": a key of a value no domain described."""
    return str(key).replace("_", " ").strip().capitalize()


def _name(value: dict) -> dict:
    return value if "zh-hans" in value else {
        "en": value.get("en", ""), "zh-hans": value.get("zh") or value.get("zh_hans") or value.get("en", "")}


def _twins_joined(record: dict[str, Any]) -> dict[str, Any]:
    """"explanation" and "explanation_zh" are one value, in the reader's language."""
    joined = {}
    for key, value in record.items():
        if key.endswith("_zh") and key[:-3] in record:
            continue
        twin = record.get(f"{key}_zh")
        joined[key] = {"en": value, "zh-hans": twin} if twin and isinstance(value, str) else value
    return joined


def value_rows(value: Any) -> Row:
    """A stored value as rows: a record as fields, a list of records as a table, a list as
    a list, words and names as text — never `str(dict)`."""
    if is_row(value):
        return value
    if value is None:
        return text("—")
    if is_words(value):
        return text(value)
    if isinstance(value, dict):
        if is_name(value):
            return text(_name(value))
        record = _twins_joined(value)
        return fields([(key_label(k), value_rows(v)) for k, v in record.items()])
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, dict) and not is_name(v) and not is_words(v) for v in value):
            records = [_twins_joined(v) for v in value]
            columns: list[str] = []
            for record in records:
                columns += [k for k in record if k not in columns]
            return table([key_label(k) for k in columns],
                         [[value_rows(record.get(k)) for k in columns] for record in records])
        if all(not isinstance(v, (dict, list, tuple)) or is_name(v) or is_words(v) for v in value):
            return text(list(value) if value else "—")  # joined as the reader's language joins a list
        return items([value_rows(v) for v in value])
    return text(value if isinstance(value, str) else _scalar(value))


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return _("yes") if value else _("no")
    return str(value)


# --- rendering -------------------------------------------------------------------------

def rows_html(rows: list[Row] | Row) -> SafeString:
    """The rows as HTML, in the active language (escaped: every value is data)."""
    if isinstance(rows, dict):
        return _render(rows)
    return mark_safe("".join(_render(r) for r in rows or []))


def _render(row: Any) -> str:
    if not is_row(row):
        return _render(value_rows(row))
    return RENDERERS[row["row"]](row)


def _testid(row: Row, key: str = "mark") -> str:
    return format_html(' data-testid="{}"', row[key]) if row.get(key) else ""


def _text(row: Row) -> str:
    return format_html('<span class="card-text"{}>{}</span>', mark_safe(_testid(row)), words_render(row["words"]))


def _code(row: Row) -> str:
    return format_html("<code>{}</code>", row["text"])


def money_text(value: Any) -> str:
    try:
        return f"{Decimal(str(value)):,.2f}"
    except (InvalidOperation, ValueError):
        return str(value)


def _amount(row: Row) -> str:
    return format_html('<span class="amount">{} {}</span>', money_text(row["value"]), row["currency"]).strip()


def _person(row: Row) -> str:
    return format_html('<span class="person">{}</span>', words_render(row["name"]))


def _tag(row: Row) -> str:
    return format_html('<span class="kind{}">{}</span>', f" kind-{row['tone']}" if row.get("tone") else "",
                       words_render(row["words"]))


def _line(row: Row) -> str:
    return mark_safe(" ".join(_render(p) for p in row["parts"]))


def _fields(row: Row) -> str:
    def entry(f: dict) -> tuple:
        exact = (format_html(' <code class="exact" title="{}">{}</code>', _("exact value"), _cut(f["exact"], 200))
                 if f.get("exact") else "")
        return words_render(f["label"]), mark_safe(_render(f["value"]) + exact)

    body = format_html_join("", '<tr><th scope="row">{}</th><td>{}</td></tr>', (entry(f) for f in row["fields"]))
    return format_html('<table class="args"{}><tbody>{}</tbody></table>', mark_safe(_testid(row)), body)


def _sign_class(sign: str) -> str:
    return {"+": "plus", "−": "minus", "-": "minus"}.get(sign, "")


def _table(row: Row) -> str:
    signs, keys, ranked = row.get("signs") or [], row.get("keys") or [], row.get("ranked")
    head = ("<th></th>" if signs else "") + (format_html('<th scope="col">{}</th>', "#") if ranked else "")
    head += format_html_join("", '<th scope="col">{}</th>', ((words_render(c),) for c in row["columns"]))
    labels = [words_render(c) for c in row["columns"]]
    body = []
    for i, cells in enumerate(row["rows"]):
        lead = ""
        if signs:
            sign = signs[i] if i < len(signs) else ""
            lead += format_html('<td class="{}">{}</td>', _sign_class(sign), sign)
        if ranked:
            lead += format_html('<td class="rank">{}</td>', i + 1)
        attrs = mark_safe(_testid(row, "row_mark") + (format_html(' data-key="{}"', keys[i]) if i < len(keys) else ""))
        # Each cell carries its column's name: a phone shows the row as "name: value" lines.
        body.append(format_html("<tr{}>{}{}</tr>", attrs, mark_safe(lead),
                                format_html_join("", '<td data-label="{}">{}</td>',
                                                 ((labels[j] if j < len(labels) else "", mark_safe(_render(c)))
                                                  for j, c in enumerate(cells)))))
    caption = format_html("<caption>{}</caption>", words_render(row["caption"])) if row.get("caption") else ""
    classes = " ranked" if ranked else ""
    classes += " diff-items" if signs else ""  # a diff's rows: styled as the desk's diff (keel.css)
    return format_html('<table class="compact card-table{}"{}>{}<thead><tr>{}</tr></thead><tbody>{}</tbody></table>',
                       classes, mark_safe(_testid(row)), caption, mark_safe(head),
                       mark_safe("".join(body)))


def _list(row: Row) -> str:
    mark = mark_safe(_testid(row, "item_mark"))
    body = format_html_join("", "<li{}>{}</li>", ((mark, mark_safe(_render(v))) for v in row["items"]))
    return format_html('<ul class="card-list"{}>{}</ul>', mark_safe(_testid(row)), body)


def _diff(row: Row) -> str:
    mark = mark_safe(_testid(row, "line_mark"))
    body = format_html_join("", '<li{}><span class="{}">{}</span> {}</li>',
                            ((mark, _sign_class(ln["sign"]), ln["sign"], mark_safe(_render(ln["value"])))
                             for ln in row["lines"]))
    return format_html('<ul class="diff-lines"{}>{}</ul>', mark_safe(_testid(row)), body)


def _section(row: Row) -> str:
    inner = mark_safe("".join(format_html('<div class="card-row">{}</div>', mark_safe(_render(r)))
                              for r in row["rows"]))
    heading = format_html("<h3>{}</h3>", words_render(row["heading"])) if row.get("heading") else ""
    return format_html('<section class="card-section{}"{}{}>{}{}</section>\n', " problems" if row.get("alert") else "",
                       mark_safe(_testid(row)), mark_safe(' role="alert"' if row.get("alert") else ""), heading, inner)


def _cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit - 1] + "…"


RENDERERS: dict[str, Callable[[Row], str]] = {
    "text": _text, "code": _code, "amount": _amount, "person": _person, "tag": _tag, "line": _line,
    "fields": _fields, "table": _table, "list": _list, "diff": _diff, "section": _section}

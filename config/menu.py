"""The top bar's entries for a domain's own pages (CONVENTIONS 11): a domain
registers them from its AppConfig.ready(), as it registers its blueprints and cards, so the
site's shell (templates/base.html) and the console name no domain."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MenuEntry:
    url_name: str  # the page's URL name (reversed when the bar is drawn)
    label: Any  # a lazy translation: the reader's language at render time
    testid: str = ""
    order: int = 100  # left to right


_entries: dict[str, MenuEntry] = {}


def menu_register(entry: MenuEntry) -> None:
    """Called from a domain's AppConfig.ready(); registering twice replaces."""
    _entries[entry.url_name] = entry


def menu_entries() -> list[MenuEntry]:
    return sorted(_entries.values(), key=lambda e: (e.order, e.url_name))

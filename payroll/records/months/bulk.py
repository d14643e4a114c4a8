"""Helpers for the month's bulk steps, which handle every employee of a group at once."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration of the block (or, as a
    decorator, `@gc_paused()`, of the function).

    A month's compute or close builds hundreds of thousands of objects (Decimals, dicts, one
    result per employee) that all stay alive until the step ends. While they pile up, the
    collector keeps running full passes over them and finds nothing to free: at 10,000
    employees that was about a third of the arithmetic's time. Reference counting still frees
    everything as usual; the collector resumes when the block ends (when it was running
    before: a nested block leaves it to the outer one)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

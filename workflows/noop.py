"""A tool that does nothing: the benchmarks measure the engine's own cost with it."""
from django.utils.translation import gettext_noop

from config.words import words
from workflows.tools import Tool, tool_register

tool_register(Tool(
    name="noop", description="Does nothing; used to measure the engine.",
    input_schema={"type": "object"}, output_schema={"type": "object"},
    fn=lambda ctx, arguments: {"ok": True},
    summary=lambda output: words(gettext_noop("Nothing to do.")), inline=True,
))

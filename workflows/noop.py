"""A tool that does nothing: the benchmarks measure the engine's own cost with it."""
from workflows.tools import Tool, tool_register

tool_register(Tool(
    name="noop", description="Does nothing; used to measure the engine.",
    input_schema={"type": "object"}, output_schema={"type": "object"},
    fn=lambda ctx, arguments: {"ok": True},
    summary=lambda output: "Nothing to do.", inline=True,
))

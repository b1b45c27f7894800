"""The exec_code tool as a model sees it: an OpenAI-style function schema."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from .limits import Limits
from .specs import signature

if TYPE_CHECKING:
    from ...engine.tools import ToolRegistry

DESCRIPTION = """\
Run a block of Python 3.11 code. Every domain tool is available in the block as a Python \
function of the same name and arguments (keyword or positional), returning the same result as \
the tool (dicts and lists); a tool error raises ToolError (attributes .code and .message), \
which you can catch. Use it to paginate through every page, filter, aggregate, compare sets and \
make many calls in one step.
What comes back: everything you print (stdout), and the repr of the last line's value if it \
is an expression, as in a notebook cell; on an error, a traceback of your own lines.
Each block starts fresh: variables, functions and imports do NOT persist between blocks, so \
define what you need in the block (print what you want to see).
Limits per block: {limits}. Tool calls made before a limit or an error took effect.
Available: builtins and the standard library's computing modules (json, re, math, statistics, \
collections, itertools, functools, datetime, decimal, fractions, random, heapq, bisect, string, \
textwrap, difflib, dataclasses, typing...). Not available: files, network, subprocesses, \
threads' side effects outside the block, native code. The only way to the data is the tools."""


def exec_code_tool(specs: list[dict[str, Any]] | None = None, limits: Limits | None = None) -> dict[str, Any]:
    limits = limits or Limits()
    description = DESCRIPTION.format(limits=limits.describe())
    if specs:
        description += "\nFunctions: " + "; ".join(signature(s) for s in specs) + "."
    return {
        "type": "function",
        "function": {
            "name": "exec_code",
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string", "description": "The Python code to run."}},
                "required": ["code"],
                "additionalProperties": False,
            },
        },
    }


EXEC_CODE_TOOL: dict[str, Any] = exec_code_tool()

Schemas = tuple[dict[str, Any], ...]
# registry -> (the registry's schemas it was made from, the code-mode tools)
_CODE_MODE_TOOLS: weakref.WeakKeyDictionary[ToolRegistry, tuple[Schemas, Schemas]] = weakref.WeakKeyDictionary()


def code_mode_tools(registry: ToolRegistry) -> Schemas:
    """The tools a code-mode trial offers: the domain's and exec_code, built once per registry
    (shared by every trial, like `ToolRegistry.openai_schemas`: callers copy, never change)."""
    base = registry.openai_schemas()
    cached = _CODE_MODE_TOOLS.get(registry)
    if cached is None or cached[0] is not base:  # first use, or a tool was added since
        cached = _CODE_MODE_TOOLS[registry] = (base, (*base, EXEC_CODE_TOOL))
    return cached[1]

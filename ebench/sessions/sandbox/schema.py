"""The exec_code tool as a model sees it: an OpenAI-style function schema."""

from __future__ import annotations

from typing import Any

from .limits import Limits
from .specs import signature

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

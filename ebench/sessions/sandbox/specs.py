"""Tool specs: what the worker needs to build one Python function per domain tool."""

from __future__ import annotations

import json
import weakref
from collections.abc import Iterable
from typing import Any


def tool_spec(tool: Any) -> dict[str, Any]:
    """A JSON-able spec from a registry Tool (or an already made spec dict)."""
    if isinstance(tool, dict):
        spec = {"name": tool["name"], "description": tool.get("description", ""), "params": list(tool.get("params", []))}
    else:
        params = []
        for p in tool.params:
            param: dict[str, Any] = {"name": p.name, "required": bool(p.required), "description": p.description}
            if not p.required:
                param["default"] = _json_default(p.default)
            params.append(param)
        spec = {"name": tool.name, "description": _doc(tool), "params": params}
    if not isinstance(spec["name"], str) or not spec["name"].isidentifier():
        raise ValueError(f"tool name {spec['name']!r} is not a Python identifier")
    return spec


def tool_specs(tools: Iterable[Any]) -> list[dict[str, Any]]:
    """The specs of `tools`; those of a registry are made once (every code-mode trial asks).
    Shared: a caller never changes them."""
    try:
        cached = _SPECS.get(tools)
    except TypeError:  # not a registry: a list of tools or specs
        return [tool_spec(t) for t in tools]
    members = tuple(tools)
    if cached is None or cached[0] != members:  # first use, or the registry changed since
        cached = _SPECS[tools] = (members, [tool_spec(t) for t in members])
    return cached[1]


# registry -> (its tools when the specs were made, the specs)
_SPECS: weakref.WeakKeyDictionary[Any, tuple[tuple[Any, ...], list[dict[str, Any]]]] = weakref.WeakKeyDictionary()


def signature(spec: dict[str, Any]) -> str:
    """`name(a, b=1)`: how the function looks inside a block."""
    args = [p["name"] if p["required"] else f"{p['name']}={p.get('default')!r}" for p in spec["params"]]
    return f"{spec['name']}({', '.join(args)})"


def _doc(tool: Any) -> str:
    lines = [tool.description, ""]
    if tool.params:
        lines.append("Args:")
        for p in tool.params:
            lines.append(f"    {p.name}: {p.description}")
    return "\n".join(lines).strip()


def _json_default(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value

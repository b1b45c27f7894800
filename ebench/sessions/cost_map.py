"""litellm's model price map, read without importing litellm: the JSON file litellm ships (the map
it uses offline, LITELLM_LOCAL_MODEL_COST_MAP) is found with importlib.util.find_spec and read
once, when a price is first asked for.

`response_cost` prices an OpenAI-compatible answer as litellm's cost calculator does for the
openai provider: the answer's own model first, else the requested one; cached prompt tokens at the
cache-read price, reasoning tokens at their own price where the map has one, and the prices above
a prompt-size threshold (`*_above_272k_tokens`) when the prompt is past it.
"""

from __future__ import annotations

import importlib.util
import re
import threading
from pathlib import Path
from typing import Any

import orjson

MAP_FILE = "model_prices_and_context_window_backup.json"
_map: dict[str, Any] | None = None
_lock = threading.Lock()
_TIER = re.compile(r"^input_cost_per_token_above_(\d+)k_tokens$")


def map_path() -> Path | None:
    """The price map inside the installed litellm package, or None (litellm not installed)."""
    spec = importlib.util.find_spec("litellm")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / MAP_FILE
    return path if path.is_file() else None


def cost_map() -> dict[str, Any]:
    """The map (model -> its prices and limits), read on first use; {} when there is none."""
    global _map
    if _map is None:
        with _lock:
            if _map is None:
                path = map_path()
                loaded = orjson.loads(path.read_bytes()) if path is not None else {}
                _map = loaded if isinstance(loaded, dict) else {}
    return _map


def openai_entry(name: str | None) -> dict[str, Any] | None:
    """The map's entry for an OpenAI-provider model name (bare, or with the openai/ prefix)."""
    if not isinstance(name, str) or not name:
        return None
    prices = cost_map()
    bare = name.removeprefix("openai/")
    for key in (bare, f"openai/{bare}"):
        entry = prices.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("input_cost_per_token"), (int, float)):
            return entry
    return None


def openai_prices(model: str) -> tuple[float, float] | None:
    """USD per token (input, output) of an openai/ model string, as litellm's get_model_info gives them."""
    entry = openai_entry(model)
    if entry is None or not isinstance(entry.get("output_cost_per_token"), (int, float)):
        return None
    return float(entry["input_cost_per_token"]), float(entry["output_cost_per_token"])


def _number(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def response_cost(requested: str, answered: Any, usage: Any) -> float | None:
    """USD of one answer (`usage` as the API sent it), or None when the map prices neither model."""
    entry = openai_entry(answered) or openai_entry(requested)
    if entry is None or not isinstance(usage, dict):
        return None
    prompt = _number(usage.get("prompt_tokens"))
    completion = _number(usage.get("completion_tokens"))
    prompt_details = usage.get("prompt_tokens_details")
    cached = _number(prompt_details.get("cached_tokens")) if isinstance(prompt_details, dict) else 0
    completion_details = usage.get("completion_tokens_details")
    reasoning = _number(completion_details.get("reasoning_tokens")) if isinstance(completion_details, dict) else 0
    suffix = ""
    for key in entry:  # a bigger prompt is priced at the tier's rates
        tier = _TIER.match(key)
        if tier and prompt > int(tier.group(1)) * 1000:
            suffix = f"_above_{tier.group(1)}k_tokens"
    price_in = float(entry.get(f"input_cost_per_token{suffix}", entry["input_cost_per_token"]))
    price_out = float(entry.get(f"output_cost_per_token{suffix}", entry.get("output_cost_per_token") or 0.0))
    price_cached = float(entry.get(f"cache_read_input_token_cost{suffix}", entry.get("cache_read_input_token_cost", price_in)))
    price_reasoning = entry.get("output_cost_per_reasoning_token")
    cost = (prompt - cached) * price_in + cached * price_cached
    if isinstance(price_reasoning, (int, float)) and reasoning:
        cost += reasoning * float(price_reasoning) + (completion - reasoning) * price_out
    else:
        cost += completion * price_out
    return cost

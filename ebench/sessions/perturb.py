"""Perturbed runs: what a solver is offered and handed back, changed, with the grading unchanged.

`--perturb FAMILY[:SUBTYPE]` (repeatable) and `--perturb-seed N` name a `Perturbation`; a trial
with one holds a `Layer` between the solver and the tools (`Trial(..., perturb=...)`). The end
state is graded as in a clean run: only the way to it changes.

The families and their subtypes (`FAMILIES`):

- `interface`: `rename` (tools and parameters renamed to synonyms, the same word the same way in
  the whole trial), `shuffle` (the tools offered in another order), `distractors` (tools with
  similar names, described as retired: calling one changes nothing and answers `deprecated`),
  `terse` (each tool's description cut to its first sentence, each parameter's to its first clause).
- `intent`: `paraphrase` (the request in one of the task's stored paraphrases; a task without any
  keeps its request, and the trial's start event says so), `typos` (letters swapped, dropped or
  doubled in about one word in ten: only lowercase words of five letters or more that no stated
  value holds), `extra` (one or two irrelevant sentences before or after the request).
- `output`: `noise` (two id-like or token-like fields no tool returns added to every object of a
  result), `reorder` (the keys of every object in another order), `pages` (pages of 5 or 10 items
  instead of 20: page p of the smaller size is cut from the canonical page that holds it),
  `transient` (the first call of each tool answers `unavailable` without running; the retry runs).
- `runtime`: `latency` (2-20 ms added to each call, recorded and awaited by the solver with
  `Trial.wait_latency`, never blocking the event loop), `ratelimit` (one call of each tool, its
  1st to 3rd after any transient error, answers `rate_limited` with a `retry_after` in seconds,
  without running; the next call runs).

Everything is drawn from `random.Random` streams seeded with a string made of the perturbation
seed, the task id, the trial number and what is drawn (never `hash()`), so the same flags give the
same perturbation byte for byte, in any process.

What is recorded: the start event's `perturbation` ({subtypes, seed}, and `request` when the
request was changed, `notes` such as "no paraphrase"); each call's event holds the canonical tool
and arguments (`tool`, `args`: what ran, so a replay without the layer re-executes them), `sent`
({tool, args} as the solver sent them) when they differ, `injected` for an error the layer gave
instead of running the call (transient, ratelimit, distractor: never re-executed), `altered` for
what the layer did to the result (noise, reorder, pages), and `latency`.

Failure stages (`FailureStages`, counted per trial and summed in the report), one per call at most:

- `wrong_tool`: the name sent is no offered tool, or is a distractor;
- `schema_error`: the tool is right but the arguments name an unknown parameter or miss a
  required one (the layer checks the offered names, so a canonical name under `rename` counts);
- `wrong_value`: a write call that ran and was accepted, but one of its `*_id`/`*_ids` arguments
  holds an id the task's expected diff never mentions (it acted on the wrong rows);
- `mishandled_output`: the arguments hold a value that only a noise field carried, or an injected
  transient or rate-limit error on a tool was never followed by another call of that tool (the
  solver stopped or moved on instead of retrying).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from random import Random
from typing import Any

from ..engine.tools import PAGE_SIZE, ErrorCode, ToolRegistry, ToolResult, tool_name_text
from ..errors import InputError
from ..tasks.spec import Task

FAMILIES: dict[str, tuple[str, ...]] = {
    "interface": ("rename", "shuffle", "distractors", "terse"),
    "intent": ("paraphrase", "typos", "extra"),
    "output": ("noise", "reorder", "pages", "transient"),
    "runtime": ("latency", "ratelimit"),
}
SUBTYPES: tuple[str, ...] = tuple(f"{family}:{sub}" for family, subs in FAMILIES.items() for sub in subs)
CODE_MODE_FAMILIES = ("intent",)  # exec_code's inner calls do not go through the layer

# The error codes the layer answers with instead of running a call.
UNAVAILABLE = "unavailable"  # transient: the retry runs
RATE_LIMITED = "rate_limited"  # retry after `retry_after` seconds
DEPRECATED = "deprecated"  # a distractor
RETRYABLE = (UNAVAILABLE, RATE_LIMITED)
STAGES = ("wrong_tool", "schema_error", "wrong_value", "mishandled_output")

STREAM = "ebench-perturb/1"  # part of every seed string: a new way of drawing gets a new name


class PerturbError(InputError, ValueError):
    """A --perturb value that names no family or subtype, or a combination a trial cannot take."""


@dataclass(frozen=True)
class Perturbation:
    """Which subtypes ("family:subtype", in FAMILIES order) and the seed."""

    subtypes: tuple[str, ...] = ()
    seed: int = 0

    def __bool__(self) -> bool:
        return bool(self.subtypes)

    def has(self, subtype: str) -> bool:
        return subtype in self.subtypes

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(f for f in FAMILIES if any(s.startswith(f + ":") for s in self.subtypes))

    @property
    def label(self) -> str:
        """Short: a whole family by its name, else its subtypes ("interface+output:noise")."""
        parts = []
        for family in self.families:
            subs = [s for s in self.subtypes if s.startswith(family + ":")]
            parts.append(family if len(subs) == len(FAMILIES[family]) else "+".join(subs))
        return "+".join(parts) or "clean"

    def to_dict(self) -> dict[str, Any]:
        return {"subtypes": list(self.subtypes), "seed": self.seed}

    @classmethod
    def from_dict(cls, data: Any) -> Perturbation:
        """The perturbation a record holds: its dict, or its model (a results line's or start event's
        PerturbationRecord); anything else is no perturbation."""
        if not isinstance(data, Mapping) and callable(getattr(data, "to_dict", None)):
            data = data.to_dict()
        if not isinstance(data, Mapping):
            return cls()
        subtypes = [s for s in data.get("subtypes") or [] if s in SUBTYPES]
        seed = data.get("seed")
        return cls(tuple(s for s in SUBTYPES if s in subtypes), seed if isinstance(seed, int) else 0)

    def check_mode(self, code: bool) -> None:
        """Code mode takes only the intent family: exec_code's functions keep their names, and the
        calls a block makes do not pass through the layer."""
        refused = [f for f in self.families if f not in CODE_MODE_FAMILIES]
        if code and refused:
            raise PerturbError(f"code mode takes --perturb {', '.join(CODE_MODE_FAMILIES)} only, not {', '.join(refused)}")


def parse_perturb(values: Iterable[str], seed: int = 0) -> Perturbation:
    """The perturbation `--perturb` values name: FAMILY (all its subtypes) or FAMILY:SUBTYPE,
    repeatable, also comma-separated. PerturbError names the first unknown one."""
    chosen: set[str] = set()
    for value in values:
        for item in str(value).split(","):
            name = item.strip().lower()
            if not name:
                continue
            family, _, sub = name.partition(":")
            if family not in FAMILIES:
                raise PerturbError(f"unknown perturbation family {family!r}; known: {', '.join(FAMILIES)}")
            if sub and sub not in FAMILIES[family]:
                raise PerturbError(f"unknown {family} perturbation {sub!r}; known: {', '.join(FAMILIES[family])}")
            chosen.update(f"{family}:{s}" for s in ((sub,) if sub else FAMILIES[family]))
    return Perturbation(tuple(s for s in SUBTYPES if s in chosen), seed)


# -- word lists ----------------------------------------------------------------------------

# Synonyms for the words of tool and parameter names; a word keeps its name when every synonym is
# already a word of the domain's names (it would read as another tool).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "get": ("fetch", "retrieve", "read"),
    "list": ("browse", "enumerate", "show"),
    "search": ("lookup", "query", "seek"),
    "find": ("locate", "discover"),
    "create": ("new", "make", "open"),
    "update": ("modify", "edit", "change"),
    "delete": ("erase", "drop", "destroy"),
    "remove": ("detach", "drop", "take"),
    "add": ("attach", "put", "insert"),
    "send": ("dispatch", "submit"),
    "check": ("inspect", "verify"),
    "cancel": ("abort", "revoke"),
    "invite": ("summon", "ask"),
    "book": ("reserve", "claim"),
    "release": ("free", "unreserve"),
    "respond": ("reply",),
    "answer": ("reply", "resolve"),
    "transfer": ("move", "reassign"),
    "follow": ("subscribe",),
    "unfollow": ("unsubscribe",),
    "save": ("bookmark", "keep"),
    "unsave": ("unbookmark", "unkeep"),
    "favourite": ("star",),
    "unfavourite": ("unstar",),
    "like": ("upvote", "applaud"),
    "post": ("publish", "write"),
    "block": ("ban", "mute"),
    "unblock": ("unban", "unmute"),
    "dissolve": ("disband", "close"),
    "approve": ("accept", "grant"),
    "reject": ("decline", "deny"),
    "buy": ("purchase", "acquire"),
    "leave": ("exit", "quit"),
    "song": ("track",),
    "songs": ("tracks",),
    "artist": ("musician", "performer"),
    "artists": ("musicians", "performers"),
    "album": ("record", "release"),
    "albums": ("records", "releases"),
    "playlist": ("mix", "queue"),
    "playlists": ("mixes", "queues"),
    "comment": ("remark", "note"),
    "comments": ("remarks", "notes"),
    "employee": ("colleague", "staffer"),
    "employees": ("colleagues", "staff"),
    "department": ("unit", "division"),
    "departments": ("units", "divisions"),
    "meeting": ("session", "appointment"),
    "meetings": ("sessions", "appointments"),
    "chat": ("conversation", "thread"),
    "chats": ("conversations", "threads"),
    "message": ("text", "note"),
    "messages": ("texts", "notes"),
    "participant": ("attendee", "invitee"),
    "participants": ("attendees", "invitees"),
    "player": ("gamer", "user"),
    "players": ("gamers", "users"),
    "hero": ("champion", "character"),
    "heroes": ("champions", "characters"),
    "match": ("game", "bout"),
    "matches": ("games", "bouts"),
    "team": ("squad", "clan"),
    "teams": ("squads", "clans"),
    "friend": ("buddy", "contact"),
    "friends": ("buddies", "contacts"),
    "profile": ("account",),
    "history": ("log", "record"),
    "schedule": ("calendar", "agenda"),
    "query": ("keywords", "text"),
    "page": ("page_number", "page_no"),
    "name": ("label",),
    "title": ("heading",),
}

NOISE_FIELDS = ("legacy_id", "mirror_id", "ref_id", "sync_token", "cache_rev", "trace_id")
DISTRACTOR_FORMS = ("{}_legacy", "{}_v1", "{}_old", "{}_beta", "bulk_{}", "{}_archive")
EXTRA_SENTENCES = (
    "I'm writing this from my phone, sorry for any odd wording.",
    "It has been a long week, so thanks for taking care of this.",
    "By the way, the weather here has been lovely lately.",
    "My colleague recommended asking you about this.",
    "No rush, but I'd like it sorted today if possible.",
    "I tried to do it myself earlier but gave up.",
    "Thanks in advance!",
    "I hope the new version of the app is treating you well.",
)


def _rng(perturbation: Perturbation, task_id: str, trial: int, part: str) -> Random:
    return Random(f"{STREAM}:{perturbation.seed}:{task_id}:{trial}:{part}")


# -- the layer -----------------------------------------------------------------------------


@dataclass
class PerturbedResult(ToolResult):
    """What the solver is handed back through the layer; `canonical` is the result as the tool
    gave it (None when the call did not run), `extra` more error fields (retry_after)."""

    canonical: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    latency: float = 0.0
    shown: Any = None  # the value after the output perturbations

    def payload(self) -> Any:
        if self.ok:
            return self.shown
        return {"error": {"code": self.error_code, "message": self.error_message, **self.extra}}


@dataclass
class LayerCall:
    """One call through the layer, for the session: the canonical call, what was sent (None when
    the same), what the layer did."""

    tool: Any
    args: Any
    result: PerturbedResult
    sent: dict[str, Any] | None = None
    injected: str | None = None
    altered: list[str] = field(default_factory=list)
    stage: str | None = None


Execute = Callable[[str, Any], ToolResult]


class Layer:
    """The perturbation of one trial: the offered schemas and request, and each call mapped,
    checked, run (or answered instead) and its result changed. See the module for the rules."""

    def __init__(
        self, perturbation: Perturbation, task: Task | None, registry: ToolRegistry, trial: int = 1, *, task_id: str | None = None
    ) -> None:
        self.perturbation = perturbation
        self.task = task
        self.registry = registry
        self.task_id = task.id if task else (task_id or "")  # task_id: the schemas of a task known only by id
        self.trial = trial
        self.notes: list[str] = []
        self.calls = 0
        self.tool_calls: Counter[str] = Counter()  # canonical tool -> calls that reached it
        self.injected_pending: dict[str, int] = {}  # canonical tool -> transient/ratelimit answers not yet retried
        self.noise_values: set[Any] = set()
        self.stages: Counter[str] = Counter()
        self._build_names()
        self._build_schemas()
        self.request = self._build_request()
        draw = self._rng("pages")
        self.page_size = draw.choice((5, 10)) if perturbation.has("output:pages") else PAGE_SIZE
        noise = self._rng("noise")
        self.noise_fields = tuple(noise.sample(NOISE_FIELDS, 2)) if perturbation.has("output:noise") else ()
        limits = self._rng("ratelimit")
        first = 2 if perturbation.has("output:transient") else 1
        self.ratelimit_at = {name: first + limits.randrange(3) for name in registry.names} if perturbation.has("runtime:ratelimit") else {}
        self._expected_ids = _ints(task.expected_diff.to_list()) if task is not None else set()

    def _rng(self, part: str) -> Random:
        return _rng(self.perturbation, self.task_id, self.trial, part)

    # -- what the solver is offered ------------------------------------------------------
    def _build_names(self) -> None:
        self.tool_names = {t.name: t.name for t in self.registry}  # canonical -> offered
        self.param_names: dict[str, dict[str, str]] = {t.name: {p.name: p.name for p in t.params} for t in self.registry}
        if not self.perturbation.has("interface:rename"):
            return
        rng = self._rng("rename")
        vocabulary = {w for t in self.registry for w in t.name.split("_")}
        vocabulary |= {w for t in self.registry for p in t.params for w in p.name.split("_")}
        choice: dict[str, str] = {}
        for word in sorted(SYNONYMS):  # sorted: the draws do not depend on a dict's order
            options = [s for s in SYNONYMS[word] if s not in vocabulary]
            if options:
                choice[word] = rng.choice(options)

        def renamed(name: str) -> str:
            if name in choice:  # a whole name first ("page" -> "page_number")
                return choice[name]
            return "_".join(choice.get(w, w) for w in name.split("_"))

        taken: set[str] = set()
        for tool in self.registry:
            new = renamed(tool.name)
            while new in taken or (new != tool.name and new in self.registry):
                new += "_x"
            taken.add(new)
            self.tool_names[tool.name] = new
            params: dict[str, str] = {}
            for param in tool.params:
                candidate = renamed(param.name)
                while candidate in params.values():
                    candidate += "_x"
                params[param.name] = candidate
            self.param_names[tool.name] = params
        self.by_offered = {v: k for k, v in self.tool_names.items()}

    def _build_schemas(self) -> None:
        self.by_offered = {v: k for k, v in self.tool_names.items()}
        schemas = []
        for tool in self.registry:
            schema = copy.deepcopy(tool.openai_schema())
            function = schema["function"]
            function["name"] = self.tool_names[tool.name]
            function["description"] = self._text(tool.name, function["description"])
            names = self.param_names[tool.name]
            parameters = function["parameters"]
            parameters["properties"] = {names[k]: self._param(tool.name, v) for k, v in parameters["properties"].items()}
            parameters["required"] = [names[k] for k in parameters["required"]]
            schemas.append(schema)
        self.distractors: dict[str, str] = {}  # name -> the canonical tool it looks like
        if self.perturbation.has("interface:distractors"):
            rng = self._rng("distractors")
            count = min(len(schemas), max(2, len(schemas) // 8))
            for schema in rng.sample(schemas, count):
                base = schema["function"]["name"]
                name = rng.choice(DISTRACTOR_FORMS).format(base)
                if name in self.by_offered or name in self.distractors:
                    continue
                twin = copy.deepcopy(schema)
                twin["function"]["name"] = name
                twin["function"]["description"] = f"Deprecated: an older version of {base}, kept for old clients; it is no longer served."
                self.distractors[name] = self.by_offered[base]
                schemas.append(twin)
        if self.perturbation.has("interface:shuffle"):
            self._rng("shuffle").shuffle(schemas)
        self.schemas = schemas

    def _text(self, tool: str, text: str) -> str:
        """A description as offered: other tools' names renamed, the page size, cut when terse."""
        for canonical, offered in self.tool_names.items():
            if canonical != offered:
                text = re.sub(rf"\b{canonical}\b", offered, text)
        if self.perturbation.has("output:pages") and "page" in self.param_names[tool]:
            text = re.sub(rf"\({PAGE_SIZE} ", "(a few ", text)
        if self.perturbation.has("interface:terse"):
            text = _first_sentence(text)
        return text

    def _param(self, tool: str, schema: dict[str, Any]) -> dict[str, Any]:
        schema = dict(schema)
        if "description" in schema:
            text = self._text(tool, schema["description"])
            if self.perturbation.has("interface:terse"):  # a parameter keeps its first clause
                text = re.split(r"[;,(]| - ", text, maxsplit=1)[0].strip().rstrip(".") or text
            schema["description"] = text
        return schema

    def _build_request(self) -> str:
        if self.task is None:
            return ""
        request = self.task.query
        if self.perturbation.has("intent:paraphrase"):
            if self.task.paraphrases:
                request = self._rng("paraphrase").choice(self.task.paraphrases)
            else:
                self.notes.append("no paraphrase")
        if self.perturbation.has("intent:typos"):
            request = add_typos(request, self._rng("typos"), _stated_words(self.task))
        if self.perturbation.has("intent:extra"):
            rng = self._rng("extra")
            sentences = rng.sample(EXTRA_SENTENCES, rng.choice((1, 2)))
            request = " ".join([*sentences, request] if rng.random() < 0.5 else [request, *sentences])
        return request

    # -- a call ----------------------------------------------------------------------------
    def present(self, tool: str, args: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """A canonical call as a solver that knows the layer sends it (the oracle): the offered
        names, and under `pages` the first of the smaller pages the canonical page holds."""
        names = self.param_names.get(tool, {})
        sent = {names.get(k, k): v for k, v in args.items()}
        if self.page_size != PAGE_SIZE and "page" in names:
            page = args.get("page", 1)
            if isinstance(page, int) and page >= 1:
                sent[names["page"]] = (page - 1) * (PAGE_SIZE // self.page_size) + 1
        return self.tool_names.get(tool, tool), sent

    def call(self, name: Any, args: Any, execute: Execute) -> LayerCall:
        """Map what the solver sent to the canonical call, run it (or answer instead), change the result."""
        made = self._call(name, args, execute)
        if made.stage:
            self.stages[made.stage] += 1
        return made

    def _call(self, name: Any, args: Any, execute: Execute) -> LayerCall:
        self.calls += 1
        rng = self._rng(f"call:{self.calls}")
        latency = round(rng.uniform(0.002, 0.02), 3) if self.perturbation.has("runtime:latency") else 0.0
        text = tool_name_text(name)
        if text in self.distractors:
            result = _error(text, DEPRECATED, "This tool is retired and does nothing; it is no longer served.", latency)
            return LayerCall(text, args, result, injected="distractor", stage="wrong_tool")
        canonical = self.by_offered.get(text) if isinstance(name, str) else None
        if canonical is None:
            return self._unknown_tool(name, text, args, latency)
        parsed = _parsed(args)
        if parsed is None:  # not a JSON object: the registry says why, under the offered name
            raw = execute(canonical, args)
            result = _wrapped(raw, text, latency, self._message(canonical, raw.error_message))
            return LayerCall(canonical, args, result, sent=self._sent(name, args, canonical, args))
        canonical_args = {self._by_offered_param(canonical).get(k, k): v for k, v in parsed.items()}
        refused = self._schema_error(name, text, args, canonical, parsed, canonical_args, latency)
        if refused is None:
            refused = self._injected(name, text, args, canonical, canonical_args, latency, rng)
        if refused is not None:
            return refused
        return self._run(name, text, args, canonical, canonical_args, execute, latency, rng)

    def _by_offered_param(self, canonical: str) -> dict[str, str]:
        return {v: k for k, v in self.param_names[canonical].items()}

    def _unknown_tool(self, name: Any, text: str, args: Any, latency: float) -> LayerCall:
        close = difflib.get_close_matches(text, list(self.by_offered), n=3) if len(text) <= 100 else []
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        result = _error(text, ErrorCode.UNKNOWN_TOOL, f"Unknown tool {text[:60]!r}.{hint}", latency)
        return LayerCall(name, args, result, stage="wrong_tool")

    def _schema_error(
        self, name: Any, text: str, args: Any, canonical: str, parsed: dict[str, Any], canonical_args: dict[str, Any], latency: float
    ) -> LayerCall | None:
        """An unknown or missing parameter (under the offered names), answered without running."""
        offered_params = self.param_names[canonical]
        by_offered = self._by_offered_param(canonical)
        unknown = [k for k in parsed if k not in by_offered]
        tool = self.registry.get(canonical)
        missing = [offered_params[p.name] for p in tool.params if p.required and p.name not in canonical_args]
        if not unknown and not missing:
            return None
        message = (
            f"{text} does not take {', '.join(repr(u) for u in unknown[:5])}; it takes: {', '.join(offered_params.values()) or 'no arguments'}."
            if unknown
            else f"{text} is missing required argument(s): {', '.join(missing)}."
        )
        result = _error(text, ErrorCode.INVALID_ARGUMENTS, message, latency)
        sent = self._sent(name, args, canonical, canonical_args)
        return LayerCall(canonical, canonical_args, result, sent=sent, stage="schema_error")

    def _injected(
        self, name: Any, text: str, args: Any, canonical: str, canonical_args: dict[str, Any], latency: float, rng: Random
    ) -> LayerCall | None:
        """A transient or rate-limit error given instead of running the call (counted as a call of the tool)."""
        self.tool_calls[canonical] += 1
        count = self.tool_calls[canonical]
        sent = self._sent(name, args, canonical, canonical_args)
        if self.perturbation.has("output:transient") and count == 1:
            self.injected_pending[canonical] = self.injected_pending.get(canonical, 0) + 1
            result = _error(text, UNAVAILABLE, f"{text} is temporarily unavailable; try again.", latency)
            return LayerCall(canonical, canonical_args, result, sent=sent, injected="transient")
        if self.ratelimit_at.get(canonical) == count:
            self.injected_pending[canonical] = self.injected_pending.get(canonical, 0) + 1
            wait = round(rng.uniform(0.005, 0.03), 3)
            result = _error(text, RATE_LIMITED, f"Too many calls to {text}; retry after {wait} seconds.", latency, retry_after=wait)
            return LayerCall(canonical, canonical_args, result, sent=sent, injected="ratelimit")
        self.injected_pending.pop(canonical, None)
        return None

    def _run(
        self,
        name: Any,
        text: str,
        args: Any,
        canonical: str,
        canonical_args: dict[str, Any],
        execute: Execute,
        latency: float,
        rng: Random,
    ) -> LayerCall:
        """Run the call (a smaller page mapped to the canonical one) and change what it gave back."""
        stage = "mishandled_output" if self.noise_values and _values(canonical_args) & self.noise_values else None
        page = canonical_args.get("page", 1)
        paged = (
            self.page_size != PAGE_SIZE
            and "page" in self.param_names[canonical]
            and isinstance(page, int)
            and not isinstance(page, bool)
            and page >= 1
        )
        if paged:
            canonical_args["page"] = (page - 1) * self.page_size // PAGE_SIZE + 1
        sent = self._sent(name, args, canonical, canonical_args)
        raw = execute(canonical, canonical_args)
        if not raw.ok:
            return LayerCall(
                canonical, canonical_args, _wrapped(raw, text, latency, self._message(canonical, raw.error_message)), sent, stage=stage
            )
        value, altered = self._altered(raw.value, page if paged else None, rng)
        tool = self.registry.get(canonical)
        if stage is None and tool.kind == "write" and self._expected_ids and _id_values(canonical_args) - self._expected_ids:
            stage = "wrong_value"
        result = PerturbedResult(text, True, raw.value, None, None, raw.seconds, canonical=raw.value, latency=latency, shown=value)
        return LayerCall(canonical, canonical_args, result, sent, altered=altered, stage=stage)

    def _altered(self, value: Any, page: int | None, rng: Random) -> tuple[Any, list[str]]:
        """A result as shown: cut to the smaller page (`page`: the one asked for, None when not paged), noise, reordered."""
        altered: list[str] = []
        if page is not None and isinstance(value, dict) and isinstance(value.get("items"), list) and "page_size" in value:
            value = self._page(value, page)
            altered.append("pages")
        if self.noise_fields:
            value = self._noise(value, rng)
            altered.append("noise")
        if self.perturbation.has("output:reorder"):
            value = _reorder(value, rng)
            altered.append("reorder")
        return value, altered

    def _sent(self, name: Any, args: Any, canonical: str, canonical_args: Any) -> dict[str, Any] | None:
        if name == canonical and args == canonical_args:
            return None
        return {"tool": name, "args": args}

    def _message(self, canonical: str, message: str | None) -> str | None:
        """A registry or tool message with the canonical names replaced by the offered ones."""
        if message is None:
            return None
        for param, offered in self.param_names[canonical].items():
            if param != offered:
                message = re.sub(rf"(?<![\w]){re.escape(param)}(?![\w])", offered, message) if "_" in param else message
                message = message.replace(f"'{param}'", f"'{offered}'")
        for tool, offered in self.tool_names.items():
            if tool != offered:
                message = re.sub(rf"\b{tool}\b", offered, message)
        return message

    def _page(self, value: dict[str, Any], page: int) -> dict[str, Any]:
        offset = (page - 1) * self.page_size % PAGE_SIZE
        total = value.get("total")
        out = dict(value)
        out["items"] = value["items"][offset : offset + self.page_size]
        out["page"] = page
        out["page_size"] = self.page_size
        if isinstance(total, int):
            out["total_pages"] = max(1, -(-total // self.page_size))
        return out

    def _noise(self, value: Any, rng: Random, depth: int = 0) -> Any:
        if depth > 4:
            return value
        if isinstance(value, list):
            return [self._noise(v, rng, depth + 1) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: self._noise(v, rng, depth + 1) for k, v in value.items()}
        for name in self.noise_fields:
            if name in out:
                continue
            noise: Any = rng.randrange(8_000_000, 9_000_000) if name.endswith("_id") else f"{rng.getrandbits(48):012x}"
            self.noise_values.add(noise)
            out[name] = noise
        return out

    # -- the end ---------------------------------------------------------------------------
    def finish(self) -> dict[str, int]:
        """The trial's failure stages: the counted calls, and one mishandled output for each tool
        left with an injected error never retried."""
        stages = Counter(self.stages)
        stages["mishandled_output"] += len(self.injected_pending)
        return {stage: stages[stage] for stage in STAGES if stages[stage]}

    def header(self) -> dict[str, Any]:
        """The start event's `perturbation`."""
        data = self.perturbation.to_dict()
        if self.task is not None and self.request != self.task.query:
            data["request"] = self.request
        if self.notes:
            data["notes"] = list(self.notes)
        return data


def offered_schemas(perturbation: Perturbation, task_id: str, trial: int, registry: ToolRegistry) -> list[dict[str, Any]]:
    """The tool schemas a trial of `task_id` was offered under `perturbation` (renamed, shuffled, with
    distractors, terse): drawn from the seed, the task id and the trial number alone, so a recorded
    trial's are rebuilt exactly (trajectories export what the model saw)."""
    return list(Layer(perturbation, None, registry, trial, task_id=task_id).schemas)


def _error(tool: str, code: str, message: str, latency: float, **extra: Any) -> PerturbedResult:
    return PerturbedResult(tool, False, None, code, message, 0.0, latency=latency, extra=extra)


def _wrapped(raw: ToolResult, tool: str, latency: float, message: str | None) -> PerturbedResult:
    return PerturbedResult(
        tool, raw.ok, raw.value, raw.error_code, message, raw.seconds, canonical=raw.value, latency=latency, shown=raw.value
    )


def _parsed(args: Any) -> dict[str, Any] | None:
    if args is None or args == "":
        return {}
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):
            return None
    return args if isinstance(args, dict) else None


def _first_sentence(text: str) -> str:
    first = text.split("\n", 1)[0].strip()
    match = re.match(r"(.+?[.!?])(\s|$)", first)
    return match.group(1) if match else first


def _reorder(value: Any, rng: Random) -> Any:
    if isinstance(value, list):
        return [_reorder(v, rng) for v in value]
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: _reorder(value[k], rng) for k in keys}
    return value


def _values(value: Any) -> set[Any]:
    """Every scalar in a value (ints and strings), for spotting noise."""
    out: set[Any] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, (int, str)) and not isinstance(item, bool):
            out.add(item)
    return out


def _ints(value: Any) -> set[int]:
    return {v for v in _values(value) if isinstance(v, int)}


def _id_values(args: Mapping[str, Any]) -> set[int]:
    ids: set[int] = set()
    for name, value in args.items():
        if name.endswith("_id") or name.endswith("_ids"):
            ids |= _ints(value)
    return ids


_WORD = re.compile(r"(?<![\w'’])[a-z]{5,}(?![\w'’])")


def _stated_words(task: Task) -> set[str]:
    """Words a typo must not touch: those of the values the request states (and of the reference's text arguments)."""
    texts = [v for v in _values(task.generator.get("stated", {})) if isinstance(v, str)]
    texts += [v for step in task.reference_solution for v in _values(step.args) if isinstance(v, str)]
    texts += [a or b for a, b in re.findall(r"'([^']*)'|\"([^\"]*)\"", task.query)]  # quoted names and titles
    return {w.lower() for text in texts for w in re.findall(r"[A-Za-z]+", text)}


def add_typos(text: str, rng: Random, protected: set[str]) -> str:
    """About one eligible word in ten (at least one) with a swap, a dropped or a doubled letter."""
    spans = [m for m in _WORD.finditer(text) if m.group().lower() not in protected]
    if not spans:
        return text
    chosen = sorted(rng.sample(spans, max(1, len(spans) // 10)), key=lambda m: m.start(), reverse=True)
    for match in chosen:
        word = match.group()
        i = rng.randrange(1, len(word) - 2)
        kind = rng.choice(("swap", "drop", "double"))
        if kind == "swap" and word[i] != word[i + 1]:
            typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif kind == "drop":
            typo = word[:i] + word[i + 1 :]
        else:
            typo = word[: i + 1] + word[i] + word[i + 1 :]
        text = text[: match.start()] + typo + text[match.end() :]
    return text


async def retry_after(result: ToolResult, sleep: Callable[[float], Awaitable[Any]]) -> bool:
    """For a solver that retries: whether `result` is an injected error worth retrying, after
    waiting what it asks (its retry_after)."""
    if result.ok or result.error_code not in RETRYABLE:
        return False
    wait = result.extra.get("retry_after", 0.0) if isinstance(result, PerturbedResult) else 0.0
    if wait:
        await sleep(float(wait))
    return True

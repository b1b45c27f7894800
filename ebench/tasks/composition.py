"""Composed tasks: a task grammar per domain, whose compositions compile to certified templates.

The shipped templates are closed: every seed reuses the same shapes, with new values. A composed
task is a tree of parts, each certified on its own terms and carrying both halves of a template:

- a **source**: a set of entities reached from the actor through a listing tool (my favourites,
  the songs of a playlist of mine, the artists I follow, my listening history);
- **terms** that filter it: predicates (a category, a numeric or date boundary, a relation such as
  "whose main artist I follow"), each stated as is, negated, or or-ed with another;
- a **reduction**: every item, the top k with a stated tie-break, the groups whose count or sum
  reaches a threshold, the items above the average;
- **actions**: writes applied to the result, in a chain where a later one may use an id an
  earlier one created (a new playlist, then its songs).

Every part has its SQL half (the draft: privileged SQL over `GenContext`, which picks the values
and checks that each stated condition changes the outcome), its public half (the tools, through
`PublicAPI`'s `keep` / `compare` / `heeds` / `top` helpers with named conditions, so the lazy
variants come for free) and phrase fragments in at least three surface forms. `template_class`
compiles a `Structure` (the tree, values abstracted) to a `ComposedTemplate`, a `Template`
subclass, so that `generation.generate` certifies compositions exactly as it certifies templates:
both halves agree, every stated part bites, careful variants pass, readings are decided by the
wording, lazy shortcuts fail. `compose` samples structures from the grammar (seeded; `--split
private` draws only from the reserved part of the grammar, `public` never does) and runs
`generate` over them.

A domain's grammar lives in its `parts` module (`Domain.parts_module`), which exposes `GRAMMAR`.
"""

from __future__ import annotations

import hashlib
import importlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from random import Random
from typing import Any, ClassVar, TypeVar

from ..engine.domain_registry import get_domain
from .generation import MIN_CHANGED_ROWS, GenerationReport, SeenTasks, generate, solution_signature
from .grading import signature
from .public import CORRECT, WRITTEN, Condition, Lazy, PublicAPI, Reading, biting_conditions
from .spec import Step, Task
from .template_api import Draft, GenContext, NoTarget, Template, leaked, query_key

T = TypeVar("T")

Row = dict[str, Any]

COMPOSED_DIR = Path(__file__).resolve().parent / "splits" / "composed"  # the shipped composed split (`--as-suite`)
COMPOSED_VERSION = "composed-1"  # the shipped composed split's version: a run records it; bump it when regenerating
ANY = "*"  # a reduction that takes (and gives) whatever entity the source lists
PREFIX = "composed:"  # a composed template's name: PREFIX + domain + ":" + the structure's canonical form
PHRASINGS = 3  # every part has this many surface forms; a structure has this many phrasings
SPLITS = ("public", "private")
RESERVED_SHARE = 6  # one part-combination (source, reduction, actions) in this many is reserved for the private split

# A term of the selection: a predicate as stated ("is"), negated ("not"), or two filters or-ed ("or").
TERM_OPS = ("is", "not", "or")
CREATING_SHARE = 0.2  # where a write that creates an id fits, how often a structure starts with one


# == the parts ================================================================================


class Part:
    """A piece of the grammar. `key` names it in structures (stable: structures are counted and
    reserved by it); `private` parts appear only in `--split private` compositions."""

    kind_of_part: ClassVar[str] = "part"

    def __init__(self, key: str, *, private: bool = False, readings: Sequence[Reading] = ()) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", key):
            raise ValueError(f"part key {key!r}: use lower-case letters, digits and _")
        self.key = key
        self.private = private
        self.readings = tuple(readings)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.key!r})"


def _forms(name: str, forms: Sequence[str]) -> tuple[str, ...]:
    if len(forms) < PHRASINGS:
        raise ValueError(f"{name}: {len(forms)} surface forms, at least {PHRASINGS} needed")
    return tuple(forms)


class Source(Part):
    """Where the candidates come from. `draw` picks the actor and the source's own stated values
    (a playlist's name) with SQL and returns the candidate query; `fetch` lists the same entities
    through the tools. `noun` and `origin` phrase it ("songs" + "in my playlist '<s_name>'")."""

    kind_of_part = "source"

    def __init__(
        self,
        key: str,
        entity: str,
        noun: Sequence[str],
        origin: Sequence[str],
        *,
        weight: float = 1.0,
        private: bool = False,
        readings: Sequence[Reading] = (),
    ) -> None:
        super().__init__(key, private=private, readings=readings)
        self.entity = entity
        self.weight = weight  # how often the sampler starts from it: a small corner of the grammar is drawn less
        self.noun = _forms(f"{key}.noun", noun)
        self.origin = _forms(f"{key}.origin", origin)

    def draw(self, d: Drafting) -> str:
        """Pick the actor (`d.actor`) and this source's stated values; return an SQL query of the
        candidates' ids as `id` (named parameters from `d.params`), plus any source-only columns
        predicates read as `src.<column>`. NoTarget when the world has nothing suitable."""
        raise NotImplementedError

    def fetch(self, s: Solving, narrow: Row) -> list[Row]:
        """Every candidate, through the tools (`narrow`: the tools' own filters for stated terms)."""
        raise NotImplementedError

    def stated_keys(self) -> tuple[str, ...]:
        """The keys of `stated` this source sets (each is a clause: it scopes the first condition)."""
        return ()


class Predicate(Part):
    """A condition over one entity's attribute. `column` is its SQL half (an expression over the
    entity's row `e`, the source's row `src` and `:actor`); `attribute` its public half (from a
    listed item, reading other listings through `Solving` when it is relational). `kind` is the
    Condition kind: "filter" (a category or relation: stated, negated or or-ed) or "boundary" (a
    threshold with `op`, whose inclusivity a sloppy solver gets wrong). Phrases are plural verb
    phrases after "that", with `<v>` where the value goes."""

    kind_of_part = "predicate"

    def __init__(
        self,
        key: str,
        entity: str,
        column: str,
        attribute: str | Callable[[Solving, Row], Any],
        phrases: Sequence[str],
        *,
        kind: str = "filter",
        op: str = "==",
        negated: Sequence[str] = (),
        sources: Iterable[str] | None = None,
        excluded_sources: Iterable[str] = (),
        narrow: Callable[[str, Any], Row | None] | None = None,
        private: bool = False,
        readings: Sequence[Reading] = (),
        capability: str | None = None,
    ) -> None:
        super().__init__(key, private=private, readings=readings)
        if kind not in ("filter", "boundary"):
            raise ValueError(f"predicate {key}: kind must be filter or boundary")
        self.entity = entity
        self.column = column
        self._attribute = attribute
        self.phrases = _forms(f"{key}.phrases", phrases)
        self.negated = _forms(f"{key}.negated", negated) if negated else ()
        self.kind = kind
        self.op = op
        self.sources = frozenset(sources) if sources is not None else None
        self.excluded_sources = frozenset(excluded_sources)
        self._narrow = narrow
        self.capability = capability

    @property
    def valued(self) -> bool:
        return "<v>" in self.phrases[0]

    @property
    def negatable(self) -> bool:
        return bool(self.negated) and self.kind == "filter"

    def fits(self, source: Source) -> bool:
        if source.entity != self.entity or source.key in self.excluded_sources:
            return False
        return self.sources is None or source.key in self.sources

    def attribute(self, s: Solving, item: Row) -> Any:
        return self._attribute(s, item) if callable(self._attribute) else item.get(self._attribute)

    def narrow(self, source: str, value: Any) -> Row | None:
        """The tools' own filter for this term on `source` (a superset of what it keeps), if any."""
        return self._narrow(source, value) if self._narrow else None

    def choose(self, d: Drafting, attrs: list[Any]) -> Any:
        """A value a person would state, which splits the candidates' `attrs` (keeps some, drops
        some). NoTarget when none does. Unvalued predicates return None."""
        return None

    def show(self, value: Any) -> str:
        """The value in words (a date as "March 3, 2026", a duration as "3:30")."""
        return str(value)

    def holds(self, attr: Any, value: Any, op: str | None = None) -> bool:
        """The SQL half's test (`op`: the boundary's operator, maybe taken one step off)."""
        if not self.valued:
            return bool(attr)
        if attr is None:
            return False
        return _compare(attr, op or self.op, value)

    def check(self, attr: Any, value: Any) -> bool:
        """The public half's test of a filter (a boundary goes through `PublicAPI.compare`)."""
        if not self.valued:
            return bool(attr)
        if isinstance(attr, str) and isinstance(value, str):
            return attr.casefold() == value.casefold()
        return bool(attr == value)


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    "<": lambda a, b: a < b,
}
_ONE_STEP_OFF = {">=": ">", ">": ">=", "<=": "<", "<": "<="}


def _compare(attr: Any, op: str, value: Any) -> bool:
    if isinstance(attr, str) and isinstance(value, str) and op == "==":
        return attr.casefold() == value.casefold()
    return _OPS[op](attr, value)


class Reduction(Part):
    """From the kept items to the result the actions take: every item, a top k, groups. Its SQL
    half (`model`) works on candidate rows with `columns` (SQL over `e`, `src`, `:actor`), its
    public half (`solve`) on listed items. `plural` is False for a single result ("the one that...").
    Phrases: `np` (a noun phrase over `<sel>`, the selection), `subject` (after "Go through the
    <sel>:"), `take` (after "From the <sel>, take")."""

    kind_of_part = "reduction"

    def __init__(
        self,
        key: str,
        entity_in: str,
        entity_out: str,
        np: Sequence[str],
        subject: Sequence[str],
        take: Sequence[str],
        *,
        plural: bool = True,
        keeps_items: bool = False,
        columns: dict[str, str] | None = None,
        private: bool = False,
        readings: Sequence[Reading] = (),
    ) -> None:
        super().__init__(key, private=private, readings=readings)
        self.entity_in = entity_in  # ANY: whatever the source lists
        self.entity_out = entity_out  # ANY: the same entity as it takes
        self.np = _forms(f"{key}.np", np)
        self.subject = _forms(f"{key}.subject", subject)
        self.take = _forms(f"{key}.take", take)
        self.plural = plural
        self.keeps_items = keeps_items  # the result is listed items (with every field), not bare ids
        self.columns = dict(columns or {})

    def takes(self, entity: str) -> bool:
        return self.entity_in in (ANY, entity)

    def gives(self, source: Source) -> str:
        return source.entity if self.entity_out == ANY else self.entity_out

    def conditions(self) -> tuple[Condition, ...]:
        """The conditions the reduction states (named "r")."""
        return ()

    def stated_keys(self) -> tuple[str, ...]:
        return ()

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        """Pick the reduction's values (k, a threshold) from the kept rows; NoTarget when none works."""

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        """The SQL half: the result's ids (of `entity_out`) from the kept rows, `lazy` applied."""
        raise NotImplementedError

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        """The public half: the result's items from the kept items."""
        raise NotImplementedError


class Action(Part):
    """A write applied to every item of the result. It takes items of `entity` and writes
    `target`, whose id is the item's `via` field (SQL: `via_column` over the item's row `e`) or the
    item's own id. `refused` is the SQL half of what the product refuses (already there, expired),
    which the public half skips as a careful user would (reading what it needs in `prepare`, or
    seeing it on the target's own listed items); a refusal it cannot see (bare ids, another
    entity's items) must not be in the correct result, or the draft is drawn again. `creates`: the action's first call creates an id later calls use (cross-step
    dependency). Phrases: `imperative` (with `<obj>`), `predicate` (after a subject: "should end up
    in my favourites"), `pronoun` (with `<them>`), each in three forms."""

    kind_of_part = "action"

    def __init__(
        self,
        key: str,
        entity: str,
        target: str,
        imperative: Sequence[str],
        predicate: Sequence[str],
        pronoun: Sequence[str],
        *,
        via: str | None = None,
        via_column: str | None = None,
        writes: str = "",
        sources: Iterable[str] | None = None,
        excluded_sources: Iterable[str] = (),
        creates: bool = False,
        row_cost: int = 2,
        private: bool = False,
        readings: Sequence[Reading] = (),
    ) -> None:
        super().__init__(key, private=private, readings=readings)
        self.entity = entity
        self.target = target
        self.row_cost = row_cost  # rows one effect changes (a favourite: its row and the song's counter)
        self.imperative = _forms(f"{key}.imperative", imperative)
        self.predicate = _forms(f"{key}.predicate", predicate)
        self.pronoun = _forms(f"{key}.pronoun", pronoun)
        self.via = via
        self.via_column = via_column
        self.writes = writes or key
        self.sources = frozenset(sources) if sources is not None else None
        self.excluded_sources = frozenset(excluded_sources)
        self.creates = creates

    def fits(self, source: Source, reduction: Reduction) -> bool:
        if not reduction.takes(source.entity) or reduction.gives(source) != self.entity or source.key in self.excluded_sources:
            return False
        if self.via and not reduction.keeps_items:  # bare ids carry no field to follow
            return False
        return self.sources is None or source.key in self.sources

    def stated_keys(self, slot: str) -> tuple[str, ...]:
        """Keys of `stated` the action sets that the task writes (a new playlist's name): WRITTEN clauses."""
        return ()

    def scoping_keys(self, slot: str) -> tuple[str, ...]:
        """Keys of `stated` the action sets that name where it writes (an existing playlist): clauses
        that scope the first condition, as a source's do."""
        return ()

    def sees_refusals(self, reduction: Reduction) -> bool:
        """Whether the public half has the target's own listed items (and so sees what the product
        refuses, an expired song), rather than bare ids or another entity's items."""
        return reduction.keeps_items and self.via is None

    def draw(self, d: Drafting, slot: str) -> None:
        """Pick the action's own values (a new playlist's name) into `d.stated` and `d.words`."""

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        """Targets the product refuses (the SQL half)."""
        return set()

    def visible_refusals(self, d: Drafting, targets: list[int]) -> set[int]:
        """Refused targets the public half tells from what it reads in `prepare` (already in the
        library), whatever items it has; the rest it sees only on the target's own listed items."""
        return set()

    def effects(self, d: Drafting, slot: str, targets: list[int]) -> set[tuple[Any, ...]]:
        """What the writes change (the SQL half's model of the end state)."""
        refused = self.refused(d, targets)
        return {(slot, t) for t in targets if t not in refused}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        """The SQL half's writes (`at`: the index of the first one in the task's steps)."""
        raise NotImplementedError

    def prepare(self, s: Solving, slot: str) -> None:
        """Read what the public half needs to skip what the product refuses."""

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        """The public half's writes."""
        raise NotImplementedError

    def target_of(self, item: Row, id_field: str) -> Any:
        return item.get(self.via) if self.via else item.get(id_field)


@dataclass(frozen=True)
class Entity:
    """An entity the grammar talks about: its table and key (SQL half) and the field that holds its
    id in the tools' results (public half)."""

    name: str
    table: str
    id_field: str
    key: str = "id"
    person: bool = False  # one of them is "them", not "it"
    singular: str = ""  # how one of them is named after a single result ("that artist"); else "it"


@dataclass
class Grammar:
    """A domain's parts. `private`: part keys reserved for `--split private` (besides the parts
    marked private themselves)."""

    domain: str
    entities: dict[str, Entity]
    sources: list[Source]
    predicates: list[Predicate]
    reductions: list[Reduction]
    actions: list[Action]
    open_terms_words: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        keys = [p.key for p in self.parts()]
        duplicated = sorted(k for k, n in Counter(keys).items() if n > 1)
        if duplicated:
            raise ValueError(f"{self.domain} grammar: part keys used twice: {', '.join(duplicated)}")
        self._by_key = {p.key: p for p in self.parts()}

    def parts(self) -> list[Part]:
        return [*self.sources, *self.predicates, *self.reductions, *self.actions]

    def part(self, key: str) -> Part:
        if key not in self._by_key:
            raise KeyError(f"{self.domain} grammar has no part {key!r}")
        return self._by_key[key]

    def source(self, key: str) -> Source:
        return _typed(self.part(key), Source)

    def predicate(self, key: str) -> Predicate:
        return _typed(self.part(key), Predicate)

    def reduction(self, key: str) -> Reduction:
        return _typed(self.part(key), Reduction)

    def action(self, key: str) -> Action:
        return _typed(self.part(key), Action)


PartT = TypeVar("PartT", bound="Part")


def _typed(part: Part, cls: type[PartT]) -> PartT:
    if not isinstance(part, cls):
        raise KeyError(f"part {part.key!r} is a {part.kind_of_part}, not a {cls.kind_of_part}")
    return part


# == structures ===============================================================================


@dataclass(frozen=True)
class Term:
    op: str  # "is", "not" or "or"
    keys: tuple[str, ...]  # one predicate key; two for "or"

    def canonical(self) -> str:
        if self.op == "not":
            return "!" + self.keys[0]
        if self.op == "or":
            return "(" + "|".join(self.keys) + ")"
        return self.keys[0]


@dataclass(frozen=True)
class Structure:
    """A composed task's tree of parts, values abstracted: what is counted as its structure."""

    domain: str
    source: str
    terms: tuple[Term, ...]
    reduction: str
    actions: tuple[str, ...]

    def canonical(self) -> str:
        """'fav{lang&!followed&(genre|expired)}>top_played>favourite+new_playlist'."""
        return f"{self.source}{{{'&'.join(t.canonical() for t in self.terms)}}}>{self.reduction}>{'+'.join(self.actions)}"

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.domain}:{self.canonical()}"

    @property
    def depth(self) -> int:
        """Parts composed beyond the source: terms, a reduction that is not "every", actions."""
        return len(self.terms) + (self.reduction != "every") + len(self.actions)

    def tree(self) -> dict[str, Any]:
        """The structure as a JSON tree (`task.generator["structure"]`)."""
        return {
            "id": self.canonical(),
            "source": self.source,
            "terms": [{"op": t.op, "parts": list(t.keys)} for t in self.terms],
            "reduction": self.reduction,
            "actions": list(self.actions),
            "depth": self.depth,
        }

    def part_keys(self) -> list[str]:
        return [self.source, *(k for t in self.terms for k in t.keys), self.reduction, *self.actions]

    def combination(self) -> str:
        """The part combination a split reserves whole: source, reduction and actions."""
        return f"{self.domain}:{self.source}>{self.reduction}>{'+'.join(self.actions)}"


_CANONICAL = re.compile(r"^(?P<source>[a-z0-9_]+)\{(?P<terms>[^}]*)\}>(?P<reduction>[a-z0-9_]+)>(?P<actions>[a-z0-9_+]+)$")


def parse_structure(domain: str, text: str) -> Structure:
    """A structure from its canonical form (`Structure.canonical`); ValueError when malformed."""
    match = _CANONICAL.match(text)
    if match is None:
        raise ValueError(f"not a composed structure: {text!r}")
    terms: list[Term] = []
    for raw in filter(None, match["terms"].split("&")):
        if raw.startswith("!"):
            terms.append(Term("not", (raw[1:],)))
        elif raw.startswith("(") and raw.endswith(")"):
            terms.append(Term("or", tuple(raw[1:-1].split("|"))))
        else:
            terms.append(Term("is", (raw,)))
    return Structure(domain, match["source"], tuple(terms), match["reduction"], tuple(match["actions"].split("+")))


def _stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def reserved_combination(structure: Structure) -> bool:
    """Whether the structure's part combination is reserved for the private split (deterministic:
    a hash of the combination, the same on every machine and in every release)."""
    return _stable_hash(structure.combination()) % RESERVED_SHARE == 0


def is_private(structure: Structure, grammar: Grammar) -> bool:
    """Private structures use a reserved combination or a private part; public ones neither."""
    return reserved_combination(structure) or any(grammar.part(k).private for k in structure.part_keys())


def condition_names(structure: Structure) -> list[list[str]]:
    """The condition names of each term: c1, c2, ...; an or-term's two filters are c<i>a and c<i>b."""
    return [[f"c{i}a", f"c{i}b"] if t.op == "or" else [f"c{i}"] for i, t in enumerate(structure.terms, 1)]


def action_slots(structure: Structure) -> list[str]:
    return [f"a{i}" for i in range(1, len(structure.actions) + 1)]


# == the two halves' working state ===========================================================


class Drafting:
    """The SQL half's state while drafting one composed task: privileged SQL with named parameters
    (`:actor` and whatever the source draws), the RNG, and what the request will state."""

    def __init__(self, ctx: GenContext, grammar: Grammar) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        self.grammar = grammar
        self.actor: int | None = None
        self.params: dict[str, Any] = {}
        self.stated: dict[str, Any] = {}
        self.words: dict[str, str] = {}
        self.hidden: list[Any] = []
        self.targets: list[tuple[Any, ...]] = []

    def state(self, key: str, value: Any, words: str | None = None) -> None:
        """A value the request states: the public half gets `value`, the wording shows `words`."""
        self.stated[key] = value
        self.words[key] = str(value) if words is None else words

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"actor": self.actor, **self.params, **params}

    def rows(self, sql: str, **params: Any) -> list[Row]:
        cur = self.ctx.conn.execute(sql, self._params(params))
        names = [c[0] for c in cur.description]
        return [dict(zip(names, row)) for row in cur]

    def column(self, sql: str, **params: Any) -> list[Any]:
        return [row[0] for row in self.ctx.conn.execute(sql, self._params(params))]

    def value(self, sql: str, **params: Any) -> Any:
        row = self.ctx.conn.execute(sql, self._params(params)).fetchone()
        return None if row is None else row[0]

    def choice(self, items: Sequence[T], what: str = "target") -> T:
        if not items:
            raise NoTarget(f"no {what}")
        return self.rng.choice(list(items))

    def lookup(self, entity: str, ids: Iterable[Any], expr: str) -> dict[Any, Any]:
        """`expr` (SQL over the entity's row `e` and `:actor`) for each of `ids`."""
        wanted = sorted(set(ids))
        if not wanted:
            return {}
        spec = self.grammar.entities[entity]
        marks = ", ".join(f":_{i}" for i in range(len(wanted)))
        sql = f"SELECT e.{spec.key} AS id, {expr} AS v FROM {spec.table} e WHERE e.{spec.key} IN ({marks})"
        return {row["id"]: row["v"] for row in self.rows(sql, **{f"_{i}": v for i, v in enumerate(wanted)})}


class Solving:
    """The public half's state while solving one composed task: the API as the actor, the stated
    values, and the listings read so far (a listing is read once, however many parts need it)."""

    def __init__(self, api: PublicAPI, stated: dict[str, Any], id_field: str = "id") -> None:
        self.api = api
        self.stated = stated
        self.id_field = id_field  # the field holding the id in the result's items
        self.memo: dict[str, Any] = {}

    def listing(self, tool: str, within: str | None = None, narrow: Row | None = None, **args: Any) -> list[Row]:
        key = repr((tool, within, sorted(args.items()), sorted((narrow or {}).items())))
        if key not in self.memo:
            self.memo[key] = self.api.all_pages(tool, within=within, narrow=narrow, **args)
        return list(self.memo[key])

    def remember(self, key: str, make: Callable[[], T]) -> T:
        """A value computed once per solve (a set of ids read from a listing)."""
        if key not in self.memo:
            self.memo[key] = make()
        value: T = self.memo[key]  # what `make` made for this key
        return value


# == the composed template ====================================================================


class ComposedTemplate(Template):
    """A template compiled from a structure (`template_class`): its conditions, readings,
    clauses and phrasings derive from the parts, `draft` runs their SQL halves and `solve` their
    public halves. Certified by `generation.generate` exactly like a hand-written template."""

    structure: ClassVar[Structure]
    grammar: ClassVar[Grammar]
    skeletons: ClassVar[tuple[str, ...]] = ()  # the phrasings with every value abstracted
    tries: ClassVar[int] = 5  # draws per draft before giving up (a structure the data rarely fits gives way to the next)
    _terms: ClassVar[list[tuple[Term, list[str], list[Predicate]]]]

    # -- the parts of this structure -----------------------------------------------------------
    @classmethod
    def source(cls) -> Source:
        return cls.grammar.source(cls.structure.source)

    @classmethod
    def reduction(cls) -> Reduction:
        return cls.grammar.reduction(cls.structure.reduction)

    @classmethod
    def actions(cls) -> list[tuple[str, Action]]:
        return [(slot, cls.grammar.action(key)) for slot, key in zip(action_slots(cls.structure), cls.structure.actions)]

    @classmethod
    def terms(cls) -> list[tuple[Term, list[str], list[Predicate]]]:
        if "_terms" not in cls.__dict__:
            cls._terms = [
                (term, names, [cls.grammar.predicate(k) for k in term.keys])
                for term, names in zip(cls.structure.terms, condition_names(cls.structure))
            ]
        return cls._terms

    # -- the SQL half --------------------------------------------------------------------------
    def draft(self, ctx: GenContext) -> Draft:
        reason = NoTarget("no draw")
        for _ in range(self.tries):
            d = Drafting(ctx, self.grammar)
            try:
                draft = self._draw(d)
            except NoTarget as exc:
                reason = exc
                continue
            if not leaked(draft.query, draft.hidden):
                return draft
            reason = NoTarget("a count equals a stated number")
        raise reason

    def _draw(self, d: Drafting) -> Draft:
        source, reduction = self.source(), self.reduction()
        base = source.draw(d)
        rows = candidate_rows(d, source, base, self._columns())
        if len(rows) < 3:
            raise NoTarget("fewer than 3 candidates")
        self._state_values(d, rows)
        if len(self.terms()) > 1:
            self._restate_values(d, rows)
        kept = [r for r in rows if self._passes(r, d.stated, CORRECT)]
        if not kept:
            raise NoTarget("the terms keep nothing")
        reduction.choose(d, kept)
        for slot, action in self.actions():
            action.draw(d, slot)
        correct, result = self._outcome(d, rows, CORRECT)
        if not result:
            raise NoTarget("an empty result")
        self._check_writes(d, result)
        self._check_conditions(d, rows, correct)
        steps = self._steps(d, correct, result)
        # What the data decides stays unsaid: how many items it selects (unless the request states it: a top k).
        stated_numbers = {v for v in d.stated.values() if isinstance(v, int)}
        d.hidden += [n for n in (len(result), len(kept), len(rows)) if n not in stated_numbers]
        query = self.phrase(d.ctx, **d.words)
        assert d.actor is not None
        return Draft(d.actor, query, steps, stated=dict(d.stated), hidden=d.hidden, targets=tuple(d.targets) or (("actor", d.actor),))

    def _columns(self) -> dict[str, str]:
        """The candidate columns the terms and the reduction need, by name."""
        columns: dict[str, str] = {}
        for _, names, predicates in self.terms():
            columns.update({name: p.column for name, p in zip(names, predicates)})
        columns.update({f"r_{k}": v for k, v in self.reduction().columns.items()})
        return columns

    def _state_values(self, d: Drafting, rows: list[Row]) -> None:
        """Each term's value, chosen on the candidates the terms before it keep, in a random order,
        so that together they still keep something and each excludes some of the rest."""
        remaining = rows
        for index in self.rng_order(d):
            term, names, predicates = self.terms()[index]
            for name, predicate in zip(names, predicates):
                if predicate.valued:
                    value = predicate.choose(d, [r[name] for r in remaining])
                    d.state(name, value, predicate.show(value))
            remaining = [r for r in remaining if self._term_holds(r, d.stated, term, names, predicates, CORRECT)]
            if not remaining:
                raise NoTarget("the terms keep nothing")

    def _restate_values(self, d: Drafting, rows: list[Row]) -> None:
        """Each value again, on what the other terms keep: so that it excludes some of that."""
        for index in self.rng_order(d):
            _, names, predicates = self.terms()[index]
            others = [
                r for r in rows if all(self._term_holds(r, d.stated, *other, CORRECT) for j, other in enumerate(self.terms()) if j != index)
            ]
            for name, predicate in zip(names, predicates):
                if predicate.valued and len(others) >= 3:
                    try:
                        value = predicate.choose(d, [r[name] for r in others])
                    except NoTarget:
                        continue
                    d.state(name, value, predicate.show(value))

    def _check_writes(self, d: Drafting, result: list[Any]) -> None:
        """NoTarget when the product would refuse a write the request asks for (unseen by the request)."""
        reduction = self.reduction()
        for _, action in self.actions():
            targets = _targets(d, action, result)
            if not action.sees_refusals(reduction) and action.refused(d, targets) - action.visible_refusals(d, targets):
                raise NoTarget("the product would refuse a write the request asks for")

    def _check_conditions(self, d: Drafting, rows: list[Row], correct: frozenset[tuple[Any, ...]]) -> None:
        """NoTarget when getting some condition wrong would change nothing (it would not bite)."""
        for condition in self.conditions:
            for mode in condition.modes:
                lazy = Lazy(condition.name, mode)
                if self._outcome(d, rows, lazy)[0] == correct and not (condition.kind == "boundary" and mode == "off_by_one"):
                    raise NoTarget(f"{lazy.label} changes nothing")

    def _steps(self, d: Drafting, correct: frozenset[tuple[Any, ...]], result: list[Any]) -> list[Step]:
        """The reference steps of the writes; NoTarget when they change too few rows."""
        costs = {slot: action.row_cost for slot, action in self.actions()}
        if sum(costs[effect[0]] for effect in correct) < MIN_CHANGED_ROWS:
            raise NoTarget(f"fewer than {MIN_CHANGED_ROWS} changed rows")
        steps: list[Step] = []
        for slot, action in self.actions():
            steps += action.steps(d, slot, _targets(d, action, result), len(steps))
        if not steps:
            raise NoTarget("nothing to write")
        return steps

    def rng_order(self, d: Drafting) -> list[int]:
        order = list(range(len(self.terms())))
        d.rng.shuffle(order)
        return order

    def _passes(self, row: Row, stated: dict[str, Any], lazy: Lazy) -> bool:
        """The SQL half of the terms: every term holds (each as `lazy` gets it wrong)."""
        return all(self._term_holds(row, stated, term, names, predicates, lazy) for term, names, predicates in self.terms())

    @staticmethod
    def _term_holds(row: Row, stated: dict[str, Any], term: Term, names: list[str], predicates: list[Predicate], lazy: Lazy) -> bool:
        modes = [lazy.mode if lazy.condition == name else None for name in names]
        if term.op == "or":
            return any(mode != "ignore" and p.holds(row[n], stated.get(n)) for n, p, mode in zip(names, predicates, modes))
        name, predicate, mode = names[0], predicates[0], modes[0]
        if mode == "ignore":
            return True
        op = _ONE_STEP_OFF.get(predicate.op, predicate.op) if mode == "off_by_one" else predicate.op
        holds = predicate.holds(row[name], stated.get(name), op)
        return holds != (term.op == "not")

    def _outcome(self, d: Drafting, rows: list[Row], lazy: Lazy) -> tuple[frozenset[tuple[Any, ...]], list[Any]]:
        """The end state the SQL half predicts when the conditions are applied as `lazy` gets them
        (writes the product refuses change nothing), and the reduction's result."""
        kept = [r for r in rows if self._passes(r, d.stated, lazy)]
        result = self.reduction().model(d, kept, lazy) if kept else []
        effects: set[tuple[Any, ...]] = set()
        for slot, action in self.actions():
            effects |= action.effects(d, slot, _targets(d, action, result))
        return frozenset(effects), result

    # -- the public half -----------------------------------------------------------------------
    def solve(self, api: PublicAPI, stated: dict[str, Any]) -> None:
        source, reduction = self.source(), self.reduction()
        s = Solving(api, stated, self.grammar.entities[reduction.gives(source)].id_field)
        for slot, action in self.actions():
            action.prepare(s, slot)
        narrow: Row = {}
        for term, names, predicates in self.terms():
            if term.op == "is":
                narrow.update(predicates[0].narrow(source.key, stated.get(names[0])) or {})
        items = source.fetch(s, narrow)
        # Every term is checked on every item (no short cut), so each condition is stated.
        kept = [item for item in items if all([self._holds(s, item, t, n, p) for t, n, p in self.terms()])]
        result = reduction.solve(s, kept)
        for slot, action in self.actions():
            action.run(s, slot, result)

    def _holds(self, s: Solving, item: Row, term: Term, names: list[str], predicates: list[Predicate]) -> bool:
        api = s.api
        if term.op == "or":
            # Ignoring one side of an "or" is dropping it: the item then needs the other side.
            sides = [api.heeds(n) and p.check(p.attribute(s, item), s.stated.get(n)) for n, p in zip(names, predicates)]
            return any(sides)
        name, predicate = names[0], predicates[0]
        attr = predicate.attribute(s, item)
        if predicate.kind == "boundary":
            return attr is not None and api.compare(name, attr, predicate.op, s.stated[name])
        ok = predicate.check(attr, s.stated.get(name))
        return api.keep(name, not ok if term.op == "not" else ok)


def candidate_rows(d: Drafting, source: Source, base: str, columns: dict[str, str]) -> list[Row]:
    """The source's candidates with the columns the parts need, computed by SQL."""
    spec = d.grammar.entities[source.entity]
    selected = "".join(f", {expr} AS {name}" for name, expr in columns.items())
    sql = f"SELECT src.id AS id{selected} FROM ({base}) src JOIN {spec.table} e ON e.{spec.key} = src.id ORDER BY src.id"
    return d.rows(sql)


def _targets(d: Drafting, action: Action, result: list[Any]) -> list[Any]:
    """The ids an action writes for a result: the result's own, or each one's `via` (deduplicated)."""
    if not action.via_column:
        return list(dict.fromkeys(result))
    mapped = d.lookup(action.entity, result, action.via_column)
    return list(dict.fromkeys(mapped[r] for r in result if mapped.get(r) is not None))


# == compiling a structure ====================================================================


def _frame_forms(structure: Structure, part: str) -> list[int]:
    """Which surface form of `part` each phrasing uses: a permutation drawn from the structure, so
    that structures sharing a part do not share its wording in the same phrasing."""
    order = list(range(PHRASINGS))
    Random(f"{structure.canonical()}:{part}").shuffle(order)
    return order


def _join_terms(texts: list[str], frame: int) -> str:
    if not texts:
        return ""
    joiner = (" and that ", ", and that ", ", and also that ")[frame]
    return " that " + joiner.join(texts)


def phrasings_for(structure: Structure, grammar: Grammar) -> tuple[str, ...]:
    """The structure's phrasings (format strings over the stated values' words): three frames, each
    using one surface form of every part."""
    source = grammar.source(structure.source)
    reduction = grammar.reduction(structure.reduction)
    actions = [grammar.action(k) for k in structure.actions]
    # Markers in action phrases: <them> and <their> for the result, <each> before them ("of each of them").
    entity = grammar.entities[reduction.gives(source)]
    if reduction.plural:
        pronouns = {"<them>": "them", "<their>": "their", "<each>": "each of "}
    elif entity.singular:
        pronouns = {"<them>": f"that {entity.singular}", "<their>": f"that {entity.singular}'s", "<each>": ""}
    elif entity.person:
        pronouns = {"<them>": "them", "<their>": "their", "<each>": ""}
    else:
        pronouns = {"<them>": "it", "<their>": "its", "<each>": ""}
    slots = action_slots(structure)

    def fill(text: str, slot: str) -> str:
        for marker, word in pronouns.items():
            text = text.replace(marker, word)
        return text.replace("<slot>", slot)

    out = []
    for frame in range(PHRASINGS):

        def form(part: Part, forms: tuple[str, ...], frame: int = frame) -> str:
            return forms[_frame_forms(structure, part.key)[frame]]

        terms = []
        # An "either ... or ..." term goes last: nothing after it can be read into it.
        ordered = sorted(zip(structure.terms, condition_names(structure)), key=lambda pair: pair[0].op == "or")
        for term, names in ordered:
            predicates = [grammar.predicate(k) for k in term.keys]
            texts = [form(p, p.negated if term.op == "not" else p.phrases).replace("<v>", "{" + n + "}") for n, p in zip(names, predicates)]
            terms.append("either " + " or ".join(texts) if term.op == "or" else texts[0])
        selection = f"{form(source, source.noun)} {form(source, source.origin)}{_join_terms(terms, frame)}"
        first, *rest = actions
        then = "".join(f", then {fill(form(a, a.pronoun), slot)}" for a, slot in zip(rest, slots[1:]))
        if frame == 0:
            obj = form(reduction, reduction.np).replace("<sel>", selection)
            text = fill(form(first, first.imperative), slots[0]).replace("<obj>", obj) + then + "."
        elif frame == 1:
            subject = form(reduction, reduction.subject)
            text = f"Go through the {selection}: {subject} {fill(form(first, first.predicate), slots[0])}{then}."
        else:
            take = form(reduction, reduction.take)
            text = f"From the {selection}, take {take} and {fill(form(first, first.pronoun), slots[0])}{then}."
        out.append(_tidy(text))
    return tuple(out)


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).replace(" ,", ",").replace(" .", ".")
    return text[0].upper() + text[1:]


def template_class(grammar: Grammar, structure: Structure) -> type[ComposedTemplate]:
    """The structure compiled to a ComposedTemplate subclass (instantiable without arguments, as
    templates are); ValueError when the parts do not fit together."""
    problem = structure_problem(grammar, structure)
    if problem:
        raise ValueError(f"{structure.canonical()}: {problem}")
    source = grammar.source(structure.source)
    reduction = grammar.reduction(structure.reduction)
    conditions: list[Condition] = []
    clauses: dict[str, str] = {}
    readings: list[Reading] = [*source.readings, *reduction.readings]
    for term, names in zip(structure.terms, condition_names(structure)):
        for name, key in zip(names, term.keys):
            predicate = grammar.predicate(key)
            conditions.append(Condition(name, predicate.kind, capability=predicate.capability))
            clauses[name] = name
            readings += predicate.readings
    conditions += reduction.conditions()
    clauses.update({key: "r" for key in reduction.stated_keys()})
    first = conditions[0].name if conditions else "r"
    clauses.update({key: first for key in source.stated_keys()})
    for slot, key in zip(action_slots(structure), structure.actions):
        action = grammar.action(key)
        clauses.update({k: WRITTEN for k in action.stated_keys(slot)})
        clauses.update({k: first for k in action.scoping_keys(slot)})
        readings += action.readings
    phrasings = phrasings_for(structure, grammar)
    attrs = {
        "name": structure.name,
        "structure": structure,
        "grammar": grammar,
        "conditions": tuple(conditions),
        "readings": tuple(dict.fromkeys(readings)),
        "clauses": clauses,
        "phrasings": phrasings,
        "skeletons": tuple(re.sub(r"\{[a-z0-9_]+\}", "{}", p) for p in phrasings),
    }
    return type(f"Composed_{_stable_hash(structure.name):016x}", (ComposedTemplate,), attrs)


def structure_problem(grammar: Grammar, structure: Structure) -> str | None:
    """Why the parts of `structure` do not fit together, or None."""
    try:
        source = grammar.source(structure.source)
        reduction = grammar.reduction(structure.reduction)
        actions = [grammar.action(k) for k in structure.actions]
        predicates = [grammar.predicate(k) for t in structure.terms for k in t.keys]
    except KeyError as exc:
        return str(exc.args[0])
    if structure.domain != grammar.domain:
        return f"a {structure.domain} structure in the {grammar.domain} grammar"
    return (
        _terms_problem(grammar, structure, source, predicates)
        or _reduction_problem(source, reduction, predicates)
        or _actions_problem(source, reduction, actions)
        or _conditions_problem(structure, reduction, actions)
    )


def _terms_problem(grammar: Grammar, structure: Structure, source: Source, predicates: list[Predicate]) -> str | None:
    """Why the terms do not fit the source (or each other), or None."""
    keys = [p.key for p in predicates]
    if len(set(keys)) != len(keys):
        return "a predicate used twice"
    for term in structure.terms:
        if term.op not in TERM_OPS or len(term.keys) != (2 if term.op == "or" else 1):
            return f"malformed term {term.canonical()}"
        for key in term.keys:
            predicate = grammar.predicate(key)
            if not predicate.fits(source):
                return f"{key} does not apply to {source.key}"
            if term.op != "is" and predicate.kind != "filter":
                return f"{key} is a boundary: it is stated, never negated or or-ed"
            if term.op == "not" and not predicate.negatable:
                return f"{key} has no negated form"
    return None


def _reduction_problem(source: Source, reduction: Reduction, predicates: list[Predicate]) -> str | None:
    """Why the reduction does not fit the source and the terms, or None."""
    if not reduction.takes(source.entity):
        return f"{reduction.key} does not take {source.entity} items"
    measure = reduction.columns.get("m")
    if measure and any(p.kind == "boundary" and p.column == measure for p in predicates):
        return f"a boundary on {reduction.key}'s own measure"  # "the 3 longest of those at least 3:00 long": the cut decides
    return None


def _actions_problem(source: Source, reduction: Reduction, actions: list[Action]) -> str | None:
    """Why the actions do not fit the selection (or each other), or None."""
    if not actions:
        return "no action"
    if len({a.key for a in actions}) != len(actions) or len({a.writes for a in actions}) != len(actions):
        return "two actions write the same thing"
    for action in actions:
        if not action.fits(source, reduction):
            return f"{action.key} does not apply after {source.key} and {reduction.key}"
    if sum(a.creates for a in actions) > 1:
        return "two actions create"
    return None


def _conditions_problem(structure: Structure, reduction: Reduction, actions: list[Action]) -> str | None:
    """Why the structure states too few conditions to be a task, or None."""
    conditions = sum(len(t.keys) for t in structure.terms) + len(reduction.conditions())
    if conditions == 0:
        return "no condition"
    if conditions < 2 and not any(a.creates for a in actions):
        return "trivial: fewer than two conditions and no created id"
    return None


_CLASSES: dict[str, type[ComposedTemplate]] = {}


def grammar_for(domain_name: str) -> Grammar | None:
    """The domain's grammar (its parts module's GRAMMAR), or None when it has none."""
    module = getattr(get_domain(domain_name), "parts_module", None)
    if module is None:
        return None
    grammar = importlib.import_module(module).GRAMMAR
    if not isinstance(grammar, Grammar):
        raise TypeError(f"{module}.GRAMMAR is not a composition Grammar")
    return grammar


def composed_template(domain_name: str, name: str) -> Template | None:
    """The composed template called `name` (`Structure.name`), rebuilt from the name alone; None
    when the name is not a composed structure of this domain's grammar."""
    if not name.startswith(f"{PREFIX}{domain_name}:"):
        return None
    if name not in _CLASSES:
        grammar = grammar_for(domain_name)
        if grammar is None:
            return None
        try:
            _CLASSES[name] = template_class(grammar, parse_structure(domain_name, name[len(PREFIX) + len(domain_name) + 1 :]))
        except ValueError:
            return None
    return _CLASSES[name]()


# == sampling the grammar =====================================================================


@dataclass(frozen=True)
class Depth:
    """How deep compositions are: parts beyond the source (terms, a reduction other than "every",
    actions), between `low` and `high`."""

    low: int = 3
    high: int = 5

    @classmethod
    def parse(cls, text: str) -> Depth:
        """'3' or '2-5'; ValueError otherwise."""
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
        if match is None:
            raise ValueError(f"--depth {text!r}: give a number or a range such as 2-5")
        low = int(match[1])
        high = int(match[2]) if match[2] else low
        if not 2 <= low <= high <= 7:
            raise ValueError(f"--depth {text!r}: depths run from 2 to 7, low to high")
        return cls(low, high)


@dataclass(frozen=True)
class Bounds:
    """A certified task's difficulty beyond its depth: how many stated conditions bite, and how
    many calls its reference solution makes. `None`: no bound."""

    conditions: tuple[int, int] | None = None
    calls: tuple[int, int] | None = None

    @staticmethod
    def parse_range(option: str, text: str | None) -> tuple[int, int] | None:
        """'4' or '2-6' as (low, high); None for no text; ValueError otherwise."""
        if text is None:
            return None
        match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
        if match is None or int(match[2] or match[1]) < int(match[1]):
            raise ValueError(f"{option} {text!r}: give a number or a range such as 2-6, low to high")
        return int(match[1]), int(match[2] or match[1])

    def refusal(self, task: Task) -> str | None:
        """Why the task is outside the bounds (a rejection reason), or None."""
        bites = biting_conditions(task.generator.get("bites") or [])
        if self.conditions and not self.conditions[0] <= bites <= self.conditions[1]:
            return "biting conditions out of --conditions"
        calls = len(task.reference_solution)
        if self.calls and not self.calls[0] <= calls <= self.calls[1]:
            return "reference length out of --calls"
        return None


def sample_structure(grammar: Grammar, rng: Random, depth: Depth) -> Structure | None:
    """One structure drawn from the grammar, or None when the draw does not fit together."""
    source = rng.choices(grammar.sources, weights=[s.weight for s in grammar.sources])[0]
    reduction = _sample_reduction(grammar, rng, source)
    if reduction is None:
        return None
    fitting = [a for a in grammar.actions if a.fits(source, reduction)]
    if not fitting:
        return None
    # Deeper structures are drawn more often: there are many more of them, so two seeds share few.
    depths = list(range(depth.low, depth.high + 1))
    want = rng.choices(depths, weights=[d - depth.low + 1 for d in depths])[0]
    actions = _sample_actions(rng, fitting)
    n_terms = want - len(actions) - (reduction.key != "every")
    if n_terms < 1:  # the selection is always filtered: unfiltered structures are few, and every seed would draw them
        return None
    predicates = [p for p in grammar.predicates if p.fits(source)]
    if len(predicates) < n_terms:
        return None
    terms = _sample_terms(rng, predicates, n_terms)
    actions.sort(key=lambda a: (not a.creates, a.key))  # a creating action first: the later ones use its id
    structure = Structure(grammar.domain, source.key, tuple(terms), reduction.key, tuple(a.key for a in actions))
    return None if structure_problem(grammar, structure) else structure


def _sample_reduction(grammar: Grammar, rng: Random, source: Source) -> Reduction | None:
    """A reduction that takes the source's items, or None when none does."""
    reductions = [r for r in grammar.reductions if r.takes(source.entity)]
    if not reductions:
        return None
    # "every" is one reduction among many for songs, the only one for some entities: drawn at
    # most half the time, so that computed results (top k, groups, averages) are common.
    reduction = rng.choice(reductions)
    if reduction.key == "every" and len(reductions) > 1 and rng.random() < 0.5:
        reduction = rng.choice([r for r in reductions if r.key != "every"])
    return reduction


def _sample_actions(rng: Random, fitting: list[Action]) -> list[Action]:
    """One or two of the fitting actions (unsorted)."""
    n_actions = 1 if len(fitting) == 1 or rng.random() < 0.65 else 2
    creating = [a for a in fitting if a.creates]
    # A created id used by later calls is its own capability: offered often where a write creates.
    if creating and rng.random() < CREATING_SHARE:
        first = rng.choice(creating)
        return [first, *rng.sample([a for a in fitting if a is not first], min(n_actions - 1, len(fitting) - 1))]
    return rng.sample(fitting, n_actions)


def _sample_terms(rng: Random, predicates: list[Predicate], n_terms: int) -> list[Term]:
    """`n_terms` terms over distinct predicates (some negated, some or-ed with a spare one), sorted."""
    chosen = rng.sample(predicates, n_terms)
    terms: list[Term] = []
    spare = [p for p in predicates if p not in chosen and p.kind == "filter"]
    for predicate in chosen:
        roll = rng.random()
        if predicate.negatable and roll < 0.25:
            terms.append(Term("not", (predicate.key,)))
        elif predicate.kind == "filter" and roll > 0.8 and spare:
            other = spare.pop(rng.randrange(len(spare)))
            terms.append(Term("or", tuple(sorted((predicate.key, other.key)))))
        else:
            terms.append(Term("is", (predicate.key,)))
    terms.sort(key=lambda t: t.canonical())
    return terms


def sample_structures(grammar: Grammar, seed: int, count: int, *, split: str = "public", depth: Depth | None = None) -> list[Structure]:
    """`count` distinct structures of the split, drawn with a seeded RNG (fewer when the grammar
    runs out)."""
    if split not in SPLITS:
        raise ValueError(f"--split {split!r}: one of {', '.join(SPLITS)}")
    depth = depth or Depth()
    rng = Random(f"compose:{grammar.domain}:{seed}:{split}")
    out: dict[str, Structure] = {}
    for _ in range(count * 200):
        if len(out) >= count:
            break
        structure = sample_structure(grammar, rng, depth)
        if structure is None or structure.canonical() in out:
            continue
        if is_private(structure, grammar) != (split == "private"):
            continue
        out[structure.canonical()] = structure
    return list(out.values())


# == composing ================================================================================

STRUCTURES_PER_TASK = 6  # structures offered per task asked for: some find no certifiable data
# A set is composed in this many shards (every SHARDS-th structure each), certified independently
# and merged in a fixed order: the tasks are the same whether one process or several run the shards.
SHARDS = 2
SPARE_PER_SHARD = 2  # tasks a shard makes beyond its share, for duplicates dropped at the merge


@dataclass(frozen=True)
class _ShardJob:
    domain: str
    index: int
    count: int
    seed: int
    split: str
    structures: tuple[str, ...]  # canonical forms
    avoid: tuple[Task, ...]
    world_seed: int | None
    max_per_structure: int
    bounds: Bounds = Bounds()


def _run_shard(job: _ShardJob, on_task: Callable[[], None] | None = None) -> GenerationReport:
    """One shard: its structures compiled to templates and certified by `generation.generate`."""
    grammar = grammar_for(job.domain)
    assert grammar is not None
    templates: list[Template] = [template_class(grammar, parse_structure(job.domain, s))() for s in job.structures]
    by_name = {t.name: t for t in templates}

    def annotate(task: Task) -> None:
        template = by_name[task.generator["template"]]
        assert isinstance(template, ComposedTemplate)
        phrasing = task.generator.get("phrasing")
        task.generator["kind"] = "composed"
        task.generator["split"] = job.split
        task.generator["structure"] = template.structure.tree()
        task.generator["skeleton"] = template.skeletons[phrasing] if isinstance(phrasing, int) else ""
        if on_task:
            on_task()

    return generate(
        job.domain,
        job.count,
        job.seed,
        templates=templates,
        id_prefix=f"shard{job.index}",
        max_per_template=job.max_per_structure,
        avoid=job.avoid,
        world_seed=job.world_seed,
        on_task=annotate,
        accept=job.bounds.refusal,
    )


def _shard_process(job: _ShardJob, queue: Any) -> None:
    """A shard in a process of its own: ticks and the report (or the error) go back on `queue`."""
    try:
        report = _run_shard(job, lambda: queue.put(("tick", job.index, None)))
    except Exception as exc:  # the parent reports it: a child's traceback would be lost
        queue.put(("error", job.index, f"{type(exc).__name__}: {exc}"))
        return
    queue.put(("done", job.index, report))


def _run_shards(jobs: list[_ShardJob], workers: int, on_tick: Callable[[], None]) -> list[GenerationReport]:
    if workers <= 1 or len(jobs) == 1:
        return [_run_shard(job, on_tick) for job in jobs]
    import multiprocessing
    import queue as queues

    context = multiprocessing.get_context("spawn")  # no forked copy of the caller's threads (a progress bar)
    channel = context.Queue()
    processes = [context.Process(target=_shard_process, args=(job, channel), daemon=True) for job in jobs]
    for process in processes:
        process.start()
    reports: dict[int, GenerationReport] = {}
    try:
        while len(reports) < len(jobs):
            try:
                kind, index, payload = channel.get(timeout=1.0)
            except queues.Empty:
                lost = [p for i, p in enumerate(processes) if i not in reports and not p.is_alive()]
                if lost:
                    raise RuntimeError(f"a composing process stopped (exit code {lost[0].exitcode})") from None
                continue
            if kind == "tick":
                on_tick()
            elif kind == "done":
                reports[index] = payload
            else:
                raise RuntimeError(f"composing shard {index} failed: {payload}")
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join()
    return [reports[i] for i in range(len(jobs))]


def compose(
    domain_name: str,
    count: int,
    seed: int,
    *,
    split: str = "public",
    depth: Depth | None = None,
    id_prefix: str | None = None,
    avoid: Iterable[Task] = (),
    world_seed: int | None = None,
    on_task: Callable[[Task], None] | None = None,
    on_progress: Callable[[], None] | None = None,
    max_per_structure: int = 1,
    workers: int = 1,
    bounds: Bounds = Bounds(),
) -> GenerationReport:
    """`count` certified composed tasks: structures sampled from the domain's grammar (seeded, of
    the split), each compiled to a template and certified by `generation.generate` (the same
    rejection rules, budgets and world pinning), in SHARDS shards run by up to `workers` processes
    and merged in a fixed order (duplicates across shards dropped), then numbered
    `<prefix>-NNNN`. Each task records its structure and phrasing skeleton. `bounds` keeps only
    tasks whose biting conditions and reference length are within them (besides `depth`, the
    difficulty a caller sets). `on_progress` ticks as shards certify tasks; `on_task` gets each
    final task, in order."""
    grammar = grammar_for(domain_name)
    if grammar is None:
        raise ValueError(f"the {domain_name} domain has no task grammar (no parts module)")
    structures = sample_structures(grammar, seed, count * STRUCTURES_PER_TASK, split=split, depth=depth)
    if not structures:
        raise ValueError(f"the {domain_name} grammar has no {split} structure of that depth")
    shards = min(SHARDS, len(structures))
    share = -(-count // shards) + (SPARE_PER_SHARD if shards > 1 else 0)
    avoided = tuple(avoid)
    jobs = [
        _ShardJob(
            domain_name,
            i,
            share,
            seed,
            split,
            tuple(s.canonical() for s in structures[i::shards]),
            avoided,
            world_seed,
            max_per_structure,
            bounds,
        )
        for i in range(shards)
    ]
    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1
        if on_progress and ticks <= count:
            on_progress()

    reports = _run_shards(jobs, workers, tick)
    merged = GenerationReport([])
    for report in reports:
        merged.rejected.update(report.rejected)
        merged.attempts += report.attempts
    schema = get_domain(domain_name).schema
    seen = SeenTasks()
    prefix = id_prefix or f"{domain_name}-{'p' if split == 'private' else 'c'}{seed}"
    for task in _interleaved([r.tasks for r in reports]):
        if len(merged.tasks) >= count:
            break
        if (
            query_key(task.query) in seen.queries
            or signature(task.expected_diff, schema) in seen.diffs
            or solution_signature(task.reference_solution) in seen.solutions
        ):
            merged.rejected["duplicate across shards"] += 1
            continue
        seen.add(task, schema)
        task.id = f"{prefix}-{len(merged.tasks) + 1:04d}"
        merged.tasks.append(task)
        if on_task:
            on_task(task)
    return merged


def _interleaved(lists: list[list[Task]]) -> Iterable[Task]:
    """The first of each list, then the second of each, and so on."""
    for i in range(max((len(items) for items in lists), default=0)):
        for items in lists:
            if i < len(items):
                yield items[i]


__all__ = [
    "PREFIX",
    "SPLITS",
    "Action",
    "ComposedTemplate",
    "Depth",
    "Drafting",
    "Entity",
    "Grammar",
    "Part",
    "Predicate",
    "Reduction",
    "Solving",
    "Source",
    "Structure",
    "Term",
    "compose",
    "composed_template",
    "grammar_for",
    "is_private",
    "parse_structure",
    "sample_structures",
    "template_class",
]

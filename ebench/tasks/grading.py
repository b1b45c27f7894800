"""Deterministic grading: a trial's net diff against the task's expected diff.

- Rows that existed in the world (updates, deletes) are matched by primary key.
- New rows are matched by content. Their generated ids mean nothing: a reference from a new row
  (or an update) to another new row is replaced by that row's canonical label, computed from its
  own content and, recursively, the rows it points at. So "create a playlist, add songs to it"
  matches whatever id the playlist got, as long as the songs point at *that* playlist.
- Order never matters (changes are multisets), volatile columns are ignored, values are exact.
- Pass means the two diffs are equal. The grade also lists missing, unexpected and wrong-valued
  changes, and precision/recall of row changes, to explain a failure.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator
from pydantic.json_schema import SkipJsonSchema

from ..engine.schema import Schema
from .diff import Diff, Op, RowChange
from .records import PositionalModel, trusted

_MAX_DEPTH = 12  # chains of new rows (a meeting, its participants, their schedule entries) are short
# Pairing a table's new rows: up to _SCAN rows, each is compared with each (an index costs more);
# above, a value more than _LARGE rows share is scored once per group of rows (see `_Similar`).
_SCAN = 16
_LARGE = 8


class WrongValue(PositionalModel):
    """A column the trial set to another value than expected. `old` (the world's value before the
    trial) is present for updates only, and may be null there."""

    # Made positionally as `WrongValue(table, key, column, expected, actual, op=..., old=...)`.

    model_config = ConfigDict(extra="forbid", frozen=True)
    _positional: ClassVar[tuple[str, ...]] = ("table", "key", "column", "expected", "actual", "op", "old")

    table: str
    op: Op = "update"
    key: dict[str, Any]
    column: str
    expected: Any = None
    actual: Any = None
    old: Any = None

    if TYPE_CHECKING:

        def __init__(
            self, table: str, key: dict[str, Any], column: str, expected: Any = None, actual: Any = None, op: Op = "update", old: Any = None
        ) -> None: ...

    @model_serializer(mode="wrap")
    def _old_for_updates(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if self.op != "update":
            data.pop("old", None)
        return data

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


class Grade(PositionalModel):
    """A trial's grade as a session's end event records it: the row counts, precision and recall of
    the row changes (4 places), the missing, unexpected and wrong-valued changes, and a note."""

    # Made positionally as `Grade(passed, expected_rows, actual_rows, matched_rows, missing,
    # unexpected, wrong, note)`: precision and recall follow from the counts when not given. Read
    # back, keys an older ebench wrote that this one does not know are ignored.

    model_config = ConfigDict(extra="ignore")
    _positional: ClassVar[tuple[str, ...]] = (
        "passed",
        "expected_rows",
        "actual_rows",
        "matched_rows",
        "missing",
        "unexpected",
        "wrong",
        "note",
    )

    passed: bool
    expected_rows: int
    actual_rows: int
    matched_rows: int
    precision: float
    recall: float
    missing: list[RowChange] = []
    unexpected: list[RowChange] = []
    wrong: list[WrongValue] = []
    note: str = ""
    # The expected changes the trial made exactly (filled by `explain`; not part of the record).
    matched: SkipJsonSchema[list[RowChange]] = Field(default_factory=list, exclude=True, repr=False)

    if TYPE_CHECKING:

        def __init__(
            self,
            passed: bool,
            expected_rows: int,
            actual_rows: int,
            matched_rows: int,
            missing: Sequence[RowChange] = (),
            unexpected: Sequence[RowChange] = (),
            wrong: Sequence[WrongValue] = (),
            note: str = "",
            *,
            precision: float = ...,
            recall: float = ...,
            matched: Sequence[RowChange] = (),
        ) -> None: ...

    @model_validator(mode="before")
    @classmethod
    def _rates(cls, data: Any) -> Any:
        """Made from the counts (not read back): precision and recall follow from them."""
        if isinstance(data, dict) and ("precision" not in data or "recall" not in data):
            matched, actual, expected = (data.get(name) for name in ("matched_rows", "actual_rows", "expected_rows"))
            if isinstance(matched, int) and isinstance(actual, int) and isinstance(expected, int):
                data = {
                    "precision": round(matched / actual, 4) if actual else 1.0,
                    "recall": round(matched / expected, 4) if expected else 1.0,
                    **data,
                }
        return data

    def record(self) -> Grade:
        """The grade as a session's end event records it (itself: kept for older callers)."""
        return self

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"{verdict}: {self.matched_rows}/{self.expected_rows} expected row changes matched, "
            f"{len(self.missing)} missing, {len(self.unexpected)} unexpected, {len(self.wrong)} wrong values"
        )


def _made_grade(
    passed: bool,
    expected_rows: int,
    actual_rows: int,
    matched_rows: int,
    missing: list[RowChange] | None = None,
    unexpected: list[RowChange] | None = None,
    wrong: list[WrongValue] | None = None,
    note: str = "",
    matched: list[RowChange] | None = None,
) -> Grade:
    """A grade as grading makes it, of values it computed: not validated (validating a grade's
    lists cost more than a small diff's whole verdict)."""
    values = {
        "passed": passed,
        "expected_rows": expected_rows,
        "actual_rows": actual_rows,
        "matched_rows": matched_rows,
        "precision": round(matched_rows / actual_rows, 4) if actual_rows else 1.0,
        "recall": round(matched_rows / expected_rows, 4) if expected_rows else 1.0,
        "missing": missing if missing is not None else [],
        "unexpected": unexpected if unexpected is not None else [],
        "wrong": wrong if wrong is not None else [],
        "note": note,
        "matched": matched if matched is not None else [],
    }
    return trusted(Grade, values)


def _wrong_value(table: str, key: dict[str, Any], column: str, expected: Any, actual: Any, op: Op, old: Any = None) -> WrongValue:
    """A wrong value as grading finds it: not validated (a failed trial may have thousands)."""
    values = {"table": table, "op": op, "key": key, "column": column, "expected": expected, "actual": actual, "old": old}
    return trusted(WrongValue, values)


GradeRecord = Grade  # the name `ebench.api` exported for a recorded grade before the two were one class


@dataclass(frozen=True)
class _TableFacts:
    """What grading asks of one table, looked up once per resolver (the schema's properties
    recompute their answers on every use, and a grade asks thousands of times)."""

    generated_key: str | None  # the key column SQLite allocates, if any
    # An inserted row's comparable columns (no generated id, no volatile column) in name order,
    # each with the table whose generated id it references (or None).
    compared: tuple[tuple[str, str | None], ...]
    volatile: frozenset[str]
    new_refs: dict[str, str | None]  # every column -> the table whose generated id it references, or None
    links: tuple[tuple[str, str], ...]  # (column, referenced table) of foreign keys to that table's first key column


def _table_facts(schema: Schema, name: str) -> _TableFacts:
    table = schema.table(name)
    generated_key = table.key[0] if table.has_generated_id else None
    volatile = frozenset(table.volatile_columns)
    new_refs: dict[str, str | None] = {}
    for col in table.columns:
        target = schema.table(col.ref_table) if col.ref_table else None
        generated = target is not None and target.has_generated_id and col.ref_column == target.key[0]
        new_refs[col.name] = col.ref_table if generated else None
    links = []
    for fk in table.foreign_keys:
        ref_key = schema.table(fk.ref_table).key
        if ref_key and ref_key[0] == fk.ref_column:
            links.append((fk.column, fk.ref_table))
    skip = volatile | ({generated_key} if generated_key else set())
    compared = tuple((c, new_refs[c]) for c in sorted(table.column_names) if c not in skip)
    return _TableFacts(generated_key, compared, volatile, new_refs, tuple(links))


# A schema is frozen: its tables' facts are made once (each grade's two resolvers asked for them
# again, a sixth of a small trial's grade). Keyed by identity, the schema kept so its id is not reused.
_SCHEMA_FACTS: dict[int, tuple[Schema, dict[str, _TableFacts]]] = {}
_SCHEMAS_KEPT = 64  # domains' schemas, and the ones tests and composed worlds build


def _facts_of(schema: Schema) -> dict[str, _TableFacts]:
    entry = _SCHEMA_FACTS.get(id(schema))
    if entry is None or entry[0] is not schema:
        if len(_SCHEMA_FACTS) >= _SCHEMAS_KEPT:
            _SCHEMA_FACTS.clear()
        entry = _SCHEMA_FACTS[id(schema)] = (schema, {})
    return entry[1]


class _Resolver:
    """Canonical labels of one diff's new rows, and resolved views of its changes. Labels are
    kept for the resolver's life (one grade): a grade asks for the same ones many times."""

    def __init__(self, diff: Diff, schema: Schema) -> None:
        self.schema = schema
        self._facts = _facts_of(schema)
        self.new_rows: dict[tuple[str, Any], RowChange] = {}
        self.new_inserts = [c for c in diff if c.op == "insert"]
        for change in diff:
            key = self.facts(change.table).generated_key  # SchemaError for an unknown table
            if change.op == "insert" and key is not None:
                self.new_rows[(change.table, change.key[key])] = change
        self._labels: dict[tuple[str, Any], str] = {}
        # id(change) -> (change, its label), for rows without a generated id; the change is kept
        # so that its id cannot be reused while the entry exists.
        self._insert_labels: dict[int, tuple[RowChange, str]] = {}

    def facts(self, table_name: str) -> _TableFacts:
        facts = self._facts.get(table_name)
        if facts is None:
            facts = self._facts[table_name] = _table_facts(self.schema, table_name)
        return facts

    def value(self, table_name: str, column: str, value: Any, depth: int = 0) -> Any:
        """A column's value with a reference to a new row replaced by that row's label."""
        try:
            ref = self.facts(table_name).new_refs[column]
        except KeyError:
            self.schema.table(table_name).column(column)  # raises SchemaError, naming the column
            raise
        if ref is not None and value is not None and (ref, value) in self.new_rows:
            return ("new", self.label(ref, value, depth + 1))
        return value

    def content(self, change: RowChange, depth: int = 0) -> list[tuple[str, Any]]:
        """The comparable columns of an inserted row (no generated id, no volatile column) with
        their values, in column name order: what its label is made of."""
        assert change.new is not None
        new, new_rows = change.new, self.new_rows
        content = []
        for column, ref in self.facts(change.table).compared:  # `value`, inlined: the grade's hottest loop
            value = new[column]
            if ref is not None and value is not None and (ref, value) in new_rows:
                value = ("new", self.label(ref, value, depth + 1))
            content.append((column, value))
        return content

    def label(self, table_name: str, ident: Any, depth: int = 0) -> str:
        cached = self._labels.get((table_name, ident))
        if cached is not None:
            return cached
        if depth > _MAX_DEPTH:
            return f"{table_name}:deep"  # a reference cycle among new rows: stop, deterministically
        change = self.new_rows[(table_name, ident)]
        digest = hashlib.sha1(repr((table_name, self.content(change, depth))).encode()).hexdigest()[:16]
        label = f"{table_name}:{digest}"
        self._labels[(table_name, ident)] = label
        return label

    def insert_label(self, change: RowChange) -> str:
        # A row without a generated id: once computed, its label cannot change (every label its
        # content holds is cached by then, see `label`), and `incoming` asks again.
        cached = self._insert_labels.get(id(change))
        if cached is not None:
            return cached[1]
        key = self.facts(change.table).generated_key
        if key is not None:
            return self.label(change.table, change.key[key])
        label = f"{change.table}:" + hashlib.sha1(repr(self.content(change)).encode()).hexdigest()[:16]
        self._insert_labels[id(change)] = (change, label)
        return label

    def update_values(self, change: RowChange) -> dict[str, Any]:
        assert change.new is not None
        volatile = self.facts(change.table).volatile
        return {c: self.value(change.table, c, v) for c, v in change.new.items() if c not in volatile}

    def incoming(self) -> Counter[Any]:
        """The multiset, over new rows, of (row's label, sorted labels of the new rows pointing at it).
        It tells apart new rows whose own content is equal (twins) but whose children differ."""
        children: dict[tuple[str, Any], list[tuple[Any, ...]]] = {ident: [] for ident in self.new_rows}
        for change in self.new_inserts:
            for column, ref_table in self.facts(change.table).links:
                target = (ref_table, change.new[column])  # type: ignore[index]
                if target in children:
                    children[target].append((change.table, column, self.insert_label(change)))
        return Counter((self.label(*ident), tuple(sorted(kids))) for ident, kids in children.items())


def _key(change: RowChange) -> tuple[Any, ...]:
    return (change.table, tuple(sorted(change.key.items())))


def grade(expected: Diff, actual: Diff, schema: Schema) -> Grade:
    if _equal(expected, actual, schema):
        n = len(expected)
        return _made_grade(True, n, len(actual), n)
    return _explain(expected, actual, schema)


def explain(expected: Diff, actual: Diff, schema: Schema) -> Grade:
    """The grade with every change accounted for, pass or fail: what the live diff shows (matched,
    missing, unexpected and wrong-valued changes). The verdict is `grade`'s."""
    result = _explain(expected, actual, schema)
    if _equal(expected, actual, schema):
        result.passed, result.note = True, ""
    return result


def _equal(expected: Diff, actual: Diff, schema: Schema) -> bool:
    """The verdict: the same existing-row changes by key, the same multiset of new rows by label,
    and the same links between new rows."""
    exp, act = _Resolver(expected, schema), _Resolver(actual, schema)
    if len(expected) != len(actual):
        return False

    def existing(resolver: _Resolver, diff: Diff) -> dict[Any, Any]:
        return {_key(c): (c.op, resolver.update_values(c) if c.op == "update" else None) for c in diff if c.op != "insert"}

    def inserts(resolver: _Resolver, diff: Diff) -> Counter[Any]:
        return Counter(resolver.insert_label(c) for c in diff if c.op == "insert")

    return (
        existing(exp, expected) == existing(act, actual)
        and inserts(exp, expected) == inserts(act, actual)
        and exp.incoming() == act.incoming()
    )


@dataclass
class _Findings:
    """What `_explain` found so far, change by change."""

    missing: list[RowChange] = field(default_factory=list)
    unexpected: list[RowChange] = field(default_factory=list)
    wrong: list[WrongValue] = field(default_factory=list)
    exact: list[RowChange] = field(default_factory=list)


Translate = Callable[[str, str, Any], Any]  # (table, column, value) -> value with new-row references paired
Content = dict[str, Any]  # a new row's comparable columns


def _explain(expected: Diff, actual: Diff, schema: Schema) -> Grade:
    """A failed trial, change by change: new rows are paired first, and the pairs found translate
    the references of the existing rows' changes, compared next."""
    found = _Findings()
    translate = _pair_new_rows(expected, actual, schema, found)
    _compare_existing_rows(expected, actual, schema, translate, found)
    note = "" if found.missing or found.unexpected or found.wrong else "new rows match one by one, but their links to other new rows differ"
    return _made_grade(False, len(expected), len(actual), len(found.exact), found.missing, found.unexpected, found.wrong, note, found.exact)


def _pair_new_rows(expected: Diff, actual: Diff, schema: Schema, found: _Findings) -> Translate:
    """Pair new rows table by table, parents first: rows equal once references to already-paired
    new rows are translated, then the most similar rows (reported with their wrong values); the
    pairs found translate the references of the next tables. Returns that translation."""
    exp_new = {
        (c.table, c.key[schema.table(c.table).key[0]]) for c in expected if c.op == "insert" and schema.table(c.table).has_generated_id
    }
    paired: dict[tuple[str, Any], Any] = {}  # (table, expected new id) -> actual new id

    def translate(table_name: str, column: str, value: Any) -> Any:
        col = schema.table(table_name).column(column)
        if col.ref_table and (col.ref_table, value) in exp_new:
            return paired.get((col.ref_table, value), ("unpaired new row", value))
        return value

    def comparable(change: RowChange, translated: bool) -> dict[str, Any]:
        table = schema.table(change.table)
        skip = set(table.volatile_columns) | ({table.key[0]} if table.has_generated_id else set())
        row = change.new or {}
        return {c: translate(change.table, c, row[c]) if translated else row[c] for c in table.column_names if c not in skip}

    by_table_exp: dict[str, list[RowChange]] = defaultdict(list)
    by_table_act: dict[str, list[RowChange]] = defaultdict(list)
    for change in expected:
        if change.op == "insert":
            by_table_exp[change.table].append(change)
    for change in actual:
        if change.op == "insert":
            by_table_act[change.table].append(change)

    for table_name in schema.fill_order():
        table = schema.table(table_name)
        e_rows = [(comparable(c, True), c) for c in by_table_exp.get(table_name, [])]
        a_rows = [(comparable(c, False), c) for c in by_table_act.get(table_name, [])]
        pairs = _pair_table(table_name, e_rows, a_rows, found)
        if table.has_generated_id:
            for e_row, a_row in pairs:
                paired[(table_name, e_row.key[table.key[0]])] = a_row.key[table.key[0]]
    return translate


def _pair_table(
    table_name: str, e_rows: list[tuple[Content, RowChange]], a_rows: list[tuple[Content, RowChange]], found: _Findings
) -> list[tuple[RowChange, RowChange]]:
    """Pair one table's new rows: equal ones first, then each remaining expected row with the most
    similar actual row (its differing columns are wrong values) unless too different (missing).
    Actual rows left over are unexpected."""
    e_rows = sorted(e_rows, key=_content_order)
    sorted_a = sorted(a_rows, key=_content_order)
    if not e_rows or not sorted_a:  # nothing to pair (most tables): every row is missing or unexpected
        found.missing.extend(change for _, change in e_rows)
        found.unexpected.extend(change for _, change in sorted_a)
        return []
    pairs, rest_e, taken = _equal_pairs(e_rows, sorted_a, found)
    left = [index for index in range(len(sorted_a)) if index not in taken]
    similar = _Similar([sorted_a[index][0] for index in left]) if rest_e and left else None
    for content, change in rest_e:
        best = similar.pop_most_similar(content) if similar is not None else None
        if best is None:  # no row left, or too different to be the same row
            found.missing.append(change)
            continue
        a_content, other = sorted_a[left[best]]
        pairs.append((change, other))
        for column in sorted(content):
            if content[column] != a_content[column]:
                # References show the trial's id of the paired new row, so both sides read alike.
                found.wrong.append(_wrong_value(table_name, change.key, column, _shown(content[column]), a_content[column], "insert"))
    kept = similar.left() if similar is not None else range(len(left))
    found.unexpected.extend(sorted_a[left[position]][1] for position in kept)
    return pairs


def _equal_pairs(
    e_rows: list[tuple[Content, RowChange]], sorted_a: list[tuple[Content, RowChange]], found: _Findings
) -> tuple[list[tuple[RowChange, RowChange]], list[tuple[Content, RowChange]], set[int]]:
    """The expected rows equal to an actual row, paired (each takes the first equal actual row left,
    in sorted order); the expected rows left; the actual rows taken. Found through a multiset of
    contents, linear in the rows where scanning the list was quadratic; a few rows, and contents
    holding a value that cannot be hashed, are scanned as before."""
    equal: dict[frozenset[Any], deque[int]] = defaultdict(deque)
    unhashable: list[int] = []
    for position, (a_content, _) in enumerate(sorted_a):
        key = _content_key(a_content) if len(sorted_a) > _SCAN else None
        if key is None:
            unhashable.append(position)
        else:
            equal[key].append(position)
    pairs: list[tuple[RowChange, RowChange]] = []
    rest_e: list[tuple[Content, RowChange]] = []
    taken: set[int] = set()
    for content, change in e_rows:
        key = _content_key(content) if len(sorted_a) > _SCAN else None
        found_at: int | None
        if key is None:
            found_at = next((i for i in unhashable if i not in taken and sorted_a[i][0] == content), None)
        else:
            same = equal.get(key)
            found_at = same.popleft() if same else None
        if found_at is None:
            rest_e.append((content, change))
        else:
            taken.add(found_at)
            pairs.append((change, sorted_a[found_at][1]))
            found.exact.append(change)
    return pairs, rest_e, taken


class _Similar:
    """The actual rows left to pair in one table, and for an expected row the most similar of them:
    the most columns equal, the first in order among equals, none when fewer than half the columns
    are equal. Comparing each expected row with every row left made a table of wrong rows
    quadratic; here only rows sharing a value with the expected row are visited, except for values
    that many rows share ("large" values), which are scored once per group of rows with the same
    large values (few groups: a parent's id, a status). A few rows, or rows holding a value that
    cannot be hashed (a list), are compared one by one, as they were."""

    def __init__(self, rows: list[Content]) -> None:
        self.rows = rows
        self.alive = [True] * len(rows)
        self.count = len(rows)
        self.indexed = len(rows) > _SCAN and all(_hashable(row) for row in rows)
        if not self.indexed:
            return
        columns = list(rows[0])
        counts: dict[str, Counter[Any]] = {c: Counter(row[c] for row in rows) for c in columns}
        self.large = {c: {v for v, n in counts[c].items() if n > _LARGE} for c in columns}
        self.grouped = [c for c in columns if self.large[c]]
        # Small values: (column, value) -> the rows holding it, in order.
        self.holders: dict[tuple[str, Any], list[int]] = defaultdict(list)
        # Large values: the rows by their large values (a small value reads as _SMALL), in order.
        self.groups: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        self.group_of: list[tuple[Any, ...]] = []
        for index, row in enumerate(rows):
            for c in columns:
                if row[c] not in self.large[c]:
                    self.holders[(c, row[c])].append(index)
            signature = tuple(row[c] if row[c] in self.large[c] else _SMALL for c in self.grouped)
            self.groups[signature].append(index)
            self.group_of.append(signature)

    def left(self) -> list[int]:
        """The rows not taken, in order."""
        return [index for index, alive in enumerate(self.alive) if alive]

    def pop_most_similar(self, content: Content) -> int | None:
        """The most similar row left, taken; None when none is similar enough (it stays)."""
        if not self.count:
            return None
        if self.indexed and _hashable(content):
            score, best = self._best_indexed(content)
        else:
            score, best = max((sum(content[c] == v for c, v in self.rows[i].items()), -i) for i in self.left())
            best = -best
        if score * 2 < len(content):
            return None
        self._take(best)
        return best

    def _best_indexed(self, content: Content) -> tuple[int, int]:
        # Equal small values, counted per row that holds them.
        extra: dict[int, int] = defaultdict(int)
        for c, value in content.items():
            if value not in self.large.get(c, ()):
                for index in self.holders.get((c, value), ()):
                    extra[index] += 1
        wanted = [(position, content[c]) for position, c in enumerate(self.grouped) if content[c] in self.large[c]]
        best_score, best = -1, -1
        for signature, members in self.groups.items():
            base = sum(1 for position, value in wanted if signature[position] == value)
            # The group's first row no small value touched scores `base`; touched rows score more.
            for index in members:
                if index not in extra:
                    if base > best_score or (base == best_score and index < best):
                        best_score, best = base, index
                    break
        for index, more in extra.items():
            signature = self.group_of[index]
            score = more + sum(1 for position, value in wanted if signature[position] == value)
            if score > best_score or (score == best_score and index < best):
                best_score, best = score, index
        return best_score, best

    def _take(self, index: int) -> None:
        self.alive[index] = False
        self.count -= 1
        if self.indexed:
            row = self.rows[index]
            for c in row:
                if row[c] not in self.large[c]:
                    self.holders[(c, row[c])].remove(index)
            members = self.groups[self.group_of[index]]
            members.remove(index)
            if not members:
                del self.groups[self.group_of[index]]


_SMALL = object()  # in a group's signature: a value few rows share


def _hashable(content: Content) -> bool:
    try:
        hash(tuple(content.values()))
    except TypeError:
        return False
    return True


def _content_order(item: tuple[Content, RowChange]) -> str:
    """The order rows are paired in: by their content, deterministically."""
    return repr(sorted(item[0].items()))


def _content_key(content: Content) -> frozenset[Any] | None:
    """A content as a hashable key, equal exactly when the contents are (None when a value cannot
    be hashed)."""
    try:
        return frozenset(content.items())
    except TypeError:
        return None


def _compare_existing_rows(expected: Diff, actual: Diff, schema: Schema, translate: Translate, found: _Findings) -> None:
    """Compare the changes of rows that existed, by key, references to new rows translated."""
    exp_existing = {_key(c): c for c in expected if c.op != "insert"}
    act_existing = {_key(c): c for c in actual if c.op != "insert"}
    for key in sorted(exp_existing.keys() | act_existing.keys(), key=repr):
        e, a = exp_existing.get(key), act_existing.get(key)
        if e is None:
            assert a is not None
            found.unexpected.append(a)
        elif a is None:
            found.missing.append(e)
        elif e.op != a.op:
            found.missing.append(e)
            found.unexpected.append(a)
        elif e.op == "delete":
            found.exact.append(e)
        else:
            volatile = set(schema.table(e.table).volatile_columns)
            ev = {c: translate(e.table, c, v) for c, v in (e.new or {}).items() if c not in volatile}
            av = {c: v for c, v in (a.new or {}).items() if c not in volatile}
            if ev == av:
                found.exact.append(e)
                continue
            for column in sorted(ev.keys() | av.keys()):
                if ev.get(column, _UNCHANGED) != av.get(column, _UNCHANGED):
                    # A column one side left alone ends with its original value (the other's old).
                    found.wrong.append(
                        _wrong_value(
                            e.table,
                            e.key,
                            column,
                            _shown(ev[column]) if column in ev else _final(e, a, column),
                            _final(a, e, column),
                            "update",
                            _original(a, e, column),
                        )
                    )


_UNCHANGED = object()


def _shown(value: Any) -> Any:
    if isinstance(value, tuple):  # a reference to an expected new row nothing was paired with
        return f"<the new row with expected id {value[1]}, which the trial did not create>"
    return value


def _original(change: RowChange, other: RowChange, column: str) -> Any:
    """A column's value in the world before either change (whichever of the two touched it knows)."""
    for side in (change, other):
        if side.old is not None and column in side.old:
            return side.old[column]
    return None


def _final(change: RowChange, other: RowChange, column: str) -> Any:
    """The value a column ends with after `change`; if it left the column alone, the original."""
    if change.new is not None and column in change.new:
        return change.new[column]
    return (other.old or {}).get(column)


def signature(diff: Diff, schema: Schema) -> str:
    """A canonical fingerprint of a diff: equal for diffs that grade as equal (used to find
    duplicate tasks without comparing every pair)."""
    resolver = _Resolver(diff, schema)
    parts: list[tuple[str, ...]] = []
    for change in diff:
        if change.op == "insert":
            parts.append(("insert", resolver.insert_label(change)))
        else:
            values = resolver.update_values(change) if change.op == "update" else None
            parts.append((change.op, repr(_key(change)), repr(sorted((values or {}).items()))))
    parts.sort()
    return hashlib.sha1(repr((parts, sorted(resolver.incoming().items()))).encode()).hexdigest()

"""Reusable kinds of composition parts: the predicates, reductions and writes most grammars need.

A domain's parts module (composition.py) configures these with its SQL, its tools' field names and
its wording, and writes its own parts only where a domain does something these do not (a new
playlist and its songs, a chained read). Each keeps the two halves in step: the SQL half decides
on rows the draft read with SQL, the public half on items the tools listed, through the
`PublicAPI` helpers that make the lazy variants.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from .composition import ANY, Action, Drafting, Predicate, Reduction, Row, Solving
from .public import Condition, Lazy
from .spec import Step
from .template_api import NoTarget

# A share of the candidates a stated category should keep: neither almost none nor almost all.
_SPLIT = (0.1, 0.9)


def _splits(n_in: int, n: int) -> bool:
    return 0 < n_in < n and _SPLIT[0] <= n_in / n <= _SPLIT[1]


class Equals(Predicate):
    """A category: the attribute equals the stated value ("in Korean", "bands"). `values`: the values
    a request may state (all the candidates' values when None); `words`: how each is said."""

    def __init__(
        self,
        key: str,
        entity: str,
        column: str,
        attribute: str | Callable[[Solving, Row], Any],
        phrases: Sequence[str],
        *,
        negated: Sequence[str] = (),
        values: Callable[[Drafting], Sequence[Any]] | None = None,
        words: dict[Any, str] | Callable[[Any], str] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(key, entity, column, attribute, phrases, negated=negated, **options)
        self._values = values
        self._words = words

    def choose(self, d: Drafting, attrs: list[Any]) -> Any:
        allowed = set(self._values(d)) if self._values else None
        counts: dict[Any, int] = {}
        for attr in attrs:
            if attr is not None and (allowed is None or attr in allowed):
                counts[attr] = counts.get(attr, 0) + 1
        good = sorted(v for v, n in counts.items() if _splits(n, len(attrs)))
        return d.choice(good, f"{self.key} value")

    def show(self, value: Any) -> str:
        if callable(self._words):
            return self._words(value)
        if isinstance(self._words, dict):
            return self._words.get(value, str(value))
        return str(value)


class Flag(Predicate):
    """A yes/no attribute or relation ("whose main artist I follow"): no value is stated."""

    def choose(self, d: Drafting, attrs: list[Any]) -> Any:
        if not _splits(sum(bool(a) for a in attrs), len(attrs)) and len(attrs) > 2:
            raise NoTarget(f"{self.key} splits nothing")
        return None


class Threshold(Predicate):
    """A boundary: the attribute `op` the stated value ("released on or after June 3", "at most
    4:00"). `candidates(attrs)`: the values a person would state (round numbers, or the data's own
    dates, where a candidate lands on the boundary); the draft takes one that splits the candidates."""

    def __init__(
        self,
        key: str,
        entity: str,
        column: str,
        attribute: str | Callable[[Solving, Row], Any],
        phrases: Sequence[str],
        *,
        op: str,
        candidates: Callable[[list[Any]], Sequence[Any]] | None = None,
        show: Callable[[Any], str] | None = None,
        **options: Any,
    ) -> None:
        super().__init__(key, entity, column, attribute, phrases, kind="boundary", op=op, **options)
        self._candidates = candidates
        self._show = show

    def choose(self, d: Drafting, attrs: list[Any]) -> Any:
        present = sorted(a for a in attrs if a is not None)
        options = sorted(set(self._candidates(present) if self._candidates else present))
        good = [v for v in options if _splits(self._kept(present, v), len(attrs))]
        return d.choice(good, f"{self.key} value")

    def _kept(self, ordered: list[Any], value: Any) -> int:
        """How many of the sorted attributes the boundary keeps at `value`."""
        if self.op == ">=":
            return len(ordered) - bisect.bisect_left(ordered, value)
        if self.op == ">":
            return len(ordered) - bisect.bisect_right(ordered, value)
        if self.op == "<=":
            return bisect.bisect_right(ordered, value)
        return bisect.bisect_left(ordered, value)

    def show(self, value: Any) -> str:
        return self._show(value) if self._show else str(value)


def _rank(rows: list[Row], measure: str, tie: str, descending: bool, tie_descending: bool) -> list[Row]:
    """`rows` best first by `measure`, then `tie` (stable sorts, so each key keeps its direction)."""
    ordered = sorted(rows, key=lambda r: r[tie], reverse=tie_descending)
    return sorted(ordered, key=lambda r: r[measure], reverse=descending)


class Every(Reduction):
    """Every kept item: the actions apply to each."""

    def __init__(self, key: str = "every") -> None:
        super().__init__(
            key,
            ANY,
            ANY,
            np=("all the <sel>", "every one of the <sel>", "each of the <sel>"),
            subject=("each one", "every one of them", "all of them"),
            take=("every one of them", "all of them", "each one"),
            keeps_items=True,
        )

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        return [r["id"] for r in rows]

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        return list(items)


class TopK(Reduction):
    """The k best items by a measure, ties broken by a second one the request names (a tie of both
    across the cut is refused by the draft). `k`: 1 gives a single result ("the one that...")."""

    def __init__(
        self,
        key: str,
        entity: str,
        *,
        measure: tuple[str, str],
        tie: tuple[str, str],
        np: Sequence[str],
        subject: Sequence[str],
        take: Sequence[str],
        descending: bool = True,
        tie_descending: bool = True,
        k: Sequence[int] = (2, 3, 4, 5, 6),
        private: bool = False,
    ) -> None:
        single = tuple(k) == (1,)
        super().__init__(
            key,
            entity,
            entity,
            np,
            subject,
            take,
            plural=not single,
            keeps_items=True,
            columns={"m": measure[0], "t": tie[0]},
            private=private,
        )
        self.measure_field, self.tie_field = measure[1], tie[1]
        self.descending, self.tie_descending = descending, tie_descending
        self.k_choices = tuple(k)

    def conditions(self) -> tuple[Condition, ...]:
        return (Condition("r", "ranking", tie_break_stated=True),)

    def stated_keys(self) -> tuple[str, ...]:
        return () if self.k_choices == (1,) else ("r_k",)

    def _k(self, d: Drafting) -> int:
        return int(d.stated.get("r_k", 1))

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        ranked = _rank(rows, "r_m", "r_t", self.descending, self.tie_descending)
        fits = [k for k in self.k_choices if len(ranked) > k and _key(ranked[k - 1]) != _key(ranked[k])]
        k = d.choice(fits, "clean top-k cut")
        if self.k_choices != (1,):
            d.state("r_k", k)

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        ranked = [r["id"] for r in _rank(rows, "r_m", "r_t", self.descending, self.tie_descending)]
        k = self._k(d)
        if lazy.condition == "r":
            return ranked if lazy.mode == "ignore" else ranked[: k + 1]
        return ranked[:k]

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        ordered = sorted(items, key=lambda i: i[self.tie_field], reverse=self.tie_descending)
        ranked = sorted(ordered, key=lambda i: i[self.measure_field], reverse=self.descending)
        k = int(s.stated.get("r_k", 1))
        return list(s.api.top("r", ranked, k, lambda i: (i[self.measure_field], i[self.tie_field])))


def _key(row: Row) -> tuple[Any, Any]:
    return (row["r_m"], row["r_t"])


class GroupThreshold(Reduction):
    """Groups of the kept items (by a key such as the main artist) whose count, or sum of a measure,
    reaches a stated threshold: the result is the groups (their ids, as `out_field` items). `scale`:
    the stated value times `scale` is the bound (minutes stated, seconds compared)."""

    def __init__(
        self,
        key: str,
        entity: str,
        out: str,
        *,
        group: tuple[str, str],
        out_field: str,
        np: Sequence[str],
        subject: Sequence[str],
        take: Sequence[str],
        summed: tuple[str, str] | None = None,
        thresholds: Sequence[int] = (2, 3, 4, 5),
        scale: int = 1,
        private: bool = False,
    ) -> None:
        columns = {"g": group[0]} | ({"v": summed[0]} if summed else {})
        super().__init__(key, entity, out, np, subject, take, columns=columns, private=private)
        self.group_field, self.out_field = group[1], out_field
        self.summed_field = summed[1] if summed else None
        self.thresholds, self.scale = tuple(thresholds), scale

    def conditions(self) -> tuple[Condition, ...]:
        return (Condition("r", "boundary", capability="aggregation_computation"),)

    def stated_keys(self) -> tuple[str, ...]:
        return ("r_n",)

    def _totals(self, rows: list[Row]) -> dict[Any, float]:
        totals: dict[Any, float] = {}
        for r in rows:
            if r["r_g"] is not None:
                totals[r["r_g"]] = totals.get(r["r_g"], 0) + (r["r_v"] if self.summed_field else 1)
        return totals

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        totals = self._totals(rows)
        good = [n for n in self.thresholds if 0 < sum(t >= n * self.scale for t in totals.values()) < len(totals)]
        d.state("r_n", d.choice(good, "group threshold"))

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        bound = d.stated["r_n"] * self.scale
        mode = lazy.mode if lazy.condition == "r" else None
        totals = self._totals(rows)
        if mode == "ignore":
            return sorted(totals)
        if mode == "off_by_one":  # "more than" read for "at least"
            return sorted(g for g, t in totals.items() if t > bound)
        return sorted(g for g, t in totals.items() if t >= bound)

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        totals: dict[Any, float] = {}
        for item in items:
            group = item.get(self.group_field)
            if group is not None:
                totals[group] = totals.get(group, 0) + (item[self.summed_field] if self.summed_field else 1)
        bound = s.stated["r_n"] * self.scale
        return [{self.out_field: g} for g in sorted(totals) if s.api.compare("r", totals[g], ">=", bound)]


class GroupTop(Reduction):
    """The k groups of the kept items with the most items (the main artists with the most songs
    among them), ties broken by the group's name as the request says; k = 1: the single one."""

    def __init__(
        self,
        key: str,
        entity: str,
        out: str,
        *,
        group: tuple[str, str],
        name: tuple[str, str],
        out_field: str,
        np: Sequence[str],
        subject: Sequence[str],
        take: Sequence[str],
        k: Sequence[int] = (1,),
        private: bool = False,
    ) -> None:
        single = tuple(k) == (1,)
        super().__init__(key, entity, out, np, subject, take, plural=not single, columns={"g": group[0], "n": name[0]}, private=private)
        self.group_field, self.name_field, self.out_field = group[1], name[1], out_field
        self.k_choices = tuple(k)

    def conditions(self) -> tuple[Condition, ...]:
        return (Condition("r", "ranking", capability="aggregation_computation", tie_break_stated=True),)

    def stated_keys(self) -> tuple[str, ...]:
        return () if self.k_choices == (1,) else ("r_k",)

    @staticmethod
    def _ranked(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, int, str]]:
        counts: dict[Any, int] = {}
        names: dict[Any, str] = {}
        for group, name in pairs:
            if group is not None:
                counts[group] = counts.get(group, 0) + 1
                names[group] = str(name).casefold()
        return sorted(((g, counts[g], names[g]) for g in counts), key=lambda x: (-x[1], x[2]))

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        ranked = self._ranked([(r["r_g"], r["r_n"]) for r in rows])
        fits = [k for k in self.k_choices if len(ranked) > k and ranked[k - 1][1:] != ranked[k][1:]]
        k = d.choice(fits, "clean group cut")
        if self.k_choices != (1,):
            d.state("r_k", k)

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        ranked = [g for g, _, _ in self._ranked([(r["r_g"], r["r_n"]) for r in rows])]
        k = int(d.stated.get("r_k", 1))
        if lazy.condition == "r":
            return ranked if lazy.mode == "ignore" else ranked[: k + 1]
        return ranked[:k]

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        ranked = self._ranked([(i.get(self.group_field), i.get(self.name_field)) for i in items])
        k = int(s.stated.get("r_k", 1))
        top = s.api.top("r", ranked, k, lambda x: (x[1], x[2]))
        return [{self.out_field: g} for g, _, _ in top]


class AboveAverage(Reduction):
    """The kept items whose measure is above the kept items' average (a bound the solver computes)."""

    def __init__(
        self,
        key: str,
        entity: str,
        *,
        measure: tuple[str, str],
        np: Sequence[str],
        subject: Sequence[str],
        take: Sequence[str],
        private: bool = False,
    ) -> None:
        super().__init__(key, entity, entity, np, subject, take, keeps_items=True, columns={"m": measure[0]}, private=private)
        self.measure_field = measure[1]

    def conditions(self) -> tuple[Condition, ...]:
        return (Condition("r", "boundary", capability="aggregation_computation"),)

    def choose(self, d: Drafting, rows: list[Row]) -> None:
        if len({r["r_m"] for r in rows}) < 2:
            raise NoTarget("every item has the same measure")

    def model(self, d: Drafting, rows: list[Row], lazy: Lazy) -> list[Any]:
        mean = statistics.mean(r["r_m"] for r in rows)
        mode = lazy.mode if lazy.condition == "r" else None
        if mode == "ignore":
            return [r["id"] for r in rows]
        return [r["id"] for r in rows if (r["r_m"] >= mean if mode == "off_by_one" else r["r_m"] > mean)]

    def solve(self, s: Solving, items: list[Row]) -> list[Row]:
        if not items:
            return []
        mean = statistics.mean(i[self.measure_field] for i in items)
        return [i for i in items if s.api.compare("r", i[self.measure_field], ">", mean)]


class EachCall(Action):
    """One write per target ("favourite_song(song_id)"). `refused`: SQL over the target's row `e`
    that the product refuses (already there, expired); `present`: the listing (tool, id field) that
    tells the public half what is already there, read in `prepare`; `blocked`: what it tells from
    the target's own listed item (an expired song). `extra` adds fixed arguments to every call."""

    def __init__(
        self,
        key: str,
        entity: str,
        target: str,
        tool: str,
        arg: str,
        imperative: Sequence[str],
        predicate: Sequence[str],
        pronoun: Sequence[str],
        *,
        refused: str | None = None,
        present: tuple[str, str] | None = None,
        present_sql: str | None = None,
        blocked: Callable[[Row], bool] | None = None,
        extra: Row | None = None,
        **options: Any,
    ) -> None:
        super().__init__(key, entity, target, imperative, predicate, pronoun, **options)
        self.tool, self.arg = tool, arg
        self.refused_sql, self.present, self.present_sql = refused, present, present_sql
        self.blocked = blocked
        self.extra = dict(extra or {})

    def refused(self, d: Drafting, targets: list[int]) -> set[int]:
        if not self.refused_sql:
            return set()
        return {t for t, v in d.lookup(self.target, targets, self.refused_sql).items() if v}

    def visible_refusals(self, d: Drafting, targets: list[int]) -> set[int]:
        if not self.present_sql:
            return set()
        return {t for t, v in d.lookup(self.target, targets, self.present_sql).items() if v}

    def steps(self, d: Drafting, slot: str, targets: list[int], at: int) -> list[Step]:
        refused = self.refused(d, targets)
        return [Step(self.tool, {self.arg: t, **self.extra}) for t in targets if t not in refused]

    def prepare(self, s: Solving, slot: str) -> None:
        if self.present:
            tool, field = self.present
            s.remember(f"{slot}:present", lambda: {i[field] for i in s.listing(tool)})

    def run(self, s: Solving, slot: str, items: list[Row]) -> None:
        present: set[Any] = s.memo.get(f"{slot}:present", set())
        id_field = s.id_field
        done: set[Any] = set()
        for item in items:
            target = self.target_of(item, id_field)
            if target is None or target in done or target in present or (self.blocked and self.via is None and self.blocked(item)):
                continue
            done.add(target)
            s.api.call(self.tool, **{self.arg: target, **self.extra})


__all__ = ["AboveAverage", "EachCall", "Equals", "Every", "Flag", "GroupThreshold", "GroupTop", "Threshold", "TopK"]

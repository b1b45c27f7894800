"""Run metrics against hand-computed values: the estimators, averaging over uneven tasks, the scopes,
infra errors, efficiency and the failure breakdown."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ebench.sessions.metrics import MetricsError, pass_at_k, pass_hat_k, run_metrics, score_tasks
from ebench.tasks.spec import CAPABILITIES


def trial(task: str, n: int, passed: bool, domain: str | None = None, caps: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "task": task,
        "trial": n,
        "domain": domain or task.split("-")[0],
        "capabilities": caps if caps is not None else ["multi_condition_filtering"],
        "passed": passed,
        "termination": "agent_stopped",
        "infra_error": False,
        "error": None,
        "tool_calls": 1,
        "inner_calls": 0,
        "exec_blocks": 0,
        "turns": 1,
        "tokens_in": 10,
        "tokens_out": 1,
        "cost": 0.0,
        "seconds": 1.0,
        "reference_calls": 1,
        "grade": {
            "expected_rows": 1,
            "actual_rows": 1,
            "matched_rows": int(passed),
            "missing": int(not passed),
            "unexpected": 0,
            "wrong": 0,
            "precision": 1.0,
            "recall": 1.0,
        },
        "tool_errors": {},
    }
    record.update(fields)
    return record


def task_trials(task: str, outcomes: list[bool], **kw: Any) -> list[dict[str, Any]]:
    return [trial(task, i + 1, ok, **kw) for i, ok in enumerate(outcomes)]


# --- the estimators -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "at", "hat"),
    [
        (3, 1, 2, 2 / 3, 0.0),
        (5, 3, 2, 0.9, 0.3),
        (3, 3, 3, 1.0, 1.0),
        (3, 0, 1, 0.0, 0.0),
        (4, 2, 1, 0.5, 0.5),
        (4, 1, 3, 0.75, 0.0),  # 1 - C(3,3)/C(4,3) = 1 - 1/4
        (6, 4, 3, 1.0, 0.2),  # C(2,3) = 0; C(4,3)/C(6,3) = 4/20
    ],
)
def test_estimators_match_hand_computed_values(n, c, k, at, hat):
    assert pass_at_k(n, c, k) == pytest.approx(at, abs=1e-12)
    assert pass_hat_k(n, c, k) == pytest.approx(hat, abs=1e-12)


def test_estimators_at_the_edges():
    for n in range(1, 7):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == pytest.approx(c / n)
            assert pass_hat_k(n, c, 1) == pytest.approx(c / n)
            assert pass_at_k(n, c, n) == (1.0 if c else 0.0)
            assert pass_hat_k(n, c, n) == (1.0 if c == n else 0.0)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 4), (2, 2, 0), (0, 0, 1), (3, 4, 1), (3, -1, 1)])
def test_estimators_reject_impossible_arguments(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


# --- averaging over tasks -----------------------------------------------------------------------


def test_uneven_trial_counts_only_enter_the_ks_they_reach():
    # A: n=3, c=1; B: n=2, c=2.
    m = run_metrics(task_trials("music-a", [True, False, False]) + task_trials("music-b", [True, True]))
    s = m.overall
    assert (s.tasks, s.trials, s.passes) == (2, 5, 3)
    assert s.avg == pytest.approx((1 / 3 + 1) / 2)
    assert sorted(s.by_k) == [1, 2, 3]
    assert s.by_k[1].tasks == 2 and s.by_k[1].pass_at == pytest.approx(2 / 3) and s.by_k[1].pass_hat == pytest.approx(2 / 3)
    assert s.by_k[2].tasks == 2
    assert s.by_k[2].pass_at == pytest.approx((2 / 3 + 1) / 2)
    assert s.by_k[2].pass_hat == pytest.approx((0 + 1) / 2)
    # only A reaches k=3: B (n=2) must not pull Pass^3 up to 0.5
    assert s.by_k[3].tasks == 1 and s.by_k[3].pass_at == pytest.approx(1.0) and s.by_k[3].pass_hat == 0.0
    assert m.max_trials == 3 and m.trial_counts == {2: 1, 3: 1}


def test_avg_is_the_mean_of_task_pass_rates_not_of_trials():
    # 1/4 and 2/2 -> (0.25 + 1) / 2 = 0.625, whereas passes/trials would be 3/6 = 0.5
    s = score_tasks([(4, 1), (2, 2)])
    assert s.avg == pytest.approx(0.625)
    assert (s.trials, s.passes) == (6, 3)


def test_domain_and_capability_splits():
    results = (
        task_trials("music-1", [True, False], caps=["multi_condition_filtering", "cross_entity_cascade"])
        + task_trials("music-2", [True, True], caps=["multi_condition_filtering"])
        + task_trials("meeting-1", [False, False], caps=["aggregation_computation"])
    )
    m = run_metrics(results)
    assert m.overall.tasks == 3 and m.overall.avg == pytest.approx(0.5)
    assert list(m.domains) == ["meeting", "music"]
    assert m.domains["music"].tasks == 2 and m.domains["music"].avg == pytest.approx(0.75)
    assert m.domains["music"].by_k[2].pass_hat == pytest.approx(0.5)
    assert m.domains["meeting"].avg == 0.0 and m.domains["meeting"].by_k[2].pass_at == 0.0
    caps = m.capabilities
    assert list(caps) == list(CAPABILITIES)
    assert caps["multi_condition_filtering"].tasks == 2 and caps["multi_condition_filtering"].avg == pytest.approx(0.75)
    assert caps["cross_entity_cascade"].tasks == 1 and caps["cross_entity_cascade"].avg == pytest.approx(0.5)
    assert caps["cross_entity_cascade"].by_k[2].pass_at == pytest.approx(1.0)
    assert caps["aggregation_computation"].trials == 2 and caps["aggregation_computation"].avg == 0.0
    # a capability no task has: no score, not a zero score
    assert caps["cross_step_dependency"].tasks == 0 and caps["cross_step_dependency"].avg is None
    assert caps["cross_step_dependency"].by_k == {}


def test_infra_errors_are_left_out_of_every_score_and_counted_apart():
    results = (
        task_trials("music-1", [False, False])
        # an infra error marked passed must still not count as a pass or a trial
        + [
            trial(
                "music-1", 3, True, infra_error=True, termination="infra_error", error="rate limited", grade=None, tool_calls=50, cost=None
            )
        ]
        # infra by its termination alone
        + [trial("music-2", 1, False, termination="infra_error", error="rate limited", grade=None)]
        + [
            trial("meeting-1", 1, True, caps=["cross_entity_cascade"]),
            trial("meeting-1", 2, False, caps=["cross_entity_cascade"], infra_error=True, error="sandbox crashed", grade=None),
        ]
    )
    m = run_metrics(results)
    assert m.overall.tasks == 2  # music-2 has no scored trial
    assert (m.overall.trials, m.overall.passes, m.overall.infra_errors) == (3, 1, 3)
    assert m.overall.avg == pytest.approx(0.5)  # music-1 0/2, meeting-1 1/1
    assert sorted(m.overall.by_k) == [1, 2] and m.overall.by_k[2].tasks == 1 and m.overall.by_k[2].pass_at == 0.0
    assert m.domains["music"].infra_errors == 2 and m.domains["meeting"].infra_errors == 1
    assert m.capabilities["cross_entity_cascade"].infra_errors == 1
    assert m.infra.count == 3
    assert m.infra.by_reason == {"rate limited": 2, "sandbox crashed": 1}
    assert {(t["task"], t["trial"]) for t in m.infra.trials} == {("music-1", 3), ("music-2", 1), ("meeting-1", 2)}
    assert m.efficiency.trials == 3 and m.efficiency.tool_calls == 1.0  # the 50-call infra trial is out
    assert m.efficiency.cost_unknown == 0 and m.efficiency.cost_total == 0.0
    assert m.failures.failed == 2 and "infra_error" not in m.terminations


def test_no_scored_trial_gives_no_score_and_no_division():
    for results in ([], [trial("music-1", 1, False, infra_error=True, error="down", grade=None)]):
        m = run_metrics(results)
        assert m.overall.tasks == 0 and m.overall.avg is None and m.overall.by_k == {}
        assert m.efficiency.trials == 0 and m.efficiency.tool_calls is None and m.efficiency.exec_share is None
        assert m.efficiency.cost_total is None and m.efficiency.calls_vs_reference is None
        assert m.failures.failed == 0 and m.max_trials == 0
        json.dumps(m.to_dict())
    assert m.infra.count == 1 and m.domains["music"].avg is None


# --- efficiency -------------------------------------------------------------------------------------


def _efficiency_trials(with_unknown_cost: bool) -> list[dict[str, Any]]:
    trials = [
        trial(
            "music-1",
            1,
            True,
            tool_calls=4,
            inner_calls=6,
            exec_blocks=2,
            turns=3,
            tokens_in=1000,
            tokens_out=100,
            cost=0.01,
            seconds=10.0,
            reference_calls=4,
        ),  # total 4 - 2 + 6 = 8, ratio 2
        trial(
            "music-2",
            1,
            False,
            tool_calls=3,
            inner_calls=0,
            exec_blocks=0,
            turns=5,
            tokens_in=3000,
            tokens_out=300,
            cost=0.03,
            seconds=20.0,
            reference_calls=3,
        ),  # total 3, ratio 1
    ]
    if with_unknown_cost:
        trials.append(
            trial(
                "music-3",
                1,
                False,
                tool_calls=5,
                inner_calls=0,
                exec_blocks=0,
                turns=2,
                tokens_in=2000,
                tokens_out=200,
                cost=None,
                seconds=30.0,
                reference_calls=None,
            )
        )  # total 5, no ratio
    return trials


def test_efficiency_means_totals_and_reference_ratio():
    e = run_metrics(_efficiency_trials(with_unknown_cost=True)).efficiency
    assert e.trials == 3
    assert e.tool_calls == pytest.approx(4.0) and e.inner_calls == pytest.approx(2.0)
    assert e.total_calls == pytest.approx(16 / 3) and e.totals["total_calls"] == 16
    assert e.turns == pytest.approx(10 / 3)
    assert (e.tokens_in, e.tokens_out) == (pytest.approx(2000), pytest.approx(200))
    assert (e.totals["tokens_in"], e.totals["tokens_out"]) == (6000, 600)
    assert e.seconds == pytest.approx(20.0) and e.totals["seconds"] == pytest.approx(60.0)
    assert e.exec_share == pytest.approx(1 / 3)
    assert e.calls_vs_reference == pytest.approx(1.5) and e.reference_trials == 2
    # one unknown price makes the cost unknown, and says how many
    assert e.cost_unknown == 1 and e.cost_total is None and e.cost_mean is None


def test_efficiency_cost_when_every_price_is_known():
    e = run_metrics(_efficiency_trials(with_unknown_cost=False)).efficiency
    assert e.cost_unknown == 0
    assert e.cost_total == pytest.approx(0.04) and e.cost_mean == pytest.approx(0.02)
    assert e.exec_share == pytest.approx(0.5)


# --- failures ---------------------------------------------------------------------------------------


def test_failure_breakdown_counts_failed_trials_only():
    def grade(missing, unexpected, wrong, actual):
        return {
            "expected_rows": 3,
            "actual_rows": actual,
            "matched_rows": 0,
            "missing": missing,
            "unexpected": unexpected,
            "wrong": wrong,
            "precision": 0.0,
            "recall": 0.0,
        }

    results = [
        trial("music-1", 1, False, grade=grade(2, 0, 1, 3), tool_errors={"unknown_tool": 1}),
        trial("music-1", 2, False, grade=grade(3, 0, 0, 0), tool_errors={"invalid_arguments": 2, "not_found": 1}, termination="max_turns"),
        trial("music-1", 3, False, grade=grade(0, 2, 0, 2), tool_errors={"unknown_tool": 0, "not_found": 0}, termination="max_turns"),
        trial("music-2", 1, False, grade=None, termination="agent_error", error="bad response"),
        # a pass with tool errors and a limit hit is no failure
        trial("music-2", 2, True, tool_errors={"unknown_tool": 3, "conflict": 1}, termination="max_tool_calls"),
    ]
    f = run_metrics(results).failures
    assert f.failed == 4
    assert (f.missing, f.unexpected, f.wrong, f.no_change, f.ungraded) == (2, 1, 1, 1, 1)
    assert (f.unknown_tool, f.invalid_arguments, f.other_tool_errors) == (1, 1, 1)
    assert f.terminations == {"max_turns": 2, "agent_stopped": 1, "agent_error": 1}
    m = run_metrics(results)
    assert m.terminations == {"max_turns": 2, "agent_stopped": 1, "agent_error": 1, "max_tool_calls": 1}


def test_a_malformed_field_is_a_metrics_error_naming_the_trial():
    with pytest.raises(MetricsError, match=r"music-1/2: tool_calls"):
        run_metrics([trial("music-1", 1, True), trial("music-1", 2, True, tool_calls="7")])
    with pytest.raises(MetricsError, match=r"music-1/1: missing"):
        run_metrics([trial("music-1", 1, False, grade={"missing": "two"})])


def test_to_dict_is_json_with_string_keys_for_k():
    m = run_metrics(task_trials("music-1", [True, False, True]))
    data = json.loads(json.dumps(m.to_dict()))
    assert data["overall"]["by_k"]["3"] == {"tasks": 1, "pass_at": 1.0, "pass_hat": 0.0}
    assert data["overall"]["avg"] == pytest.approx(2 / 3)
    assert data["domains"]["music"]["by_k"]["2"]["pass_hat"] == pytest.approx(1 / 3)
    assert set(data["capabilities"]) == set(CAPABILITIES)
    assert data["trial_counts"] == {"3": 1}

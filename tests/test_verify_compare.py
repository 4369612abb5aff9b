"""`tfmigrate verify`'s comparison of two runs' records (no TensorFlow: the records are plain)."""

from __future__ import annotations

from tfmigrate.verify import compare, prediction_scales


def _predict(value: float, probabilities: list[float]) -> dict:
    return {"kind": "predict", "values": {"value": value, "probabilities": probabilities}}


ORIGINAL = [
    {"kind": "evaluate", "results": {"loss": 7.0e-5, "global_step": 10}},
    _predict(-0.4618687033653259, [0.5, 0.5]),
    _predict(7.78883695602417e-05, [0.9, 0.1]),
]


def test_a_prediction_near_0_is_compared_at_its_outputs_scale() -> None:
    """The CI failure's numbers: 7.5e-9 apart, 1e-4 relative to the value, 2e-8 to the output's."""
    migrated = [ORIGINAL[0], _predict(-0.4618687331676483, [0.5, 0.5]), _predict(7.788091897964478e-05, [0.9, 0.1])]
    verdict = compare(ORIGINAL, migrated, 1e-5)
    assert verdict.ok
    row = next(row for row in verdict.rows if row.result == 2 and row.key == "value")
    assert row.rel is not None and row.rel < 2e-8


def test_a_prediction_off_at_its_outputs_scale_still_fails() -> None:
    migrated = [ORIGINAL[0], ORIGINAL[1], _predict(7.78883695602417e-05 + 1e-5, [0.9, 0.1])]
    verdict = compare(ORIGINAL, migrated, 1e-5)
    assert not verdict.ok
    assert [(row.result, row.key) for row in verdict.rows if not row.ok] == [(2, "value")]


def test_evaluate_results_keep_their_own_size() -> None:
    """A loss near 0 is a result of its own, not an entry of a vector: 1e-5 relative to itself."""
    migrated = [{"kind": "evaluate", "results": {"loss": 7.0e-5 + 7.5e-9, "global_step": 10}}, *ORIGINAL[1:]]
    verdict = compare(ORIGINAL, migrated, 1e-5)
    assert [(row.result, row.key) for row in verdict.rows if not row.ok] == [(0, "loss")]


def test_each_output_has_its_own_scale_over_every_example() -> None:
    assert prediction_scales(ORIGINAL) == {"value": 0.4618687033653259, "probabilities": 0.9}

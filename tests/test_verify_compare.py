"""`tfmigrate verify`'s comparison of two runs' records (no TensorFlow: the records are plain)."""

from __future__ import annotations

from tfmigrate.verify import compare, compare_trained, prediction_scales


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


def _trained(kernel_at: float, bias: list[float], names: tuple[str, ...] = ("dense/kernel", "dense/bias", "global_step")) -> dict:
    values = {"dense/kernel": {"sum": 0.5, "l1": 40.0, "max": 2.0, "at": [kernel_at, 1.5]},
              "dense/bias": bias, "global_step": [20.0]}
    return {"kind": "train", "values": {name: values[name] for name in names}}


TRAINED = [_trained(1.0e-6, [0.25, -1.5e-5])]


def test_a_trained_checkpoint_is_compared_at_each_variables_scale() -> None:
    """A weight or bias near 0 rounds relative to its variable's largest magnitude (1.5e-5 against
    6.4e-10, measured on cloudml-samples' GRL template); a sum relative to its magnitudes' sum."""
    migrated = [_trained(1.0e-6 + 1e-6, [0.25, -1.5e-5 - 6.4e-10])]
    verdict = compare_trained(TRAINED, migrated, 1e-5)
    assert verdict.ok, [(row.key, row.rel) for row in verdict.rows if not row.ok]
    assert {row.key for row in verdict.rows} == {
        "dense/kernel.l1", "dense/kernel.max", "dense/kernel.sum", "dense/kernel.at[0]", "dense/kernel.at[1]",
        "dense/bias[0]", "dense/bias[1]", "global_step[0]"}
    off = compare_trained(TRAINED, [_trained(1.0e-6 + 1e-4, [0.25, -1.5e-5])], 1e-5)
    assert [row.key for row in off.rows if not row.ok] == ["dense/kernel.at[0]"]


def test_a_variable_the_migrations_checkpoint_lacks_is_a_problem() -> None:
    verdict = compare_trained(TRAINED, [_trained(1.0e-6, [0.25, -1.5e-5], names=("dense/kernel", "global_step"))], 1e-5)
    assert not verdict.ok and verdict.problems == [
        "train 0: the migration's checkpoint lacks 1 of the original's 3 variables (dense/bias)"]
    renamed = compare_trained(TRAINED, [{"kind": "train", "values": {"model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE": [1.0]}}], 1e-5)
    assert renamed.problems == ["train 0: the migration's checkpoint names none of the original's 3 variables (a Keras "
                                "model's checkpoint names them its own way): they cannot be compared by name"]
    assert not compare_trained(TRAINED, TRAINED * 2, 1e-5).ok  # (trained twice: another program)
    assert compare_trained([], [], 1e-5).problems[0].startswith("the original recorded no evaluate, predict or train result")

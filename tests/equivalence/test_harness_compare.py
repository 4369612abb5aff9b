"""The equivalence comparison itself: relative to each value, or to its key's scale where given."""

from .harness import compare


def test_values_within_1e5_relative_agree_and_others_are_named():
    assert compare([{"loss": 2.0}], [{"loss": 2.0 * (1 + 9e-6)}]) == []
    problems = compare([{"loss": 2.0}], [{"loss": 2.0 * (1 + 2e-5)}])
    assert len(problems) == 1 and "loss" in problems[0]


def test_a_value_near_0_is_compared_at_its_keys_scale_when_one_is_given():
    want, got = [{"logit": 0.0066382}], [{"logit": 0.0066381}]  # 1.5e-5 of itself
    assert compare(want, got)
    assert compare(want, got, scales={"logit": 0.03}) == []
    assert compare(want, got, scales={"other": 0.03})  # a scale for another key does not apply


def test_a_scale_below_the_value_changes_nothing():
    assert compare([{"loss": 2.0}], [{"loss": 2.0 * (1 + 2e-5)}], scales={"loss": 1e-3})

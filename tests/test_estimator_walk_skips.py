"""TFM201's transform walk leaves out the defs that hold nothing it acts on, where every estimator
of the file stays as written (`estimator_scan.defs_left_out`). Left out or walked, the output is
the same, and a switch to graph mode anywhere goes where the kept estimators' notes say they run
in TF2: a def holding only the switch is walked too."""

from __future__ import annotations

import ast

import pytest

from tfmigrate import estimator_sites
from tfmigrate.engine import transform_source

_SWITCH = "tf.compat.v1.disable_v2_behavior()"

# A model_fn the Keras rewrite declines (an attribute assignment): its estimator is kept as written.
_MODEL_FN = '''def model_fn(features, labels, mode, params):
  logits = tf.compat.v1.layers.dense(features["x"], 1)
  params.seen = True
  loss = tf.reduce_mean(tf.square(logits - labels))
  train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss, tf.compat.v1.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  return tf.data.Dataset.from_tensor_slices(({"x": [[1.0]]}, [[1.0]])).batch(1)
'''

# Where the estimator is built: (defs above `main`, `main`'s body).
_SITES = {
    "returned by a function": (
        "def build():\n  return tf.estimator.Estimator(model_fn=model_fn)\n",
        "  est = build()\n  est.train(input_fn, steps=1)\n",
    ),
    "returned by a method": (
        "class Runner(object):\n  def helper(self):\n    return 1\n\n"
        "  def build(self):\n    return tf.estimator.Estimator(model_fn=model_fn)\n",
        "  est = Runner().build()\n  est.train(input_fn, steps=1)\n",
    ),
    "assigned in main": ("", "  est = tf.estimator.Estimator(model_fn=model_fn)\n  est.train(input_fn, steps=1)\n"),
    "assigned in a nested function": (
        "def outer():\n  def inner():\n    est = tf.estimator.Estimator(model_fn=model_fn)\n"
        "    est.train(input_fn, steps=1)\n  return inner\n",
        "  outer()()\n",
    ),
    "assigned at module level, used in a def": (
        "est = tf.estimator.Estimator(model_fn=model_fn)\n\n\ndef predict():\n  return est.predict(input_fn)\n",
        "  est.train(input_fn, steps=1)\n",
    ),
    "assigned at module level, used in a def under an if": (
        "est = tf.estimator.Estimator(model_fn=model_fn)\nif True:\n  def predict():\n    return est.predict(input_fn)\n",
        "  est.train(input_fn, steps=1)\n",
    ),
}

# Where the program switches to graph mode: (module level, in `main`, a def of its own).
_SWITCHES = {
    "nowhere": ("", "", ""),
    "at module level": (_SWITCH + "\n", "", ""),
    "in main": ("", f"  {_SWITCH}\n", ""),
    "in a helper": ("", "", f"def setup():\n  {_SWITCH}\n"),
    "in a method, under an if": (
        "", "", f"class Setup(object):\n  def other(self):\n    return 2\n\n  def run(self):\n    if True:\n      {_SWITCH}\n"
    ),
    "in a nested function": ("", "", f"def setup():\n  def inner():\n    {_SWITCH}\n  return inner\n"),
}


def _program(site: str, switch: str) -> str:
    site_defs, main_body = _SITES[site]
    top, in_main, helper = _SWITCHES[switch]
    parts = ["import tensorflow as tf\n", top, "\n\n", _MODEL_FN, "\n\n"]
    parts += [block + "\n\n" for block in (helper, site_defs) if block]
    parts += ["def main():\n", in_main, main_body]
    return "".join(parts)


@pytest.mark.parametrize("switch", sorted(_SWITCHES))
@pytest.mark.parametrize("site", sorted(_SITES))
def test_defs_left_out_change_nothing_and_a_switch_anywhere_goes(site: str, switch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _program(site, switch)
    result = transform_source(source, filename="x.py")
    ast.parse(result.output)
    assert [e["tier"] for e in result.estimators] == ["strategy"], result.output
    if switch != "nowhere":
        # The kept model_fn runs in TF2 (its note and the report say so), so the switch goes too.
        assert f"\n{_SWITCH}" not in result.output and f" {_SWITCH}" not in result.output, result.output
        assert "removed `tf.compat.v1.disable_v2_behavior()`: the kept model_fn runs in TF2" in result.output
    # Every def walked: the same file.
    monkeypatch.setattr(estimator_sites, "defs_left_out", lambda *args: set())
    walked = transform_source(source, filename="x.py")
    assert walked.output == result.output
    assert [t.as_dict() for t in walked.todos] == [t.as_dict() for t in result.todos]
    assert list(walked.estimators) == list(result.estimators)


def test_defs_that_hold_nothing_the_walk_acts_on_are_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk goes into the class holding the returned estimator and its `build`, and into the
    def holding the switch; it leaves out the methods and defs that hold nothing it acts on."""
    left_out: list[set[str]] = []
    real = estimator_sites.defs_left_out

    def spy(module, *args):
        found = real(module, *args)
        names: dict[int, str] = {}

        def name(body, around: str) -> None:
            for stmt in body:
                if hasattr(stmt, "name") and hasattr(stmt, "body"):
                    names[id(stmt)] = around + stmt.name.value
                    name(getattr(stmt.body, "body", ()), names[id(stmt)] + ".")

        name(module.body, "")
        left_out.append({names[node] for node in found})
        return found

    monkeypatch.setattr(estimator_sites, "defs_left_out", spy)
    transform_source(_program("returned by a method", "in a helper"), filename="x.py")
    assert left_out == [{"model_fn", "input_fn", "Runner.helper", "main"}]

"""The Estimator-family rules skip their `Calls` walk (loose constructor calls, receivers) where the
module's text spells no such call beyond the sites' own (`EstimatorSiteRule._may_call_more`).

The skip must never change a migration: each program here, and every fixture of the three rules,
migrates to the same output, TODOs and changes with the walk forced; and the programs that hold a
loose call or a receiver are walked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES
from tfmigrate.engine import transform_source
from tfmigrate.estimator_sites import EstimatorSiteRule

_HEAD = """\
import tensorflow as tf
from tensorflow.contrib.tpu import TPUEstimator as TE

Est = tf.estimator.Estimator


def model_fn(features, labels, mode, params):
  logits = tf.layers.dense(features, 1)
  loss = tf.losses.mean_squared_error(labels, logits)
  train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  return tf.data.Dataset.from_tensors(({"x": [1.0]}, [1.0]))


def main():
  # The estimator below: a tf.estimator.Estimator, built once (see its docs).
  estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir="/tmp/m")
  estimator.train(input_fn, max_steps=10)
"""

# (what the program adds, whether the walk must run)
_EXTRAS = {
    "nothing more": ("", False),
    "a comment naming the call": ("  # Estimator (model_fn) is TF1's.\n", True),
    "a returned estimator": ("\n\ndef build():\n  return tf.estimator.Estimator(model_fn=model_fn)\n", True),
    "one passed on": ("\n\ndef build(run):\n  run(tf.estimator.Estimator(model_fn))\n", True),
    "the module-level alias": ("\n\ndef build():\n  return Est(model_fn=model_fn)\n", True),
    "a parenthesised alias, the paren on the next line": (
        "\n\ndef build():\n  return ((Est)  # the class\n          (model_fn=model_fn))\n", True),
    "an imported name": ("\n\ndef build():\n  return TE (model_fn=model_fn, use_tpu=False)\n", True),
    "a backslash before the paren": ("\n\ndef build():\n  return tf.estimator.Estimator \\\n      (model_fn=model_fn)\n", True),
    "a receiver": (
        "\n\ndef serving_input_fn():\n  x = tf.placeholder(tf.float32, [None])\n"
        "  return tf.estimator.export.ServingInputReceiver({'x': x}, {'x': x})\n",
        True,
    ),
    "the word in an attribute": ("\n\nKIND = tf.estimator.Estimator.__name__\n", False),
}


def _walked(monkeypatch: pytest.MonkeyPatch, source: str, forced: bool):
    decisions: list[bool] = []
    original = EstimatorSiteRule._may_call_more

    def decide(self, site_calls: int) -> bool:
        decisions.append(original(self, site_calls))
        return True if forced else decisions[-1]

    with monkeypatch.context() as patch:
        patch.setattr(EstimatorSiteRule, "_may_call_more", decide)
        result = transform_source(source)
    return result, decisions


def _same(skipped, walked) -> None:
    assert skipped.output == walked.output
    assert [t.as_dict() for t in skipped.todos] == [t.as_dict() for t in walked.todos]
    assert [c.as_dict() for c in skipped.changes] == [c.as_dict() for c in walked.changes]


@pytest.mark.parametrize("name", sorted(_EXTRAS))
def test_the_skip_changes_nothing_and_walks_where_a_call_may_be(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    extra, must_walk = _EXTRAS[name]
    source = _HEAD + extra
    skipped, decisions = _walked(monkeypatch, source, forced=False)
    walked, _ = _walked(monkeypatch, source, forced=True)
    _same(skipped, walked)
    assert decisions, "no Estimator-family rule ran"
    if must_walk:
        assert any(decisions), f"{name}: the walk was skipped"
    else:
        assert not all(decisions), f"{name}: the walk ran where the text spells only the site"


def test_the_skip_changes_no_fixture(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = ("TFM201_", "TFM301_", "TFM401_")
    cases = [path for path in sorted(FIXTURES.glob("*/*.in.py")) if path.parent.name.startswith(rules)]
    assert len(cases) > 100
    skips = 0
    for path in cases:
        source = path.read_text(encoding="utf-8")
        skipped, decisions = _walked(monkeypatch, source, forced=False)
        walked, _ = _walked(monkeypatch, source, forced=True)
        _same(skipped, walked)
        skips += decisions.count(False)
    assert skips > 0

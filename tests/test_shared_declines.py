"""A model_fn that one estimator rule declined is not analysed again by the next rule of the pass
(`tfmigrate.shared_declines`), and the migration is the same as with both analyses."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tfmigrate import shared_declines
from tfmigrate.engine import reference_transform, transform_source
from tfmigrate.estimator.analyzer import ModelFnAnalyzer
from tfmigrate.estimator_scan import Decline

# One model_fn for an Estimator and a TPUEstimator (cloudml-samples' TPU templates' shape): its
# EstimatorSpec's `predictions=` is what both rules decline.
SHARED = textwrap.dedent('''\
    import tensorflow as tf

    HIDDEN = 10


    def dense(x):
        return tf.layers.dense(x, HIDDEN, activation=tf.nn.relu)


    def model_fn(features, labels, mode, params):
        hidden = dense(features)
        output = tf.layers.dense(hidden, 1)
        loss = tf.nn.l2_loss(output - labels)
        train_op = tf.train.RMSPropOptimizer(0.05).minimize(loss, global_step=tf.train.get_global_step())
        if params['use_tpu']:
            return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, predictions=output, loss=loss, train_op=train_op)
        return tf.estimator.EstimatorSpec(mode=mode, predictions=output, loss=loss, train_op=train_op)


    def main(use_tpu):
        if use_tpu:
            config = tf.contrib.tpu.RunConfig(model_dir='m')
            estimator = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, config=config, params={'use_tpu': True},
                                                    train_batch_size=8, use_tpu=True)
        else:
            estimator = tf.estimator.Estimator(model_fn=model_fn, model_dir='m', params={'use_tpu': False})
        estimator.train(input_fn=lambda: None, max_steps=10)
    ''')


def _analyses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = ModelFnAnalyzer.analyze

    def counted(self):
        seen.append(self.fn.name.value)
        return real(self)

    monkeypatch.setattr(ModelFnAnalyzer, "analyze", counted)
    return seen


def test_a_model_fn_two_estimator_rules_decline_is_analysed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    analysed = _analyses(monkeypatch)
    fast = transform_source(SHARED)
    assert analysed == ["model_fn"]
    del analysed[:]
    slow = reference_transform(SHARED)  # (the LibCST-only path analyses it again for each rule)
    assert analysed == ["model_fn", "model_fn"]
    assert fast.output == slow.output
    assert [t.as_dict() for t in fast.todos] == [t.as_dict() for t in slow.todos]
    assert "tfm.estimator.tpu.TPUEstimator(" in fast.output and "tfm.estimator.Estimator(" in fast.output


def test_a_walrus_in_the_file_means_the_model_fn_is_analysed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    analysed = _analyses(monkeypatch)
    source = SHARED + "\nif (n := 3):\n    HIDDEN = n\n"
    assert transform_source(source).output == reference_transform(source).output
    assert analysed.count("model_fn") == 4  # (twice on each path)


def _module(text: str) -> cst.Module:
    return cst.parse_module(textwrap.dedent(text))


def _fn(module: cst.Module, name: str) -> cst.FunctionDef:
    return next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == name)


BEFORE = '''\
    import tensorflow as tf
    from helpers import build

    SIZE = 3


    def helper(x):
        return build(x, SIZE)


    def model_fn(features, labels, mode):
        y = helper(features)
        return y


    def main():
        return 1
    '''


@pytest.mark.parametrize("changed, shared", [
    ("def main():\n    return 2\n", True),  # a statement the model_fn does not reach
    ("if True:\n    unrelated = None\n", True),
    ("import os\n", True),
    ("def helper(x):\n    return 0\n", False),  # a helper it calls, bound again
    ("SIZE = 4\n", False),  # a constant its helper reads
    ("import helper\n", False),
    ("from helpers import *\n", False),  # any name
    ("if True:\n    helper = None\n", False),  # a block binding a helper
    ("for SIZE in range(2):\n    pass\n", False),
    ("try:\n    pass\nexcept ImportError as build:\n    pass\n", False),
])
def test_a_decline_is_shared_only_where_what_the_model_fn_reaches_is_unchanged(changed: str, shared: bool) -> None:
    """`main` (below the model_fn) rewritten as another statement, as TFM201 rewrites its sites."""
    old = _module(BEFORE)
    fn = _fn(old, "model_fn")
    decline = Decline("why", fn.body.body[0], 12, "y = helper(features)")
    scratch: dict = {}
    shared_declines.remember(scratch, fn, old, decline)
    body = [cst.parse_module(changed).body[0] if stmt is _fn(old, "main") else stmt for stmt in old.body]
    new = old.with_changes(body=body)
    assert (shared_declines.recall(scratch, fn, new, new.code) is decline) is shared


def test_a_decline_is_shared_with_its_line_only_where_nothing_above_changed() -> None:
    old = _module(BEFORE)
    fn = _fn(old, "model_fn")
    decline = Decline("why", fn.body.body[0], 12, "y = helper(features)")
    scratch: dict = {}
    shared_declines.remember(scratch, fn, old, decline)
    more_above = old.with_changes(body=[old.body[0], cst.parse_statement("import os\n"), *old.body[1:]])
    assert shared_declines.recall(scratch, fn, more_above, more_above.code) is None
    helper_changed = old.with_changes(body=[cst.parse_statement("def helper(x):\n    return x\n") if stmt is _fn(old, "helper")
                                            else stmt for stmt in old.body])
    assert shared_declines.recall(scratch, fn, helper_changed, helper_changed.code) is None
    new_header = old.with_changes(header=[cst.EmptyLine(comment=cst.Comment("# hi"))])
    assert shared_declines.recall(scratch, fn, new_header, new_header.code) is None
    assert shared_declines.recall(scratch, fn, old, old.code) is decline
    assert shared_declines.recall(scratch, fn, old, "") is None  # (the LibCST-only path: no text)

"""`EstimatorSpec`, `ModeKeys` and `TPUEstimatorSpec`: what a TF1 `model_fn` returns.

As TF 2.15's `tf.compat.v1.estimator`: the spec is a namedtuple, validated against the mode
(TRAIN needs `loss` and `train_op`, EVAL `loss`, PREDICT `predictions`), its tensors must come
from the graph being built, a `[1]`-shaped loss is reshaped to a scalar, and PREDICT gets a
default `serving_default` `PredictOutput` signature when `export_outputs` is not given.
`TPUEstimatorSpec.as_estimator_spec()` is how TPUEstimator ran a TPU spec on the CPU: `metric_fn`
and `host_call` called on their tensors, `scaffold_fn()` called.
"""

from __future__ import annotations

import collections
from typing import Any

import tensorflow as tf
from tensorflow.python.saved_model.model_utils import export_output as export_output_lib
from tensorflow.python.saved_model.model_utils import export_utils

from ..inputs import ModeKeys
from ..model_fn.strategy.host_calls import call_host_fn, kept_host_calls

__all__ = ["EstimatorSpec", "ModeKeys", "TPUEstimatorSpec", "LOSS_METRIC_KEY", "AVERAGE_LOSS_METRIC_KEY"]

LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"
_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def _same_graph(value: Any, what: str) -> None:
    graph = tf.compat.v1.get_default_graph()
    if getattr(value, "graph", graph) is not graph:
        raise ValueError(
            f"{what} {getattr(value, 'name', value)!r} must be from the default graph: it was created outside the "
            "graph `model_fn` builds, or in an earlier call of `model_fn`."
        )


def _tensor(value: Any, what: str) -> Any:
    if isinstance(value, tf.Variable):
        value = value.value()
    if not tf.is_tensor(value):
        value = tf.convert_to_tensor(value)
    _same_graph(value, what)
    return value


def _train_op(train_op: Any, mode: str) -> Any:
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        return None
    if isinstance(train_op, tf.Variable):
        train_op = train_op.op
    if not isinstance(train_op, (tf.Operation, tf.Tensor)):
        raise TypeError(f"train_op must be Operation or Tensor, given: {train_op!r}")
    _same_graph(train_op, "train_op")
    return train_op


def _loss(loss: Any, mode: str) -> Any:
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        return None
    loss = _tensor(loss, "loss")
    if loss.shape.num_elements() not in (None, 1):
        raise ValueError(f"Loss must be scalar, given: {loss}")
    if not loss.shape.is_compatible_with(tf.TensorShape([])):
        loss = tf.reshape(loss, [])
    return loss


def _predictions(predictions: Any, mode: str) -> Any:
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        return {}
    if isinstance(predictions, dict):
        return {key: _tensor(value, f"predictions[{key!r}]") for key, value in predictions.items()}
    return _tensor(predictions, "predictions")


def _export_outputs(export_outputs: Any, predictions: Any, mode: str) -> Any:
    if mode != ModeKeys.PREDICT:
        return export_outputs
    if export_outputs is None:
        default = predictions if isinstance(predictions, dict) else {"output": predictions}
        return {export_utils.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: export_output_lib.PredictOutput(default)}
    if not isinstance(export_outputs, dict):
        raise TypeError(f"export_outputs must be dict, given: {export_outputs!r}")
    for name, output in export_outputs.items():
        if not isinstance(output, export_output_lib.ExportOutput):
            raise TypeError(f"Values in export_outputs must be ExportOutput objects, given: {name}: {output!r}")
    return dict(export_outputs)


def _hooks(hooks: Any) -> tuple:
    hooks = tuple(hooks or ())
    for hook in hooks:
        if not isinstance(hook, tf.compat.v1.train.SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {hook!r}")
    return hooks


def _metric_ops(eval_metric_ops: Any) -> dict:
    metrics = {}
    for name, value in (eval_metric_ops or {}).items():
        if isinstance(value, (tuple, list)) and len(value) == 2:
            metrics[name] = tuple(value)
        elif hasattr(value, "result") and hasattr(value, "update_state"):
            # A Keras-style metric object (TF1 accepted `tf.keras.metrics.Metric`s): its value and
            # the op of its last update call, as Estimator used them.
            updates = getattr(value, "updates", None) or []
            metrics[name] = (value.result(), tf.group(*updates))
        else:
            raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: {name}: {value!r}")
        for part in metrics[name]:
            _same_graph(part, f"eval_metric_ops[{name!r}]")
    return metrics


class EstimatorSpec(
    collections.namedtuple(
        "EstimatorSpec",
        [
            "mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
            "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks", "prediction_hooks",
        ],
    )
):
    """TF1's `tf.estimator.EstimatorSpec`, validated as TF 2.15 did."""

    def __new__(
        cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None, export_outputs=None,
        training_chief_hooks=None, training_hooks=None, scaffold=None, evaluation_hooks=None, prediction_hooks=None,
    ):
        if mode not in _MODES:
            raise ValueError(f"mode={mode!r} is not one of {_MODES}")
        predictions = _predictions(predictions, mode)
        scaffold = scaffold or tf.compat.v1.train.Scaffold()
        if not isinstance(scaffold, tf.compat.v1.train.Scaffold):
            raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold!r}")
        return super().__new__(
            cls,
            mode=mode,
            predictions=predictions,
            loss=_loss(loss, mode),
            train_op=_train_op(train_op, mode),
            eval_metric_ops=_metric_ops(eval_metric_ops),
            export_outputs=_export_outputs(export_outputs, predictions, mode),
            training_chief_hooks=_hooks(training_chief_hooks),
            training_hooks=_hooks(training_hooks),
            scaffold=scaffold,
            evaluation_hooks=_hooks(evaluation_hooks),
            prediction_hooks=_hooks(prediction_hooks),
        )

    def _replace(self, **changes):
        if "mode" in changes:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        fields = dict(zip(self._fields, self))
        fields.update(changes)
        return EstimatorSpec(**fields)


class _HostCallHook(tf.compat.v1.train.SessionRunHook):
    """`host_call` off TPU, as TF1 ran it: its ops run in every step's `Session.run`.

    `tf.compat.v2.summary` writers the host call created are initialized after the session starts
    and flushed when it ends.
    """

    def __init__(self, ops: Any) -> None:
        self._ops = ops

    def begin(self) -> None:
        from tensorflow.python.ops import summary_ops_v2

        self._init_ops = summary_ops_v2.summary_writer_initializer_op()
        self._flush_ops = [summary_ops_v2.legacy_raw_flush(writer=op.inputs[0]) for op in self._init_ops]

    def after_create_session(self, session, coord) -> None:
        session.run(self._init_ops)

    def before_run(self, run_context):
        return tf.compat.v1.train.SessionRunArgs(self._ops)

    def end(self, session) -> None:
        session.run(self._flush_ops)


class TPUEstimatorSpec(
    collections.namedtuple(
        "TPUEstimatorSpec",
        [
            "mode", "predictions", "loss", "train_op", "eval_metrics", "export_outputs", "scaffold_fn",
            "host_call", "training_hooks", "evaluation_hooks", "prediction_hooks",
        ],
    )
):
    """TF1's `tf.estimator.tpu.TPUEstimatorSpec`; `as_estimator_spec()` is its CPU form."""

    def __new__(
        cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None, export_outputs=None,
        scaffold_fn=None, host_call=None, training_hooks=None, evaluation_hooks=None, prediction_hooks=None,
    ):
        for name, call in (("eval_metrics", eval_metrics), ("host_call", host_call)):
            if call is not None and (not isinstance(call, (tuple, list)) or len(call) != 2 or not callable(call[0])):
                raise ValueError(f"{name} should be tuple or list with two elements (fn, tensors), given: {call!r}")
            if call is not None and not isinstance(call[1], (tuple, list, dict)):
                raise ValueError(f"{name}[1] should be a tuple, list or dict of tensors, given: {call[1]!r}")
        return super().__new__(
            cls,
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metrics=eval_metrics,
            export_outputs=export_outputs,
            scaffold_fn=scaffold_fn,
            host_call=host_call,
            training_hooks=_hooks(training_hooks),
            evaluation_hooks=_hooks(evaluation_hooks),
            prediction_hooks=_hooks(prediction_hooks),
        )

    def as_estimator_spec(self) -> EstimatorSpec:
        """The spec TPUEstimator ran off TPU: metric_fn and host_call called, scaffold_fn() called."""
        eval_metric_ops = call_host_fn(self.eval_metrics) if self.eval_metrics is not None else None
        hooks: tuple = ()
        kept = kept_host_calls()
        if self.host_call is not None and kept is not None:
            kept.append(tuple(self.host_call))
        elif self.host_call is not None:
            hooks = (_HostCallHook(call_host_fn(self.host_call)),)
        scaffold = self.scaffold_fn() if self.scaffold_fn else None
        return EstimatorSpec(
            mode=self.mode,
            predictions=self.predictions,
            loss=self.loss,
            train_op=self.train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=self.export_outputs,
            scaffold=scaffold,
            training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks,
        )

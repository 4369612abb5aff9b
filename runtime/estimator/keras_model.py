"""`tfm.ModelFnModel`: a Keras model that hosts a TF1 model_fn kept as written.

What `tfmigrate` writes for an Estimator/TPUEstimator whose model_fn it cannot rewrite into Keras
(yet) and which the program only trains, evaluates and predicts with::

    strategy = tfm.make_strategy("auto", cluster_resolver=run_config.cluster, use_tpu=FLAGS.use_tpu)
    with strategy.scope():
      model = tfm.ModelFnModel(model_fn, config=run_config, params=params, use_tpu=FLAGS.use_tpu,
                               train_batch_size=32, eval_batch_size=8)
      model.compile(steps_per_execution=run_config.iterations_per_loop)
    tfm.fit(model, train_input_fn, max_steps=num_train_steps)
    result = tfm.evaluate(model, eval_input_fn, steps=eval_steps)

The model_fn runs in TF2 on the strategy tier (`runtime/model_fn/strategy/runner.py`): built under the
strategy the model was made in (TPUStrategy on a TPU, Mirrored, MultiWorkerMirrored, or the
default), each step `strategy.run` of the model_fn inside the step `tf.function`, with
`steps_per_execution` steps per call (TPUEstimator's `iterations_per_loop`) and XLA with
`compile(jit_compile=True)`. The spec's `train_op` is the training step, so `fit`, `evaluate` and
`predict` here are the Estimator's calls on an `input_fn` (steps/max_steps, `model_dir`
checkpoints with TF1 names, hooks, Estimator's result keys), not Keras's `Model.fit` loop over a
`train_step`. What TF2 cannot run as TF 1.x ran it (a call with hooks that run in a Session, a
program in graph mode) runs on the graph-mode tier, with the reason logged: the same rules as
`tfm.estimator.Estimator`, which this model drives (`estimator`).

`use_tpu=None` (the default) gives Estimator's calling conventions; a bool gives TPUEstimator's
(`params['batch_size']`, `params['use_tpu']`, the per-core batch on the TPU code path). With
`TFMIGRATE_STRATEGY` set, that strategy is used instead of the one in scope, as for an Estimator.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import tensorflow as tf

from ..inputs import InputFnData
from ..estimator_calls import EstimatorCallsModel
from .core import Estimator
from .tpu import TPUEstimator

__all__ = ["ModelFnModel"]

_KERAS_ONLY = ("optimizer", "loss", "metrics", "loss_weights", "weighted_metrics", "run_eagerly")


def _input_fn(data: Any, caller: str) -> Any:
    if isinstance(data, InputFnData):
        return data.input_fn
    if callable(data) and not isinstance(data, tf.data.Dataset):
        return data
    raise TypeError(
        f"ModelFnModel.{caller}: give the TF1 input_fn (a function returning a dataset or (features, labels)), "
        f"got {type(data).__name__}; a model_fn reads its batches from its input_fn as Estimator called it."
    )


class ModelFnModel(EstimatorCallsModel):
    """A Keras model whose steps are a TF1 model_fn's TRAIN, EVAL and PREDICT modes (module doc)."""

    def __init__(self, model_fn: Any, *, model_dir: Any = None, config: Any = None, params: Any = None,
                 use_tpu: bool | None = None, train_batch_size: int | None = None, eval_batch_size: int | None = None,
                 predict_batch_size: int | None = None, warm_start_from: Any = None, **tpu_kwargs: Any) -> None:
        super().__init__(name=getattr(model_fn, "__name__", "model_fn").strip("<>"))
        self._strategy_in_scope = tf.distribute.get_strategy() if tf.distribute.has_strategy() else None
        if use_tpu is None:
            extra = {"train_batch_size": train_batch_size, "eval_batch_size": eval_batch_size,
                     "predict_batch_size": predict_batch_size, **tpu_kwargs}
            given = sorted(key for key, value in extra.items() if value is not None)
            if given:
                raise TypeError(f"ModelFnModel: {', '.join(given)} are TPUEstimator's arguments; give use_tpu= too.")
            self.estimator = Estimator(model_fn, model_dir=model_dir, config=config, params=params,
                                       warm_start_from=warm_start_from)
        else:
            self.estimator = TPUEstimator(model_fn, model_dir=model_dir, config=config, params=params, use_tpu=use_tpu,
                                          train_batch_size=train_batch_size, eval_batch_size=eval_batch_size,
                                          predict_batch_size=predict_batch_size, warm_start_from=warm_start_from,
                                          **tpu_kwargs)

    # -- Keras ---------------------------------------------------------------------------------------

    def compile(self, steps_per_execution: int | None = None, jit_compile: Any = False, **kwargs: Any) -> None:  # noqa: D417
        """Sets how the model_fn's steps run: `steps_per_execution` per `tf.function` call (TPUEstimator's
        `iterations_per_loop`; None: the config's), compiled with XLA when `jit_compile` is True. The
        model_fn's own optimizer, loss and metrics train and evaluate it; Keras's are refused."""
        given = sorted(key for key in kwargs if key in _KERAS_ONLY and kwargs[key] is not None)
        if given or set(kwargs) - set(_KERAS_ONLY):
            raise TypeError(
                f"ModelFnModel.compile: {', '.join(given or sorted(kwargs))}: the model_fn's own optimizer, loss and "
                "eval_metric_ops train and evaluate this model; compile takes steps_per_execution and jit_compile."
            )
        steps = None if steps_per_execution is None else int(steps_per_execution)
        if steps is not None and steps < 1:
            raise ValueError(f"ModelFnModel.compile: steps_per_execution must be positive, got {steps_per_execution}.")
        self.estimator.run_under(self._strategy_in_scope, steps_per_call=steps, jit_compile=jit_compile is True)
        self.steps_per_execution = steps or getattr(self.estimator.config, "iterations_per_loop", 1) or 1
        self.compiled = True

    @property
    def model_dir(self) -> str:
        return self.estimator.model_dir

    def call(self, inputs: Any, training: Any = None) -> Any:
        raise NotImplementedError(
            "ModelFnModel: a TF1 model_fn is called by mode, with its input_fn's features and labels: use "
            "tfm.fit / tfm.evaluate / tfm.predict_examples (or model.fit / evaluate / predict) with the input_fn."
        )

    def get_variable_names(self) -> list[str]:
        """The TF1 names in the latest checkpoint (Estimator's `get_variable_names`)."""
        return self.estimator.get_variable_names()

    def get_variable_value(self, name: str) -> Any:
        return self.estimator.get_variable_value(name)

    # -- the Estimator's calls -----------------------------------------------------------------------

    def _check_compiled(self) -> None:
        if not self.compiled:
            self.compile()  # the config's iterations_per_loop steps per call

    def fit(self, x: Any = None, *, steps: int | None = None, max_steps: int | None = None, hooks: Any = None,
            saving_listeners: Any = None, callbacks: Any = None, **kwargs: Any) -> None:
        """Estimator's `train(input_fn, hooks, steps, max_steps, saving_listeners)`; `x` is the input_fn."""
        if callbacks or kwargs:
            raise TypeError(
                f"ModelFnModel.fit: {', '.join(sorted(set(kwargs) | ({'callbacks'} if callbacks else set())))}: a kept "
                "model_fn trains with Estimator's arguments (steps, max_steps, hooks, saving_listeners)."
            )
        self._check_compiled()
        self.estimator.train(_input_fn(x, "fit"), hooks=hooks, steps=steps, max_steps=max_steps,
                             saving_listeners=saving_listeners)

    def evaluate(self, x: Any = None, *, steps: int | None = None, hooks: Any = None, checkpoint_path: Any = None,
                 name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """Estimator's `evaluate(input_fn, steps, hooks, checkpoint_path, name)`: metrics, `loss`, `global_step`."""
        if kwargs:
            raise TypeError(f"ModelFnModel.evaluate: {', '.join(sorted(kwargs))}: not an Estimator argument.")
        self._check_compiled()
        return self.estimator.evaluate(_input_fn(x, "evaluate"), steps=steps, hooks=hooks,
                                       checkpoint_path=checkpoint_path, name=name)

    def predict_examples(self, x: Any = None, *, predict_keys: Any = None, hooks: Any = None,
                         checkpoint_path: Any = None, yield_single_examples: bool = True) -> Iterator[Any]:
        """Estimator's `predict`: yields one prediction per example (or per batch)."""
        self._check_compiled()
        return self.estimator.predict(_input_fn(x, "predict"), predict_keys=predict_keys, hooks=hooks,
                                      checkpoint_path=checkpoint_path, yield_single_examples=yield_single_examples)

    def predict(self, x: Any = None, *, steps: int | None = None, **kwargs: Any) -> Any:
        """All predictions at once (Keras's `predict`): the batches' arrays concatenated, in their structure."""
        batches = self.predict_examples(x, yield_single_examples=False, **kwargs)
        if steps is not None:
            batches = (batch for _, batch in zip(range(steps), batches))
        batches = list(batches)
        if not batches:
            raise ValueError("ModelFnModel.predict: the input_fn gave no batch.")
        return tf.nest.map_structure(lambda *parts: np.concatenate(parts, axis=0), *batches)


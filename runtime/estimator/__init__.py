"""`tfm.estimator`: TF1's `tf.compat.v1.estimator`, run in TF1 graph mode on current TF.

The hosted tier: where the codemod cannot rewrite a `model_fn` into Keras, it leaves the TF1
program as written and respells `tf.estimator.X` to `tfm.estimator.X`; this package runs it as
TF 2.15's Estimator did (graph seed, op order, MonitoredTrainingSession and its hooks,
checkpoints `model.ckpt-N`, eval metrics and events, predictions, TF1 SavedModels).

  * `Estimator` (core.py), `EstimatorSpec`/`ModeKeys` (spec.py);
  * `tpu`: `TPUEstimator`/`TPUEstimatorSpec` on TPUEstimator's CPU path;
  * `TrainSpec`/`EvalSpec`/`train_and_evaluate` (training.py), local;
  * `export`: receivers, export outputs, exporters; `inputs.numpy_input_fn`;
  * the canned estimators (canned.py: `DNNClassifier`, ..., wide & deep, baselines), run as the
    `tfm.canned` Keras models through `tfm.fit`/`evaluate`/`predict_examples`;
  * the `SessionRunHook`s tf.estimator re-exported, `experimental` early-stopping hooks.
"""

from __future__ import annotations

import types

from ..config import RunConfig
from . import canned, export, hooks, inputs, tpu
from .canned import (
    BaselineClassifier,
    BaselineRegressor,
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from .core import Estimator, VocabInfo, WarmStartSettings
# TF's private helper of that name, which TF1 programs imported from `tensorflow.python.estimator.estimator`.
from .core import load_global_step_from_checkpoint_dir as _load_global_step_from_checkpoint_dir  # noqa: F401
from .export import BestExporter, Exporter, FinalExporter, LatestExporter
from .hooks import (
    CheckpointSaverHook,
    CheckpointSaverListener,
    FeedFnHook,
    FinalOpsHook,
    GlobalStepWaiterHook,
    LoggingTensorHook,
    NanLossDuringTrainingError,
    NanTensorHook,
    ProfilerHook,
    SecondOrStepTimer,
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
    StepCounterHook,
    StopAtStepHook,
    SummarySaverHook,
)
from .spec import EstimatorSpec, ModeKeys
from .training import EvalSpec, TrainSpec, train_and_evaluate

experimental = types.SimpleNamespace(
    make_early_stopping_hook=hooks.make_early_stopping_hook,
    stop_if_higher_hook=hooks.stop_if_higher_hook,
    stop_if_lower_hook=hooks.stop_if_lower_hook,
    stop_if_no_decrease_hook=hooks.stop_if_no_decrease_hook,
    stop_if_no_increase_hook=hooks.stop_if_no_increase_hook,
)

__all__ = [
    "BaselineClassifier", "BaselineRegressor", "DNNClassifier", "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor", "DNNRegressor", "LinearClassifier", "LinearRegressor", "canned",
    "BestExporter", "CheckpointSaverHook", "CheckpointSaverListener", "Estimator", "EstimatorSpec", "EvalSpec",
    "Exporter", "FeedFnHook", "FinalExporter", "FinalOpsHook", "GlobalStepWaiterHook", "LatestExporter",
    "LoggingTensorHook", "ModeKeys", "NanLossDuringTrainingError", "NanTensorHook", "ProfilerHook", "RunConfig",
    "SecondOrStepTimer", "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues",
    "StepCounterHook", "StopAtStepHook", "SummarySaverHook", "TrainSpec", "VocabInfo", "WarmStartSettings",
    "experimental", "export", "hooks", "inputs", "tpu", "train_and_evaluate",
]

"""tfmigrate.runtime: what migrated programs import.

TF1 Estimator/TPUEstimator behaviour on TF2 + Keras 3:

  * `RunConfig`, `TPUConfig`, `InputPipelineConfig`: the TF1 configuration objects, as validated,
    frozen options.
  * `make_strategy`: the `tf.distribute.Strategy` (TPU, mirrored, central storage, multi-worker
    mirrored, parameter server, one device, default); `cluster_coordinator` for parameter servers;
    `cluster`: `TF_CONFIG` parsing (`parse_tf_config`, `TFConfig`) and who is chief.
  * `input_fn_data` / `InputFnData`: call a TF1 `input_fn` as Estimator did (`params['batch_size']`,
    `mode`, `config`), global or per-replica batches.
  * `fit` / `evaluate` / `predict`: `Estimator.train`/`evaluate`/`predict` semantics (`steps` vs
    `max_steps`, the global step, checkpoints in `model_dir`) on a compiled Keras model, under every
    strategy: Keras's own loops where they work, the runtime's `engine` under multi-worker mirrored
    and parameter-server strategies.
  * `hooks`: TF1 `SessionRunHook`s (`LoggingTensorHook`, `StopAtStepHook`, early stopping, ...)
    as Keras callbacks with Estimator's timing, for `fit`/`evaluate`/`predict(hooks=...)`.
  * `train_and_evaluate` / `TrainSpec` / `EvalSpec`: TF1's local train-and-evaluate loop
    (evaluation after each checkpoint, `throttle_secs`, a final evaluation, exporters), and its
    distributed one from `TF_CONFIG` (chief/workers train, the evaluator evaluates checkpoints).
  * `export` / `export_saved_model`: `Estimator.export_saved_model` with TF1's serving receivers,
    `export_outputs` and exporters, written by `tf.saved_model.save`.
  * `canned`: TF1's canned estimators (`DNNClassifier`, `LinearRegressor`, wide & deep, ...) as
    compiled Keras models with their heads' losses, metrics, predictions and TF1 variable names;
    `feature_columns`: `tf.feature_column.*` with TF1's semantics, as Keras layers.
  * `estimator` (the hosted tier): TF1's `tf.compat.v1.estimator` (`Estimator`, `tpu.TPUEstimator`,
    `train_and_evaluate`, exporters, hooks) running a TF1 `model_fn` as written, in graph mode;
    `legacy`: TF1's `tf.layers` / `tf.nn.rnn_cell` (tf-keras's legacy modules, imported lazily;
    `legacy.tf1_layers` / `tf1_rnn_cell` with TF 1.x's graph-seeded default initializers, `legacy/tf1_initializers.py`;
    `legacy.crf`, `legacy.fused_rnn`, `legacy.predictor`: tf.contrib's CRF, fused RNNs and predictor).
  * `HParams`: `tf.contrib.training.HParams` (typed hyper-parameters, `parse("a=1,b=[2,3]")`).
  * `lookup`: `tf.contrib.lookup`'s vocabulary tables (OOV hash buckets, TF1's defaults).
  * `initializers`: `tf.contrib.layers`/slim's `variance_scaling_initializer` and
    `xavier_initializer` with TF1's distributions.
  * `layers`: TF1 layer behaviour Keras lacks (fused BatchNorm's Bessel-corrected moving variance).
  * `tf1`: TF1 variable-scope code (`get_variable`, `variable_scope(reuse=...)`, functional
    `tf.layers`) run inside a Keras layer (`VariableScopeLayer`) that owns its variables.
  * `metrics`: `tf.compat.v1.metrics.*` as Keras metrics with TF1's arguments and numbers.
  * `schedules`: TF1 learning-rate decays Keras lacks (natural_exp_decay).
  * `optimizers`: Keras optimizers with TF1's float32 arithmetic where Keras's differs (Adam).
  * `losses`: TF1-faithful `tf.compat.v1.losses` (weights and `Reduction`s), and
    `scale_loss_for_replicas` for the loss a Keras `compute_loss` returns under a strategy.

Layers (lowest first; a module imports only from its own layer or lower ones, which
tests/test_layering.py checks, with no import cycles and no private names across modules):

  * base: `_logging`, `_state`, `summary` (the one scalar/histogram/... summary writer), `hparams`.
  * distribution: `cluster` (TF_CONFIG, the one `is_chief`), `config`, `strategy`.
  * TF1-faithful numerics: `optimizers` (which declare their TF1 slot names), `losses`, `metrics`,
    `layers`, `initializers`, `schedules`, `lookup`, `tf1` (the variable-scope host), `tf1_tests` (TF 1.x unit tests), `tf1_variable_names`,
    `feature_columns`, `train_step`, `legacy` (a package: tf.contrib's and TF1's stand-ins).
  * the Estimator-compatible host side: `inputs`, `data_source`, `estimator_calls` (fit/evaluate/
    predict), `keras_workarounds` (the Keras 3 workarounds, each citing its upstream issue),
    `engine` (the one inner loop, for fit/evaluate/predict and `--target ctl`), `ctl`,
    `session_run` + `hooks` + `callbacks`, `early_stopping` (eval results on disk and the one
    early-stopping rule set), `checkpoints`, `tf1_checkpoint`, `export`, `predictions`,
    `training`, `convert`.
  * models: `canned` (package: optimizers, heads, model, builders) and `estimator` (the hosted tier;
    `estimator.keras_model.ModelFnModel`, exported as `ModelFnModel`: the Keras model the codemod
    writes around a kept model_fn, run on the strategy tier).

Custom training loops:

  * `ctl.EstimatorLoop`: the host side (Estimator's `train`/`evaluate`/`predict` contract) of the
    custom training loops `tfmigrate --target ctl` writes; `engine` runs their inner loops.
  * `is_chief`: whether this process is the chief of a strategy's cluster (the one that writes).
"""

from . import (
    canned, cluster, ctl, export, feature_columns, hooks, initializers, layers, legacy, lookup, losses, metrics,
    optimizers, schedules, summary, tf1,
)
from . import estimator
from .estimator.keras_model import ModelFnModel
from .checkpoints import CHECKPOINT_NAME, is_tf1_checkpoint, latest_checkpoint
from .cluster import TFConfig, is_chief, parse_tf_config
from .config import InputPipelineConfig, RunConfig, TPUConfig
from .hparams import HParams
from .inputs import InputFnData, ModeKeys, input_fn_data
from .estimator_calls import evaluate, fit, predict, seed_from_config
from .losses import Reduction, scale_loss_for_replicas
from .predictions import predict_examples
from .export import export_saved_model
from .training import EvalSpec, TrainSpec, train_and_evaluate
from .train_step import train_step
from .strategy import (
    STRATEGY_KINDS, cluster_coordinator, make_strategy, strategy_from_config, tpu_resolvers_local_under_strategy_override,
)
from .tf1_checkpoint import MATCHING_VARIABLES, WarmStartSettings, init_from_checkpoint, load_tf1_checkpoint, warm_start

tpu_resolvers_local_under_strategy_override()  # (only under TFMIGRATE_STRATEGY)

__all__ = [
    "CHECKPOINT_NAME",
    "EvalSpec",
    "HParams",
    "TrainSpec",
    "export",
    "export_saved_model",
    "hooks",
    "train_and_evaluate",
    "STRATEGY_KINDS",
    "InputFnData",
    "InputPipelineConfig",
    "ModeKeys",
    "Reduction",
    "RunConfig",
    "TFConfig",
    "TPUConfig",
    "canned",
    "cluster",
    "cluster_coordinator",
    "ctl",
    "evaluate",
    "feature_columns",
    "fit",
    "init_from_checkpoint",
    "warm_start",
    "WarmStartSettings",
    "MATCHING_VARIABLES",
    "ModelFnModel",
    "input_fn_data",
    "is_tf1_checkpoint",
    "latest_checkpoint",
    "layers",
    "legacy",
    "estimator",
    "initializers",
    "lookup",
    "load_tf1_checkpoint",
    "losses",
    "make_strategy",
    "metrics",
    "optimizers",
    "parse_tf_config",
    "predict",
    "predict_examples",
    "schedules",
    "scale_loss_for_replicas",
    "seed_from_config",
    "summary",
    "tf1",
    "strategy_from_config",
    "train_step",
    "is_chief",
]

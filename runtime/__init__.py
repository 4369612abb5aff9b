"""tfmigrate.runtime: what migrated programs import.

TF1 Estimator/TPUEstimator behaviour on TF2 + Keras 3:

  * `RunConfig`, `TPUConfig`, `InputPipelineConfig`: the TF1 configuration objects, as validated,
    frozen options.
  * `make_strategy`: the `tf.distribute.Strategy` (TPU, mirrored, one device, default).
  * `input_fn_data` / `InputFnData`: call a TF1 `input_fn` as Estimator did (`params['batch_size']`,
    `mode`, `config`), global or per-replica batches.
  * `fit` / `evaluate`: `Estimator.train`/`evaluate` semantics (`steps` vs `max_steps`, the global
    step, checkpoints in `model_dir`) on a compiled Keras model.
  * `metrics`: `tf.compat.v1.metrics.*` as Keras metrics with TF1's arguments and numbers.
  * `schedules`: TF1 learning-rate decays Keras lacks (natural_exp_decay).
  * `optimizers`: Keras optimizers with TF1's float32 arithmetic where Keras's differs (Adam).
  * `losses`: TF1-faithful `tf.compat.v1.losses` (weights and `Reduction`s), and
    `scale_loss_for_replicas` for the loss a Keras `compute_loss` returns under a strategy.
"""

from . import losses, metrics, optimizers, schedules
from .checkpoints import CHECKPOINT_NAME, TF1CheckpointError, is_tf1_checkpoint, latest_checkpoint
from .config import InputPipelineConfig, RunConfig, TPUConfig
from .inputs import InputFnData, ModeKeys, input_fn_data
from .keras_compat import evaluate, fit
from .losses import Reduction, scale_loss_for_replicas
from .strategy import STRATEGY_KINDS, make_strategy

__all__ = [
    "CHECKPOINT_NAME",
    "STRATEGY_KINDS",
    "InputFnData",
    "InputPipelineConfig",
    "ModeKeys",
    "Reduction",
    "RunConfig",
    "TF1CheckpointError",
    "TPUConfig",
    "evaluate",
    "fit",
    "input_fn_data",
    "is_tf1_checkpoint",
    "latest_checkpoint",
    "losses",
    "make_strategy",
    "metrics",
    "optimizers",
    "schedules",
    "scale_loss_for_replicas",
]

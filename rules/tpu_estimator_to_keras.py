"""TFM301: TPUEstimator programs -> a tf.distribute strategy + a compiled Keras model."""

from __future__ import annotations

from tfmigrate.estimator_sites import EstimatorSiteRule

class TPUEstimatorToKeras(EstimatorSiteRule):
    """Rewrite a TPUEstimator program into TPUStrategy (or its fallback) + Keras compile/fit/evaluate.

    `model_fn` becomes a Keras model class (layers built once in `__init__`, the forward pass in
    `call`) and a builder that compiles it with the TF1 loss and optimizer and
    `steps_per_execution=iterations_per_loop`. The estimator becomes a strategy from
    `tfmigrate.runtime.make_strategy` and the model built in its scope; `train`/`evaluate` calls
    become `tfm.fit`/`tfm.evaluate`, which keep the TF1 meaning of `steps`/`max_steps`, the
    model_dir checkpoints and the `params['batch_size']` the input_fn saw. Hooks, specs,
    exporters and `export_saved_model` migrate as for TFM201; hooks see one session run per
    step off TPU and `iterations_per_loop` steps on a TPU, as under TPUEstimator.

    Exports: TPUEstimator's `export_to_tpu` (default True) made `export_saved_model` write, besides
    the `{serve}` MetaGraph, a `{serve, tpu}` one: the PREDICT graph rewritten for TPU inference
    (`TPUPartitionedCall`, `TPUReplicateMetadata`), written even with `use_tpu=False` and on a
    machine without TPU, where it cannot be loaded (no kernels for its TPU ops). The migrated
    export writes the `{serve}` MetaGraph only, with the same signatures; under a TPUStrategy
    the runtime logs that no `{serve, tpu}` MetaGraph was written. `export_to_tpu`,
    `export_to_cpu`, `export_saved_model_api_version` and `experimental_export_device_assignment`
    only shaped that TPU MetaGraph and are dropped; TPU serving needs a TF2 TPU export by hand.

    Guide: https://www.tensorflow.org/guide/migrate/tpu_estimator
    """

    CODE = "TFM301"
    SUMMARY = "TPUEstimator + model_fn -> TPUStrategy + Keras compile(steps_per_execution)/fit/evaluate"
    SAFE = False
    EXAMPLE = "guide_adagrad"  # the TPUEstimator example of TensorFlow's own migration guide
    ESTIMATOR_KEYS = frozenset({"estimator.tpu.TPUEstimator"})
    CTOR_ARGS = (
        "model_fn",
        "model_dir",
        "config",
        "params",
        "use_tpu",
        "train_batch_size",
        "eval_batch_size",
        "predict_batch_size",
        "batch_axis",
        "eval_on_tpu",
        "export_to_tpu",
        "export_to_cpu",
        "warm_start_from",
        "embedding_config_spec",
        "export_saved_model_api_version",
    )
    ESTIMATOR_NAME = "TPUEstimator"
    TPU = True

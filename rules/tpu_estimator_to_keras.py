"""TFM301: TPUEstimator programs -> a tf.distribute strategy + a compiled Keras model.

Where TPUEstimator becomes TPUStrategy: `TPUEstimatorToKeras.strategy_statement` below. The rest of
what is TPU-specific is here too: `iterations_per_loop` -> `steps_per_execution`, the input_fn's
`params['batch_size']` and `use_tpu`, `embedding_config_spec`. What every Estimator-family rule
shares (finding the sites, the model_fn -> Keras translation, train/evaluate/predict, hooks and
exports) is the machinery in `tfmigrate.estimator_sites`, whose base class behaves as Estimator;
the hooks overridden here are declared, with Estimator's behaviour, in `tfmigrate.estimator_codegen`.
"""

from __future__ import annotations

from tfmigrate.estimator_scan import Site
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

    A model_fn it cannot rewrite stays as written: where the program only trains, evaluates and
    predicts with the estimator in its scope, the estimator becomes the same strategy and
    `tfm.ModelFnModel(model_fn, use_tpu=..., config=..., train_batch_size=...)` built in its scope
    and compiled with `steps_per_execution=iterations_per_loop`, and the calls `tfm.fit` /
    `tfm.evaluate` / `tfm.predict_examples` with the input_fn: the model_fn runs in TF2 inside the
    strategy's `tf.function` (`migrate/kept_model.py`). Otherwise it stays `tfm.estimator.tpu.TPUEstimator`.

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
    KEEPS_MODEL_FN_AS_MODEL = True
    TPU_CALLING_CONVENTIONS = True
    UNMIGRATED_ARGS = {
        "embedding_config_spec": "TPU embeddings need tfrs.layers.embedding.TPUEmbedding; not migrated",
    }

    def strategy_statement(self, site: Site, config: str, tfm: str) -> str:
        """TPUEstimator -> TPUStrategy: `strategy = tfm.make_strategy("auto",
        cluster_resolver=<config>.cluster, use_tpu=<use_tpu>)`. The RunConfig's `cluster` (the
        `TPUClusterResolver` TPUEstimator ran on) gives a TPUStrategy on that TPU; with
        `use_tpu=False`, or where no TPU resolves, "auto" picks what the machine has (GPUs,
        a TF_CONFIG cluster, else the default strategy), as TPUEstimator ran on CPU/GPU then."""
        strategy_args = ['"auto"']
        if config != "None":
            strategy_args.append(f"cluster_resolver={config}.cluster")
        if "use_tpu" in site.args:
            strategy_args.append(f"use_tpu={self.code_of(site.args['use_tpu'])}")
        return f"{site.strategy_var} = {tfm}.make_strategy({', '.join(strategy_args)})"

    def steps_per_execution(self, site: Site, config: str) -> str:
        """`TPUConfig.iterations_per_loop` (steps per TPU loop) -> `steps_per_execution`; TPUConfig's
        default, 2, without a RunConfig."""
        return f"{config}.iterations_per_loop" if config != "None" else "2"

    def input_fn_batch_size(self, site: Site, method: str) -> str:
        """TPUEstimator gave its input_fn `params['batch_size']`: the constructor's
        `train_batch_size`/`eval_batch_size`/`predict_batch_size` for `method`."""
        batch_arg = {"train": "train_batch_size", "evaluate": "eval_batch_size", "predict": "predict_batch_size"}[method]
        return self.code_of(site.args[batch_arg]) if batch_arg in site.args else "None"

    def input_fn_placement(self, site: Site) -> str:
        """`use_tpu` (True by default) into `params['use_tpu']`; per-host or per-replica batches are
        then decided as TPUEstimator did, from the config's `per_host_input_for_training`."""
        return f"use_tpu={self.code_of(site.args['use_tpu']) if 'use_tpu' in site.args else 'True'}"

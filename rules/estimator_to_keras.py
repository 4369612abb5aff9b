"""TFM201: Estimator + model_fn programs -> a tf.distribute strategy + a compiled Keras model."""

from __future__ import annotations

from tfmigrate.estimator_sites import EstimatorSiteRule


class EstimatorToKeras(EstimatorSiteRule):
    """Rewrite a `tf.estimator.Estimator(model_fn=...)` program into Keras compile/fit/evaluate.

    The `model_fn` becomes a Keras model class and builder exactly as for TPUEstimator (TFM301);
    the estimator becomes the strategy `RunConfig(train_distribute=...)` named (the default one
    otherwise) and the model built in its scope. `train`/`evaluate`/`predict` become the runtime's
    `fit`/`evaluate`/`predict_examples`, which keep Estimator's `steps`/`max_steps`, `model_dir`
    checkpoints and per-replica `input_fn` batches under a distribution strategy. Around the
    estimator: hooks (call-site and the spec's `training_hooks`) become
    `tfmigrate.runtime.hooks` callbacks with TF1's timing, `train_and_evaluate` with its specs and
    exporters the runtime's local loop, `export_saved_model` a TF2 SavedModel with TF1's
    signatures. A `tf.compat.v1.disable_eager_execution()`/`disable_v2_behavior()` statement is
    removed (with a note) once an estimator of the file is migrated: the migrated program runs
    eagerly.

    A model_fn it cannot rewrite stays as written: where the program only trains, evaluates and
    predicts with the estimator in its scope, the estimator becomes the RunConfig's strategy and
    `tfm.ModelFnModel(model_fn, config=..., params=...)` built in its scope, and the calls
    `tfm.fit` / `tfm.evaluate` / `tfm.predict_examples` with the input_fn: the model_fn runs in
    TF2 inside the strategy's `tf.function` (`migrate/kept_model.py`). Otherwise it stays
    `tfm.estimator.Estimator`.

    Guide: https://www.tensorflow.org/guide/migrate/migrating_estimator
    """

    CODE = "TFM201"
    SUMMARY = "Estimator + model_fn -> Keras model in the RunConfig's strategy + compile/fit/evaluate"
    SAFE = False
    EXAMPLE = "custom_estimator_classifier"  # the Estimator guide's custom estimator
    RUNS_AFTER = ()
    ESTIMATOR_KEYS = frozenset({"estimator.Estimator"})
    CTOR_ARGS = ("model_fn", "model_dir", "config", "params", "warm_start_from")
    ESTIMATOR_NAME = "Estimator"
    KEEPS_MODEL_FN_AS_MODEL = True

"""What a generated program is made of: one `Choices` per seed, drawn by `choose(seed)`.

Each field is one construct real Estimator programs vary in (the brief of #37): how the model is
built, its head, how the model_fn's modes are laid out, the loss and its regularization, the
optimizer, its learning-rate schedule and clipping, the metrics, the spec, how the estimator is
used, and the distribution strategy. `choose` draws every field from a `random.Random(seed)` and
then repairs the combinations TF 1.x itself does not accept (a `metric_fn` on an `EstimatorSpec`,
a TPUEstimator under `train_distribute`), so every seed is a program the oracle runs.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass

MODELS = ("layers", "layers_loop", "helper_with", "helper_named", "keras_layers", "inline_variables", "shared_scope")
HEADS = ("softmax", "sigmoid", "sigmoid_squeezed", "regression", "two_heads")
LAYOUTS = ("chain", "nested_chain", "predict_first", "predict_last", "single", "create_model")
OPTIMIZERS = ("sgd", "momentum", "nesterov", "adam", "adagrad", "rmsprop", "rmsprop_momentum", "adadelta", "ftrl")
DECAYS = ("none", "exponential", "staircase", "polynomial", "piecewise", "inverse_time", "cosine", "warmup")
GRADIENTS = ("minimize", "clip_global_norm", "clip_value", "minimize_inline")
REGULARIZATIONS = ("none", "l2_manual", "regularizer", "total_loss")
USES = ("loop", "build_estimator", "train_and_evaluate_specs_first", "train_and_evaluate_config_first")
FEATURES = ("dict", "two_keys", "tensor")
ACTIVATIONS = ("relu", "tanh", "sigmoid")
# How the estimator gets the model_fn, beside `model_fn=model_fn`: through a TPU-style wrapper
# that calls it, from a module-level table of model_fns, or by name where other code also reads
# it (its name logged): the Keras rewrite, which takes the function's name, must leave those.
MODEL_FN_REFS = ("direct", "wrapper", "table", "named")
# Where the program switches TF 1.x's v2 behaviour off itself (`tf.disable_v2_behavior()`), as
# programs ported to TF 1.15 did: nowhere, at module level, first thing in `main`, or in a helper
# `main` calls. The migration drops the switch wherever it is (its estimators run in TF2).
GRAPH_SWITCHES = ("none", "module", "main", "helper")
# Layouts whose PREDICT mode builds no loss: only these programs call predict().
PREDICTS = ("nested_chain", "predict_first", "predict_last")


@dataclass(frozen=True)
class Choices:
    seed: int
    estimator: str  # "estimator" (Estimator + EstimatorSpec) or "tpu" (TPUEstimator + TPUEstimatorSpec)
    strategy: str  # "default" or "mirrored" (train_distribute over two logical CPUs)
    model: str
    activation: str
    hidden: tuple[int, ...]
    head: str
    classes: int  # softmax and two_heads: 2 or 3
    layout: str
    loss_form: str  # "losses" (tf.losses.*) or "manual" (reduce_mean of the nn op)
    regularization: str
    optimizer: str
    decay: str
    gradients: str
    metrics: str  # "dict" (eval_metric_ops) or "metric_fn" (TPU eval_metrics)
    use: str
    features: str
    initializer: str  # "constant" (np.linspace tables) or "seeded" (TF1 seeded draws: continue from the oracle)
    examples: int
    batch: int
    eval_batch: int
    steps: int
    predict: bool
    cross_shard: bool  # TPU: `if params['use_tpu']: CrossShardOptimizer(...)`
    batch_norm: bool  # batch normalization after the first hidden layer, its UPDATE_OPS run by the train op
    model_fn_ref: str = "direct"  # MODEL_FN_REFS
    graph_switch: str = "none"  # GRAPH_SWITCHES

    def summary(self) -> str:
        fields = asdict(self)
        del fields["seed"]
        return ", ".join(f"{key}={value}" for key, value in fields.items())


def choose(seed: int) -> Choices:
    """The program of `seed`: every construct drawn, then made a program TF 1.x accepts."""
    draw = random.Random(seed)
    estimator = draw.choice(("estimator", "estimator", "tpu"))
    strategy = "mirrored" if estimator == "estimator" and draw.random() < 0.2 else "default"
    model = draw.choice(MODELS)
    head = draw.choice(HEADS)
    layout = draw.choice(LAYOUTS)
    metrics = "metric_fn" if estimator == "tpu" else "dict"
    features = draw.choice(FEATURES)
    regularization = draw.choice(REGULARIZATIONS)
    loss_form = draw.choice(("losses", "manual"))
    if regularization == "total_loss":
        loss_form = "losses"  # get_total_loss() collects what tf.losses.* added
    initializer = "seeded" if model == "layers_loop" else draw.choice(("constant", "constant", "seeded"))
    optimizer = draw.choice(OPTIMIZERS)
    decay = draw.choice(DECAYS)
    if optimizer == "ftrl" and decay in ("warmup", "cosine"):
        # FTRL divides by the rate: a warm-up's first rate of 0, or a cosine decay's last (seed 777),
        # makes NaNs in TF1 too
        decay = "polynomial"
    batch = draw.choice((8, 10, 16))
    examples = draw.choice((48, 50, 60, 64))
    if strategy == "mirrored":
        batch = draw.choice((8, 16))  # a batch the two replicas split evenly
    return Choices(
        seed=seed,
        estimator=estimator,
        strategy=strategy,
        model=model,
        activation=draw.choice(ACTIVATIONS),
        hidden=tuple(draw.choice((4, 6, 8)) for _ in range(draw.choice((1, 1, 2)))),
        head=head,
        classes=draw.choice((2, 3)),
        layout=layout,
        loss_form=loss_form,
        regularization=regularization,
        optimizer=optimizer,
        decay=decay,
        gradients=draw.choice(GRADIENTS),
        metrics=metrics,
        use=draw.choice(USES),
        features=features,
        initializer=initializer,
        examples=examples,
        batch=batch,
        eval_batch=draw.choice((batch, 2 * batch)),
        steps=draw.choice((5, 8, 12)),
        predict=layout in PREDICTS and draw.random() < 0.7,
        cross_shard=estimator == "tpu" and draw.random() < 0.5,  # (minimize_inline: no optimizer variable to wrap)
        batch_norm=draw.random() < 0.25,  # drawn last: the draws before it are those of the seed without it
        model_fn_ref=_model_fn_ref(seed),
        graph_switch=_graph_switch(seed),
    )


def _model_fn_ref(seed: int) -> str:
    """Drawn from its own stream (the other draws of a seed are those of the seed without it), and
    "direct" for every seed of the suite's fixed sample that predates it (`SAMPLE_BEFORE_REFS`)."""
    if seed in SAMPLE_BEFORE_REFS:
        return "direct"
    draw = random.Random(f"model_fn_ref {seed}")
    return draw.choice(MODEL_FN_REFS[1:]) if draw.random() < 0.2 else "direct"


def _graph_switch(seed: int) -> str:
    """Drawn from its own stream, as `model_fn_ref` is; "none" for the suite's sample before it."""
    if seed in SAMPLE_BEFORE_SWITCHES:
        return "none"
    draw = random.Random(f"graph_switch {seed}")
    return draw.choice(GRAPH_SWITCHES[1:]) if draw.random() < 0.25 else "none"


# The suite's sample (test_generated.SAMPLE) as it stood when `model_fn_ref` came: those programs stay as they were chosen.
SAMPLE_BEFORE_REFS = frozenset({1, 5, 13, 20, 23, 29, 30, 35, 36, 42, 45, 47, 49, 59, 64, 72, 74, 78, 80, 81, 88, 93,
                                0, 2, 3, 4, 6, 7, 8, 9, 17, 22, 67, 153})
# ... and when `graph_switch` came.
SAMPLE_BEFORE_SWITCHES = SAMPLE_BEFORE_REFS | {26, 11, 52}

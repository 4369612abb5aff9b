"""A generated program's text: `render(choose(seed))`.

The program is TF 1.x code as its authors wrote it (`import tensorflow.compat.v1 as tf`, two-space
indents), deterministic (NumPy data of its seed, constant or seeded initializers, no shuffling or
dropout), and prints each `evaluate()` result (and the sum of its predictions) as an
`eval_results` line for tests/equivalence/harness.py. A program with seeded TF1 initializers says
`tfmigrate-harness: continue-from-oracle`: the migration continues from the oracle's checkpoint
(Keras's initializers draw other numbers than TF1's from the same seed).
"""

from __future__ import annotations

from .choices import Choices, choose
from .model_code import INPUT_WIDTH, helpers, loss_lines, metric_dict, metric_fn, model_lines, outputs, predictions

LEARNING_RATES = {
    "sgd": 0.1, "momentum": 0.05, "nesterov": 0.05, "adam": 0.01, "adagrad": 0.1,
    "rmsprop": 0.01, "rmsprop_momentum": 0.005, "adadelta": 1.0, "ftrl": 0.1,
}
OPTIMIZERS = {
    "sgd": "tf.train.GradientDescentOptimizer(rate)",
    "momentum": "tf.train.MomentumOptimizer(rate, momentum=0.9)",
    "nesterov": "tf.train.MomentumOptimizer(rate, 0.9, use_nesterov=True)",
    "adam": "tf.train.AdamOptimizer(learning_rate=rate)",
    "adagrad": "tf.train.AdagradOptimizer(rate)",
    "rmsprop": "tf.train.RMSPropOptimizer(rate)",
    "rmsprop_momentum": "tf.train.RMSPropOptimizer(rate, momentum=0.5, centered=True)",
    "adadelta": "tf.train.AdadeltaOptimizer(rate)",
    "ftrl": "tf.train.FtrlOptimizer(rate)",
}
PRINT = "print('eval_results', repr({k: float(v) for k, v in sorted(results.items())}))"


def generate(seed: int) -> str:
    return render(choose(seed))


def continues_from_oracle(c: Choices) -> bool:
    return c.initializer == "seeded"


def _indent(lines: list[str], depth: int = 1) -> list[str]:
    return [("  " * depth + line) if line else line for line in lines]


def _rate_lines(c: Choices) -> list[str]:
    step = "global_step"
    base = "params['learning_rate']"
    decays = {
        "none": [f"rate = {base}"],
        "exponential": [f"rate = tf.train.exponential_decay({base}, {step}, 5, 0.7)"],
        "staircase": [f"rate = tf.train.exponential_decay({base}, {step}, 4, 0.5, staircase=True)"],
        "polynomial": [f"rate = tf.train.polynomial_decay({base}, {step}, 30, end_learning_rate={base} / 10, power=1.0)"],
        "piecewise": [f"rate = tf.train.piecewise_constant({step}, [6, 12], [{base}, {base} / 2, {base} / 4])"],
        "inverse_time": [f"rate = tf.train.inverse_time_decay({base}, {step}, 5, 0.5)"],
        "cosine": [f"rate = tf.train.cosine_decay({base}, {step}, 40)"],
        "warmup": [
            f"rate = tf.constant(value={base}, shape=[], dtype=tf.float32)",
            f"rate = tf.train.polynomial_decay(rate, {step}, 40, end_learning_rate=0.0, power=1.0, cycle=False)",
            f"steps_int = tf.cast({step}, tf.int32)",
            "warmup_steps_int = tf.constant(4, dtype=tf.int32)",
            "warmup_percent_done = tf.cast(steps_int, tf.float32) / tf.cast(warmup_steps_int, tf.float32)",
            f"warmup_rate = {base} * warmup_percent_done",
            "is_warmup = tf.cast(steps_int < warmup_steps_int, tf.float32)",
            "rate = (1.0 - is_warmup) * rate + is_warmup * warmup_rate",
        ],
    }
    getter = "tf.train.get_or_create_global_step()" if c.seed % 3 == 0 else "tf.train.get_global_step()"
    return [f"global_step = {getter}"] + decays[c.decay]


def train_lines(c: Choices) -> list[str]:
    """`train_op = ...`: the global step, the schedule, the optimizer, the gradients; with batch
    normalization, the line making `train_op` runs after the UPDATE_OPS."""
    lines = _train_lines(c)
    if not c.batch_norm:
        return lines
    return lines[:-1] + [
        "update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)",
        "with tf.control_dependencies(update_ops):",
        f"  {lines[-1]}",
    ]


def _train_lines(c: Choices) -> list[str]:
    if c.gradients == "minimize_inline" and not c.cross_shard:
        return _rate_lines(c) + [f"train_op = {OPTIMIZERS[c.optimizer]}.minimize(loss, global_step=global_step)"]
    lines = _rate_lines(c) + [f"optimizer = {OPTIMIZERS[c.optimizer]}"]
    if c.cross_shard:
        lines += ["if params['use_tpu']:", "  optimizer = tf.tpu.CrossShardOptimizer(optimizer)"]
    if c.gradients in ("minimize", "minimize_inline"):
        lines.append("train_op = optimizer.minimize(loss, global_step=global_step)")
    elif c.gradients == "clip_global_norm":
        lines += [
            "grads_and_vars = optimizer.compute_gradients(loss)",
            "grads, variables = zip(*grads_and_vars)",
            "grads, _ = tf.clip_by_global_norm(grads, 1.0)",
            "train_op = optimizer.apply_gradients(zip(grads, variables), global_step=global_step)",
        ]
    else:
        lines += [
            "tvars = tf.trainable_variables()",
            "grads = tf.gradients(loss, tvars)",
            "grads = [tf.clip_by_value(grad, -0.5, 0.5) for grad in grads]",
            "train_op = optimizer.apply_gradients(zip(grads, tvars), global_step=global_step)",
        ]
    return lines


def _spec(c: Choices, **fields: str) -> str:
    name = "tf.estimator.tpu.TPUEstimatorSpec" if c.estimator == "tpu" else "tf.estimator.EstimatorSpec"
    return f"{name}(mode=mode, " + ", ".join(f"{key}={value}" for key, value in fields.items()) + ")"


def _eval_parts(c: Choices) -> tuple[list[str], dict[str, str]]:
    """The EVAL mode's lines and its spec's metric field."""
    if c.metrics == "metric_fn":
        body, tensors = metric_fn(c)
        return body, {"eval_metrics": f"(metric_fn, {tensors})"}
    return ["metrics = {"] + [f"    {entry}," for entry in metric_dict(c)] + ["}"], {"eval_metric_ops": "metrics"}


def model_fn_lines(c: Choices) -> list[str]:
    """`model_fn` and the module-level functions it calls, in the program's mode layout."""
    model, loss, train = model_lines(c), loss_lines(c), train_lines(c)
    evaluation, metric_field = _eval_parts(c)
    train_spec = _spec(c, loss="loss", train_op="train_op")
    eval_spec = _spec(c, loss="loss", **metric_field)
    predict_spec = _spec(c, predictions=predictions(c))
    mode = "tf.estimator.ModeKeys"
    top: list[str] = []
    if c.layout == "chain":
        body = model + loss + ["output_spec = None", f"if mode == {mode}.TRAIN:"] + _indent(train + [f"output_spec = {train_spec}"])
        body += [f"elif mode == {mode}.EVAL:"] + _indent(evaluation + [f"output_spec = {eval_spec}"]) + ["return output_spec"]
    elif c.layout == "nested_chain":
        inner = loss + [f"if mode == {mode}.TRAIN:"] + _indent(train + [f"output_spec = {train_spec}"])
        inner += ["else:"] + _indent(evaluation + [f"output_spec = {eval_spec}"])
        body = model + ["output_spec = None", f"if mode == {mode}.PREDICT:", f"  output_spec = {predict_spec}", "else:"]
        body += _indent(inner) + ["return output_spec"]
    elif c.layout == "predict_first":
        body = model + [f"if mode == {mode}.PREDICT:", f"  return {predict_spec}"] + loss
        body += [f"if mode == {mode}.EVAL:"] + _indent(evaluation + [f"return {eval_spec}"]) + train + [f"return {train_spec}"]
    elif c.layout == "predict_last":
        names = ", ".join(outputs(c))
        top = [f"def compute_loss(labels, {names}):"] + _indent(loss + ["return loss"]) + ["", ""]
        call = f"loss = compute_loss(labels, {names})"
        body = model + [f"if mode == {mode}.TRAIN:"] + _indent([call] + train + [f"return {train_spec}"])
        body += [f"if mode == {mode}.EVAL:"] + _indent([call] + evaluation + [f"return {eval_spec}"]) + [f"return {predict_spec}"]
    elif c.layout == "single":
        if c.metrics == "metric_fn":
            spec = _spec(c, loss="loss", train_op="train_op", **metric_field)
        else:
            spec = _spec(c, loss="loss", train_op="train_op", eval_metric_ops="metrics")
        body = model + loss + train + evaluation + [f"return {spec}"]
    else:  # create_model: a BERT-style helper returning a tuple
        names = ", ".join(["loss", *outputs(c)])
        top = ["def create_model(features, labels, params, is_training):"] + _indent(model + loss + [f"return ({names})"]) + ["", ""]
        body = [f"is_training = mode == {mode}.TRAIN", f"({names}) = create_model(features, labels, params, is_training)",
                "output_spec = None", f"if mode == {mode}.TRAIN:"]
        body += _indent(train + [f"output_spec = {train_spec}"])
        body += [f"elif mode == {mode}.EVAL:"] + _indent(evaluation + [f"output_spec = {eval_spec}"]) + ["return output_spec"]
    return top + ["def model_fn(features, labels, mode, params):"] + _indent(body)


def data_lines(c: Choices) -> list[str]:
    lines = [f"rng = np.random.RandomState({c.seed})", f"X = rng.normal(size=({c.examples}, {INPUT_WIDTH})).astype(np.float32)"]
    if c.head == "softmax":
        lines.append("Y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(np.int32)" if c.classes == 2 else
                     "Y = np.digitize(X[:, 0] - X[:, 2], [-0.5, 0.5]).astype(np.int32)")
    elif c.head == "sigmoid":
        lines.append("Y = (X[:, 0] * X[:, 1] > 0).astype(np.float32).reshape(-1, 1)")
    elif c.head == "sigmoid_squeezed":
        lines.append("Y = (X[:, 0] * X[:, 1] > 0).astype(np.float32)")
    elif c.head == "regression":
        lines.append("Y = (0.8 * X[:, :1] - 0.3 * X[:, 1:2] + 0.1).astype(np.float32)")
    else:
        label = "(X[:, 0] + 0.5 * X[:, 1] > 0)" if c.classes == 2 else "np.digitize(X[:, 0] - X[:, 2], [-0.5, 0.5])"
        lines.append(f"Y = {{'label': {label}.astype(np.int32), 'value': (0.5 * X[:, 3:4] - 0.2).astype(np.float32)}}")
    features = {"dict": "{'x': X}", "two_keys": "{'a': X[:, :2], 'b': X[:, 2:]}", "tensor": "X"}[c.features]
    return lines + [f"FEATURES = {features}"]


def _uses_params_input(c: Choices) -> bool:
    return c.estimator == "tpu" or c.seed % 2 == 1


def input_lines(c: Choices) -> list[str]:
    tpu = c.estimator == "tpu"
    takes = "params" if _uses_params_input(c) else ""
    train_batch = "params['batch_size']" if takes else str(c.batch)
    eval_batch = "params['batch_size']" if takes else str(c.eval_batch)
    drop = ", drop_remainder=True" if tpu else ""
    lines = [
        f"def train_input_fn({takes}):",
        "  dataset = tf.data.Dataset.from_tensor_slices((FEATURES, Y))",
        f"  return dataset.repeat().batch({train_batch}{drop})",
        "",
        "",
        f"def eval_input_fn({takes}):",
        f"  return tf.data.Dataset.from_tensor_slices((FEATURES, Y)).batch({eval_batch}{drop})",
    ]
    if c.predict:
        predict_batch = "params['batch_size']" if takes else "8"
        lines += ["", "", f"def predict_input_fn({takes}):", f"  return tf.data.Dataset.from_tensor_slices(FEATURES).take(20).batch({predict_batch})"]
        lines += ["", "", "def total(predictions):", "  values = [v for p in predictions for v in (p.values() if isinstance(p, dict) else [p])]",
                  "  return float(sum(np.sum(np.asarray(v, np.float64)) for v in values))"]
    return lines


def _eval_steps(c: Choices) -> str | None:
    if c.estimator == "tpu":
        return str(c.examples // c.eval_batch)
    return None if c.seed % 4 < 2 else str(max(1, c.examples // c.eval_batch - 1))


def _estimator_lines(c: Choices, model_dir: str) -> list[str]:
    params = f"{{'hidden_units': {list(c.hidden)}, 'learning_rate': {LEARNING_RATES[c.optimizer]}"
    if c.estimator == "estimator" and _uses_params_input(c):
        params += f", 'batch_size': {c.batch}"
    params += "}"
    if c.estimator == "tpu":
        loop = (1, 2, 4)[c.seed % 3]
        predict = ", predict_batch_size=8" if c.predict else ""
        return [
            f"config = tf.estimator.tpu.RunConfig(model_dir={model_dir}, tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop={loop}))",
            "estimator = tf.estimator.tpu.TPUEstimator(",
            f"    model_fn={_model_fn_arg(c)}, config=config, use_tpu=False, train_batch_size={c.batch}, eval_batch_size={c.eval_batch}{predict},",
            f"    params={params})",
        ]
    lines = []
    distribute = ""
    if c.strategy == "mirrored":
        lines.append("strategy = tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'], cross_device_ops=tf.distribute.ReductionToOneDevice())")
        distribute = ", train_distribute=strategy"
    lines.append(f"config = tf.estimator.RunConfig(model_dir={model_dir}{distribute})")
    lines.append(f"estimator = tf.estimator.Estimator(model_fn={_model_fn_arg(c)}, config=config, params={params})")
    return lines


def _model_fn_arg(c: Choices) -> str:
    return {"wrapper": "wrapped_model_fn", "table": "MODEL_FNS['mlp']"}.get(c.model_fn_ref, "model_fn")


def model_fn_ref_lines(c: Choices) -> list[str]:
    """What else refers to `model_fn` (`Choices.model_fn_ref`): a wrapper, a table, a log line."""
    if c.model_fn_ref == "wrapper":
        return ["def wrapped_model_fn(features, labels, mode, params):", "  return model_fn(features, labels, mode, params)"]
    if c.model_fn_ref == "table":
        return ["MODEL_FNS = {'mlp': model_fn}"]
    if c.model_fn_ref == "named":
        return ["def describe():", "  return 'model: %s' % model_fn.__name__"]
    return []


def _evaluate(c: Choices) -> str:
    steps = _eval_steps(c)
    return f"results = estimator.evaluate(input_fn=eval_input_fn{f', steps={steps}' if steps else ''})"


def main_lines(c: Choices) -> list[str]:
    predict = ["predictions = list(estimator.predict(predict_input_fn))", "print('eval_results', repr({'predictions': total(predictions)}))"]
    predict = predict if c.predict else []
    loop = ["for _ in range(2):", f"  estimator.train(input_fn=train_input_fn, steps={c.steps})", f"  {_evaluate(c)}", f"  {PRINT}"]
    if c.use == "loop":
        return ["def main():"] + _indent(_estimator_lines(c, "'model'") + loop + predict)
    if c.use == "build_estimator":
        build = ["def build_estimator(model_dir):"] + _indent(_estimator_lines(c, "model_dir") + ["return estimator"])
        return build + ["", "", "def main():", "  estimator = build_estimator('model')"] + _indent(loop + predict)
    steps = _eval_steps(c)
    specs = [
        f"train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn, max_steps=start + {2 * c.steps})",
        f"eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, steps={steps}, throttle_secs=0)",
    ]
    start = [
        "latest = tf.train.latest_checkpoint('model')",
        "start = int(latest.rsplit('-', 1)[1]) if latest else 0",
    ]
    made = _estimator_lines(c, "'model'")
    ordered = specs + made if c.use == "train_and_evaluate_specs_first" else made + specs
    run = ["tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)", _evaluate(c), PRINT]
    return ["def main():"] + _indent(start + ordered + run + predict)


def render(c: Choices) -> str:
    continued = "\ntfmigrate-harness: continue-from-oracle" if continues_from_oracle(c) else ""
    header = [
        f'"""Generated by tests/generated (seed {c.seed}): {c.summary()}.{continued}"""',
        "import numpy as np",
        "import tensorflow.compat.v1 as tf",
        "",
    ]
    if c.strategy == "mirrored":
        header += [
            "_cpu = tf.config.list_physical_devices('CPU')[0]",
            "tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)",
            "",
        ]
    parts = [data_lines(c)]
    if helpers(c):
        parts.append(helpers(c))
    parts.append(model_fn_lines(c))
    if model_fn_ref_lines(c):
        parts.append(model_fn_ref_lines(c))
    main = main_lines(c)
    if c.model_fn_ref == "named":
        main.insert(main.index("def main():") + 1, "  print(describe())")
    if c.graph_switch == "module":
        header.insert(header.index("import tensorflow.compat.v1 as tf") + 1, "tf.disable_v2_behavior()")
    elif c.graph_switch == "main":
        main.insert(main.index("def main():") + 1, "  tf.disable_v2_behavior()")
    elif c.graph_switch == "helper":
        main.insert(main.index("def main():") + 1, "  use_graph_mode()")
        main[:0] = ["def use_graph_mode():", "  tf.disable_v2_behavior()", "", ""]
    parts += [input_lines(c), main, ["if __name__ == '__main__':", "  main()"]]
    out = header[:]
    for index, part in enumerate(parts):
        if index:
            out += ["", ""]
        out += part
    return "\n".join(out) + "\n"

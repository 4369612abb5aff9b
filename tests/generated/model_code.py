"""The model part of a generated program: its dense layers in the program's style (`tf.layers`, a
`get_variable` helper under `with` scopes or taking a scope name, Keras layers, inline variables, a
loop over `params['hidden_units']`), and its head (what the model_fn computes from the last
layer without labels, with labels: the loss and the metrics)."""

from __future__ import annotations

from .choices import Choices

INPUT_WIDTH = 5
ACTIVATION_FUNCTIONS = {"relu": "tf.nn.relu", "tanh": "tf.nn.tanh", "sigmoid": "tf.nn.sigmoid"}


def regularizer(c: Choices) -> str | None:
    """The kernel regularizer the layers take, or None."""
    if c.regularization not in ("regularizer", "total_loss"):
        return None
    return "tf.keras.regularizers.l2(1e-3)" if c.seed % 2 else "lambda weights: 1e-3 * tf.nn.l2_loss(weights)"


def initializer(c: Choices, rows: int, cols: int, index: int) -> str:
    """A kernel initializer of shape (rows, cols): a deterministic table, or a seeded TF1 draw."""
    if c.initializer == "constant":
        scale = (0.6, 0.45, 0.3)[index % 3]
        sign = "-" if index % 2 else ""
        return f"tf.constant_initializer(np.linspace({sign}{scale}, {'' if sign else '-'}{scale}, {rows * cols}).reshape({rows}, {cols}))"
    family = (c.seed + index) % 3
    if family == 0:
        return f"tf.glorot_uniform_initializer(seed={index + 1})"
    if family == 1:
        return f"tf.truncated_normal_initializer(stddev=0.4, seed={index + 1})"
    return f"tf.random_normal_initializer(stddev=0.3, seed={index + 1})"


def output_widths(c: Choices) -> list[tuple[str, int]]:
    """The output layers: (variable, width)."""
    if c.head in ("softmax",):
        return [("logits", c.classes)]
    if c.head in ("sigmoid", "sigmoid_squeezed"):
        return [("logits", 1)]
    if c.head == "regression":
        return [("output", 1)]
    return [("logits", c.classes), ("value", 1)]


def helpers(c: Choices) -> list[str]:
    """Module-level functions the model code calls."""
    reg = regularizer(c)
    reg_arg = f", regularizer={reg}" if reg else ""
    if c.model == "helper_with":
        return [
            "def fully_connected(inputs, in_dim, out_dim, initializer):",
            f"  weights = tf.get_variable('weights', [in_dim, out_dim], initializer=initializer{reg_arg})",
            "  biases = tf.get_variable('biases', [out_dim], initializer=tf.zeros_initializer())",
            "  return tf.matmul(inputs, weights) + biases",
        ]
    if c.model == "shared_scope":
        reg_arg = f", kernel_regularizer={reg}" if reg else ""
        return [
            "def tower(inputs, reuse):",
            "  with tf.variable_scope('tower', reuse=reuse):",
            f"    return tf.layers.dense(inputs, {c.hidden[0]}, activation={ACTIVATION_FUNCTIONS[c.activation]},"
            f" kernel_initializer={initializer(c, INPUT_WIDTH, c.hidden[0], 0)}{reg_arg})",
        ]
    if c.model == "helper_named":
        return [
            "def dense_block(inputs, units, name, initializer, activation=None):",
            "  with tf.variable_scope(name):",
            "    in_dim = inputs.get_shape().as_list()[-1]",
            f"    kernel = tf.get_variable('kernel', [in_dim, units], initializer=initializer{reg_arg})",
            "    bias = tf.get_variable('bias', [units], initializer=tf.constant_initializer(0.01))",
            "    outputs = tf.matmul(inputs, kernel) + bias",
            "    if activation is not None:",
            "      outputs = activation(outputs)",
            "    return outputs",
        ]
    return []


def _layer(c: Choices, target: str, inputs: str, rows: int, cols: int, index: int, name: str, activation: str | None) -> list[str]:
    init = initializer(c, rows, cols, index)
    reg = regularizer(c)
    act = ACTIVATION_FUNCTIONS[activation] if activation else None
    if c.model in ("layers", "layers_loop", "shared_scope"):
        extra = f", kernel_regularizer={reg}" if reg else ""
        extra += f", name='{name}'" if index % 2 == 0 else ""
        return [f"{target} = tf.layers.dense({inputs}, {cols}, activation={act}, kernel_initializer={init}{extra})"]
    if c.model == "keras_layers":
        extra = f", kernel_regularizer={reg}" if reg else ""
        keras_act = f"'{activation}'" if activation else "None"
        return [f"{target} = tf.keras.layers.Dense({cols}, activation={keras_act}, kernel_initializer={init}{extra})({inputs})"]
    if c.model == "helper_with":
        call = f"fully_connected({inputs}, {rows}, {cols}, {init})"
        lines = [f"with tf.variable_scope('{name}'):"]
        if act and index % 2 == 0:
            lines.append(f"  {target} = {act}({call})")
        else:
            lines.append(f"  {target} = {call}")
            if act:
                lines.append(f"  {target} = {act}({target})")
        return lines
    if c.model == "helper_named":
        act_arg = f", activation={act}" if act else ""
        return [f"{target} = dense_block({inputs}, {cols}, '{name}', {init}{act_arg})"]
    # inline_variables
    reg_arg = f", regularizer={reg}" if reg else ""
    value = f"tf.matmul({inputs}, w_{name}) + b_{name}"
    return [
        f"w_{name} = tf.get_variable('w_{name}', [{rows}, {cols}], initializer={init}{reg_arg})",
        f"b_{name} = tf.get_variable('b_{name}', [{cols}], initializer=tf.zeros_initializer())",
        f"{target} = {act}({value})" if act else f"{target} = {value}",
    ]


def model_lines(c: Choices) -> list[str]:
    """The model_fn lines from `features` to the output layers (and the head's label-free part)."""
    net = {"dict": "features['x']", "two_keys": "tf.concat([features['a'], features['b']], axis=1)", "tensor": "features"}[c.features]
    lines = [f"net = {net}"]
    width = INPUT_WIDTH
    if c.model == "layers_loop":
        reg = regularizer(c)
        extra = f", kernel_regularizer={reg}" if reg else ""
        act = ACTIVATION_FUNCTIONS[c.activation]
        lines += [
            "for index, units in enumerate(params['hidden_units']):",
            f"  net = tf.layers.dense(net, units, activation={act}, kernel_initializer=tf.glorot_uniform_initializer(seed=index + 1),"
            f" name='hidden_%d' % index{extra})",
        ]
        width = c.hidden[-1]
    else:
        first = 0
        if c.model == "shared_scope":  # one layer's weights used twice: the second call reuses the first's
            lines.append("net = tower(net, reuse=False) + tower(0.5 * net, reuse=True)")
            width, first = c.hidden[0], 1
        for index, units in enumerate(c.hidden[first:], start=first):
            lines += _layer(c, "net", "net", width, units, index, f"hidden{index + 1}", c.activation)
            width = units
            if index == 0:
                lines += batch_norm_lines(c)
    if c.model in ("shared_scope", "layers_loop"):
        lines += batch_norm_lines(c)
    for offset, (target, cols) in enumerate(output_widths(c)):
        lines += _layer(c, target, "net", width, cols, len(c.hidden) + offset, target, None)
    return lines + head_outputs(c)


def batch_norm_lines(c: Choices) -> list[str]:
    """Batch normalization of `net`, training in TRAIN mode (`is_training` in a BERT-style helper)."""
    if not c.batch_norm:
        return []
    training = "is_training" if c.layout == "create_model" else "mode == tf.estimator.ModeKeys.TRAIN"
    if c.model == "keras_layers":
        return [f"net = tf.keras.layers.BatchNormalization(momentum=0.9)(net, training={training})"]
    return [f"net = tf.layers.batch_normalization(net, momentum=0.9, training={training})"]


def head_outputs(c: Choices) -> list[str]:
    """What the head computes from its output layers without labels."""
    if c.head == "softmax" or c.head == "two_heads":
        return ["probabilities = tf.nn.softmax(logits)", "classes = tf.argmax(logits, axis=1)"]
    if c.head in ("sigmoid", "sigmoid_squeezed"):
        squeeze = []
        if c.head == "sigmoid_squeezed":
            squeeze = ["logits = tf.squeeze(logits, axis=-1)" if c.seed % 2 else "logits = tf.reshape(logits, [-1])"]
        return squeeze + ["probabilities = tf.sigmoid(logits)", "classes = tf.cast(probabilities > 0.5, tf.float32)"]
    return []


def outputs(c: Choices) -> list[str]:
    """The names `model_lines` defines that the rest of the model_fn reads."""
    if c.head == "regression":
        return ["output"]
    if c.head == "two_heads":
        return ["logits", "probabilities", "classes", "value"]
    return ["logits", "probabilities", "classes"]


def predictions(c: Choices) -> str:
    if c.head == "regression":
        return "output" if c.seed % 2 else "{'value': output}"
    if c.head == "two_heads":
        return "{'classes': classes, 'value': value}"
    return "{'classes': classes, 'probabilities': probabilities}"


def loss_lines(c: Choices, labels: str = "labels") -> list[str]:
    """`loss = ...` from `labels` and the outputs, regularization included."""
    losses = c.loss_form == "losses"
    if c.head == "softmax":
        lines = [f"loss = tf.losses.sparse_softmax_cross_entropy(labels={labels}, logits=logits)" if losses else
                 f"loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels={labels}, logits=logits))"]
    elif c.head in ("sigmoid", "sigmoid_squeezed"):
        lines = [f"loss = tf.losses.sigmoid_cross_entropy(multi_class_labels={labels}, logits=logits)" if losses else
                 f"loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels={labels}, logits=logits))"]
    elif c.head == "regression":
        lines = [f"loss = tf.losses.mean_squared_error(labels={labels}, predictions=output)" if losses else
                 f"loss = tf.reduce_mean(tf.square(output - {labels}))"]
    else:
        lines = [
            f"class_loss = tf.losses.sparse_softmax_cross_entropy(labels={labels}['label'], logits=logits)" if losses else
            f"class_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels={labels}['label'], logits=logits))",
            f"value_loss = tf.losses.absolute_difference({labels}['value'], value)" if losses else
            f"value_loss = tf.reduce_mean(tf.abs(value - {labels}['value']))",
            "loss = class_loss + value_loss",
        ]
    if c.regularization == "l2_manual":
        lines.append("loss += 1e-3 * tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])")
    elif c.regularization == "regularizer":
        lines.append("loss = loss + tf.losses.get_regularization_loss()")
    elif c.regularization == "total_loss":
        lines.append("loss = tf.losses.get_total_loss()")
    return lines


def metric_dict(c: Choices, labels: str = "labels") -> list[str]:
    """The entries of the metrics dict, from `labels` and the outputs."""
    if c.head == "softmax":
        entries = [f"'accuracy': tf.metrics.accuracy(labels={labels}, predictions=classes)"]
        if c.classes == 2:
            entries.append(f"'auc': tf.metrics.auc({labels}, probabilities[:, 1])")
        else:
            entries.append(f"'mean_per_class_accuracy': tf.metrics.mean_per_class_accuracy({labels}, classes, {c.classes})")
        return entries
    if c.head in ("sigmoid", "sigmoid_squeezed"):
        return [
            f"'accuracy': tf.metrics.accuracy({labels}, classes)",
            f"'auc': tf.metrics.auc({labels}, probabilities)",
            f"'precision': tf.metrics.precision({labels}, classes)",
            f"'recall': tf.metrics.recall({labels}, classes)",
        ]
    if c.head == "regression":
        return [
            f"'rmse': tf.metrics.root_mean_squared_error({labels}, output)",
            f"'mae': tf.metrics.mean_absolute_error({labels}, output)",
            "'mean_prediction': tf.metrics.mean(output)",
        ]
    return [
        f"'accuracy': tf.metrics.accuracy({labels}['label'], classes)",
        f"'value_mae': tf.metrics.mean_absolute_error({labels}['value'], value)",
    ]


def metric_fn(c: Choices) -> tuple[list[str], str]:
    """A TPU `metric_fn` (its lines) and the tensors `eval_metrics` passes it."""
    if c.head == "regression":
        body = ["def metric_fn(labels, output):", "  return {"] + [f"      {e}," for e in metric_dict(c)] + ["  }"]
        return body, "[labels, output]"
    if c.head == "two_heads":
        entries = [
            "'accuracy': tf.metrics.accuracy(label, tf.argmax(logits, axis=1))",
            "'value_mae': tf.metrics.mean_absolute_error(value_label, value)",
        ]
        body = ["def metric_fn(label, value_label, logits, value):", "  return {"] + [f"      {e}," for e in entries] + ["  }"]
        return body, "{'label': labels['label'], 'value_label': labels['value'], 'logits': logits, 'value': value}"
    recompute = head_outputs(c)
    recompute = [line for line in recompute if not line.startswith("logits = ")]
    body = ["def metric_fn(labels, logits):"] + [f"  {line}" for line in recompute] + ["  return {"]
    body += [f"      {e}," for e in metric_dict(c)] + ["  }"]
    return body, "[labels, logits]"

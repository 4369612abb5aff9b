"""An Estimator with a `for units in params['hidden_units']` loop of tf.layers.dense,
tf.layers.batch_normalization with UPDATE_OPS, eval_metric_ops from tf.metrics, run by
train_and_evaluate (evaluation after each checkpoint, a LatestExporter), then predict."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(1)
X = rng.randn(96, 5).astype(np.float32)
Y = (X[:, 0] + 0.5 * X[:, 1] - X[:, 2] > 0).astype(np.int32)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def train_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(16)


def eval_input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X[:40]}, Y[:40])).batch(16)


def model_fn(features, labels, mode, params):
    training = mode == tf.compat.v1.estimator.ModeKeys.TRAIN
    net = features["x"]
    for i, units in enumerate(params["hidden_units"]):
        net = tf.compat.v1.layers.dense(
            net, units, kernel_initializer=tf.compat.v1.truncated_normal_initializer(stddev=0.3), name="hidden_%d" % i)
        net = tf.compat.v1.layers.batch_normalization(net, training=training, momentum=0.9)
        net = tf.nn.relu(net)
    logits = tf.compat.v1.layers.dense(net, 2, kernel_initializer=tf.compat.v1.glorot_uniform_initializer())
    predicted = tf.argmax(logits, 1)
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.estimator.EstimatorSpec(mode, predictions={"class": predicted, "logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    metrics = {
        "accuracy": tf.compat.v1.metrics.accuracy(labels, predicted),
        "auc": tf.compat.v1.metrics.auc(labels, tf.nn.softmax(logits)[:, 1]),
        "mean_logit": tf.compat.v1.metrics.mean(logits),
    }
    if mode == tf.compat.v1.estimator.ModeKeys.EVAL:
        return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)
    optimizer = tf.compat.v1.train.AdamOptimizer(params["learning_rate"])
    update_ops = tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.UPDATE_OPS)
    with tf.control_dependencies(update_ops):
        train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def serving_input_receiver_fn():
    x = tf.compat.v1.placeholder(tf.float32, [None, 5], name="x")
    return tf.compat.v1.estimator.export.ServingInputReceiver({"x": x}, {"x": x})


config = tf.compat.v1.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=4, keep_checkpoint_max=2)
est = tf.compat.v1.estimator.Estimator(
    model_fn, model_dir="model_bn", config=config, params={"hidden_units": [8, 6], "learning_rate": 0.05})
train_spec = tf.compat.v1.estimator.TrainSpec(train_input_fn, max_steps=10)
eval_spec = tf.compat.v1.estimator.EvalSpec(
    eval_input_fn, steps=None, throttle_secs=0,
    exporters=[tf.compat.v1.estimator.LatestExporter("latest", serving_input_receiver_fn, exports_to_keep=1)])
result, exports = tf.compat.v1.estimator.train_and_evaluate(est, train_spec, eval_spec)
report(result)
report({"n_exports": len(exports), "n_ckpts": len(tf.compat.v1.train.get_checkpoint_state("model_bn").all_model_checkpoint_paths)})
for path in sorted(tf.io.gfile.glob(est.eval_dir() + "/events.out.tfevents.*")):  # the eval events, per step
    for event in tf.compat.v1.train.summary_iterator(path):
        values = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")}
        if values:
            report(dict(values, step=event.step))
report(est.evaluate(eval_input_fn, steps=1, name="one"))
preds = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X[:5]}).batch(2), predict_keys=["logits"]))
report({"n": len(preds), "l0": preds[0]["logits"][0], "l4": preds[4]["logits"][1], "keys": len(preds[0])})
batches = list(est.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": X[:5]}).batch(2), yield_single_examples=False))
report({"batches": len(batches), "c": batches[2]["class"].sum()})
report({"moving_var": est.get_variable_value("batch_normalization/moving_variance").sum(), "step": est.get_variable_value("global_step")})

"""A Scaffold `init_fn` that restores a pretrained checkpoint into a fresh model, as Show and Tell
loads its Inception weights: `Scaffold(init_fn=lambda scaffold, session: saver.restore(session,
PRETRAINED))` with the Saver built in the model_fn over the variables it restores. TF 1.x ran it
only where no checkpoint of the model_dir gave the variables: the first evaluation and the first
training call, not the second one, which continues from the model_dir."""
import numpy as np
import tensorflow as tf

PRETRAINED = "pretrained/model.ckpt"
rng = np.random.RandomState(8)
X = rng.randn(32, 4).astype(np.float32)
Y = (X[:, 1] - X[:, 2] > 0).astype(np.int32)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def write_pretrained():
    with tf.Graph().as_default():
        kernel = tf.compat.v1.get_variable("hidden/kernel", initializer=np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            tf.compat.v1.train.Saver([kernel]).save(session, PRETRAINED)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(8)


def model_fn(features, labels, mode):
    hidden = tf.compat.v1.layers.dense(features["x"], 3, activation=tf.nn.relu, name="hidden",
                                       kernel_initializer=tf.compat.v1.constant_initializer(0.1))
    logits = tf.compat.v1.layers.dense(hidden, 2, name="logits", kernel_initializer=tf.compat.v1.constant_initializer(0.2))
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    pretrained = {v.op.name: v for v in tf.compat.v1.trainable_variables() if v.op.name == "hidden/kernel"}
    saver = tf.compat.v1.train.Saver(pretrained)
    scaffold = tf.compat.v1.train.Scaffold(init_fn=lambda scaffold, session: saver.restore(session, PRETRAINED))
    if mode == tf.compat.v1.estimator.ModeKeys.EVAL:
        return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, scaffold=scaffold, eval_metric_ops={
            "mean_logit": tf.compat.v1.metrics.mean(logits)})
    train_op = tf.compat.v1.train.GradientDescentOptimizer(0.2).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, scaffold=scaffold)


write_pretrained()
estimator = tf.compat.v1.estimator.Estimator(model_fn, config=tf.compat.v1.estimator.RunConfig(model_dir="init_fn_model"))
report(estimator.evaluate(input_fn, steps=2))
for _ in range(2):
    estimator.train(input_fn, steps=3)
    report(estimator.evaluate(input_fn, steps=2))
report({"hidden_kernel_sum": estimator.get_variable_value("hidden/kernel").sum()})

"""The input_fn style of TF 1.x programs before Estimator took datasets (the cloud samples' census,
tensorflow/tpu's MobileNet and SqueezeNet pipelines): it shuffles, repeats and batches a dataset,
returns `make_one_shot_iterator(dataset).get_next()`, and reshapes, casts and renames those
tensors into the features dict afterwards. Each train/evaluate/predict call starts the iterator
again; the unseeded shuffle draws from the graph seed."""
import numpy as np
import tensorflow as tf

rng = np.random.RandomState(5)
X = rng.randn(40, 6).astype(np.float32)
Y = (X[:, 0] - X[:, 3] > 0).astype(np.int64)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn(training, batch_size=8):
    dataset = tf.compat.v1.data.Dataset.from_tensor_slices((X, Y))
    if training:
        dataset = dataset.shuffle(40).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)
    rows, labels = tf.compat.v1.data.make_one_shot_iterator(dataset).get_next()
    rows = tf.reshape(rows, [batch_size, 2, 3])
    features = {"left": rows[:, 0, :], "right": rows[:, 1, :] * 2.0}
    return features, tf.cast(labels, tf.int32)


def model_fn(features, labels, mode):
    net = tf.concat([features["left"], features["right"]], axis=1)
    net = tf.compat.v1.layers.dense(net, 5, activation=tf.nn.tanh, name="hidden",
                                    kernel_initializer=tf.compat.v1.constant_initializer(0.1))
    logits = tf.compat.v1.layers.dense(net, 2, name="logits", kernel_initializer=tf.compat.v1.constant_initializer(-0.05))
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        return tf.compat.v1.estimator.EstimatorSpec(mode, predictions={"logits": logits})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    if mode == tf.compat.v1.estimator.ModeKeys.EVAL:
        return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "accuracy": tf.compat.v1.metrics.accuracy(labels, tf.argmax(logits, 1))})
    train_op = tf.compat.v1.train.AdamOptimizer(0.05).minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


estimator = tf.compat.v1.estimator.Estimator(
    model_fn, config=tf.compat.v1.estimator.RunConfig(model_dir="iterator_model", tf_random_seed=9))
for _ in range(2):
    estimator.train(lambda: input_fn(True), steps=6)
    report(estimator.evaluate(lambda: input_fn(False)))
predictions = list(estimator.predict(lambda: input_fn(False, 4)))
report({"n": len(predictions), "first_logit": predictions[0]["logits"][0],
        "sum": sum(float(p["logits"][1]) for p in predictions)})

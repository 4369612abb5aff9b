"""A TPU-MNIST-style CNN on TPUEstimator (use_tpu=False): tf.layers classes, early PREDICT return,
`if params['use_tpu']` optimizer wrap, inline minimize(loss, get_global_step()), eval_metrics,
host_call, scaffold_fn; train, evaluate, predict, export_saved_model and load it back."""
import numpy as np
import tensorflow as tf

import random
random.seed(0)  # tf.layers (Keras legacy layers) draw initializer seeds from Python's random, not the graph seed
MODEL_DIR = "model_tpu_cnn"
rng = np.random.RandomState(0)
IMAGES = rng.rand(64, 12, 12, 1).astype(np.float32)
LABELS = (IMAGES.reshape(64, -1).sum(axis=1) > 72).astype(np.int32) + 2 * (IMAGES[:, 0, 0, 0] > 0.5)


def report(name, values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn(params):
    ds = tf.data.Dataset.from_tensor_slices((IMAGES, LABELS))
    return ds.repeat().batch(params["batch_size"], drop_remainder=True)


def predict_input_fn(params):
    return tf.data.Dataset.from_tensor_slices(IMAGES[:10]).batch(params["batch_size"])


def metric_fn(labels, logits):
    predictions = tf.argmax(logits, axis=1)
    return {"accuracy": tf.compat.v1.metrics.accuracy(labels=labels, predictions=predictions)}


def model_fn(features, labels, mode, params):
    image = features
    if isinstance(image, dict):
        image = features["image"]
    conv1 = tf.compat.v1.layers.Conv2D(4, 3, padding="same", activation=tf.nn.relu)
    pool = tf.compat.v1.layers.MaxPooling2D(pool_size=2, strides=2)
    conv2 = tf.compat.v1.layers.Conv2D(8, 3, padding="same", activation=tf.nn.relu)
    dense = tf.compat.v1.layers.Dense(16, activation=tf.nn.relu)
    drop = tf.compat.v1.layers.Dropout(0.0)
    out = tf.compat.v1.layers.Dense(4)
    y = pool(conv1(image))
    y = pool(conv2(y))
    y = tf.compat.v1.layers.flatten(y)
    logits = out(drop(dense(y), training=(mode == tf.compat.v1.estimator.ModeKeys.TRAIN)))
    if mode == tf.compat.v1.estimator.ModeKeys.PREDICT:
        predictions = {"class_ids": tf.argmax(logits, axis=1), "probabilities": tf.nn.softmax(logits)}
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
            mode, predictions=predictions,
            export_outputs={"classify": tf.compat.v1.estimator.export.PredictOutput(predictions)})
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    if mode == tf.compat.v1.estimator.ModeKeys.EVAL:
        return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=(metric_fn, [labels, logits]))
    learning_rate = tf.compat.v1.train.exponential_decay(
        0.05, tf.compat.v1.train.get_global_step(), decay_steps=3, decay_rate=0.9)
    optimizer = tf.compat.v1.train.MomentumOptimizer(learning_rate, 0.9)
    if params["use_tpu"]:
        optimizer = tf.compat.v1.tpu.CrossShardOptimizer(optimizer)

    def host_call_fn(gs, lr):
        return tf.compat.v1.assign_add(counter, lr[0] * 0 + 1.0)

    counter = tf.compat.v1.get_variable("host_calls", [], initializer=tf.compat.v1.zeros_initializer(), trainable=False)
    gs = tf.reshape(tf.compat.v1.train.get_global_step(), [1])
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(
        mode, loss=loss, train_op=optimizer.minimize(loss, tf.compat.v1.train.get_global_step()),
        host_call=(host_call_fn, [gs, tf.reshape(learning_rate, [1])]))


config = tf.compat.v1.estimator.tpu.RunConfig(
    model_dir=MODEL_DIR, tf_random_seed=7, save_checkpoints_steps=4,
    tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=2))
est = tf.compat.v1.estimator.tpu.TPUEstimator(
    model_fn=model_fn, config=config, use_tpu=False, train_batch_size=8, eval_batch_size=16, predict_batch_size=4)
est.train(input_fn, max_steps=6)
report("eval", est.evaluate(input_fn, steps=2))
report("host_calls", {"host_calls": est.get_variable_value("host_calls"), "n_vars": len(est.get_variable_names())})
preds = list(est.predict(predict_input_fn))
report("predict", {"n": len(preds), "prob_sum0": preds[0]["probabilities"][0], "class_sum": sum(int(p["class_ids"]) for p in preds),
                   "prob_9_3": preds[9]["probabilities"][3]})


def serving_input_fn():
    image = tf.compat.v1.placeholder(tf.float32, [None, 12, 12, 1], name="image")
    return tf.compat.v1.estimator.export.TensorServingInputReceiver(image, {"image": image})


export_dir = est.export_saved_model("export", serving_input_fn)
with tf.Graph().as_default(), tf.compat.v1.Session() as sess:
    meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], export_dir)
    sig = meta.signature_def["classify"]
    out = sess.run(sig.outputs["probabilities"].name, {sig.inputs["image"].name: IMAGES[:3]})
    # (serving signatures: a TF2 SavedModel also lists its init op as `__saved_model_init_op`)
    report("export", {"p00": out[0, 0], "p21": out[2, 1], "sigs": len([k for k in meta.signature_def if not k.startswith("__")])})

"""An Estimator trained and evaluated under `RunConfig(train_distribute=MirroredStrategy(...),
eval_distribute=...)` over two logical CPUs, TF1 style: tf.compat.v1.layers with constant
initializers, a V1 MomentumOptimizer (Estimator scales each replica's loss), an input_fn that
takes `input_context`, accuracy/mean metrics aggregated across replicas, a checkpoint every 3
steps, then predict (single device, as TF 2.15). Each run trains 7 more steps from model_dir.
tfmigrate-harness: runs=2"""
import numpy as np
import tensorflow as tf

_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(_cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
tf.compat.v1.disable_eager_execution()

X = np.arange(48, dtype=np.float32).reshape(16, 3) / 10.0
Y = (X.sum(axis=1, keepdims=True) > 2.0).astype(np.float32)
CALLS = []


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn(mode, params, input_context=None):
    if input_context is not None:
        CALLS.append((input_context.num_input_pipelines, input_context.input_pipeline_id,
                      input_context.num_replicas_in_sync))
    ds = tf.data.Dataset.from_tensor_slices(({"x": X}, Y))
    if mode == tf.compat.v1.estimator.ModeKeys.TRAIN:
        ds = ds.repeat()
    return ds.batch(params["batch"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    ModeKeys = tf.compat.v1.estimator.ModeKeys
    hidden = tf.compat.v1.layers.dense(
        features["x"], 4, activation=tf.nn.tanh, name="h",
        kernel_initializer=tf.compat.v1.constant_initializer(0.1),
        bias_initializer=tf.compat.v1.constant_initializer(0.01))
    logits = tf.compat.v1.layers.dense(hidden, 1, kernel_initializer=tf.compat.v1.constant_initializer(-0.2), name="out")
    probs = tf.sigmoid(logits)
    if mode == ModeKeys.PREDICT:
        return tf.compat.v1.estimator.EstimatorSpec(mode, predictions={"probs": probs, "logits": logits})
    loss = tf.compat.v1.losses.sigmoid_cross_entropy(labels, logits)
    if mode == ModeKeys.EVAL:
        return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={
            "acc": tf.compat.v1.metrics.accuracy(labels, tf.cast(probs > 0.5, tf.float32)),
            "mean_prob": tf.compat.v1.metrics.mean(probs)})
    optimizer = tf.compat.v1.train.MomentumOptimizer(0.5, 0.9)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


strategy = tf.distribute.MirroredStrategy(devices=["/cpu:0", "/cpu:1"])
config = tf.compat.v1.estimator.RunConfig(
    model_dir="model", train_distribute=strategy, eval_distribute=strategy, tf_random_seed=1,
    save_checkpoints_steps=3)
estimator = tf.compat.v1.estimator.Estimator(model_fn, config=config, params={"batch": 4})
estimator.train(input_fn, steps=7)
report({"input_fn_calls": len(CALLS), "pipelines": CALLS[0][0], "replicas": CALLS[0][2]})
report(estimator.evaluate(input_fn))
report(estimator.evaluate(input_fn, steps=1, name="one"))
predictions = list(estimator.predict(input_fn))
report({"n": len(predictions), "sum_probs": sum(p["probs"][0] for p in predictions),
        "first_logit": predictions[0]["logits"][0]})
report({"h_kernel": estimator.get_variable_value("h/kernel").sum(),
        "out_kernel": estimator.get_variable_value("out/kernel").sum(),
        "checkpoints": len(tf.train.get_checkpoint_state("model").all_model_checkpoint_paths)})

"""Steps/s of one small TF1 Estimator program: on the oracle (TF 2.15's Estimator) vs hosted
(`tfm.estimator` on current TF). Spelled for TF 2.15; `--hosted` respells it as the hosted tier does.

    ~/.cache/tfmigrate/oracle-py311-tf2.15/bin/python benchmarks/hosted_estimator_steps.py
    .venv/bin/python benchmarks/hosted_estimator_steps.py --hosted
"""
import sys
import tempfile
import time

import numpy as np
import tensorflow as tf

if "--hosted" in sys.argv:
    import tfmigrate.runtime as tfm

    estimator, layers = tfm.estimator, tfm.legacy.layers
else:
    estimator, layers = tf.compat.v1.estimator, tf.compat.v1.layers

STEPS = 2000
rng = np.random.RandomState(0)
X = rng.randn(1024, 32).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)


def input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": X}, Y)).repeat().batch(32)


def model_fn(features, labels, mode, params):
    net = features["x"]
    for units in params["hidden_units"]:
        net = layers.dense(net, units, activation=tf.nn.relu)
    logits = layers.dense(net, 2)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.compat.v1.train.AdamOptimizer(1e-3).minimize(loss, tf.compat.v1.train.get_global_step())
    return estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


est = estimator.Estimator(model_fn, model_dir=tempfile.mkdtemp(), params={"hidden_units": [64, 64]},
                          config=estimator.RunConfig(save_checkpoints_steps=10**6, tf_random_seed=1))
est.train(input_fn, steps=10)  # warm-up: first graph build and session
start = time.perf_counter()
est.train(input_fn, steps=STEPS)
elapsed = time.perf_counter() - start
print(f"{'hosted' if '--hosted' in sys.argv else 'oracle'} tf={tf.__version__} steps={STEPS} "
      f"seconds={elapsed:.2f} steps_per_sec={STEPS / elapsed:.1f}")

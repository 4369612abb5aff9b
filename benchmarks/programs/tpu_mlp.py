"""A TF1 TPUEstimator program (TF 2.15 spelling) for bench_tiers.py: an MLP on synthetic data.

    python tpu_mlp.py --steps N --hidden H --batch B --iterations_per_loop K --model_dir DIR
"""
import argparse

import numpy as np
import tensorflow as tf

FEATURES, CLASSES = 128, 10


def input_fn(params):
    rng = np.random.RandomState(0)
    x = rng.randn(4096, FEATURES).astype(np.float32)
    y = rng.randint(0, CLASSES, size=4096).astype(np.int32)
    dataset = tf.data.Dataset.from_tensor_slices(({"x": x}, y))
    return dataset.repeat().batch(params["batch_size"], drop_remainder=True)


def model_fn(features, labels, mode, params):
    net = tf.compat.v1.layers.dense(features["x"], params["hidden"], activation=tf.nn.relu)
    net = tf.compat.v1.layers.dense(net, params["hidden"], activation=tf.nn.relu)
    logits = tf.compat.v1.layers.dense(net, CLASSES)
    loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    optimizer = tf.compat.v1.train.AdamOptimizer(learning_rate=1e-3)
    if params["use_tpu"]:
        optimizer = tf.compat.v1.tpu.CrossShardOptimizer(optimizer)
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--iterations_per_loop", type=int, default=50)
    parser.add_argument("--model_dir", required=True)
    args = parser.parse_args()
    config = tf.compat.v1.estimator.tpu.RunConfig(
        model_dir=args.model_dir,
        save_checkpoints_steps=None,
        save_checkpoints_secs=None,
        save_summary_steps=1000000,
        log_step_count_steps=1000000,
        tpu_config=tf.compat.v1.estimator.tpu.TPUConfig(iterations_per_loop=args.iterations_per_loop),
    )
    estimator = tf.compat.v1.estimator.tpu.TPUEstimator(
        model_fn=model_fn, config=config, use_tpu=False, train_batch_size=args.batch,
        params={"hidden": args.hidden},
    )
    estimator.train(input_fn=input_fn, max_steps=args.steps)


if __name__ == "__main__":
    main()

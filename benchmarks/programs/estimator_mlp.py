"""A TF1 Estimator program (TF 2.15 spelling) for bench_tiers.py: tpu_mlp.py's MLP on a plain
Estimator (one step per session.run in TF1; `--iterations_per_loop` is accepted and unused).

    python estimator_mlp.py --steps N --hidden H --batch B --model_dir DIR
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
    train_op = optimizer.minimize(loss, global_step=tf.compat.v1.train.get_global_step())
    return tf.compat.v1.estimator.EstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--iterations_per_loop", type=int, default=50)
    parser.add_argument("--model_dir", required=True)
    args = parser.parse_args()
    config = tf.compat.v1.estimator.RunConfig(
        model_dir=args.model_dir,
        save_checkpoints_steps=None,
        save_checkpoints_secs=None,
        save_summary_steps=1000000,
        log_step_count_steps=1000000,
    )
    estimator = tf.compat.v1.estimator.Estimator(
        model_fn=model_fn, config=config, params={"hidden": args.hidden, "batch_size": args.batch},
    )
    estimator.train(input_fn=input_fn, max_steps=args.steps)


if __name__ == "__main__":
    main()

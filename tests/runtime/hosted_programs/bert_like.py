"""BERT-style TF1 code: get_variable with truncated-normal initializers under variable scopes,
layer norm by hand, an AdamWeightDecayOptimizer-like `tf.train.Optimizer` subclass whose
`apply_gradients` updates the slots itself (tf.gradients + clip_by_global_norm, polynomial
decay with warmup), global step incremented by hand. Each run trains 3 more steps from the
checkpoint in model_dir and evaluates; then a second Estimator warm-starts from it.
tfmigrate-harness: runs=2"""
import re

import numpy as np
import tensorflow as tf

rng = np.random.RandomState(2)
TOKENS = rng.randint(0, 20, size=(48, 6)).astype(np.int32)
LABELS = (TOKENS[:, 0] > 9).astype(np.int32)


def report(values):
    print("eval_results", repr({k: float(v) for k, v in sorted(values.items())}))


def input_fn(params):
    ds = tf.data.Dataset.from_tensor_slices(({"input_ids": TOKENS}, LABELS))
    return ds.repeat().batch(params["batch"], drop_remainder=True)


class AdamWeightDecayOptimizer(tf.compat.v1.train.Optimizer):
    def __init__(self, learning_rate, weight_decay_rate=0.0, beta_1=0.9, beta_2=0.999, epsilon=1e-6,
                 exclude_from_weight_decay=None, name="AdamWeightDecayOptimizer"):
        super(AdamWeightDecayOptimizer, self).__init__(False, name)
        self.learning_rate = learning_rate
        self.weight_decay_rate = weight_decay_rate
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.exclude_from_weight_decay = exclude_from_weight_decay

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        assignments = []
        for (grad, param) in grads_and_vars:
            if grad is None or param is None:
                continue
            param_name = re.match("^(.*):\\d+$", param.name).group(1)
            m = tf.compat.v1.get_variable(name=param_name + "/adam_m", shape=param.shape.as_list(), dtype=tf.float32,
                                          trainable=False, initializer=tf.compat.v1.zeros_initializer())
            v = tf.compat.v1.get_variable(name=param_name + "/adam_v", shape=param.shape.as_list(), dtype=tf.float32,
                                          trainable=False, initializer=tf.compat.v1.zeros_initializer())
            next_m = tf.multiply(self.beta_1, m) + tf.multiply(1.0 - self.beta_1, grad)
            next_v = tf.multiply(self.beta_2, v) + tf.multiply(1.0 - self.beta_2, tf.square(grad))
            update = next_m / (tf.sqrt(next_v) + self.epsilon)
            if self.weight_decay_rate and not any(re.search(r, param_name) for r in self.exclude_from_weight_decay):
                update += self.weight_decay_rate * param
            assignments.extend([param.assign(param - self.learning_rate * update), m.assign(next_m), v.assign(next_v)])
        return tf.group(*assignments, name=name)


def layer_norm(x, name):
    with tf.compat.v1.variable_scope(name):
        gamma = tf.compat.v1.get_variable("gamma", [x.shape[-1]], initializer=tf.compat.v1.ones_initializer())
        beta = tf.compat.v1.get_variable("beta", [x.shape[-1]], initializer=tf.compat.v1.zeros_initializer())
        mean, var = tf.nn.moments(x, [-1], keepdims=True)
        return (x - mean) * tf.compat.v1.rsqrt(var + 1e-12) * gamma + beta


def model_fn(features, labels, mode, params):
    init = tf.compat.v1.truncated_normal_initializer(stddev=0.02 * 10)
    with tf.compat.v1.variable_scope("bert"):
        with tf.compat.v1.variable_scope("embeddings"):
            table = tf.compat.v1.get_variable("word_embeddings", [20, 8], initializer=init)
            emb = layer_norm(tf.nn.embedding_lookup(table, features["input_ids"]), "LayerNorm")
        with tf.compat.v1.variable_scope("pooler"):
            first = tf.squeeze(emb[:, 0:1, :], axis=1)
            pooled = tf.compat.v1.layers.dense(first, 8, activation=tf.tanh, kernel_initializer=init)
    output_weights = tf.compat.v1.get_variable("output_weights", [2, 8], initializer=init)
    output_bias = tf.compat.v1.get_variable("output_bias", [2], initializer=tf.compat.v1.zeros_initializer())
    logits = tf.nn.bias_add(tf.matmul(pooled, output_weights, transpose_b=True), output_bias)
    log_probs = tf.nn.log_softmax(logits, axis=-1)
    one_hot = tf.one_hot(labels, depth=2, dtype=tf.float32)
    loss = tf.reduce_mean(-tf.reduce_sum(one_hot * log_probs, axis=-1))
    if mode == tf.compat.v1.estimator.ModeKeys.TRAIN:
        global_step = tf.compat.v1.train.get_or_create_global_step()
        lr = tf.compat.v1.train.polynomial_decay(tf.constant(0.05), global_step, 20, end_learning_rate=0.0, power=1.0)
        warm = tf.cast(global_step, tf.float32) / 2.0
        lr = tf.where(warm < 1.0, 0.05 * warm + 0.001, lr)
        optimizer = AdamWeightDecayOptimizer(lr, weight_decay_rate=0.01, exclude_from_weight_decay=["LayerNorm", "bias"])
        tvars = tf.compat.v1.trainable_variables()
        grads = tf.gradients(loss, tvars)
        (grads, _) = tf.clip_by_global_norm(grads, clip_norm=1.0)
        train_op = optimizer.apply_gradients(list(zip(grads, tvars)), global_step=global_step)
        train_op = tf.group(train_op, [global_step.assign(global_step + 1)])
        return tf.compat.v1.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return tf.compat.v1.estimator.EstimatorSpec(
        mode, loss=loss, eval_metric_ops={"eval_accuracy": tf.compat.v1.metrics.accuracy(labels, predictions),
                                          "eval_loss": tf.compat.v1.metrics.mean(loss)})


config = tf.compat.v1.estimator.RunConfig(model_dir="model_bert", tf_random_seed=11, save_checkpoints_steps=100)
est = tf.compat.v1.estimator.Estimator(model_fn, config=config, params={"batch": 8})
est.train(input_fn, steps=3)
report(est.evaluate(input_fn, steps=3))
report({"adam_m": np.abs(est.get_variable_value("output_weights/adam_m")).sum()})
warm = tf.compat.v1.estimator.Estimator(
    model_fn, model_dir="model_warm", config=tf.compat.v1.estimator.RunConfig(tf_random_seed=5), params={"batch": 8},
    warm_start_from=tf.compat.v1.estimator.WarmStartSettings("model_bert", vars_to_warm_start="bert/.*"))
report(warm.evaluate(input_fn, steps=2))

"""A TF 1.x Estimator trainer whose model_fn calls the model module's `build_net` (a Keras
Sequential). Prints `eval_results {...}` lines."""
import tensorflow as tf

import nets


def model_fn(features, labels, mode, params):
  net = nets.build_net(params['hidden_units'])
  logits = net(features)
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  if mode == tf.estimator.ModeKeys.TRAIN:
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
  accuracy = tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))
  return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops={'accuracy': accuracy})


def input_fn():
  return tf.data.Dataset.from_tensor_slices(nets.data(64, 0)).batch(16)


def main(_):
  config = tf.estimator.RunConfig(model_dir='nets_model', tf_random_seed=3)
  estimator = tf.estimator.Estimator(model_fn=model_fn, config=config, params={'hidden_units': [8, 8]})
  for _ in range(2):
    estimator.train(input_fn, steps=4)
    print('eval_results %r' % {k: float(v) for k, v in estimator.evaluate(input_fn, steps=2).items()})


if __name__ == '__main__':
  tf.app.run()

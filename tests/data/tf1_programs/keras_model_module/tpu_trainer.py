"""A TPUEstimator trainer whose model_fn calls the other module's `create_model` (the shape of
TensorFlow's r1 MNIST TPU trainer), with a CrossShardOptimizer under `use_tpu` and TPU eval
metrics. Prints `eval_results {...}` lines."""
import tensorflow as tf

import digits


def model_fn(features, labels, mode, params):
  model = digits.create_model()
  logits = model(features, training=(mode == tf.estimator.ModeKeys.TRAIN))
  loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
  optimizer = tf.train.GradientDescentOptimizer(0.05)
  if params['use_tpu']:
    optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, tf.train.get_global_step())

  def metric_fn(labels, logits):
    return {'accuracy': tf.metrics.accuracy(labels=labels, predictions=tf.argmax(logits, axis=1))}

  return tf.contrib.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op, eval_metrics=(metric_fn, [labels, logits]))


def input_fn(params):
  x, y = digits.data(64, 0)
  return tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(params['batch_size'], drop_remainder=True)


def main(_):
  config = tf.contrib.tpu.RunConfig(model_dir='tpu_model', tf_random_seed=5,
                                    tpu_config=tf.contrib.tpu.TPUConfig(iterations_per_loop=4))
  estimator = tf.contrib.tpu.TPUEstimator(model_fn=model_fn, use_tpu=False, train_batch_size=16, eval_batch_size=16,
                                          config=config)
  for _ in range(2):
    estimator.train(input_fn, steps=4)
    print('eval_results %r' % {k: float(v) for k, v in estimator.evaluate(input_fn, steps=2).items()})


if __name__ == '__main__':
  tf.app.run()

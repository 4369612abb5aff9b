"""A TF 1.x program that feeds placeholders through Keras layers (one imported by name, a dropout
with no seed of its own) and trains them in a `tf.Session`: TF 1.x built the layers into its graph
with Keras 2 and TF1's graph-seeded initializers. Prints `eval_results {...}` lines."""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Dense

tf.set_random_seed(1)


def main():
  x = tf.placeholder(tf.float32, [None, 4])
  y = tf.placeholder(tf.float32, [None, 1])
  hidden = tf.keras.layers.Dropout(0.5)(Dense(8, activation='relu')(x), training=True)
  loss = tf.reduce_mean(tf.square(Dense(1)(hidden) - y))
  train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
  rng = np.random.RandomState(0)
  xs, ys = rng.randn(32, 4).astype(np.float32), rng.randn(32, 1).astype(np.float32)
  with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(2):
      for _ in range(3):
        _, value = sess.run([train, loss], {x: xs, y: ys})
      names = sorted(v.name for v in tf.global_variables())
      print('eval_results %r' % {'loss': float(value), 'step': float(step), 'variables': float(len(names))})
    assert names == ['dense/bias:0', 'dense/kernel:0', 'dense_1/bias:0', 'dense_1/kernel:0'], names


if __name__ == '__main__':
  main()

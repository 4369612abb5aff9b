"""A TF 1.x sequence tagger in the BiLSTM-CRF shape of NER programs, without the LSTM: word
embeddings, a dense layer to tag scores, `tf.contrib.crf.crf_log_likelihood` as the loss (its
`transitions` variable made by the CRF in a variable scope), `crf_decode` for the predicted tags
and their score, accuracy over the real tokens only. Padded sentences of lengths 1 to 6."""
import numpy as np
import tensorflow as tf

VOCAB, TAGS, MAX_LEN = 12, 4, 6
rng = np.random.RandomState(5)
LENGTHS = np.array([6, 3, 1, 5, 4, 2, 6, 3], np.int32)
WORDS = (rng.randint(1, VOCAB, size=(8, MAX_LEN)) * (np.arange(MAX_LEN) < LENGTHS[:, None])).astype(np.int32)
TAG_IDS = ((WORDS + np.roll(WORDS, 1, axis=1)) % TAGS).astype(np.int32)  # a tag depends on the word before


def model_fn(features, labels, mode, params):
  embeddings = tf.get_variable('embeddings', [VOCAB, 8])
  words = tf.nn.embedding_lookup(embeddings, features['words'])
  logits = tf.layers.dense(words, TAGS, name='scores')
  lengths = features['length']
  if mode == tf.estimator.ModeKeys.PREDICT:
    with tf.variable_scope('crf'):
      transitions = tf.get_variable('transitions', [TAGS, TAGS])
    tags, best_score = tf.contrib.crf.crf_decode(logits, transitions, lengths)
    return tf.estimator.EstimatorSpec(mode, predictions={'tags': tags, 'best_score': best_score})
  with tf.variable_scope('crf'):
    log_likelihood, transitions = tf.contrib.crf.crf_log_likelihood(logits, labels, lengths)
  tags, best_score = tf.contrib.crf.crf_decode(logits, transitions, lengths)
  loss = tf.reduce_mean(-log_likelihood)
  train_op = tf.train.AdamOptimizer(params['learning_rate']).minimize(loss, global_step=tf.train.get_global_step())
  weights = tf.sequence_mask(lengths, tf.shape(labels)[1], dtype=tf.float32)
  metrics = {
      'accuracy': tf.metrics.accuracy(labels, tags, weights=weights),
      'best_score': tf.metrics.mean(best_score),
  }
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def input_fn(epochs=None):
  features = {'words': WORDS, 'length': LENGTHS}
  return tf.data.Dataset.from_tensor_slices((features, TAG_IDS)).repeat(epochs).batch(4)


def main(_):
  config = tf.estimator.RunConfig(tf_random_seed=3, save_checkpoints_steps=20)
  tagger = tf.estimator.Estimator(model_fn, model_dir='crf_model', config=config, params={'learning_rate': 0.05})
  tagger.train(input_fn, steps=30)
  print(tagger.evaluate(lambda: input_fn(1)))
  for i, prediction in enumerate(tagger.predict(lambda: input_fn(1))):
    if i == 3:
      break


if __name__ == '__main__':
  tf.app.run()

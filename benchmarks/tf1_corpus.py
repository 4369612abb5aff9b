"""A deterministic generator of TF1-era Python trees, for the codemod benchmark and the fast-path tests.

The files are written in the manner of public TF 1.x programs: input pipelines over tf.data,
tf.io/tf.gfile and tf.train.Example, bare `tf.*` graph code with sessions, savers and summaries,
tf.layers models, flag/logging entry points, Estimator/TPUEstimator model_fn programs, small
utility modules, TF2 modules that need nothing, and plain Python modules that never mention
TensorFlow. Every file parses; nothing here is meant to run.

    write_corpus(root, files=160, seed=0)     -> (files written, lines)
    write_plain_tree(root, lines=100_000)     -> (files written, lines)   # no TensorFlow at all
"""

from __future__ import annotations

import random
from pathlib import Path

# -- building blocks ------------------------------------------------------------------------
# Each block is a function (or class) body template; `{n}` makes names unique within a file and
# `{a}`..`{d}` are small integers drawn per use. Blocks use the alias `tf` for the module's TF.

INPUT_BLOCKS = [
    '''
def parse_example_{n}(serialized):
  """Parses one serialized tf.train.Example into image and label tensors."""
  features = tf.parse_single_example(
      serialized,
      features={{
          'image/encoded': tf.FixedLenFeature([], tf.string, default_value=''),
          'image/class/label': tf.FixedLenFeature([], tf.int64, default_value=-1),
          'image/object/bbox/xmin': tf.VarLenFeature(dtype=tf.float32),
      }})
  image = tf.image.decode_jpeg(features['image/encoded'], channels=3)
  image = tf.image.convert_image_dtype(image, dtype=tf.float32)
  label = tf.cast(features['image/class/label'], dtype=tf.int32)
  return image, label
''',
    '''
def make_dataset_{n}(file_pattern, batch_size, is_training=True):
  files = tf.gfile.Glob(file_pattern)
  if not files:
    raise ValueError('no files match %s' % file_pattern)
  dataset = tf.data.TFRecordDataset(files, buffer_size={a} * 1024 * 1024)
  if is_training:
    dataset = dataset.shuffle(buffer_size={b}00).repeat()
  dataset = dataset.map(parse_record_{n}, num_parallel_calls={c})
  dataset = dataset.batch(batch_size, drop_remainder=is_training)
  return dataset.prefetch({d})


def parse_record_{n}(record):
  keys_to_features = {{
      'inputs': tf.FixedLenFeature([{a}], tf.float32),
      'targets': tf.FixedLenFeature([], tf.int64),
  }}
  parsed = tf.parse_single_example(record, keys_to_features)
  return parsed['inputs'], tf.to_int32(parsed['targets'])
''',
    '''
def preprocess_image_{n}(image, height, width, is_training):
  """Random crop and flip for training, central crop for eval."""
  if is_training:
    image = tf.random_crop(image, [height, width, 3])
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_brightness(image, max_delta=0.{a})
  else:
    image = tf.image.resize_image_with_crop_or_pad(image, height, width)
  image = tf.image.resize_images(image, [height, width], method=tf.image.ResizeMethod.BILINEAR)
  image = tf.subtract(image, 0.5)
  return tf.multiply(image, 2.0)
''',
    '''
def write_examples_{n}(examples, output_path):
  """Writes (features, label) pairs as TFRecords."""
  with tf.python_io.TFRecordWriter(output_path) as writer:
    for values, label in examples:
      feature = {{
          'values': tf.train.Feature(float_list=tf.train.FloatList(value=list(values))),
          'label': tf.train.Feature(int64_list=tf.train.Int64List(value=[int(label)])),
      }}
      example = tf.train.Example(features=tf.train.Features(feature=feature))
      writer.write(example.SerializeToString())
  tf.logging.info('Wrote %d examples to %s', len(examples), output_path)
''',
    '''
def load_vocab_{n}(vocab_file):
  """Loads a vocabulary file into an ordered dict of token -> id."""
  vocab = collections.OrderedDict()
  index = 0
  with tf.gfile.GFile(vocab_file, 'r') as reader:
    while True:
      token = reader.readline()
      if not token:
        break
      token = token.strip()
      vocab[token] = index
      index += 1
  return vocab
''',
    '''
def decode_record_{n}(record, name_to_features):
  """Decodes a record to a TensorFlow example, casting int64 to int32 for the TPU."""
  example = tf.parse_single_example(record, name_to_features)
  for name in list(example.keys()):
    t = example[name]
    if t.dtype == tf.int64:
      t = tf.to_int32(t)
    example[name] = t
  return example
''',
    '''
def sparse_to_dense_{n}(features, key, size):
  values = features[key]
  if isinstance(values, tf.SparseTensor):
    values = tf.sparse_tensor_to_dense(values, default_value=0)
  values = tf.reshape(values, [-1, size])
  return tf.cast(values, tf.float32)
''',
    '''
def input_fn_builder_{n}(input_files, seq_length, is_training, num_cpu_threads={a}):
  """Creates an `input_fn` closure to be passed to the estimator."""

  def input_fn(params):
    batch_size = params['batch_size']
    name_to_features = {{
        'input_ids': tf.FixedLenFeature([seq_length], tf.int64),
        'input_mask': tf.FixedLenFeature([seq_length], tf.int64),
        'label_ids': tf.FixedLenFeature([], tf.int64),
    }}
    d = tf.data.Dataset.from_tensor_slices(tf.constant(input_files))
    if is_training:
      d = d.repeat()
      d = d.shuffle(buffer_size=len(input_files))
    d = d.interleave(tf.data.TFRecordDataset, cycle_length=num_cpu_threads)
    d = d.map(lambda record: tf.parse_single_example(record, name_to_features))
    return d.batch(batch_size, drop_remainder=True)

  return input_fn
''',
    '''
def list_checkpoints_{n}(model_dir):
  if not tf.gfile.Exists(model_dir):
    tf.gfile.MakeDirs(model_dir)
    return []
  names = tf.gfile.ListDirectory(model_dir)
  return sorted(os.path.join(model_dir, name) for name in names if name.endswith('.index'))
''',
]

GRAPH_BLOCKS = [
    '''
def build_graph_{n}(num_features, num_classes, learning_rate=0.0{a}):
  """Builds the training graph and returns the tensors the loop needs."""
  x = tf.placeholder(tf.float32, shape=[None, num_features], name='x')
  y = tf.placeholder(tf.int64, shape=[None], name='y')
  with tf.variable_scope('logits_{n}'):
    w = tf.get_variable('w', [num_features, num_classes],
                        initializer=tf.truncated_normal_initializer(stddev=0.{b}))
    b = tf.get_variable('b', [num_classes], initializer=tf.zeros_initializer())
    logits = tf.matmul(x, w) + b
  loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
  global_step = tf.train.get_or_create_global_step()
  train_op = tf.train.AdamOptimizer(learning_rate).minimize(loss, global_step=global_step)
  accuracy = tf.reduce_mean(tf.to_float(tf.equal(tf.argmax(logits, 1), y)))
  tf.summary.scalar('loss', loss)
  tf.summary.scalar('accuracy', accuracy)
  return x, y, loss, train_op, accuracy
''',
    '''
def train_loop_{n}(batches, num_steps, log_dir):
  x, y, loss, train_op, accuracy = build_graph_{n}({a}{b}, {c})
  merged = tf.summary.merge_all()
  saver = tf.train.Saver(max_to_keep={d})
  config = tf.ConfigProto(allow_soft_placement=True)
  config.gpu_options.allow_growth = True
  with tf.Session(config=config) as sess:
    sess.run(tf.global_variables_initializer())
    sess.run(tf.local_variables_initializer())
    writer = tf.summary.FileWriter(log_dir, sess.graph)
    for step in range(num_steps):
      inputs, labels = next(batches)
      summary, _, value = sess.run([merged, train_op, loss], feed_dict={{x: inputs, y: labels}})
      writer.add_summary(summary, step)
      if step % 100 == 0:
        tf.logging.info('step %d loss %.4f', step, value)
        saver.save(sess, os.path.join(log_dir, 'model.ckpt'), global_step=step)
    writer.close()
''',
    '''
def clip_gradients_{n}(loss, variables=None, max_norm={a}.0):
  """Computes gradients and clips them by their global norm."""
  if variables is None:
    variables = tf.trainable_variables()
  grads = tf.gradients(loss, variables)
  grads, global_norm = tf.clip_by_global_norm(grads, max_norm)
  tf.summary.scalar('global_norm', global_norm)
  return list(zip(grads, variables))
''',
    '''
def exponential_moving_average_{n}(decay=0.9{a}):
  global_step = tf.train.get_global_step()
  ema = tf.train.ExponentialMovingAverage(decay, num_updates=global_step)
  variables = tf.trainable_variables() + tf.moving_average_variables()
  with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
    update = ema.apply(variables)
  return ema, update
''',
    '''
def restore_latest_{n}(sess, checkpoint_dir, var_list=None):
  """Restores the newest checkpoint of `checkpoint_dir`, if any; returns its global step."""
  latest = tf.train.latest_checkpoint(checkpoint_dir)
  if latest is None:
    tf.logging.warning('no checkpoint in %s', checkpoint_dir)
    return 0
  saver = tf.train.Saver(var_list=var_list or tf.global_variables())
  saver.restore(sess, latest)
  return int(latest.split('-')[-1])
''',
    '''
def learning_rate_schedule_{n}(base_rate, global_step, warmup_steps={a}000, decay_steps={b}0000):
  warmup = tf.to_float(global_step) / float(warmup_steps)
  decayed = tf.train.exponential_decay(base_rate, global_step, decay_steps, 0.9{c}, staircase=True)
  rate = tf.where(global_step < warmup_steps, base_rate * warmup, decayed)
  tf.summary.scalar('learning_rate', rate)
  return rate
''',
    '''
def attention_{n}(query, keys, values, mask=None):
  """Scaled dot-product attention over [batch, length, depth] tensors."""
  depth = tf.to_float(tf.shape(keys)[-1])
  scores = tf.matmul(query, keys, transpose_b=True) / tf.sqrt(depth)
  if mask is not None:
    scores += (1.0 - tf.to_float(mask)) * -1e9
  weights = tf.nn.softmax(scores, axis=-1)
  weights = tf.nn.dropout(weights, keep_prob=0.9)
  return tf.matmul(weights, values), weights
''',
    '''
def count_parameters_{n}():
  total = 0
  for variable in tf.trainable_variables():
    shape = variable.get_shape()
    count = 1
    for dim in shape:
      count *= dim.value
    tf.logging.info('%s: %s (%d)', variable.name, shape, count)
    total += count
  return total
''',
    '''
def metrics_{n}(labels, predictions):
  accuracy, accuracy_op = tf.metrics.accuracy(labels, predictions)
  precision, precision_op = tf.metrics.precision(labels, predictions)
  recall, recall_op = tf.metrics.recall(labels, predictions)
  update = tf.group(accuracy_op, precision_op, recall_op)
  reset = tf.variables_initializer(tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES))
  return {{'accuracy': accuracy, 'precision': precision, 'recall': recall}}, update, reset
''',
]

LAYERS_BLOCKS = [
    '''
def conv_block_{n}(inputs, filters, is_training, scope='conv_{n}'):
  with tf.variable_scope(scope):
    net = tf.layers.conv2d(inputs, filters, kernel_size={a}, padding='same', use_bias=False,
                           kernel_initializer=tf.contrib.layers.xavier_initializer())
    net = tf.layers.batch_normalization(net, training=is_training, momentum=0.99)
    net = tf.nn.relu(net)
    net = tf.layers.max_pooling2d(net, pool_size=2, strides=2)
  return net
''',
    '''
def classifier_head_{n}(features, num_classes, is_training, dropout_rate=0.{a}):
  net = tf.layers.flatten(features)
  net = tf.layers.dense(net, {b}{c}, activation=tf.nn.relu, name='fc1')
  net = tf.layers.dropout(net, rate=dropout_rate, training=is_training)
  logits = tf.layers.dense(net, num_classes, name='logits')
  return logits
''',
    '''
def residual_unit_{n}(x, filters, stride, is_training):
  shortcut = x
  x = tf.layers.batch_normalization(x, training=is_training)
  x = tf.nn.relu(x)
  if stride != 1:
    shortcut = tf.layers.conv2d(x, filters, 1, strides=stride, padding='same')
  x = tf.layers.conv2d(x, filters, 3, strides=stride, padding='same')
  x = tf.layers.batch_normalization(x, training=is_training)
  x = tf.nn.relu(x)
  x = tf.layers.conv2d(x, filters, 3, padding='same')
  return x + shortcut
''',
    '''
def embed_tokens_{n}(ids, vocab_size, hidden_size={a}{b}):
  with tf.variable_scope('embedding_{n}', reuse=tf.AUTO_REUSE):
    table = tf.get_variable('table', [vocab_size, hidden_size],
                            initializer=tf.random_normal_initializer(0.0, hidden_size ** -0.5))
  embedded = tf.nn.embedding_lookup(table, ids)
  mask = tf.to_float(tf.not_equal(ids, 0))
  return embedded * tf.expand_dims(mask, -1)
''',
    '''
def rnn_encoder_{n}(inputs, lengths, num_units={a}{c}):
  cell_fw = tf.nn.rnn_cell.LSTMCell(num_units)
  cell_bw = tf.nn.rnn_cell.LSTMCell(num_units)
  outputs, states = tf.nn.bidirectional_dynamic_rnn(
      cell_fw, cell_bw, inputs, sequence_length=lengths, dtype=tf.float32)
  return tf.concat(outputs, axis=-1), states
''',
    '''
class Tower{n}(object):
  """A small convolutional tower, built once per replica."""

  def __init__(self, num_classes, width={a}):
    self.num_classes = num_classes
    self.width = width

  def __call__(self, images, is_training):
    net = images
    for i in range({b}):
      net = tf.layers.conv2d(net, self.width * (i + 1), 3, padding='same', name='conv%d' % i)
      net = tf.nn.relu(net)
    net = tf.reduce_mean(net, axis=[1, 2])
    return tf.layers.dense(net, self.num_classes, name='head')
''',
]

UTIL_BLOCKS = [
    '''
def get_shape_list_{n}(tensor, expected_rank=None):
  """Returns a list of the shape of tensor, preferring static dimensions."""
  shape = tensor.shape.as_list()
  non_static_indexes = []
  for (index, dim) in enumerate(shape):
    if dim is None:
      non_static_indexes.append(index)
  if not non_static_indexes:
    return shape
  dyn_shape = tf.shape(tensor)
  for index in non_static_indexes:
    shape[index] = dyn_shape[index]
  return shape
''',
    '''
def reshape_to_matrix_{n}(input_tensor):
  ndims = input_tensor.shape.ndims
  if ndims < 2:
    raise ValueError('Input tensor must have at least rank 2. Shape = %s' % (input_tensor.shape))
  if ndims == 2:
    return input_tensor
  width = input_tensor.shape[-1]
  return tf.reshape(input_tensor, [-1, width])
''',
    '''
def pad_to_multiple_{n}(x, multiple={a}, axis=1):
  length = tf.shape(x)[axis]
  pad = (multiple - length % multiple) % multiple
  paddings = [[0, 0]] * len(x.shape)
  paddings[axis] = [0, pad]
  return tf.pad(x, paddings)
''',
    '''
def gather_indexes_{n}(sequence_tensor, positions):
  batch_size, seq_length, width = get_shape_list_{n}(sequence_tensor, expected_rank=3)
  flat_offsets = tf.reshape(tf.range(0, batch_size, dtype=tf.int32) * seq_length, [-1, 1])
  flat_positions = tf.reshape(positions + flat_offsets, [-1])
  flat_sequence = tf.reshape(sequence_tensor, [batch_size * seq_length, width])
  return tf.gather(flat_sequence, flat_positions)
''',
    '''
def assert_rank_{n}(tensor, expected_rank, name=None):
  if name is None:
    name = tensor.name
  expected = set(expected_rank) if isinstance(expected_rank, (list, tuple)) else {{expected_rank}}
  actual = tensor.shape.ndims
  if actual not in expected:
    scope_name = tf.get_variable_scope().name
    raise ValueError('For the tensor `%s` in scope `%s`, the actual rank `%d` is not in %s'
                     % (name, scope_name, actual, sorted(expected)))
''',
    '''
def one_hot_smooth_{n}(labels, depth, smoothing=0.{a}):
  one_hot = tf.one_hot(labels, depth, dtype=tf.float32)
  return one_hot * (1.0 - smoothing) + smoothing / depth
''',
    '''
def sequence_mask_{n}(lengths, max_length=None):
  mask = tf.sequence_mask(lengths, maxlen=max_length, dtype=tf.float32)
  return tf.stop_gradient(mask)
''',
]

PLAIN_BLOCKS = [
    '''
def read_json_{n}(path, default=None):
  """Reads a JSON document, returning `default` when the file does not exist."""
  if not os.path.exists(path):
    return default
  with open(path, encoding='utf-8') as handle:
    return json.load(handle)
''',
    '''
class RunningMean{n}(object):
  """Keeps a running mean and count of the values it sees."""

  def __init__(self):
    self.count = 0
    self.total = 0.0

  def update(self, value, weight=1):
    self.count += weight
    self.total += value * weight
    return self

  @property
  def value(self):
    return self.total / max(self.count, 1)

  def __repr__(self):
    return 'RunningMean(count=%d, value=%.4f)' % (self.count, self.value)
''',
    '''
def chunks_{n}(items, size={a}):
  batch = []
  for item in items:
    batch.append(item)
    if len(batch) == size:
      yield batch
      batch = []
  if batch:
    yield batch
''',
    '''
def normalize_{n}(array, axis=0, eps=1e-{a}):
  array = np.asarray(array, dtype=np.float32)
  mean = array.mean(axis=axis, keepdims=True)
  std = array.std(axis=axis, keepdims=True)
  return (array - mean) / (std + eps)
''',
    '''
def parse_args_{n}(argv=None):
  parser = argparse.ArgumentParser(description='Tool number {n}.')
  parser.add_argument('--input', required=True, help='input file')
  parser.add_argument('--output', default='out_{n}.txt', help='output file')
  parser.add_argument('--limit', type=int, default={a}{b}, help='maximum records')
  parser.add_argument('--verbose', action='store_true')
  return parser.parse_args(argv)
''',
    '''
def format_table_{n}(rows, headers):
  widths = [len(h) for h in headers]
  for row in rows:
    for i, cell in enumerate(row):
      widths[i] = max(widths[i], len(str(cell)))
  lines = ['  '.join(h.ljust(w) for h, w in zip(headers, widths))]
  lines.append('  '.join('-' * w for w in widths))
  for row in rows:
    lines.append('  '.join(str(c).ljust(w) for c, w in zip(row, widths)))
  return '\\n'.join(lines)
''',
    '''
def confusion_matrix_{n}(labels, predictions, num_classes):
  matrix = np.zeros((num_classes, num_classes), dtype=np.int64)
  for label, prediction in zip(labels, predictions):
    matrix[int(label), int(prediction)] += 1
  return matrix
''',
    '''
class Registry{n}(dict):
  """Name -> factory registry with a decorator to add entries."""

  def register(self, name=None):
    def decorator(fn):
      key = name or fn.__name__
      if key in self:
        raise KeyError('%s already registered' % key)
      self[key] = fn
      return fn
    return decorator

  def create(self, name, *args, **kwargs):
    return self[name](*args, **kwargs)
''',
]

TF2_BLOCKS = [
    '''
def build_model_{n}(num_classes, width={a}{b}):
  inputs = tf.keras.Input(shape=(None, None, 3))
  x = tf.keras.layers.Conv2D(width, 3, padding='same', activation='relu')(inputs)
  x = tf.keras.layers.GlobalAveragePooling2D()(x)
  outputs = tf.keras.layers.Dense(num_classes)(x)
  return tf.keras.Model(inputs, outputs)
''',
    '''
@tf.function
def train_step_{n}(model, optimizer, images, labels):
  with tf.GradientTape() as tape:
    logits = model(images, training=True)
    loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True))
  grads = tape.gradient(loss, model.trainable_variables)
  optimizer.apply_gradients(zip(grads, model.trainable_variables))
  return loss
''',
    '''
def dataset_{n}(features, labels, batch_size={a}{c}):
  ds = tf.data.Dataset.from_tensor_slices((features, labels))
  ds = ds.shuffle(1024).batch(batch_size, drop_remainder=True)
  return ds.prefetch(tf.data.AUTOTUNE)
''',
]

FLAGS_BLOCK = '''
flags = tf.flags
FLAGS = flags.FLAGS

flags.DEFINE_string('data_dir', None, 'Directory with the input TFRecords.')
flags.DEFINE_string('model_dir', '/tmp/model_{n}', 'Where checkpoints and summaries go.')
flags.DEFINE_integer('batch_size', {a}{b}, 'Global batch size.')
flags.DEFINE_integer('train_steps', {c}000, 'Number of training steps.')
flags.DEFINE_float('learning_rate', 0.0{d}, 'Initial learning rate.')
flags.DEFINE_bool('use_tpu', False, 'Whether to run on a TPU.')
'''

MAIN_BLOCK = '''

def main(_):
  tf.logging.set_verbosity(tf.logging.INFO)
  if FLAGS.data_dir is None:
    raise ValueError('--data_dir is required')
  tf.gfile.MakeDirs(FLAGS.model_dir)
  tf.logging.info('Training for %d steps', FLAGS.train_steps)


if __name__ == '__main__':
  tf.app.run()
'''

OPTIMIZERS = [
    ("tf.train.AdamOptimizer(learning_rate=params['learning_rate'])", ""),
    ("tf.train.GradientDescentOptimizer(learning_rate=0.{a})", ""),
    ("tf.train.AdagradOptimizer(learning_rate=0.{a})", ""),
    ("tf.train.MomentumOptimizer(learning_rate=0.0{a}, momentum=0.9)", ""),
    ("tf.train.RMSPropOptimizer(learning_rate=0.00{a})", ""),
]

LOSSES = [
    "tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)",
    "tf.losses.mean_squared_error(labels=labels, predictions=logits)",
    "tf.losses.absolute_difference(labels=labels, predictions=logits)",
]

ESTIMATOR_TPU = '''

def model_fn(features, labels, mode, params):
  """Model function for TPUEstimator."""
  net = tf.layers.dense(features, {a}{b}, activation=tf.nn.relu)
  net = tf.layers.dense(net, {c}{a}, activation=tf.nn.relu)
  logits = tf.layers.dense(net, {classes})
  loss = {loss}
  optimizer = {optimizer}
  if params['use_tpu']:
    optimizer = tf.tpu.CrossShardOptimizer(optimizer)
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.tpu.TPUEstimatorSpec(mode=mode, loss=loss, train_op=train_op)


def train_input_fn(params):
  ds = tf.data.Dataset.from_tensor_slices((FEATURES, LABELS))
  return ds.repeat().batch(params['batch_size'], drop_remainder=True)


def run(model_dir, tpu_name=None):
  resolver = None
  if tpu_name:
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_name)
  config = tf.estimator.tpu.RunConfig(
      cluster=resolver, model_dir=model_dir, save_checkpoints_steps={c}00,
      tpu_config=tf.estimator.tpu.TPUConfig(iterations_per_loop={d}0))
  estimator = tf.estimator.tpu.TPUEstimator(
      model_fn=model_fn, config=config, use_tpu=False,
      train_batch_size={b}{d}, eval_batch_size={b}{d},
      params={{'learning_rate': 0.0{a}}})
  estimator.train(input_fn=train_input_fn, max_steps={c}000)
  results = estimator.evaluate(input_fn=train_input_fn, steps={d})
  tf.logging.info('eval: %s', results)
  return results
'''

ESTIMATOR_PLAIN = '''

def model_fn(features, labels, mode, params):
  """Model function for a custom Estimator."""
  net = features['x']
  net = tf.layers.dense(net, {a}{b}, activation=tf.nn.relu)
  logits = tf.layers.dense(net, {classes})
  loss = {loss}
  optimizer = {optimizer}
  train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
  return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def input_fn():
  ds = tf.data.Dataset.from_tensor_slices(({{'x': FEATURES}}, LABELS))
  return ds.repeat().batch({b}{d})


def run(model_dir):
  config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps={c}0)
  classifier = tf.estimator.Estimator(
      model_fn=model_fn, config=config, params={{'learning_rate': 0.0{a}}})
  classifier.train(input_fn=input_fn, steps={c}00)
  results = classifier.evaluate(input_fn=input_fn, steps={d})
  print('eval_results', {{k: float(v) for k, v in sorted(results.items())}})
  return results
'''

# How the TF1 modules spell their import, with weights (public TF1 code is mostly the first).
TF_IMPORTS = [
    ("import tensorflow as tf\n", 70),
    ("import tensorflow.compat.v1 as tf\n", 20),
    ("import tensorflow as tf\nfrom tensorflow.contrib import layers as contrib_layers\n", 4),
    ("import tensorflow.compat.v1 as tf\nfrom tensorflow.python.ops import array_ops\n", 3),
    ("import tensorflow as tf\nimport tensorflow.compat.v1 as tf1\n", 3),
]

# Uses of the extra imports in TF_IMPORTS.
_ALIAS_USES = {
    "contrib_layers": "\n\ndef initializer():\n  return contrib_layers.xavier_initializer(uniform=False)\n",
    "array_ops": "\n\ndef flatten_last(x):\n  return array_ops.reshape(x, [-1, array_ops.shape(x)[-1]])\n",
    "tf1": "\n\ndef legacy_session_config():\n  return tf1.ConfigProto(log_device_placement=False)\n",
}

# (kind, weight): the mix of file kinds in the corpus.
KINDS = [
    ("input", 22),
    ("graph", 20),
    ("layers", 14),
    ("script", 8),
    ("estimator", 10),
    ("util", 10),
    ("tf2", 6),
    ("plain", 10),
]

_HEADER_DOCS = {
    "input": "Input pipeline: reads TFRecords and produces batched (features, labels).",
    "graph": "Graph-mode training utilities: placeholders, sessions, savers and summaries.",
    "layers": "Model building blocks on tf.layers.",
    "script": "Command-line trainer.",
    "estimator": "Trains a small model with an Estimator.",
    "util": "Tensor shape and indexing helpers.",
    "tf2": "TF2 Keras training helpers (already migrated).",
    "plain": "Plain Python helpers (no TensorFlow).",
}

_BLOCKS = {
    "input": INPUT_BLOCKS,
    "graph": GRAPH_BLOCKS,
    "layers": LAYERS_BLOCKS,
    "script": INPUT_BLOCKS + GRAPH_BLOCKS,
    "estimator": INPUT_BLOCKS + UTIL_BLOCKS,
    "util": UTIL_BLOCKS,
    "tf2": TF2_BLOCKS,
    "plain": PLAIN_BLOCKS,
}

_LICENSE = """# Copyright 2018 The Example Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# ==============================================================================
"""


def _weighted(rng: random.Random, items):
    return rng.choices([i for i, _ in items], weights=[w for _, w in items])[0]


def _fill(template: str, rng: random.Random, n: int, **extra: str) -> str:
    digits = {k: str(rng.randint(1, 9)) for k in "abcd"}
    return template.format(n=n, **digits, **extra)


def make_file(kind: str, rng: random.Random, target_lines: int = 340, functions: int | None = None) -> str:
    """One module of `kind`, about `target_lines` long, or of exactly `functions` blocks when given."""
    parts = [_LICENSE, f'"""{_HEADER_DOCS[kind]}"""\n\n']
    tf_import = ""
    if kind == "plain":
        parts.append("import argparse\nimport collections\nimport json\nimport os\n\nimport numpy as np\n")
    elif kind == "tf2":
        parts.append("import os\n\nimport numpy as np\nimport tensorflow as tf\n")
    else:
        parts.append("from __future__ import absolute_import\nfrom __future__ import division\n\n")
        parts.append("import collections\nimport os\n\nimport numpy as np\n")
        tf_import = _weighted(rng, TF_IMPORTS)
        parts.append(tf_import)
    if kind == "script":
        parts.append(_fill(FLAGS_BLOCK, rng, 0))
    if kind == "estimator":
        parts.append("\nFEATURES = np.random.RandomState(0).normal(size=(64, 8)).astype(np.float32)\n")
        parts.append("LABELS = np.zeros((64,), dtype=np.int32)\n")
        template = ESTIMATOR_TPU if rng.random() < 0.6 else ESTIMATOR_PLAIN
        optimizer = _fill(rng.choice(OPTIMIZERS)[0], rng, 0)
        parts.append(_fill(template, rng, 0, loss=rng.choice(LOSSES), optimizer=optimizer, classes=str(rng.randint(2, 9))))
    blocks = _BLOCKS[kind]
    n = 1
    while (n <= functions) if functions is not None else (sum(p.count("\n") for p in parts) < target_lines):
        block = _fill(rng.choice(blocks), rng, n)
        parts.append("\n" + block)
        n += 1
    if kind == "script":
        parts.append(MAIN_BLOCK)
    for alias, extra in _ALIAS_USES.items():
        if alias in tf_import:
            parts.append(extra)
    return "".join(parts)


def write_corpus(root: str | Path, files: int = 160, seed: int = 0, lines_per_file: int = 340) -> tuple[int, int]:
    """Write `files` generated modules under `root` (in a few packages); returns (files, lines)."""
    rng = random.Random(seed)
    root = Path(root)
    total = 0
    packages = ["data", "models", "training", "utils", "scripts", "legacy"]
    for index in range(files):
        kind = _weighted(rng, KINDS)
        package = root / packages[index % len(packages)]
        package.mkdir(parents=True, exist_ok=True)
        text = make_file(kind, rng, target_lines=rng.randint(lines_per_file // 2, lines_per_file * 3 // 2))
        (package / f"{kind}_{index:03d}.py").write_text(text, encoding="utf-8")
        total += text.count("\n")
    return files, total


def write_plain_tree(root: str | Path, lines: int = 100_000, seed: int = 1) -> tuple[int, int]:
    """A tree of plain Python modules (no TensorFlow anywhere) with about `lines` lines."""
    rng = random.Random(seed)
    root = Path(root)
    total = files = 0
    while total < lines:
        package = root / f"pkg{files // 40}"
        package.mkdir(parents=True, exist_ok=True)
        text = make_file("plain", rng, target_lines=400)
        (package / f"module_{files:04d}.py").write_text(text, encoding="utf-8")
        total += text.count("\n")
        files += 1
    return files, total

"""`tf.contrib.lookup`: TF1's vocabulary tables on TF2's `tf.lookup` tables.

TF 2 exports `StaticHashTable`, `KeyValueTensorInitializer` and `TextFileInitializer`, not the
contrib helpers TF1 programs built vocabularies with. These keep TF1's numbers:

  * `index_table_from_tensor` / `index_table_from_file`: ids are positions (or line numbers) as
    int64; integer keys are looked up as int64; a key not in the vocabulary gets `default_value`
    (-1), or with `num_oov_buckets` a bucket `vocab_size + hash(key) % num_oov_buckets` where the
    hash is `tf.strings.to_hash_bucket_fast` (or `_strong` under `StrongHashSpec`) of the key,
    integer keys hashed as their decimal strings. As in TF1, a key whose id equals `default_value`
    is hashed into a bucket too (TF1 told in-vocabulary from OOV by comparing with it).
    (`tf.lookup.StaticVocabularyTable` agrees on the buckets but not on that corner, nor
    on `default_value`.)
  * `index_to_string_table_from_tensor` / `index_to_string_table_from_file`: int64 ids to
    strings, `default_value` "UNK".
  * `HashTable`: `StaticHashTable` with TF1's `init` property.
  * `tables_initializer`: TF2 initializes tables when they are made; eagerly this is a no-op.
"""

from __future__ import annotations

import collections

import tensorflow as tf

KeyValueTensorInitializer = tf.lookup.KeyValueTensorInitializer
TextFileInitializer = tf.lookup.TextFileInitializer
TextFileIndex = tf.lookup.TextFileIndex


class HasherSpec(collections.namedtuple("HasherSpec", ["hasher", "key"])):
    """TF1's `HasherSpec`: which string hash buckets OOV keys (`fasthash`, `legacy`, `stronghash`)."""

    __slots__ = ()


FastHashSpec = HasherSpec("fasthash", None)


class StrongHashSpec(HasherSpec):
    """TF1's `StrongHashSpec(key)`: keyed SipHash buckets (`key`: two uint64 integers)."""

    __slots__ = ()

    def __new__(cls, key):
        if len(key) != 2:
            raise ValueError(f"`key` must have size 2, got {len(key)}")
        if not isinstance(key[0], int) or not isinstance(key[1], int):
            raise TypeError("Invalid key %s. Must be unsigned integer values." % (key,))
        return super(cls, StrongHashSpec).__new__(cls, "stronghash", key)


def _hash_buckets(hasher_spec: HasherSpec):
    if not isinstance(hasher_spec, HasherSpec):
        raise TypeError(f"`hasher_spec` must be of type HasherSpec, got {type(hasher_spec)}.")
    if hasher_spec.hasher == "fasthash":
        return tf.strings.to_hash_bucket_fast
    if hasher_spec.hasher == "legacy":
        return tf.strings.to_hash_bucket
    if hasher_spec.hasher == "stronghash":
        return lambda values, num_buckets: tf.strings.to_hash_bucket_strong(values, num_buckets, list(hasher_spec.key))
    raise ValueError(f"Found unknown hasher {hasher_spec.hasher} in `hasher_spec`")


class HashTable(tf.lookup.StaticHashTable):
    """`tf.contrib.lookup.HashTable(initializer, default_value)`: a `StaticHashTable` that is
    initialized when made (`init` / `initializer` are what TF1 ran, and nothing is left to run)."""

    @property
    def initializer(self):
        return getattr(self, "_init_op", None)

    init = initializer


class IdTableWithHashBuckets:
    """TF1's `IdTableWithHashBuckets`: `table`'s ids, OOV keys hashed into `num_oov_buckets`
    buckets after them (`table` None: every key is hashed)."""

    def __init__(self, table, num_oov_buckets, hasher_spec=FastHashSpec, name=None, key_dtype=None):
        if table is not None:
            if key_dtype is None:
                key_dtype = table.key_dtype
            if table.key_dtype not in (tf.int64, tf.string):
                raise TypeError(f"Invalid `key_dtype`, expected one of (tf.int64, tf.string), received {key_dtype}.")
            if table.key_dtype.is_integer != key_dtype.is_integer:
                raise TypeError(
                    "Invalid `key dtype`, expected %s but got %s."
                    % ("integer" if key_dtype.is_integer else "non-integer", table.key_dtype)
                )
            if table.value_dtype != tf.int64:
                raise TypeError(f"Invalid `value_dtype`: expected int64 but got {table.value_dtype}.")
        else:
            if num_oov_buckets <= 0:
                raise ValueError("`oov_buckets` must be > 0 if no `table` is supplied.")
            key_dtype = tf.string if key_dtype is None else key_dtype
        key_dtype = tf.as_dtype(key_dtype)
        if not key_dtype.is_integer and key_dtype != tf.string:
            raise TypeError(f"Invalid `key_dtype`, expected integer or string, got {key_dtype}.")
        self._table = table
        self._num_oov_buckets = int(num_oov_buckets)
        self._bucket = _hash_buckets(hasher_spec)
        self._hasher_spec = hasher_spec
        self._key_dtype = key_dtype
        self._name = name

    key_dtype = property(lambda self: self._key_dtype)
    value_dtype = property(lambda self: tf.int64)
    name = property(lambda self: self._name)

    @property
    def initializer(self):
        return self._table.initializer if self._table is not None else None

    init = initializer

    @property
    def resource_handle(self):
        return self._table.resource_handle if self._table is not None else None

    def size(self, name=None):
        base = self._table.size() if self._table is not None else tf.constant(0, tf.int64)
        return base + self._num_oov_buckets

    def lookup(self, keys, name=None):
        if keys.dtype.base_dtype != self._key_dtype:
            raise TypeError(f"Dtype of argument `keys` must be {self._key_dtype}, received: {keys.dtype}")
        values = keys.values if isinstance(keys, (tf.SparseTensor, tf.RaggedTensor)) else keys
        if self._table is not None and self._table.key_dtype == tf.int64:
            values = tf.cast(values, tf.int64)
        if self._num_oov_buckets == 0:
            ids = self._table.lookup(values)
        else:
            text = values if values.dtype == tf.string else tf.strings.as_string(values)
            buckets = self._bucket(text, num_buckets=self._num_oov_buckets)
            if self._table is not None:
                ids = self._table.lookup(values)
                buckets = buckets + self._table.size()
                ids = tf.where(tf.not_equal(ids, self._table.default_value), ids, buckets)
            else:
                ids = buckets
        if isinstance(keys, tf.SparseTensor):
            return tf.SparseTensor(keys.indices, ids, keys.dense_shape)
        if isinstance(keys, tf.RaggedTensor):
            return keys.with_values(ids)
        return ids

    def __getitem__(self, keys):
        return self.lookup(keys)


def _check_key_dtype(dtype) -> tf.DType:
    dtype = tf.as_dtype(dtype)
    if not dtype.is_integer and dtype.base_dtype != tf.string:
        raise TypeError("`dtype` must either be integer or string.")
    return dtype


def _vocabulary(vocabulary_list, mapping):
    """The vocabulary given as `vocabulary_list` (`tf.compat.v1.lookup`'s name) or `mapping`
    (`tf.contrib.lookup`'s: `index_table_from_tensor(mapping=...)`); both served here."""
    if mapping is None:
        return vocabulary_list
    if vocabulary_list is not None:
        raise TypeError("got both `vocabulary_list` and `mapping`: they are the same argument (TF's and contrib's name)")
    return mapping


def index_table_from_tensor(vocabulary_list=None, num_oov_buckets=0, default_value=-1, hasher_spec=FastHashSpec,
                            dtype=tf.string, name=None, *, mapping=None):
    """`tf.contrib.lookup.index_table_from_tensor`: each key's position in `vocabulary_list` (int64)."""
    vocabulary_list = _vocabulary(vocabulary_list, mapping)
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` must be specified.")
    if num_oov_buckets < 0:
        raise ValueError(f"`num_oov_buckets` must be greater or equal than 0, got {num_oov_buckets}.")
    dtype = _check_key_dtype(dtype)
    keys = tf.convert_to_tensor(vocabulary_list)
    if keys.dtype.is_integer != dtype.is_integer:
        raise ValueError(
            "Invalid `dtype`: Expected %s, got %s." % ("integer" if dtype.is_integer else "non-integer", keys.dtype)
        )
    if not dtype.is_integer and keys.dtype.base_dtype != dtype:
        raise ValueError(f"Invalid `dtype`: Expected {dtype}, got {keys.dtype}.")
    values = tf.cast(tf.range(tf.size(keys)), tf.int64)
    table_keys = tf.cast(keys, tf.int64) if keys.dtype.is_integer else keys
    table = HashTable(KeyValueTensorInitializer(table_keys, values, table_keys.dtype, tf.int64), default_value)
    if num_oov_buckets:
        return IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec, name=name, key_dtype=dtype)
    return table


def TextFileIdTableInitializer(filename, key_column_index=TextFileIndex.WHOLE_LINE,
                               value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t",
                               name="text_file_id_table_init", key_dtype=tf.string):
    """TF1's initializer of a key -> line number (int64) table from a text file."""
    return TextFileInitializer(filename, key_dtype, key_column_index, tf.int64, value_column_index,
                               vocab_size=vocab_size, delimiter=delimiter)


def TextFileStringTableInitializer(filename, key_column_index=TextFileIndex.LINE_NUMBER,
                                   value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t",
                                   name="text_file_string_table_init"):
    """TF1's initializer of a line number (int64) -> string table from a text file."""
    return TextFileInitializer(filename, tf.int64, key_column_index, tf.string, value_column_index,
                               vocab_size=vocab_size, delimiter=delimiter)


def index_table_from_file(vocabulary_file=None, num_oov_buckets=0, vocab_size=None, default_value=-1,
                          hasher_spec=FastHashSpec, key_dtype=tf.string, name=None,
                          key_column_index=TextFileIndex.WHOLE_LINE, value_column_index=TextFileIndex.LINE_NUMBER,
                          delimiter="\t"):
    """`tf.contrib.lookup.index_table_from_file`: each key's line number in the file (int64)."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if num_oov_buckets < 0:
        raise ValueError(f"num_oov_buckets must be greater or equal than 0, got {num_oov_buckets}.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size} for vocabulary_file: {vocabulary_file}.")
    key_dtype = _check_key_dtype(key_dtype)
    init = TextFileIdTableInitializer(
        vocabulary_file, key_column_index, value_column_index, vocab_size, delimiter,
        key_dtype=tf.int64 if key_dtype.is_integer else key_dtype,
    )
    table = HashTable(init, default_value)
    if num_oov_buckets:
        return IdTableWithHashBuckets(table, num_oov_buckets, hasher_spec, name=name, key_dtype=key_dtype)
    return table


def index_to_string_table_from_tensor(vocabulary_list=None, default_value="UNK", name=None, *, mapping=None):
    """`tf.contrib.lookup.index_to_string_table_from_tensor`: int64 id -> `vocabulary_list[id]`."""
    vocabulary_list = _vocabulary(vocabulary_list, mapping)
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` argument must be specified.")
    vocabulary_list = tf.convert_to_tensor(vocabulary_list, tf.string)
    keys = tf.cast(tf.range(tf.size(vocabulary_list)), tf.int64)
    return HashTable(KeyValueTensorInitializer(keys, vocabulary_list, tf.int64, tf.string), default_value)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value="UNK", name=None,
                                    key_column_index=TextFileIndex.LINE_NUMBER,
                                    value_column_index=TextFileIndex.WHOLE_LINE, delimiter="\t"):
    """`tf.contrib.lookup.index_to_string_table_from_file`: int64 line number -> the file's string."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    init = TextFileStringTableInitializer(vocabulary_file, key_column_index, value_column_index, vocab_size, delimiter)
    return HashTable(init, default_value)


def tables_initializer(name="init_all_tables"):
    """`tf.compat.v1.tables_initializer()`: nothing to run eagerly (TF2 tables are initialized when
    made); in a `tf.Graph` the tables' initializers, grouped, as before."""
    return tf.compat.v1.tables_initializer(name=name)

"""`tf.feature_column.*` on TF2 + Keras 3, with TF1's numbers and TF1's variable names.

(One file of ~850 lines on purpose: it is the one namespace `tfm.feature_columns.*` the codemod
writes, and its column classes share the input conversion and the naming rules below.)

Keras 3 has no `DenseFeatures`, and its preprocessing layers do not keep feature-column semantics
(`StringLookup` puts out-of-vocabulary indices *before* the vocabulary, `Embedding` has no
combiner and another initializer). The columns here keep the TF1 constructors' signatures and
compute what TF1 computed, with the same TF ops:

  * inputs: a rank-1 feature becomes `[batch, 1]`; categorical inputs become sparse ids with the
    missing values dropped (`''` for strings, `-1` for integers), as `_to_sparse_input_and_drop_ignore_values`.
  * `numeric_column`: reshaped to `[batch, prod(shape)]`, then `normalizer_fn`.
  * `bucketized_column`: TF's `Bucketize` op on the numeric value; dense form one-hot per
    element, categorical form `bucket + i * (len(boundaries) + 1)`.
  * `categorical_column_with_vocabulary_list`/`_file`: the vocabulary index; an out-of-vocabulary
    value gets `default_value` (-1: dropped downstream) or, with `num_oov_buckets`,
    `vocabulary_size + to_hash_bucket_fast(value, num_oov_buckets)` (integers as strings first).
  * `categorical_column_with_identity`: the value; out of range -> `default_value`.
  * `categorical_column_with_hash_bucket`: `to_hash_bucket_fast` (FarmHash; integers as strings).
  * `crossed_column`: `tf.sparse.cross_hashed` with TF1's default hash key.
  * `weighted_categorical_column`: the weights feature, zero weights dropped.
  * `indicator_column`: the count (or weight sum) per id; `embedding_column` and
    `shared_embedding_columns`: `safe_embedding_lookup_sparse` with the `combiner`, initialised
    from `truncated_normal(0, 1/sqrt(dimension))`.

`InputLayer` (`tf.compat.v1.feature_column.input_layer`, a DNN's input) concatenates the dense
columns sorted by name; `LinearModel` (`linear_model`, a linear estimator's logits) sums a
weight lookup per column (sorted by name) and adds `bias_weights`. Both name their variables as
TF1 did (`<column>_embedding/embedding_weights`, `<column>/weights`), relative to the scope the
caller gives (`dnn/input_from_feature_columns/input_layer`, `linear/linear_model`), so a TF1
checkpoint restores into them (`tf1_variable_names`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf

keras = tf.keras

__all__ = [
    "InputLayer",
    "LinearModel",
    "bucketized_column",
    "categorical_column_with_hash_bucket",
    "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list",
    "crossed_column",
    "embedding_column",
    "indicator_column",
    "make_parse_example_spec",
    "numeric_column",
    "shared_embedding_columns",
    "shared_embeddings",
    "weighted_categorical_column",
]


# -- raw inputs ----------------------------------------------------------------------------------


def _raw(features: dict, key: str) -> Any:
    """The feature as TF1's FeatureTransformationCache gave it: rank 1 becomes `[batch, 1]`."""
    if key not in features:
        raise ValueError(f"The feature {key!r} a feature column needs is not in the features: {sorted(features)}")
    value = features[key]
    if isinstance(value, tf.SparseTensor):
        return value
    value = tf.convert_to_tensor(value)
    if value.shape.rank == 0:
        raise ValueError(f"Feature {key!r} (a scalar) must have a batch dimension.")
    if value.shape.rank == 1:
        value = tf.expand_dims(value, -1)
    return value


def _to_sparse(value: Any, ignore_value: Any = None) -> tf.SparseTensor:
    """TF1's `_to_sparse_input_and_drop_ignore_values`."""
    if isinstance(value, tf.SparseTensor):
        return value
    if ignore_value is None:
        if value.dtype == tf.string:
            ignore_value = ""
        elif value.dtype.is_integer:
            ignore_value = -1
        else:
            ignore_value = value.dtype.as_numpy_dtype()
    ignore = tf.cast(ignore_value, value.dtype)
    indices = tf.where(tf.not_equal(value, ignore))
    return tf.SparseTensor(indices, tf.gather_nd(value, indices), tf.shape(value, out_type=tf.int64))


def _with_values(sparse: tf.SparseTensor, values: tf.Tensor) -> tf.SparseTensor:
    return tf.SparseTensor(sparse.indices, values, sparse.dense_shape)


def _as_hash_input(values: tf.Tensor) -> tf.Tensor:
    return values if values.dtype == tf.string else tf.strings.as_string(values)


# -- columns -------------------------------------------------------------------------------------


class FeatureColumn:
    """Base: a column has a TF1 `name` and the `parse_example_spec` TF1 gave it."""

    name: str

    @property
    def parse_example_spec(self) -> dict:
        raise NotImplementedError

    @property
    def parents(self) -> list["FeatureColumn"]:
        return []


class DenseColumn(FeatureColumn):
    """A column with a dense `[batch, variable_shape]` form (what `input_layer` concatenates)."""

    @property
    def variable_shape(self) -> int:
        raise NotImplementedError

    def create_state(self, layer: keras.layers.Layer, state: dict) -> None:
        """Adds this column's variables to `layer`, recorded in `state` (TF1 name -> variable)."""

    def dense_tensor(self, features: dict, state: dict) -> tf.Tensor:
        raise NotImplementedError


class CategoricalColumn(FeatureColumn):
    """A column of sparse ids (and optional weights)."""

    @property
    def num_buckets(self) -> int:
        raise NotImplementedError

    def sparse_tensors(self, features: dict) -> tuple[tf.SparseTensor, tf.SparseTensor | None]:
        raise NotImplementedError


@dataclass(frozen=True, eq=False)
class NumericColumn(DenseColumn):
    key: str
    shape: tuple[int, ...] = (1,)
    default_value: Any = None
    dtype: tf.DType = tf.float32
    normalizer_fn: Callable[[tf.Tensor], tf.Tensor] | None = None

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.key

    @property
    def parse_example_spec(self) -> dict:
        return {self.key: tf.io.FixedLenFeature(self.shape, self.dtype, self.default_value)}

    @property
    def variable_shape(self) -> int:
        return int(np.prod(self.shape))

    def value(self, features: dict) -> tf.Tensor:
        """The transformed `[batch, *shape]` float value (normalizer_fn applied)."""
        raw = _raw(features, self.key)
        if isinstance(raw, tf.SparseTensor):
            raise ValueError(f"The corresponding Tensor of numerical column must be a Tensor. key: {self.key}")
        value = tf.cast(raw, tf.float32)
        if self.normalizer_fn is not None:
            value = self.normalizer_fn(value)
        return value

    def dense_tensor(self, features: dict, state: dict) -> tf.Tensor:
        value = self.value(features)
        return tf.reshape(value, [-1, self.variable_shape])


def numeric_column(key, shape=(1,), default_value=None, dtype=tf.float32, normalizer_fn=None) -> NumericColumn:
    """`tf.feature_column.numeric_column`."""
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(d) for d in shape)
    if default_value is not None and not isinstance(default_value, (tuple, list)) and shape != (1,):
        default_value = tuple([default_value] * int(np.prod(shape)))
    elif isinstance(default_value, list):
        default_value = tuple(default_value)
    return NumericColumn(key, shape, default_value, tf.as_dtype(dtype), normalizer_fn)


@dataclass(frozen=True, eq=False)
class BucketizedColumn(DenseColumn, CategoricalColumn):
    source_column: NumericColumn
    boundaries: tuple[float, ...]

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.source_column.name}_bucketized"

    @property
    def parents(self) -> list[FeatureColumn]:
        return [self.source_column]

    @property
    def parse_example_spec(self) -> dict:
        return self.source_column.parse_example_spec

    def _buckets(self, features: dict) -> tf.Tensor:
        value = self.source_column.value(features)
        return tf.raw_ops.Bucketize(input=value, boundaries=list(self.boundaries))

    @property
    def variable_shape(self) -> int:
        return self.source_column.variable_shape * (len(self.boundaries) + 1)

    def dense_tensor(self, features: dict, state: dict) -> tf.Tensor:
        one_hot = tf.one_hot(self._buckets(features), depth=len(self.boundaries) + 1, on_value=1.0, off_value=0.0)
        return tf.reshape(one_hot, [-1, self.variable_shape])

    @property
    def num_buckets(self) -> int:
        return self.variable_shape

    def sparse_tensors(self, features: dict) -> tuple[tf.SparseTensor, None]:
        buckets = self._buckets(features)
        batch = tf.shape(buckets)[0]
        dim = self.source_column.variable_shape
        buckets = tf.reshape(buckets, [batch, dim])
        offsets = tf.range(dim) * (len(self.boundaries) + 1)
        ids = tf.reshape(tf.cast(buckets + offsets, tf.int64), [-1])
        rows = tf.repeat(tf.range(tf.cast(batch, tf.int64)), dim)
        cols = tf.tile(tf.range(dim, dtype=tf.int64), [batch])
        indices = tf.stack([rows, cols], axis=1)
        return tf.SparseTensor(indices, ids, tf.stack([tf.cast(batch, tf.int64), dim])), None


def bucketized_column(source_column, boundaries) -> BucketizedColumn:
    """`tf.feature_column.bucketized_column`."""
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    boundaries = tuple(float(b) for b in boundaries)
    if list(boundaries) != sorted(boundaries) or len(set(boundaries)) != len(boundaries):
        raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, boundaries)


class _LookupColumn(CategoricalColumn):
    key: str
    dtype: tf.DType

    @property
    def name(self) -> str:
        return self.key

    @property
    def parse_example_spec(self) -> dict:
        return {self.key: tf.io.VarLenFeature(self.dtype)}

    def _input(self, features: dict) -> tf.SparseTensor:
        sparse = _to_sparse(_raw(features, self.key))
        if self.dtype.is_integer != sparse.dtype.is_integer:
            raise ValueError(
                f"Column dtype and SparseTensors dtype must be compatible. key: {self.key}, column dtype: "
                f"{self.dtype}, tensor dtype: {sparse.dtype}"
            )
        return sparse


@dataclass(frozen=True, eq=False)
class VocabularyColumn(_LookupColumn):
    key: str
    vocabulary: tuple
    dtype: tf.DType
    default_value: int
    num_oov_buckets: int

    def __post_init__(self) -> None:
        key_dtype = tf.int64 if self.dtype.is_integer else tf.string
        keys = tf.constant(list(self.vocabulary), dtype=key_dtype)
        initializer = tf.lookup.KeyValueTensorInitializer(keys, tf.range(len(self.vocabulary), dtype=tf.int64))
        object.__setattr__(self, "_table", tf.lookup.StaticHashTable(initializer, default_value=-1))

    @property
    def num_buckets(self) -> int:
        return len(self.vocabulary) + self.num_oov_buckets

    def sparse_tensors(self, features: dict) -> tuple[tf.SparseTensor, None]:
        sparse = self._input(features)
        values = sparse.values
        if values.dtype.is_integer:
            values = tf.cast(values, tf.int64)
        ids = self._table.lookup(values)  # type: ignore[attr-defined]
        if self.num_oov_buckets:
            oov = tf.strings.to_hash_bucket_fast(_as_hash_input(values), self.num_oov_buckets) + len(self.vocabulary)
            ids = tf.where(ids < 0, oov, ids)
        elif self.default_value != -1:
            ids = tf.where(ids < 0, tf.constant(self.default_value, tf.int64), ids)
        return _with_values(sparse, ids), None


def _vocabulary_args(vocabulary, dtype, default_value, num_oov_buckets):
    if num_oov_buckets and default_value not in (None, -1):
        raise ValueError(f"Can't specify both num_oov_buckets and default_value in {vocabulary!r}.")
    if num_oov_buckets < 0:
        raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets}.")
    return (-1 if default_value is None else int(default_value)), int(num_oov_buckets)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
    """`tf.feature_column.categorical_column_with_vocabulary_list`."""
    vocabulary = tuple(v.decode() if isinstance(v, bytes) else v for v in vocabulary_list)
    if not vocabulary:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary)) != len(vocabulary):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    if dtype is None:
        dtype = tf.string if isinstance(vocabulary[0], str) else tf.int64
    default_value, num_oov_buckets = _vocabulary_args(vocabulary, dtype, default_value, num_oov_buckets)
    return VocabularyColumn(key, vocabulary, tf.as_dtype(dtype), default_value, num_oov_buckets)


def categorical_column_with_vocabulary_file(
    key, vocabulary_file, vocabulary_size=None, num_oov_buckets=0, default_value=None, dtype=tf.string
):
    """`tf.feature_column.categorical_column_with_vocabulary_file`: one entry per line (the file is
    read once, when the column is made)."""
    with tf.io.gfile.GFile(vocabulary_file, "r") as handle:
        lines = [line.rstrip("\r\n") for line in handle]
    if vocabulary_size is not None:
        if vocabulary_size > len(lines):
            raise ValueError(f"Invalid vocab_size {vocabulary_size} > the {len(lines)} lines of {vocabulary_file}.")
        lines = lines[:vocabulary_size]
    dtype = tf.as_dtype(dtype)
    vocabulary = tuple(int(line) for line in lines) if dtype.is_integer else tuple(lines)
    default_value, num_oov_buckets = _vocabulary_args(vocabulary, dtype, default_value, num_oov_buckets)
    return VocabularyColumn(key, vocabulary, dtype, default_value, num_oov_buckets)


@dataclass(frozen=True, eq=False)
class IdentityColumn(_LookupColumn):
    key: str
    number_buckets: int
    default_value: int | None
    dtype: tf.DType = tf.int64

    @property
    def num_buckets(self) -> int:
        return self.number_buckets

    def sparse_tensors(self, features: dict) -> tuple[tf.SparseTensor, None]:
        sparse = self._input(features)
        values = tf.cast(sparse.values, tf.int64)
        if self.default_value is not None:
            out_of_range = tf.logical_or(values < 0, values >= self.number_buckets)
            values = tf.where(out_of_range, tf.constant(self.default_value, tf.int64), values)
        return _with_values(sparse, values), None


def categorical_column_with_identity(key, num_buckets, default_value=None) -> IdentityColumn:
    """`tf.feature_column.categorical_column_with_identity`."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    return IdentityColumn(key, int(num_buckets), default_value)


@dataclass(frozen=True, eq=False)
class HashedColumn(_LookupColumn):
    key: str
    hash_bucket_size: int
    dtype: tf.DType = tf.string

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size

    def sparse_tensors(self, features: dict) -> tuple[tf.SparseTensor, None]:
        sparse = self._input(features)
        ids = tf.strings.to_hash_bucket_fast(_as_hash_input(sparse.values), self.hash_bucket_size)
        return _with_values(sparse, ids), None


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=tf.string) -> HashedColumn:
    """`tf.feature_column.categorical_column_with_hash_bucket`."""
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    return HashedColumn(key, int(hash_bucket_size), tf.as_dtype(dtype))


@dataclass(frozen=True, eq=False)
class CrossedColumn(CategoricalColumn):
    keys: tuple
    hash_bucket_size: int
    hash_key: int | None = None

    @property
    def name(self) -> str:  # type: ignore[override]
        names = []
        for key in self.keys:
            names.append(key if isinstance(key, str) else key.name)
        return "_X_".join(sorted(names))

    @property
    def parents(self) -> list[FeatureColumn]:
        return [key for key in self.keys if isinstance(key, FeatureColumn)]

    @property
    def parse_example_spec(self) -> dict:
        spec: dict = {}
        for key in self.keys:
            if isinstance(key, str):
                spec[key] = tf.io.VarLenFeature(tf.string)
            else:
                spec.update(key.parse_example_spec)
        return spec

    @property
    def num_buckets(self) -> int:
        return self.hash_bucket_size

    def sparse_tensors(self, features: dict) -> tuple[tf.SparseTensor, None]:
        inputs = []
        for key in self.keys:
            if isinstance(key, str):
                inputs.append(_to_sparse(_raw(features, key)))
            elif isinstance(key, CategoricalColumn):
                ids, _ = key.sparse_tensors(features)
                inputs.append(ids)
            else:
                raise ValueError(f"Unsupported key type for crossed_column: {key}")
        crossed = tf.sparse.cross_hashed(inputs, num_buckets=self.hash_bucket_size, hash_key=self.hash_key)
        return crossed, None


def crossed_column(keys, hash_bucket_size, hash_key=None) -> CrossedColumn:
    """`tf.feature_column.crossed_column`."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    return CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)


@dataclass(frozen=True, eq=False)
class WeightedCategoricalColumn(CategoricalColumn):
    categorical_column: CategoricalColumn
    weight_feature_key: str
    dtype: tf.DType = tf.float32

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def parents(self) -> list[FeatureColumn]:
        return [self.categorical_column]

    @property
    def parse_example_spec(self) -> dict:
        spec = dict(self.categorical_column.parse_example_spec)
        spec[self.weight_feature_key] = tf.io.VarLenFeature(self.dtype)
        return spec

    @property
    def num_buckets(self) -> int:
        return self.categorical_column.num_buckets

    def sparse_tensors(self, features: dict) -> tuple[tf.SparseTensor, tf.SparseTensor]:
        ids, _ = self.categorical_column.sparse_tensors(features)
        weights = _raw(features, self.weight_feature_key)
        if not isinstance(weights, tf.SparseTensor):
            weights = _to_sparse(tf.cast(weights, self.dtype), ignore_value=0.0)
        if not weights.dtype.is_floating:
            weights = tf.SparseTensor(weights.indices, tf.cast(weights.values, tf.float32), weights.dense_shape)
        return ids, weights


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=tf.float32):
    """`tf.feature_column.weighted_categorical_column`."""
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, tf.as_dtype(dtype))


@dataclass(frozen=True, eq=False)
class IndicatorColumn(DenseColumn):
    categorical_column: CategoricalColumn

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.categorical_column.name}_indicator"

    @property
    def parents(self) -> list[FeatureColumn]:
        return [self.categorical_column]

    @property
    def parse_example_spec(self) -> dict:
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self) -> int:
        return self.categorical_column.num_buckets

    def dense_tensor(self, features: dict, state: dict) -> tf.Tensor:
        ids, weights = self.categorical_column.sparse_tensors(features)
        depth = self.variable_shape
        batch = ids.dense_shape[0]
        if weights is not None:
            # TF1: sparse_merge(ids, weights) then to dense: the weight of each id.
            rows = ids.indices[:, 0]
            flat = rows * depth + ids.values
            dense = tf.math.unsorted_segment_sum(weights.values, flat, tf.cast(batch, tf.int64) * depth)
            return tf.reshape(dense, [-1, depth])
        dense_ids = tf.sparse.to_dense(ids, default_value=-1)
        one_hot = tf.one_hot(dense_ids, depth=depth, on_value=1.0, off_value=0.0)
        return tf.reduce_sum(one_hot, axis=[-2])


def indicator_column(categorical_column) -> IndicatorColumn:
    """`tf.feature_column.indicator_column`."""
    return IndicatorColumn(categorical_column)


def _embedding_initializer(dimension: int, initializer: Any) -> Any:
    if initializer is not None:
        return initializer
    return keras.initializers.TruncatedNormal(mean=0.0, stddev=1.0 / math.sqrt(dimension))


def _lookup(weights: Any, ids: tf.SparseTensor, sp_weights: tf.SparseTensor | None, combiner: str, max_norm=None):
    batch = ids.dense_shape[0]
    ids = tf.sparse.reshape(ids, tf.stack([batch, -1]))
    if sp_weights is not None:
        sp_weights = tf.sparse.reshape(sp_weights, tf.stack([batch, -1]))
    # The tf.Variable under a Keras variable: a resource gather, so the gradient stays sparse.
    weights = getattr(weights, "value", weights) if isinstance(weights, keras.Variable) else weights
    return tf.nn.safe_embedding_lookup_sparse(
        weights, ids, sparse_weights=sp_weights, combiner=combiner, max_norm=max_norm
    )


@dataclass(frozen=True, eq=False)
class EmbeddingColumn(DenseColumn):
    categorical_column: CategoricalColumn
    dimension: int
    combiner: str = "mean"
    initializer: Any = None
    ckpt_to_load_from: str | None = None
    tensor_name_in_ckpt: str | None = None
    max_norm: float | None = None
    trainable: bool = True

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.categorical_column.name}_embedding"

    @property
    def parents(self) -> list[FeatureColumn]:
        return [self.categorical_column]

    @property
    def parse_example_spec(self) -> dict:
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self) -> int:
        return self.dimension

    def create_state(self, layer: keras.layers.Layer, state: dict) -> None:
        name = f"{self.name}/embedding_weights"
        state[name] = layer.add_weight(
            name="embedding_weights",
            shape=(self.categorical_column.num_buckets, self.dimension),
            initializer=_embedding_initializer(self.dimension, self.initializer),
            trainable=self.trainable,
        )

    def dense_tensor(self, features: dict, state: dict) -> tf.Tensor:
        ids, weights = self.categorical_column.sparse_tensors(features)
        return _lookup(state[f"{self.name}/embedding_weights"], ids, weights, self.combiner, self.max_norm)


def embedding_column(
    categorical_column,
    dimension,
    combiner="mean",
    initializer=None,
    ckpt_to_load_from=None,
    tensor_name_in_ckpt=None,
    max_norm=None,
    trainable=True,
    use_safe_embedding_lookup=True,
) -> EmbeddingColumn:
    """`tf.feature_column.embedding_column`."""
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if ckpt_to_load_from is not None:
        raise NotImplementedError(
            "embedding_column(ckpt_to_load_from=...): load the TF1 tensor into the model with "
            "tfmigrate.runtime.init_from_checkpoint instead"
        )
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer, None, None, max_norm, trainable)


@dataclass(eq=False)
class _SharedEmbeddingState:
    name: str
    dimension: int
    num_buckets: int
    initializer: Any
    trainable: bool
    # "v1": `tf.compat.v1.feature_column.shared_embedding_columns`, whose table TF1 named
    # `<scope>/<name>/embedding_weights`; "v2": `tf.feature_column.shared_embeddings`, whose table
    # is a top-level `<name>` variable, outside the layer using it.
    api: str = "v1"

    @property
    def tf1_name(self) -> str:
        """The table's key in a layer's `tf1_names`: relative to the layer's scope, or (v2)
        absolute, marked by a leading '/' (`scoped_tf1_names`)."""
        return f"/{self.name}" if self.api == "v2" else f"{self.name}/embedding_weights"


def scoped_tf1_names(scope: str, names: dict[str, Any]) -> dict[str, Any]:
    """A layer's `tf1_names` under its TF1 `scope`: `<scope>/<name>`, except absolute names
    (`/<name>`: a v2 shared embedding table), which are `<name>`."""
    return {name[1:] if name.startswith("/") else f"{scope}/{name}": value for name, value in names.items()}


@dataclass(frozen=True, eq=False)
class SharedEmbeddingColumn(DenseColumn):
    categorical_column: CategoricalColumn
    shared: _SharedEmbeddingState
    combiner: str = "mean"
    max_norm: float | None = None

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def parents(self) -> list[FeatureColumn]:
        return [self.categorical_column]

    @property
    def parse_example_spec(self) -> dict:
        return self.categorical_column.parse_example_spec

    @property
    def variable_shape(self) -> int:
        return self.shared.dimension

    def create_state(self, layer: keras.layers.Layer, state: dict) -> None:
        name = self.shared.tf1_name
        if name in state:
            return
        state[name] = layer.add_weight(
            name="embedding_weights",
            shape=(self.shared.num_buckets, self.shared.dimension),
            initializer=_embedding_initializer(self.shared.dimension, self.shared.initializer),
            trainable=self.shared.trainable,
        )

    def dense_tensor(self, features: dict, state: dict) -> tf.Tensor:
        ids, weights = self.categorical_column.sparse_tensors(features)
        return _lookup(state[self.shared.tf1_name], ids, weights, self.combiner, self.max_norm)


def shared_embedding_columns(
    categorical_columns,
    dimension,
    combiner="mean",
    initializer=None,
    shared_embedding_collection_name=None,
    ckpt_to_load_from=None,
    tensor_name_in_ckpt=None,
    max_norm=None,
    trainable=True,
    use_safe_embedding_lookup=True,
    *,
    _api: str = "v1",
) -> list[SharedEmbeddingColumn]:
    """`tf.compat.v1.feature_column.shared_embedding_columns`: one embedding table (named
    `<collection>/embedding_weights` in the layer's scope) for several categorical columns."""
    columns = list(categorical_columns)
    if not columns:
        raise ValueError("categorical_columns must not be empty")
    sizes = {c.num_buckets for c in columns}
    if len(sizes) != 1:
        raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same number of buckets: {sizes}")
    if ckpt_to_load_from is not None:
        raise NotImplementedError("shared_embedding_columns(ckpt_to_load_from=...): use tfmigrate.runtime.init_from_checkpoint")
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    name = shared_embedding_collection_name or "_".join(sorted(c.name for c in columns)) + "_shared_embedding"
    shared = _SharedEmbeddingState(name, int(dimension), sizes.pop(), initializer, trainable, _api)
    return [SharedEmbeddingColumn(c, shared, combiner, max_norm) for c in columns]


def shared_embeddings(
    categorical_columns,
    dimension,
    combiner="mean",
    initializer=None,
    shared_embedding_collection_name=None,
    ckpt_to_load_from=None,
    tensor_name_in_ckpt=None,
    max_norm=None,
    trainable=True,
    use_safe_embedding_lookup=True,
) -> list[SharedEmbeddingColumn]:
    """`tf.feature_column.shared_embeddings`: as `shared_embedding_columns`, but the table is the
    top-level variable `<collection>` TF 2.x created outside the layer using it (a v2 canned
    estimator's DNN did not train it: see `canned.CannedModel`)."""
    return shared_embedding_columns(
        categorical_columns, dimension, combiner, initializer, shared_embedding_collection_name,
        ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable, use_safe_embedding_lookup, _api="v2",
    )


def make_parse_example_spec(feature_columns) -> dict:
    """`tf.feature_column.make_parse_example_spec`: the `tf.io.parse_example` spec of the columns."""
    spec: dict = {}
    for column in feature_columns:
        if not isinstance(column, FeatureColumn):
            raise ValueError(f"All feature_columns must be FeatureColumn instances. Given: {column}")
        for key, value in column.parse_example_spec.items():
            if key in spec and spec[key] != value:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. Given {value} and {spec[key]}")
            spec[key] = value
    return spec


# -- layers --------------------------------------------------------------------------------------


def lookup_tables(model: Any) -> list[Any]:
    """The lookup tables the feature columns of `model`'s layers hold (vocabulary columns).

    A column is a frozen dataclass, not a Keras trackable, so `tf.saved_model.save` does not see
    its table: an export attaches these to the saved object (else TF refuses the signature as
    capturing an untracked resource).
    """
    tables: list[Any] = []
    seen: set[int] = set()

    def visit(column: Any) -> None:
        if not isinstance(column, FeatureColumn) or id(column) in seen:
            return
        seen.add(id(column))
        table = getattr(column, "_table", None)
        if table is not None:
            tables.append(table)
        for parent in column.parents:
            visit(parent)

    layers = model._flatten_layers() if hasattr(model, "_flatten_layers") else []  # noqa: SLF001
    for layer in layers:
        for column in getattr(layer, "columns", None) or []:
            visit(column)
    return tables


def _sorted_columns(feature_columns: Sequence[FeatureColumn]) -> list[FeatureColumn]:
    columns = list(feature_columns)
    if isinstance(feature_columns, FeatureColumn):
        columns = [feature_columns]  # type: ignore[list-item]
    if not columns:
        raise ValueError("Expected feature_columns to be iterable, found an empty collection.")
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"Duplicate feature column name found: {sorted(names)}")
    return sorted(columns, key=lambda c: c.name)


class InputLayer(keras.layers.Layer):
    """`tf.compat.v1.feature_column.input_layer` as a layer: the dense columns, sorted by name,
    each `[batch, variable_shape]`, concatenated. `tf1_names` holds TF1 name -> variable,
    relative to the scope of the TF1 input layer."""

    def __init__(self, feature_columns, **kwargs):
        super().__init__(**kwargs)
        self.columns = _sorted_columns(feature_columns)
        for column in self.columns:
            if not isinstance(column, DenseColumn):
                raise ValueError(
                    f"Items of feature_columns must be a DenseColumn (use embedding_column or indicator_column for "
                    f"a categorical column). Given: {column.name}"
                )
        self.tf1_names: dict[str, Any] = {}
        for column in self.columns:
            column.create_state(self, self.tf1_names)
        self.built = True

    @property
    def output_dim(self) -> int:
        return sum(c.variable_shape for c in self.columns)  # type: ignore[attr-defined]

    def call(self, features):
        outputs = [c.dense_tensor(features, self.tf1_names) for c in self.columns]  # type: ignore[attr-defined]
        return tf.concat(outputs, axis=1)


class LinearModel(keras.layers.Layer):
    """`tf.compat.v1.feature_column.linear_model` / the canned linear model's logits: per column
    (sorted by name) a `weights` variable `[num_buckets or variable_shape, units]` looked up
    (categorical columns, `sparse_combiner`) or multiplied (dense columns), summed, plus
    `bias_weights`. All start at zero, as in TF1."""

    def __init__(self, feature_columns, units=1, sparse_combiner="sum", **kwargs):
        super().__init__(**kwargs)
        self.columns = _sorted_columns(feature_columns)
        self.units = int(units)
        self.sparse_combiner = sparse_combiner
        self.tf1_names: dict[str, Any] = {}
        self._weights_of: list[Any] = []
        for column in self.columns:
            if isinstance(column, CategoricalColumn):
                rows = column.num_buckets
            elif isinstance(column, DenseColumn):
                column.create_state(self, self.tf1_names)
                rows = column.variable_shape
            else:
                raise ValueError(f"Items of feature_columns must be either a DenseColumn or CategoricalColumn. Given: {column}")
            weight = self.add_weight(name="weights", shape=(rows, self.units), initializer="zeros")
            self.tf1_names[f"{column.name}/weights"] = weight
            self._weights_of.append(weight)
        self.bias = self.add_weight(name="bias_weights", shape=(self.units,), initializer="zeros")
        self.tf1_names["bias_weights"] = self.bias
        self.built = True

    def call(self, features):
        sums = []
        for column, weight in zip(self.columns, self._weights_of):
            if isinstance(column, CategoricalColumn):
                ids, weights = column.sparse_tensors(features)
                sums.append(_lookup(weight, ids, weights, self.sparse_combiner))
            else:
                dense = column.dense_tensor(features, self.tf1_names)  # type: ignore[attr-defined]
                sums.append(tf.matmul(dense, weight))
        return tf.nn.bias_add(tf.math.add_n(sums), self.bias)

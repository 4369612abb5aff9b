"""`tfm.estimator`'s canned estimators: TF's `DNNClassifier`, `LinearRegressor`, wide & deep, ...
kept where the program keeps them (returned from a `build_estimator` helper, handed to
`train_and_evaluate`), run as the `tfm.canned` Keras models.

Each class takes TF's constructor arguments (v1's `tf.compat.v1.estimator` list with `api="v1"`,
the default: the hosted namespace is TF 2.15's `tf.compat.v1.estimator`; v2's `tf.estimator` list
with `api="v2"`) and builds the `tfm.canned` model of the same name and `api` in the config's
strategy's scope (after `seed_from_config(config)`). The Estimator methods go through the
Keras tier: `train` -> `tfm.fit`, `evaluate` -> `tfm.evaluate`, `predict` ->
`tfm.predict_examples`, `export_saved_model` -> `tfm.export_saved_model`, each with the input_fn
wrapped by `tfm.input_fn_data` and the estimator's `config`/`model_dir`; `train_and_evaluate`
drives them as it drives the graph-mode `Estimator`.

Feature columns may be TF's own (`tf.feature_column.*`, `tf.compat.v1.feature_column.*`, which
current TF still exports): they are converted to `tfm.feature_columns` equivalents at
construction, by class and fields (numeric, bucketized, vocabulary list/file, identity, hash
bucket, crossed, weighted, indicator, embedding). `tfm.feature_columns` are taken as they are.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from .. import canned as _canned
from .. import feature_columns as _fc
from ..checkpoints import latest_checkpoint as _latest_checkpoint
from .core import CheckpointReader, config_with_model_dir
from ..estimator_calls import seed_from_config
from ..strategy import strategy_from_config
from ..inputs import input_fn_data
from ..estimator_calls import fit
from ..estimator_calls import evaluate
from ..predictions import predict_examples
from ..export import export_saved_model

__all__ = [
    "BaselineClassifier", "BaselineRegressor", "DNNClassifier", "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor", "DNNRegressor", "LinearClassifier", "LinearRegressor", "convert_feature_column",
]


# -- TF feature columns -> tfm.feature_columns ------------------------------------------------------


def _default_embedding_initializer(initializer: Any, dimension: int) -> bool:
    """TF's `embedding_column(initializer=None)` stored `truncated_normal(0, 1/sqrt(dimension))`."""
    config = getattr(initializer, "get_config", None)
    if config is None or "TruncatedNormal" not in type(initializer).__name__:
        return False
    values = config()
    return values.get("mean", 0.0) == 0.0 and math.isclose(values.get("stddev", -1.0), 1.0 / math.sqrt(dimension))


def convert_feature_column(column: Any, memo: dict[int, Any] | None = None) -> Any:
    """The `tfm.feature_columns` equivalent of a TF feature column (a tfm column as it is).

    `memo` (id -> converted) keeps a column used twice (a vocabulary column in the linear part and
    under an indicator in the DNN) one tfm column.
    """
    if isinstance(column, (str, bytes)) or isinstance(column, _fc.FeatureColumn):
        return column
    memo = {} if memo is None else memo
    if id(column) in memo:
        return memo[id(column)][1]
    kind = type(column).__name__.lstrip("_")
    convert = lambda c: convert_feature_column(c, memo)  # noqa: E731
    if kind == "NumericColumn":
        out = _fc.numeric_column(column.key, shape=tuple(column.shape), default_value=column.default_value,
                                 dtype=column.dtype, normalizer_fn=column.normalizer_fn)
    elif kind == "BucketizedColumn":
        out = _fc.bucketized_column(convert(column.source_column), list(column.boundaries))
    elif kind == "VocabularyListCategoricalColumn":
        out = _fc.categorical_column_with_vocabulary_list(
            column.key, column.vocabulary_list, dtype=column.dtype, default_value=column.default_value,
            num_oov_buckets=column.num_oov_buckets)
    elif kind == "VocabularyFileCategoricalColumn":
        out = _fc.categorical_column_with_vocabulary_file(
            column.key, column.vocabulary_file, vocabulary_size=column.vocabulary_size,
            num_oov_buckets=column.num_oov_buckets, default_value=column.default_value, dtype=column.dtype)
    elif kind == "IdentityCategoricalColumn":
        out = _fc.categorical_column_with_identity(column.key, column.number_buckets, default_value=column.default_value)
    elif kind == "HashedCategoricalColumn":
        out = _fc.categorical_column_with_hash_bucket(column.key, column.hash_bucket_size, dtype=column.dtype)
    elif kind == "CrossedColumn":
        out = _fc.crossed_column([convert(k) for k in column.keys], column.hash_bucket_size, hash_key=column.hash_key)
    elif kind == "WeightedCategoricalColumn":
        out = _fc.weighted_categorical_column(convert(column.categorical_column), column.weight_feature_key,
                                              dtype=column.dtype)
    elif kind == "IndicatorColumn":
        out = _fc.indicator_column(convert(column.categorical_column))
    elif kind == "EmbeddingColumn":
        initializer = column.initializer
        if _default_embedding_initializer(initializer, column.dimension):
            initializer = None
        out = _fc.embedding_column(
            convert(column.categorical_column), column.dimension, combiner=column.combiner, initializer=initializer,
            ckpt_to_load_from=column.ckpt_to_load_from, tensor_name_in_ckpt=column.tensor_name_in_ckpt,
            max_norm=column.max_norm, trainable=column.trainable,
            use_safe_embedding_lookup=getattr(column, "use_safe_embedding_lookup", True))
    else:
        raise NotImplementedError(
            f"tfm.estimator canned estimators: no tfm.feature_columns equivalent of {type(column).__name__} "
            f"({column!r}); spell it with tfm.feature_columns (shared embeddings: tfm.feature_columns.shared_embeddings)"
        )
    memo[id(column)] = (column, out)  # the column kept alive so that its id is not reused
    return out


def _columns(columns: Any, memo: dict) -> Any:
    if columns is None:
        return None
    if isinstance(columns, dict):
        columns = list(columns.values())
    return [convert_feature_column(c, memo) for c in columns]


# -- the estimators --------------------------------------------------------------------------------

_COLUMN_ARGS = ("feature_columns", "linear_feature_columns", "dnn_feature_columns")
# Arguments of TF's constructors with no meaning for a Keras model (variable partitioning).
_IGNORED = ("input_layer_partitioner", "partitioner")


class _CannedEstimator(CheckpointReader):
    """An estimator-shaped `tfm.canned` model (see the module docstring)."""

    _BUILD: Any = None  # the tfm.canned constructor
    _V1: tuple[str, ...] = ()  # TF's positional argument lists
    _V2: tuple[str, ...] = ()

    def __init__(self, *args: Any, api: str = "v1", **kwargs: Any) -> None:
        api = _canned.check_api(api)
        names = self._V1 if api == "v1" else self._V2
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} positional arguments, {len(args)} given")
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__}() got multiple values for argument '{name}'")
            kwargs[name] = value
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise TypeError(f"{type(self).__name__}() ({api}) got unexpected keyword arguments {unknown}")
        for name in _IGNORED:
            kwargs.pop(name, None)
        self._config = config_with_model_dir(kwargs.pop("config", None), kwargs.pop("model_dir", None))
        self._model_dir = self._config.model_dir
        self._api = api
        memo: dict = {}
        for name in _COLUMN_ARGS:
            if name in kwargs:
                kwargs[name] = _columns(kwargs[name], memo)
        seed_from_config(self._config)
        self._strategy = strategy_from_config(self._config)
        with self._strategy.scope():
            self._model = type(self)._BUILD(**kwargs, api=api)

    # -- properties --------------------------------------------------------------------------------

    @property
    def model_dir(self) -> str:
        return self._model_dir

    @property
    def config(self):
        return self._config

    @property
    def params(self) -> dict:
        return {}

    @property
    def model(self):
        """The `tfm.canned` Keras model."""
        return self._model

    def latest_checkpoint(self) -> str | None:
        return _latest_checkpoint(self._model_dir)

    # -- the Estimator methods, on the Keras tier --------------------------------------------------

    def _data(self, input_fn: Any, mode: str) -> Any:
        return input_fn_data(input_fn, batch_size=None, mode=mode, per_replica=True, config=self._config)

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        fit(self._model, self._data(input_fn, "train"), steps=steps, max_steps=max_steps, config=self._config,
            model_dir=self._model_dir, hooks=list(hooks or []), saving_listeners=list(saving_listeners or []))
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None) -> dict:
        return evaluate(self._model, self._data(input_fn, "eval"), steps=steps, config=self._config,
                        model_dir=self._model_dir, hooks=list(hooks or []), name=name, checkpoint_path=checkpoint_path)

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True) -> Iterator[Any]:
        yield from predict_examples(
            self._model, self._data(input_fn, "infer"), predict_keys=predict_keys,
            yield_single_examples=yield_single_examples, config=self._config, model_dir=self._model_dir,
            hooks=list(hooks or []), checkpoint_path=checkpoint_path)

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                           checkpoint_path=None, experimental_mode=None):
        if not serving_input_receiver_fn:
            raise ValueError("An input_receiver_fn must be defined.")
        return export_saved_model(
            self._model, export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra, as_text=as_text,
            checkpoint_path=checkpoint_path, experimental_mode=experimental_mode, config=self._config,
            model_dir=self._model_dir)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None, as_text=False,
                          checkpoint_path=None, strip_default_attrs=False):
        """TF1's deprecated spelling of `export_saved_model`."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn, assets_extra=assets_extra,
                                       as_text=as_text, checkpoint_path=checkpoint_path)


def _define(name: str, build: Any, v1: str, v2: str) -> type:
    cls = type(name, (_CannedEstimator,), {
        "_BUILD": staticmethod(build), "_V1": tuple(v1.split()), "_V2": tuple(v2.split()),
        "__doc__": f"TF's `{name}` (`api='v1'`: `tf.compat.v1.estimator.{name}`, the default; `'v2'`: "
                   f"`tf.estimator.{name}`), run as `tfm.canned.{name}`.",
        "__module__": __name__,
    })
    return cls


DNNClassifier = _define(
    "DNNClassifier", _canned.DNNClassifier,
    "hidden_units feature_columns model_dir n_classes weight_column label_vocabulary optimizer activation_fn dropout "
    "input_layer_partitioner config warm_start_from loss_reduction batch_norm",
    "hidden_units feature_columns model_dir n_classes weight_column label_vocabulary optimizer activation_fn dropout "
    "config warm_start_from loss_reduction batch_norm")
DNNRegressor = _define(
    "DNNRegressor", _canned.DNNRegressor,
    "hidden_units feature_columns model_dir label_dimension weight_column optimizer activation_fn dropout "
    "input_layer_partitioner config warm_start_from loss_reduction batch_norm",
    "hidden_units feature_columns model_dir label_dimension weight_column optimizer activation_fn dropout "
    "config warm_start_from loss_reduction batch_norm")
LinearClassifier = _define(
    "LinearClassifier", _canned.LinearClassifier,
    "feature_columns model_dir n_classes weight_column label_vocabulary optimizer config partitioner "
    "warm_start_from loss_reduction sparse_combiner",
    "feature_columns model_dir n_classes weight_column label_vocabulary optimizer config warm_start_from "
    "loss_reduction sparse_combiner")
LinearRegressor = _define(
    "LinearRegressor", _canned.LinearRegressor,
    "feature_columns model_dir label_dimension weight_column optimizer config partitioner warm_start_from "
    "loss_reduction sparse_combiner",
    "feature_columns model_dir label_dimension weight_column optimizer config warm_start_from loss_reduction "
    "sparse_combiner")
DNNLinearCombinedClassifier = _define(
    "DNNLinearCombinedClassifier", _canned.DNNLinearCombinedClassifier,
    "model_dir linear_feature_columns linear_optimizer dnn_feature_columns dnn_optimizer dnn_hidden_units "
    "dnn_activation_fn dnn_dropout n_classes weight_column label_vocabulary input_layer_partitioner config "
    "warm_start_from loss_reduction batch_norm linear_sparse_combiner",
    "model_dir linear_feature_columns linear_optimizer dnn_feature_columns dnn_optimizer dnn_hidden_units "
    "dnn_activation_fn dnn_dropout n_classes weight_column label_vocabulary config warm_start_from loss_reduction "
    "batch_norm linear_sparse_combiner")
DNNLinearCombinedRegressor = _define(
    "DNNLinearCombinedRegressor", _canned.DNNLinearCombinedRegressor,
    "model_dir linear_feature_columns linear_optimizer dnn_feature_columns dnn_optimizer dnn_hidden_units "
    "dnn_activation_fn dnn_dropout label_dimension weight_column input_layer_partitioner config warm_start_from "
    "loss_reduction batch_norm linear_sparse_combiner",
    "model_dir linear_feature_columns linear_optimizer dnn_feature_columns dnn_optimizer dnn_hidden_units "
    "dnn_activation_fn dnn_dropout label_dimension weight_column config warm_start_from loss_reduction batch_norm "
    "linear_sparse_combiner")
BaselineClassifier = _define(
    "BaselineClassifier", _canned.BaselineClassifier,
    "model_dir n_classes weight_column label_vocabulary optimizer config loss_reduction",
    "model_dir n_classes weight_column label_vocabulary optimizer config loss_reduction")
BaselineRegressor = _define(
    "BaselineRegressor", _canned.BaselineRegressor,
    "model_dir label_dimension weight_column optimizer config loss_reduction",
    "model_dir label_dimension weight_column optimizer config loss_reduction")

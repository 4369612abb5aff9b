"""A model_fn's variables for the strategy tier: found once in a TF1 graph, made once as TF2
variables, handed back to the model_fn on every trace.

A TF1 model_fn makes its variables as it builds its graph (`get_variable`, `tf.layers`, an
optimizer's slots, `tf.compat.v1.metrics`' counters). Inside a `tf.function` that is allowed on the
first trace only, and a second trace (another mode, a retrace) would make new ones. So:

  * `discover` builds the model_fn once in a TF1 graph, the way the graph-mode Estimator builds
    it (same seed, same op order: the initial values are TF 1.x's), and records each variable in
    creation order: its TF1 name, shape, dtype, trainable flag, collections, whether the graph's
    variable store made it (`get_variable`) or the program did (`tf.Variable`, a V1 optimizer's
    `beta1_power`), and its initial value. The initial values are computed without a Session: the
    graph's initializers (with `init_from_checkpoint` and warm-start restores) are imported into
    a `wrap_function` and pruned to the values;
  * `HeldVariables.make` creates them under the strategy's scope, with their TF1 names. Every
    replica reads the same value and writes the first replica's (`ONLY_FIRST_REPLICA`): the
    replicas compute the same update from all-reduced gradients (`replicas.py`), and
    `tf.compat.v1.metrics`' counters keep the per-replica sums they asked for (`ON_READ`);
  * `HeldVariables.scope` is entered around each call of the model_fn in a trace: a variable
    store whose `get_variable` returns the held variable of that name, a creator that hands the
    program's other variables back in creation order, a fresh variable-scope store (so
    `variable_scope(None, default_name="bert")` is `bert` on every trace, not `bert_1`), and
    the TF1 collections (`trainable_variables()`, the global step) filled as TF1 filled them.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np
import tensorflow as tf
from tensorflow.python.framework import random_seed
from tensorflow.python.ops import variable_scope as _vs
from tensorflow.python.training import optimizer as _v1_optimizer

from .checks import Unsupported
from .tf1_build import patched, seed_graph

__all__ = ["Found", "HeldVariables", "NotHeld", "discover", "first_copy", "local_copy", "name_of"]

_KEYS = tf.compat.v1.GraphKeys


class NotHeld(Unsupported):
    """The model_fn made a variable the discovery did not see (the call runs in graph mode)."""


@dataclass(frozen=True)
class Found:
    name: str
    shape: tuple
    dtype: Any
    trainable: bool
    collections: tuple[str, ...]
    store_name: str | None  # the name `get_variable` asked for ("w/Adam/" for a slot whose op is "w/Adam")
    random_ops: int  # the unseeded random ops its initializer made (each took the next op seed)
    synchronization: Any
    aggregation: Any
    non_slot: bool = False  # a V1 optimizer's own (`beta1_power`): made where it applies the gradients


class _RecordingStore(_vs._VariableStore):  # noqa: SLF001 - TF1's own store, subclassed to record
    __slots__ = ["made", "random_ops"]

    def __init__(self) -> None:
        super().__init__()
        self.made: dict[int, str] = {}
        self.random_ops: dict[int, int] = {}

    def _get_single_variable(self, name, *args, **kwargs):
        known = name in self._vars
        before = random_op_count()
        variable = super()._get_single_variable(name, *args, **kwargs)
        if not known:
            self.made[id(variable)] = name
            self.random_ops[id(variable)] = random_op_count() - before
        return variable


def _collections_of(graph: tf.Graph) -> dict[int, tuple[str, ...]]:
    found: dict[int, list[str]] = {}
    for key in graph.get_all_collection_keys():
        if not isinstance(key, str):
            continue
        for item in graph.get_collection(key):
            if isinstance(item, tf.Variable) or hasattr(item, "initial_value"):
                found.setdefault(id(item), []).append(key)
    return {k: tuple(v) for k, v in found.items()}


def discover(graph: tf.Graph, build: Callable[[], Any]) -> tuple[Any, list[Found], Callable[[], list[np.ndarray]]]:
    """Calls `build` (the graph-mode Estimator's construction of one mode: seed, global step,
    input_fn, model_fn) in `graph`; returns its result, the variables it made, in order, and a
    function computing their initial values (called only where no checkpoint gives them)."""
    creations: list[tuple[Any, int]] = []
    store = _RecordingStore()
    non_slot: set[int] = set()
    making_non_slot = threading.local()

    def record(next_creator, **kwargs):
        before = random_op_count()
        variable = next_creator(**kwargs)
        creations.append((variable, random_op_count() - before))
        if getattr(making_non_slot, "on", False):
            non_slot.add(id(variable))
        return variable

    original = _v1_optimizer.Optimizer._create_non_slot_variable  # noqa: SLF001

    def create_non_slot_variable(self, *args, **kwargs):
        making_non_slot.on = True
        try:
            return original(self, *args, **kwargs)
        finally:
            making_non_slot.on = False

    with graph.as_default(), _vs.with_variable_store(store), tf.variable_creator_scope(record), \
            patched((_v1_optimizer.Optimizer, "_create_non_slot_variable", create_non_slot_variable)):
        result = build()
    variables = [v for v, _ in creations]
    random_ops = {id(v): count for v, count in creations}
    collections = _collections_of(graph)
    with graph.as_default():
        initial = [variable.initial_value.name for variable in variables]
    found = []
    for variable in variables:
        if not variable.shape.is_fully_defined():  # (`validate_shape=False`: a contrib streaming metric's)
            raise Unsupported(f"variable {variable.op.name} has no fixed shape ({variable.shape})")
        found.append(Found(
            name=variable.op.name,
            shape=tuple(variable.shape.as_list()),
            dtype=variable.dtype.base_dtype,
            trainable=_TRAINABLE in collections.get(id(variable), ()),
            collections=collections.get(id(variable), (_KEYS.GLOBAL_VARIABLES,)),
            store_name=store.made.get(id(variable)),
            random_ops=store.random_ops.get(id(variable), random_ops[id(variable)]),
            synchronization=getattr(variable, "synchronization", tf.VariableSynchronization.AUTO),
            aggregation=getattr(variable, "aggregation", tf.VariableAggregation.NONE),
            non_slot=id(variable) in non_slot,
        ))
    graph_def = graph.as_graph_def()
    return result, found, lambda: _initial_values(graph_def, initial)


_TRAINABLE = _KEYS.TRAINABLE_VARIABLES
# What each replica's build adds and reads as its own where a replica stands for one device's whole
# build (`mean_gradients`: a replicated run gives one device's numbers): a replica's
# `get_total_loss()`/`get_regularization_loss()` sums its own losses, not the other replicas' too.
_REPLICA_COLLECTIONS = (_KEYS.LOSSES, _KEYS.REGULARIZATION_LOSSES, _KEYS.UPDATE_OPS)


class _ReplicasOwn(list):
    """A trace graph's collection that each replica's thread reads as the entries added before the
    replicas plus its own: MirroredStrategy's replicas are threads building one graph, and TF's
    collections are the graph's. Only `append` and reading are used on a collection (TF's own
    `add_to_collection`, `get_collection`, `get_collection_ref` + append)."""

    def __init__(self, items: list) -> None:
        super().__init__(items)
        self._by_thread: dict[int, list] = {}

    def enter_replica(self) -> None:
        self._by_thread.setdefault(threading.get_ident(), [])

    def _visible(self) -> list:
        return list(super().__iter__()) + self._by_thread.get(threading.get_ident(), [])

    def append(self, value: Any) -> None:
        own = self._by_thread.get(threading.get_ident())
        if own is None:
            super().append(value)
        else:
            own.append(value)

    def extend(self, values: Any) -> None:
        for value in values:
            self.append(value)

    def __iter__(self):
        return iter(self._visible())

    def __len__(self) -> int:
        return len(self._visible())

    def __bool__(self) -> bool:
        return bool(self._visible())

    def __getitem__(self, index: Any) -> Any:
        return self._visible()[index]

    def __contains__(self, value: Any) -> bool:
        return value in self._visible()
_TRACE_COLLECTIONS = (_KEYS.GLOBAL_VARIABLES, _KEYS.LOCAL_VARIABLES, _KEYS.TRAINABLE_VARIABLES)


def _initial_values(graph_def: Any, names: list[str]) -> list[np.ndarray]:
    """Each variable's initial value (its initializer's, or the checkpoint value a restore set),
    computed by a TF2 function over the graph's initializers: no Session."""
    if not names:
        return []

    def imported():
        tf.compat.v1.import_graph_def(graph_def, name="")

    wrapped = tf.compat.v1.wrap_function(imported, [])
    fetch = wrapped.prune([], [wrapped.graph.get_tensor_by_name(name) for name in names])
    return [np.asarray(value) for value in fetch()]


class HeldVariables:
    """The TF2 variables of a model_fn, by TF1 name, and how traces get them back."""

    def __init__(self) -> None:
        self.by_name: dict[str, tf.Variable] = {}
        self.by_store_name: dict[str, tf.Variable] = {}
        self._found: dict[str, Found] = {}
        # The graph of the trace under way: the collections filled there even from an
        # `init_scope` (a V1 optimizer's or EMA's slots), whose default graph is the process's.
        self.trace_graph: tf.Graph | None = None

    def make(self, found: list[Found], strategy: tf.distribute.Strategy) -> None:
        """Creates the variables of `found` not held yet, under `strategy`'s scope."""
        with strategy.scope():
            for item in found:
                if item.name not in self.by_name:
                    self.by_name[item.name] = self._made(item)
                    self._found[item.name] = item
                if item.store_name is not None:
                    self.by_store_name.setdefault(item.store_name, self.by_name[item.name])

    @staticmethod
    def _made(item: Found) -> tf.Variable:
        local = _KEYS.LOCAL_VARIABLES in item.collections or _KEYS.METRIC_VARIABLES in item.collections
        if local or item.synchronization == tf.VariableSynchronization.ON_READ:
            synchronization = tf.VariableSynchronization.ON_READ
            aggregation = item.aggregation if item.aggregation != tf.VariableAggregation.NONE else tf.VariableAggregation.SUM
        else:
            synchronization = tf.VariableSynchronization.AUTO
            aggregation = tf.VariableAggregation.ONLY_FIRST_REPLICA
        return tf.Variable(tf.zeros(item.shape, item.dtype), name=item.name, trainable=item.trainable and not local,
                           synchronization=synchronization, aggregation=aggregation)

    def found_of(self, variable: Any) -> Found:
        return self._found[name_of(variable)]

    def collections_of(self, variable: Any) -> tuple[str, ...]:
        return self.found_of(variable).collections

    def global_variables(self) -> dict[str, tf.Variable]:
        """The variables a TF1 checkpoint holds (global ones, not metric counters), by name."""
        return {
            name: variable for name, variable in self.by_name.items()
            if _KEYS.GLOBAL_VARIABLES in self._found[name].collections
        }

    def local_variables(self, found: list[Found]) -> list[tf.Variable]:
        return [self.by_name[item.name] for item in found if _KEYS.GLOBAL_VARIABLES not in item.collections]

    @contextlib.contextmanager
    def scope(self, found: list[Found], *, as_estimator_replicas: bool = False) -> Iterator["_Trace"]:
        """Entered around the replicas' calls of the model_fn in one trace (`found`: that mode's
        variables); each replica's call enters the yielded trace's `replica()`. Each replica (a
        thread of its own under MirroredStrategy) gets TF1's rules as one graph construction: its
        own `get_variable` reuse checks and its own run through the program's other variables, in
        order. (TF1's MirroredStrategy shared one store with `reuse=True` for the replicas after
        the first; each replica here gets the held variables.)

        `as_estimator_replicas` (a RunConfig strategy, run as TF 1.x's Estimator ran it): a V1
        optimizer makes its own variables (`beta1_power`) in its cross-replica
        `_distributed_apply`, once, not in the replicas: they are handed back there; and a
        weight's regularizer adds its penalty in the first replica only (`_HeldStore.penalty_due`)."""
        store = _HeldStore(self, penalties_once=as_estimator_replicas)
        graph = tf.compat.v1.get_default_graph()
        # A function graph shares its variable collections with the graph outside it (TF's
        # ALLOWLIST_COLLECTIONS), so one trace's variables would be in the next one's from the
        # start (an EMA of `global_variables()` then averaging its own averages). TF1 built each
        # call's graph afresh: each trace starts with empty ones.
        shared = {key: graph.get_collection_ref(key) for key in _TRACE_COLLECTIONS}
        for key in _TRACE_COLLECTIONS:
            graph._collections[key] = []  # noqa: SLF001
        step = self.by_name.get("global_step")
        if step is not None and not graph.get_collection(_KEYS.GLOBAL_STEP):
            _fill(step, (_KEYS.GLOBAL_VARIABLES, _KEYS.GLOBAL_STEP))
        own = {} if as_estimator_replicas else {key: _ReplicasOwn(graph.get_collection(key)) for key in _REPLICA_COLLECTIONS}
        outside = {key: graph._collections.get(key) for key in own}  # noqa: SLF001
        graph._collections.update(own)  # noqa: SLF001
        scopes = graph.get_collection_ref(_vs._VARSCOPESTORE_KEY)  # noqa: SLF001
        saved = list(scopes)
        scopes[:] = [_vs._VariableScopeStore()]  # noqa: SLF001 - thread-local: fresh in each replica's thread
        self.trace_graph = graph
        trace = _Trace(self, [item for item in found if item.store_name is None], as_estimator_replicas, list(own.values()))
        try:
            with _vs.with_variable_store(store), _legacy_layer_regularizers_once(), \
                    trace.optimizers_apply_cross_replica() if as_estimator_replicas else contextlib.nullcontext():
                yield trace
        finally:
            scopes[:] = saved
            self.trace_graph = None
            for key, collection in shared.items():
                graph._collections[key] = collection  # noqa: SLF001
            for key, collection in outside.items():
                if collection is None:
                    graph._collections.pop(key, None)  # noqa: SLF001
                else:
                    graph._collections[key] = collection  # noqa: SLF001


class _Trace:
    """One trace's hand-back of the variables a program makes itself (not through `get_variable`)."""

    def __init__(self, held: HeldVariables, direct: list[Found], non_slot_cross_replica: bool = False,
                 replicas_own: list["_ReplicasOwn"] | None = None) -> None:
        self._held = held
        cross = [item for item in direct if item.non_slot] if non_slot_cross_replica else []
        self._direct = [item for item in direct if item not in cross]
        self._cross_replica = cross
        self._replicas_own = replicas_own or []

    def _hand_back(self, items: list[Found]) -> Callable:
        direct = iter(items)

        def hand_back(next_creator, **kwargs):
            item = next(direct, None)
            if item is None:
                raise NotHeld(f"model_fn made variable {kwargs.get('name')!r}, which its graph-mode build did not")
            variable = self._held.by_name[item.name]
            _fill(variable, item.collections, self._held.trace_graph)
            _skip_random_ops(item.random_ops)
            return variable

        return hand_back

    @contextlib.contextmanager
    def replica(self) -> Iterator[None]:
        """Entered in each replica's call: the innermost variable creator, before the strategy's;
        the replica's own losses and update ops (`_ReplicasOwn`)."""
        for collection in self._replicas_own:
            collection.enter_replica()
        with tf.variable_creator_scope(self._hand_back(self._direct)):
            yield

    @contextlib.contextmanager
    def optimizers_apply_cross_replica(self) -> Iterator[None]:
        """A V1 optimizer's `_distributed_apply` (its merge call, in the strategy's own thread) gets
        its own variables handed back, innermost, in the order the discovery made them."""
        original = _v1_optimizer.Optimizer._distributed_apply  # noqa: SLF001
        hand_back = self._hand_back(self._cross_replica)

        def distributed_apply(optimizer, *args, **kwargs):
            with tf.variable_creator_scope(hand_back):
                return original(optimizer, *args, **kwargs)

        with patched((_v1_optimizer.Optimizer, "_distributed_apply", distributed_apply)):
            yield


@contextlib.contextmanager
def _legacy_layer_regularizers_once() -> Iterator[None]:
    """`tf.layers`' regularizers (tf-keras's legacy layers) as TF1 ran them: a weight's penalty
    added where the graph made the weight, once per build. In a `tf.function` those layers add it
    on every call (they count eager-outside-functions as eager), so a tower called twice under
    `variable_scope(reuse=True)` counted its penalties twice. Here the penalty is added where the
    weight is first asked for in this trace, as `_HeldStore` does for `get_variable(regularizer=)`."""
    import sys

    base = sys.modules.get("tf_keras.src.legacy_tf_layers.base")  # (not imported here if the program did not)
    if base is None:
        yield
        return
    original = base.Layer.add_weight

    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None, *args, **kwargs):
        store = _vs._get_default_variable_store()  # noqa: SLF001
        if regularizer is None or not isinstance(store, _HeldStore):
            return original(self, name, shape, dtype, initializer, regularizer, *args, **kwargs)
        before = len(store._vars)  # noqa: SLF001
        variable = original(self, name, shape, dtype, initializer, None, *args, **kwargs)
        if len(store._vars) > before and store.penalty_due(variable):  # noqa: SLF001 - first asked for in this build: TF1 made it here
            self._handle_weight_regularization(name, variable, regularizer)  # noqa: SLF001
        return variable

    base.Layer.add_weight = add_weight
    try:
        yield
    finally:
        base.Layer.add_weight = original


def name_of(variable: Any) -> str:
    """A held variable's TF1 name (`bert/embeddings/word_embeddings`, its `:0` dropped)."""
    name = variable.name
    return name[:-2] if name.endswith(":0") else name


def random_op_count(graph: tf.Graph | None = None) -> int:
    """How many unseeded random ops the graph has made: the next one's op seed (TF's counter)."""
    return random_seed._graph_to_seed_dict.get(graph or tf.compat.v1.get_default_graph(), 0)  # noqa: SLF001


def _skip_random_ops(count: int) -> None:
    """Counts `count` random ops as made: a held variable's initializer drew its op seeds in TF1."""
    if count:
        graph = seed_graph(tf.compat.v1.get_default_graph())
        random_seed._graph_to_seed_dict[graph] = random_seed._graph_to_seed_dict.get(graph, 0) + count  # noqa: SLF001


def _fill(variable: Any, keys: tuple[str, ...] | list[str], graph: tf.Graph | None = None) -> None:
    """Adds `variable` to `graph`'s (the trace's; else the current graph's) collections `keys`,
    once (replicas share the graph)."""
    graph = graph or tf.compat.v1.get_default_graph()
    for key in keys:
        collection = graph.get_collection_ref(key)
        if not any(item is variable for item in collection):
            collection.append(variable)


class _HeldStore(_vs._VariableStore):  # noqa: SLF001
    """`get_variable` under TF1's reuse rules within one replica's call, answered from the held
    variables (what a call has asked for is kept per thread: MirroredStrategy's replicas are
    threads sharing one graph, so one store)."""

    __slots__ = ["_held", "_local", "_penalized", "_penalties_once"]

    def __init__(self, held: HeldVariables, penalties_once: bool = False) -> None:
        self._local = threading.local()
        super().__init__()
        self._store_eager_variables = True
        self._held = held
        self._penalties_once = penalties_once
        self._penalized: set[str] = set()

    def penalty_due(self, variable: Any) -> bool:
        """Whether a weight first asked for in this replica's build adds its regularizer's penalty
        here: in every replica's build, or (`penalties_once`, a RunConfig strategy as TF 1.x's
        Estimator ran it) in the first replica's only. TF 1.x's replicas shared one variable store:
        the first made the weight and added its penalty to the graph's collection, which the later
        replicas' `get_regularization_loss()` read: a `tf.layers` penalty as the first replica
        computed it (their gradients not reaching it), a `get_variable(regularizer=)` one computed
        again where it is read (TF 1.x's store added a lazily evaluated tensor)."""
        if not self._penalties_once:
            return True
        name = name_of(variable)
        if name in self._penalized:
            return False
        self._penalized.add(name)
        return True

    @property
    def _vars(self) -> dict:
        if not hasattr(self._local, "vars"):
            self._local.vars = {}
        return self._local.vars

    @_vars.setter
    def _vars(self, value: dict) -> None:
        self._local.vars = value

    def _get_single_variable(self, name, shape=None, dtype=tf.float32, initializer=None, regularizer=None,
                             reuse=None, trainable=None, collections=None, **kwargs):
        if name in self._vars:
            if reuse is False:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                                 "reuse=tf.AUTO_REUSE in VarScope?")
            return self._vars[name]
        variable = self._held.by_store_name.get(name)
        if variable is None:
            raise NotHeld(f"model_fn asked for variable {name!r}, which its graph-mode build did not make")
        if shape is not None and not tf.TensorShape(shape).is_compatible_with(variable.shape):
            raise ValueError(f"Trying to share variable {name}, but specified shape {tf.TensorShape(shape)} and found "
                             f"shape {variable.shape}.")
        self._vars[name] = variable
        _fill(variable, self._held.collections_of(variable), self._held.trace_graph)
        _skip_random_ops(self._held.found_of(variable).random_ops)
        if regularizer is not None and self.penalty_due(variable):
            # As TF 1.x's store: a penalty computed where it is read (a later replica reading the
            # first one's entry reads its own copy of the weight, and its gradient reaches it).
            def penalty():
                with tf.compat.v1.colocate_with(variable), tf.name_scope(name + "/Regularizer/"):
                    return regularizer(variable)

            if regularizer(variable) is not None:
                tf.compat.v1.add_to_collection(_KEYS.REGULARIZATION_LOSSES, _vs._LazyEvalTensor(penalty))  # noqa: SLF001
        return variable


def local_copy(variable: Any) -> Any:
    """A replicated variable's copy on this replica (a plain variable is its own)."""
    if isinstance(variable, tf.distribute.DistributedValues):
        return variable._get_on_device_or_primary()  # noqa: SLF001 - the replica's own component
    return variable


def first_copy(variable: Any) -> Any:
    """A replicated variable's first copy (a plain variable is its own)."""
    return variable.values[0] if isinstance(variable, tf.distribute.DistributedValues) else variable

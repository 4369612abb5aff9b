"""What a trace of the strategy tier keeps of TF 1.x's graph build around the model_fn: the
graph seed and op seeds of unseeded random ops, Python's random state, `init_from_checkpoint`
done once, and no optimizer updates outside TRAIN (each function's doc says why)."""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
from typing import Any, Iterator

import tensorflow as tf
from tensorflow.python.eager import context
from tensorflow.python.framework import random_seed
from tensorflow.python.framework import tensor as tensor_lib
from tensorflow.python.ops import control_flow_util
from tensorflow.python.ops import resource_variable_ops
from tensorflow.python.training import checkpoint_utils

from ..._patching import patched
from ...inputs import ModeKeys

__all__ = ["eager_graph_seeds", "ema_restore_maps", "graph_seeds", "op_seeds_recorded", "optimizer_updates_skipped", "patched",
           "restores_at_discovery", "seed_graph", "tf1_control_flow",
           "tf1_op_seeds", "tf1_tensor_equality"]


def tf1_control_flow() -> contextlib.AbstractContextManager:
    """`tf.while_loop`/`tf.cond` build TF 1.x's control flow ops while inside (a module flag), as
    the graph tier's loops and reference variables need."""
    return patched((control_flow_util, "ENABLE_CONTROL_FLOW_V2", False))


def tf1_tensor_equality() -> contextlib.AbstractContextManager:
    """TF 1.x compared tensors and variables by identity and hashed them, as graph mode still
    does: model_fns put variables in sets and dict keys (`list(set(ema_vars))`) and test `v in
    variables`. In a trace under eager TF2 a variable is unhashable and `==` an element-wise op;
    while inside, a trace compares as TF 1.x did (`tf.compat.v1.disable_tensor_equality()`)."""
    return patched((tensor_lib.Tensor, "_USE_EQUALITY", False))


@contextlib.contextmanager
def optimizer_updates_skipped(mode: str) -> Iterator[None]:
    """Outside TRAIN, a V1 optimizer's `minimize`/`apply_gradients` build nothing: model_fns that
    build their train_op in every mode were evaluated by TF1 without running it, and a tf.function
    would run it. (An optimizer that overrides `apply_gradients` still builds its writes, which
    send that call to graph mode.)"""
    if mode == ModeKeys.TRAIN:
        yield
        return
    optimizer = tf.compat.v1.train.Optimizer
    with patched((optimizer, "minimize", lambda self, *args, **kwargs: tf.no_op()),
                 (optimizer, "apply_gradients", lambda self, *args, **kwargs: tf.no_op())):
        yield


@contextlib.contextmanager
def eager_graph_seeds(seed: int | None, start: int) -> Iterator[None]:
    """Random ops made eagerly inside (an input_fn's shuffle) take the seeds a TF1 graph with seed
    `seed` gave them, op seeds counting on from `start`, instead of eager execution's own."""
    if seed is None:
        yield
        return
    original = random_seed.get_seed
    counter = itertools.count(start)

    def get_seed(op_seed):
        if not context.executing_eagerly():
            return original(op_seed)
        if op_seed is None:
            op_seed = next(counter)
        seeds = random_seed._truncate_seed(seed), random_seed._truncate_seed(op_seed)  # noqa: SLF001
        return (0, random_seed._MAXINT32) if seeds == (0, 0) else seeds  # noqa: SLF001

    random_seed.get_seed = get_seed
    try:
        yield
    finally:
        random_seed.get_seed = original


@contextlib.contextmanager
def restores_at_discovery() -> Iterator[None]:
    """`init_from_checkpoint` in a traced model_fn does nothing: its restore already set the
    initial values the discovery computed (TF1 ran it as an initializer, once). In a function it
    would restore on every step. Likewise a TF1 `Saver` the traced model_fn makes (a Scaffold's
    own, for an exponential moving average) builds nothing there: the runner restores through the
    names of the one the discovery built (`checks.restore_names`), and in a function its restore
    ops would run every step."""
    def unbuilt(self, var_list=None, *args, **kwargs):
        self._var_list = var_list
        self._is_built = False
        self.saver_def = None

    with patched((checkpoint_utils, "_init_from_checkpoint", lambda *args, **kwargs: None),
                 (tf.compat.v1.train.Saver, "__init__", unbuilt)):
        yield


class _HeldOp:
    """What `variable.op` gives for a held variable in a trace: its TF1 op's name and type (TF1
    programs name variables by `v.op.name`, as in a Scaffold Saver's `{v.op.name: v}` map); a
    variable made eagerly has no op in a function."""

    type = "VarHandleOp"

    def __init__(self, name: str) -> None:
        self.name = name


_LIBRARIES = ("tensorflow", "tf_keras", "keras", "tfmigrate")


def held_variable_ops() -> contextlib.AbstractContextManager:
    """While inside, a variable made eagerly answers the program's `.op` with its name (`_HeldOp`)
    where TF would raise (an eager variable's op is undefined in a function). TF's own code (which
    catches that error to take its eager path) still gets the error."""
    original = resource_variable_ops.BaseResourceVariable.op

    def op(self):
        try:
            return original.fget(self)
        except AttributeError:
            caller = sys._getframe(1).f_globals.get("__name__", "")  # noqa: SLF001
            if getattr(self, "_in_graph_mode", True) or caller.split(".")[0] in _LIBRARIES:
                raise
            name = self.name
            return _HeldOp(name[:-2] if name.endswith(":0") else name)

    return patched((resource_variable_ops.BaseResourceVariable, "op", property(op)))


@contextlib.contextmanager
def saver_ops_recorded() -> Iterator[set]:
    """While inside, the ops every TF1 `Saver` builds are added to the yielded set: its save and
    restore ops run only through a Session (a Scaffold's `init_fn`, a hook), and a trace builds
    no Saver (`restores_at_discovery`), so they are no write the traced step makes."""
    recorded: set = set()
    original = tf.compat.v1.train.Saver.__init__

    def init(self, *args, **kwargs):
        graph = tf.compat.v1.get_default_graph()
        first = len(graph.get_operations())
        original(self, *args, **kwargs)
        recorded.update(graph.get_operations()[first:])

    with patched((tf.compat.v1.train.Saver, "__init__", init)):
        yield recorded


def ema_restore_maps() -> contextlib.AbstractContextManager:
    """While inside, `ExponentialMovingAverage.variables_to_restore()` names variables by
    `variable.name` as TF 1.x named them by `variable.op.name`: in a trace the held variables
    (made eagerly) have no op. TF1's EMA programs build that map for their evaluation Scaffold's
    Saver (ResNet, EfficientNet); the runner restores through the discovery's (`checks.restore_names`)."""
    def variables_to_restore(self, moving_avg_variables=None):
        if moving_avg_variables is None:
            moving_avg_variables = tf.compat.v1.trainable_variables() + tf.compat.v1.moving_average_variables()
        averaged = {v.ref() for v in moving_avg_variables}
        name_map = {self.average_name(v): v for v in (ref.deref() for ref in averaged)}
        averaged_names = {v.name for v in moving_avg_variables}
        for v in tf.compat.v1.global_variables():
            name = v.name[:-2] if v.name.endswith(":0") else v.name
            if v.name not in averaged_names and name not in name_map:
                name_map[name] = v
        return name_map

    return patched((tf.compat.v1.train.ExponentialMovingAverage, "variables_to_restore", variables_to_restore))


def seed_graph(graph: Any) -> Any:
    """The graph whose random-op count `graph`'s unseeded random ops take their op seeds from: the
    trace's own where `graph` is a branch or loop body inside it (TF 1.x's control flow built them
    in the one graph, and counted them there)."""
    current = graph
    while current is not None:
        if getattr(current, "_tfm_seed_root", False):
            return current
        current = getattr(current, "outer_graph", None)
    return graph


class _Draws(threading.local):
    """This thread's unseeded random draws: recorded in a graph-mode build, replayed in a trace."""

    record: list | None = None  # the graph-mode build's op seeds, in order
    creating = 0  # inside a variable's creation (its initializer's draws are not the model_fn's)
    replay: list | None = None  # the trace's: the op seeds still to hand out
    root: Any = None  # the trace's graph (its branches and loop bodies draw from it too)


_draws = _Draws()
_original_get_seed = random_seed.get_seed


def _tf1_get_seed(op_seed=None):
    """`random_seed.get_seed` while recording or replaying TF 1.x's op seeds (`op_seeds_recorded`,
    `graph_seeds`): an unseeded random op of the model_fn gets the op seed its graph-mode build gave
    the same op, in order, wherever the trace builds it (a `tf.cond` branch or `dynamic_rnn` loop
    body is a graph of its own in a trace, not in TF 1.x)."""
    if op_seed is not None or (_draws.record is None and _draws.replay is None):
        return _original_get_seed(op_seed)
    if _draws.record is not None:
        seeds = _original_get_seed(op_seed)
        if not _draws.creating:
            _draws.record.append(seeds)
        return seeds
    if seed_graph(tf.compat.v1.get_default_graph()) is not _draws.root:
        return _original_get_seed(op_seed)
    if not _draws.replay:
        from .checks import Unsupported

        raise Unsupported("model_fn draws more unseeded random numbers in a tf.function than its graph-mode build "
                          "did: their TF 1.x op seeds are not known")
    return _draws.replay.pop(0)


@contextlib.contextmanager
def tf1_op_seeds() -> Iterator[None]:
    """Entered once around a graph-mode build or a trace (not in the replicas' threads): routes
    `random_seed.get_seed` through `_tf1_get_seed`."""
    with patched((random_seed, "get_seed", _tf1_get_seed)):
        yield


def _creating(next_creator, **kwargs):
    _draws.creating += 1
    try:
        return next_creator(**kwargs)
    finally:
        _draws.creating -= 1


@contextlib.contextmanager
def op_seeds_recorded() -> Iterator[list]:
    """Around the graph-mode build's model_fn call: the op seeds TF 1.x gave its unseeded random ops
    (dropout, a random crop), in order; not those of variables' initializers, which a trace, handed
    the variables, never draws."""
    seeds: list = []
    _draws.record = seeds
    try:
        with tf1_op_seeds(), tf.compat.v1.variable_creator_scope(_creating):
            yield seeds
    finally:
        _draws.record = None


@contextlib.contextmanager
def graph_seeds(extra: dict) -> Iterator[None]:
    """The trace's graph seed and random-op count as the graph-mode build had them where it called
    the model_fn: its unseeded random ops (dropout, a shuffle) get TF 1.x's op seeds."""
    graph = tf.compat.v1.get_default_graph()
    saved_seed, saved_count = graph.seed, random_seed._graph_to_seed_dict.get(graph)  # noqa: SLF001
    graph.seed = extra.get("graph_seed")
    random_seed._graph_to_seed_dict[graph] = extra.get("random_ops_before", 0)  # noqa: SLF001
    saved_root = getattr(graph, "_tfm_seed_root", False)
    graph._tfm_seed_root = True  # noqa: SLF001
    saved_draws = _draws.replay, _draws.root
    _draws.replay, _draws.root = list(extra.get("op_seeds", ())), graph
    try:
        yield
        if _draws.replay:
            from .checks import Unsupported

            raise Unsupported(f"model_fn drew {len(_draws.replay)} fewer unseeded random numbers in a tf.function than "
                              "its graph-mode build did (a Keras model built on a graph placeholder draws there), so "
                              "TF 1.x's op seeds cannot be matched to its random ops")
    finally:
        _draws.replay, _draws.root = saved_draws
        graph._tfm_seed_root = saved_root  # noqa: SLF001
        graph.seed = saved_seed
        if saved_count is None:
            random_seed._graph_to_seed_dict.pop(graph, None)  # noqa: SLF001
        else:
            random_seed._graph_to_seed_dict[graph] = saved_count  # noqa: SLF001

"""Keras 2 call arguments that Keras 3 refuses or ignores, in a module that keeps Keras 3.

Current TF's `tf.keras` is Keras 3 (TF 2.16+), and so is standalone `keras`. A Keras 2 call can fail
there on a keyword that Keras 2 took: `tf.keras.optimizers.Adam(lr=0.01)`,
`tf.keras.regularizers.l2(l=0.01)`, `BatchNormalization(fused=False)`, `ModelCheckpoint(period=5)`.
It can also run and do something else: Keras 3's optimizers take `decay=` and ignore it, with a
warning, where Keras 2 decayed the learning rate.

What each Keras 3 callable takes is read off current Keras (`rules/data/keras3_keywords.json`,
written by `scripts/gen_api_table.py check-current`). Only the callables whose keyword set is closed
are listed: a function without `**kwargs`, or a class whose `__init__`s end in one that refuses the
rest (Keras 3's `Layer`, its optimizers' base).

For such a call, each keyword gets one of three outcomes:
- Keras 3's name, where Keras 2 took an alias for an argument Keras 3 takes under its own name:
  an L1 or L2 regularizer's `l` is `l1`/`l2`, and in a TF 1.x program an optimizer's `lr` is
  `learning_rate`;
- a TODO, where Keras 3 takes no such argument. That includes `lr` in a TF 2.x program: TF
  2.11-2.15's optimizers took it and ignored it, keeping their default rate, where earlier Keras
  read it as the rate, so which rate the program trains with depends on the TF it ran on;
- a TODO, where Keras 3 ignores it.
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterator
from importlib import resources

from tfmigrate.textpass import SourceView

# Keras 2's aliases: the names it took for an argument its callables have under another name. The
# L1/L2 regularizers took `l` for their factor (`L2(l2=0.01, **kwargs)` popped `l`). The alias
# becomes the one of these names that the Keras 3 callable takes, where exactly one is taken.
KERAS2_ALIASES = {"l": ("l1", "l2"), "lr": ("learning_rate",)}
# The aliases not every Keras 2 read so, with what their TODO says outside a TF 1.x program.
# OptimizerV2, TF 1.x's and TF 2.0-2.10's, took `lr` for `learning_rate`; TF 2.11-2.15's optimizers
# popped it and ignored it (`_process_kwargs`), so only a TF 1.x program's `lr` is surely the rate.
_UNSURE_ALIASES = {
    "lr": " Keras 2 read it as `learning_rate` up to TF 2.10; TF 2.11-2.15's optimizers ignored it (with a "
          "warning) and kept their default rate: pass `learning_rate=` with the rate this program should train with",
}

# What a TODO adds for an argument that Keras 3 ignores.
_IGNORED_HINTS = {
    "decay": " Keras 2 divided the learning rate by `1 + decay * iterations`: in Keras 3 that is "
             "`learning_rate=keras.optimizers.schedules.InverseTimeDecay(rate, 1, decay)`",
}

# TF's spellings of its Keras: Keras 3 on current TF (`tf.compat.v1.keras` and `tf.compat.v2.keras` too).
TF_KERAS_SPELLINGS = ("tensorflow.keras.", "tensorflow.compat.v1.keras.", "tensorflow.compat.v2.keras.")


@functools.cache
def _callables() -> dict[str, dict[str, list[str]]]:
    data = resources.files("tfmigrate.rules") / "data" / "keras3_keywords.json"
    return json.loads(data.read_text(encoding="utf-8"))["callables"]


def keras3_path(full: str) -> tuple[str, str] | None:
    """(the Keras 3 path, as the table lists it, and how a TODO spells it) for a qualified chain
    that names Keras 3 on current TF (`tensorflow.keras.X`, standalone `keras.X`); else None."""
    for prefix in TF_KERAS_SPELLINGS:
        if full.startswith(prefix):
            rest = full[len(prefix):]
            return f"keras.{rest}", f"tf.{prefix[len('tensorflow.'):]}{rest}"
    if full.startswith("keras."):
        return full, full
    return None


def verdicts(full: str, keywords: list[str | None], tf1: bool) -> Iterator[tuple[int, str | None, str | None]]:
    """For the keywords of a call of `full` (a qualified chain; None for `**kwargs`) in a TF 1.x
    program (`tf1`) or not: (index, Keras 3's name for it, None) where Keras 2's alias becomes Keras
    3's name, (index, None, a TODO) where Keras 3 does not take it or ignores it. Nothing for a
    callable that takes anything, or for a call that passes `**kwargs` (what it passes is not known
    here)."""
    path = keras3_path(full)
    if path is None or None in keywords:
        return
    taken = _callables().get(path[0])
    if taken is None:
        return
    accepts, ignores = set(taken["accepts"]), set(taken["ignores"])
    for index, keyword in enumerate(keywords):
        assert keyword is not None
        if keyword in ignores:
            yield index, None, (f"Keras 3's `{path[1]}` takes `{keyword}=` and ignores it (with a warning), where "
                                f"Keras 2 applied it.{_IGNORED_HINTS.get(keyword, '')}")
        elif keyword not in accepts:
            names = [name for name in KERAS2_ALIASES.get(keyword, ()) if name in accepts]
            unsure = _UNSURE_ALIASES.get(keyword)
            if len(names) == 1 and names[0] not in keywords and (unsure is None or tf1):
                yield index, names[0], None
            elif unsure is not None and len(names) == 1:
                yield index, None, f"Keras 3's `{path[1]}` takes no `{keyword}=`.{unsure}"
            else:
                yield index, None, (f"Keras 3's `{path[1]}` takes no `{keyword}=`, which Keras 2 took: remove it "
                                    f"or rewrite the call with Keras 3's API")


def keras3_call_fixes(view: SourceView, tf1: bool) -> tuple[list[tuple[int, int, str]], list[tuple[ast.stmt, str]]]:
    """`verdicts` over a module's calls of Keras 3, in a TF 1.x program (`tf1`) or not: (the
    byte-range replacements of the keywords renamed, the TODOs with their innermost statements)."""
    funcs = {}
    for chain in view.chains:
        if chain.call and chain.node is not None and not chain.in_import:
            full = view.names.qualify_dotted(chain.dotted)
            if full is not None and keras3_path(full) is not None:
                funcs[id(chain.node)] = (full, chain.stmt)
    replacements: list[tuple[int, int, str]] = []
    todos: list[tuple[ast.stmt, str]] = []
    seen: set[tuple[int, str]] = set()
    if not funcs:
        return replacements, todos
    for call in view.nodes_of(ast.Call):
        found = funcs.get(id(call.func))
        if found is None or not call.keywords:
            continue
        full, stmt = found
        for index, name, message in verdicts(full, [keyword.arg for keyword in call.keywords], tf1):
            keyword = call.keywords[index]
            if name is not None:
                start = view.lines.offset(keyword.lineno, keyword.col_offset)
                replacements.append((start, start + len(keyword.arg.encode("utf-8")), name))  # type: ignore[union-attr]
            elif (id(stmt), message) not in seen:
                seen.add((id(stmt), message))  # type: ignore[arg-type]
                todos.append((stmt, message))  # type: ignore[arg-type]
    return replacements, todos

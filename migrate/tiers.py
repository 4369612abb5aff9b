"""Which tier each estimator site of a file got: `idiomatic`, `strategy`, `graph` or `not migrated`.

Read off the source and the output, whichever rules ran: a site (a call of an estimator class
some rule handles) whose line in the output no longer constructs it was rewritten into a Keras
model: `idiomatic`; one still constructing a TF1 estimator is `not migrated`. One that constructs
the runtime's hosted estimator (`tfm.estimator`, the model_fn kept as written) runs on the
strategy tier (TF2, inside the strategy's `tf.function`): `strategy`, unless the output shows what
sends its calls to TF1 graph mode (`runtime_tier.graph_mode_reasons`): `graph`, with the reasons.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .hosted import HOSTED_CANNED
from .names import AliasTable, SourceLines, ast_dotted, canonical_name
from .rule import RUNTIME_MODULE
from .parsing import index_by_type, parse
from .runtime_tier import graph_mode_reasons, reasons_for

IDIOMATIC, STRATEGY, GRAPH, NOT_MIGRATED = "idiomatic", "strategy", "graph", "not migrated"
TIERS = (IDIOMATIC, STRATEGY, GRAPH, NOT_MIGRATED)
HOSTED_TIERS = frozenset({STRATEGY, GRAPH})  # the runtime's tfm.estimator, the model_fn as written
_HOSTED_CLASSES = frozenset({f"{RUNTIME_MODULE}.estimator.Estimator", f"{RUNTIME_MODULE}.estimator.tpu.TPUEstimator",
                             f"{RUNTIME_MODULE}.ModelFnModel"}) | frozenset(
    f"{RUNTIME_MODULE}.estimator.{name}" for name in HOSTED_CANNED
)


def estimator_keys() -> frozenset[str]:
    """The canonical estimator classes the structural rules declare (`ESTIMATOR_KEYS`)."""
    from .registry import all_rules

    return frozenset(key for rule in all_rules() for key in getattr(rule, "ESTIMATOR_KEYS", ()))


def estimator_calls(calls: Iterable[ast.Call], names: AliasTable, keys: frozenset[str]) -> list[tuple[int, str, bool]]:
    """(line, class name, hosted) for each of `calls` (a module's) of a TF1 estimator class in
    `keys` or of the hosted runtime's."""
    out = []
    for node in calls:
        dotted = ast_dotted(node.func)
        full = names.qualify_dotted(dotted) if dotted else None
        if full is None:
            continue
        if full in _HOSTED_CLASSES:
            out.append((node.lineno, full.rsplit(".", 1)[1], True))
        elif canonical_name(full) in keys:
            out.append((node.lineno, full.rsplit(".", 1)[1], False))
    return sorted(out)


def output_calls(output: str, keys: frozenset[str]) -> list[tuple[int, str, bool]]:
    try:
        tree = parse(output)  # (parsed again: `transform_source` lets its trees go when it ends)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return estimator_calls(index_by_type(tree).get(ast.Call, ()), AliasTable.from_ast(tree, SourceLines(output)), keys)


def classify(sites: list[tuple[int, str, bool]], output_sites: list[tuple[int, str, bool]], source_line,
             output: str) -> list[dict]:
    """One entry per source site: its source `line`, `estimator` class and `tier` (and for a
    `graph` one, `graph_mode`: why)."""
    at: dict[int, bool] = {}
    site_lines = sorted(line for line, _, _ in sites)
    for line, _, hosted in output_sites:
        line = source_line(line)
        if hosted and line not in site_lines:
            # `tfm.ModelFnModel(...)` is a few lines into what replaced its site's statement.
            line = next((site for site in reversed(site_lines) if site <= line), line)
        at[line] = at.get(line, False) or hosted
    reasons: list[str] | None = None
    out = []
    for line, name, hosted_already in sites:
        entry = {"line": line, "estimator": name}
        if hosted_already or at.get(line) is True:
            if name in HOSTED_CANNED:  # an estimator-shaped object over the runtime's canned Keras model
                entry["tier"] = STRATEGY
            else:
                reasons = graph_mode_reasons(output) if reasons is None else reasons
                own = reasons_for(name, reasons)
                entry["tier"] = GRAPH if own else STRATEGY
                if own:
                    entry["graph_mode"] = own
        elif line in at:
            entry["tier"] = NOT_MIGRATED
        else:
            entry["tier"] = IDIOMATIC
        out.append(entry)
    return out

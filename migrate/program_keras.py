"""Which Keras each module of a TF 1.x program runs, once the run has migrated them all.

A TF 1.x program's `tf.keras` was Keras 2, built into the graphs its estimators and Sessions ran;
TFM105 gives a file that runs such graph code TF 1.x's Keras (`tfm.legacy.keras`). A module of
Keras code alone (a model module, its estimator elsewhere) cannot tell from its own text: it runs
where its importers build it. The runner migrates every module, reads from each migration which
Keras it runs (`keras_side`), decides here which modules of Keras code alone take TF 1.x's
(`tf1_keras_modules`), and migrates those again (`Options.graph_keras`).
"""

from __future__ import annotations

from .tiers import HOSTED_TIERS, IDIOMATIC


def keras_side(result) -> str | None:
    """Which Keras a program module's migration runs: "keras3" (Keras 3 code: TF's Keras kept, a
    Keras-tier estimator, a canned estimator), else "graph" (TF1 graph code: a hosted Estimator
    or TPUEstimator, Session/placeholder code, TF 1.x's Keras), else None."""
    graph, keras3 = result.keras_code
    for site in result.estimators:
        if site["tier"] == IDIOMATIC or (site["tier"] in HOSTED_TIERS and not site["estimator"].endswith("Estimator")):
            keras3 = True  # (a hosted canned estimator is a Keras model in the runtime)
        elif site["tier"] in HOSTED_TIERS:
            graph = True  # (a kept model_fn is built as TF 1.x built it, on either of the runtime's tiers)
    return "keras3" if keras3 else "graph" if graph else None


def tf1_keras_modules(modules: list[tuple[str, str | None, bool]], importers: dict[str, set[str]]) -> set[str]:
    """The program's modules of Keras code alone that take TF 1.x's Keras. Such modules importing
    one another share one Keras (a Keras model subclassed in another module): each group takes TF
    1.x's where graph code (a hosted estimator's model_fn, Session code) reaches one of them along
    its imports, through modules with no Keras of their own (a model factory), and Keras 3 code
    (a Keras-tier estimator, standalone `keras`) reaches none (one Keras per program).

    `modules`: (module name, its `keras_side`, whether it is Keras code alone) for each module of
    the program; `importers`: module name -> the modules importing it (`exports.importers_of`)."""
    alone = {name for name, _, keras_alone in modules if keras_alone}
    if not alone:
        return set()
    sides = {name: side for name, side, _ in modules}
    imports: dict[str, set[str]] = {}
    group = {name: name for name in alone}  # union-find over the modules of Keras code alone

    def root(name: str) -> str:
        while group[name] != name:
            group[name] = name = group[group[name]]
        return name

    for module, by in importers.items():
        for importer in by:
            imports.setdefault(importer, set()).add(module)
            if module in alone and importer in alone:
                group[root(module)] = root(importer)
    # Where a module runs, what it imports runs too, unless it says which Keras it runs itself.
    passes = {name for name, side in sides.items() if side is None} | alone

    def reached(kind: str) -> set[str]:
        stack = [name for name, side in sides.items() if side == kind and name not in alone]
        seen = set(stack)
        while stack:
            for module in imports.get(stack.pop(), ()):
                if module not in seen and module in passes:
                    seen.add(module)
                    stack.append(module)
        return {root(name) for name in seen & alone}

    groups = reached("graph") - reached("keras3")
    return {name for name in alone if root(name) in groups}

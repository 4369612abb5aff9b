"""Rule discovery: every module in `tfmigrate.rules` defines exactly one `Rule` subclass.

There is no hand-kept list. Order comes from each rule's `RUNS_AFTER`, then from its code.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

from .rule import Rule


class RegistryError(Exception):
    pass


@functools.cache
def all_rules() -> tuple[type[Rule], ...]:
    import tfmigrate.rules as package

    found: dict[str, type[Rule]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        rules = [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__
        ]
        if len(rules) != 1:
            raise RegistryError(f"rules module {module.__name__} must define exactly one Rule, found {len(rules)}")
        rule = rules[0]
        check_metadata(rule)
        if rule.CODE in found:
            raise RegistryError(f"duplicate rule code {rule.CODE}: {rule.__name__} and {found[rule.CODE].__name__}")
        found[rule.CODE] = rule
    return _toposort(found)


def check_metadata(rule: type[Rule]) -> None:
    """What every rule must declare on its class: CODE, SUMMARY, a docstring and SAFE."""
    if not rule.CODE or not rule.SUMMARY or not rule.__doc__:
        raise RegistryError(f"{rule.__name__} needs CODE, SUMMARY and a docstring")
    if not isinstance(getattr(rule, "SAFE", None), bool):
        raise RegistryError(f"{rule.__name__} must declare SAFE = True or False (is its fix safe to apply unreviewed?)")


def _toposort(rules: dict[str, type[Rule]]) -> tuple[type[Rule], ...]:
    ordered: list[type[Rule]] = []
    state: dict[str, int] = {}

    def visit(code: str, chain: tuple[str, ...]) -> None:
        if state.get(code) == 2:
            return
        if state.get(code) == 1:
            raise RegistryError("rule ordering cycle: " + " -> ".join(chain + (code,)))
        state[code] = 1
        for dep in sorted(rules[code].RUNS_AFTER):
            if dep not in rules:
                raise RegistryError(f"{code} RUNS_AFTER unknown rule {dep}")
            visit(dep, chain + (code,))
        state[code] = 2
        ordered.append(rules[code])

    for code in sorted(rules):
        visit(code, ())
    return tuple(ordered)


def expand_selection(codes: list[str] | None) -> set[str]:
    """Expand code prefixes (`TFM3`, `TFM30`, `ALL`) to full codes; unknown selectors raise."""
    known = [r.CODE for r in all_rules()]
    if not codes:
        return set(known)
    out: set[str] = set()
    for sel in codes:
        sel = sel.strip().upper()
        if sel == "ALL":
            out.update(known)
            continue
        matched = [c for c in known if c.startswith(sel)]
        if not matched:
            raise RegistryError(f"unknown rule selector {sel!r} (known: {', '.join(known)})")
        out.update(matched)
    return out

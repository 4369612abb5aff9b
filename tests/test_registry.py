"""Meta-tests over the rule registry: discovery, metadata, ordering, selection, fixtures per rule."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from tfmigrate.registry import RegistryError, all_rules, expand_selection


def test_rules_are_discovered_with_metadata() -> None:
    rules = all_rules()
    codes = [r.CODE for r in rules]
    assert len(codes) == len(set(codes))
    assert {"TFM101", "TFM301", "TFM302"} <= set(codes)
    for rule in rules:
        assert rule.CODE.startswith("TFM") and len(rule.CODE) == 6
        assert rule.SUMMARY and rule.__doc__


def test_runs_after_is_respected() -> None:
    order = [r.CODE for r in all_rules()]
    for rule in all_rules():
        for dep in rule.RUNS_AFTER:
            assert order.index(dep) < order.index(rule.CODE)


def test_every_rule_has_fixtures() -> None:
    dirs = {p.name.split("_", 1)[0] for p in FIXTURES.iterdir() if p.is_dir()}
    for rule in all_rules():
        assert rule.CODE in dirs, f"{rule.CODE} has no fixtures/{rule.CODE}_<slug>/ directory"


def test_prefix_selection() -> None:
    assert expand_selection(["TFM3"]) == {"TFM301", "TFM302"}
    assert "TFM101" in expand_selection(["ALL"])
    assert expand_selection(None) == {r.CODE for r in all_rules()}
    with pytest.raises(RegistryError):
        expand_selection(["TFM9"])

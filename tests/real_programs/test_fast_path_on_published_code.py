"""The codemod's fast path (text passes, skipped rules and walks) against the plain LibCST pipeline
on published TF1 code: every module of BERT and ALBERT from PyPI. The fixtures and generated
programs are held to the same in tests/test_textpass.py; published code reaches shapes they do not
(run over 1,365 public files outside the suite, the same comparison found TFM105's LibCST pass
resolving `tf` otherwise than its text path, and TFM102's deleting a program's own `x = x`). About
half a minute on two workers: the LibCST pipeline runs every rule's CST pass."""

from __future__ import annotations

import pytest

from tfmigrate.engine import reference_transform, transform_source

from .packages import package_dir

pytestmark = [pytest.mark.slow]


def _modules() -> list:
    return [pytest.param(name, id=name) for name in ("bert", "albert")]


@pytest.mark.parametrize("package", _modules())
def test_fast_path_equals_the_libcst_pipeline_on_published_modules(package: str) -> None:
    files = sorted(package_dir(package).rglob("*.py"))
    assert len(files) >= 10, files
    for path in files:
        source = path.read_text(encoding="utf-8")
        fast = transform_source(source, filename=str(path))
        slow = reference_transform(source, filename=str(path))
        assert fast.error is None and slow.error is None, path.name
        assert fast.output == slow.output, path.name
        assert [t.as_dict() for t in fast.todos] == [t.as_dict() for t in slow.todos], path.name
        assert [c.as_dict() for c in fast.changes] == [c.as_dict() for c in slow.changes], path.name

"""The codemod's fast path (text passes, skipped rules and walks) against the plain LibCST pipeline
on published TF1 code: every module of BERT and ALBERT from PyPI, as published and without its
final line break. The fixtures and generated programs are held to the same in tests/test_textpass.py;
published code reaches shapes they do not (run over 1,400 public files, this comparison found
TFM105's LibCST pass resolving `tf` otherwise than its text path)."""

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
        published = path.read_text(encoding="utf-8")
        for source in (published, published.rstrip("\n")):
            fast = transform_source(source, filename=str(path))
            slow = reference_transform(source, filename=str(path))
            where = f"{path.name} ({'as published' if source is published else 'no final line break'})"
            assert fast.error is None and slow.error is None, where
            assert fast.output == slow.output, where
            assert [t.as_dict() for t in fast.todos] == [t.as_dict() for t in slow.todos], where
            assert [c.as_dict() for c in fast.changes] == [c.as_dict() for c in slow.changes], where

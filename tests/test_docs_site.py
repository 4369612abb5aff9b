"""The documentation site builds cleanly, and the README stays short and links only to pages that exist.

docs/rules.md being current is tests/test_docs.py's `test_rules_md_is_current`.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_LIMIT = 15 * 1024
# [text](target) outside code spans; targets with a scheme (https:) are external and not checked.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        cwd=config.parent,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = _mkdocs_build(ROOT / "mkdocs.yml", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return out


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids.update(value for name, value in attrs if name == "id" and value)


def _anchors(site: Path, page: str) -> set[str]:
    """The ids of a built page: docs/guide.md is site/guide/index.html, docs/index.md site/index.html."""
    stem = page.removesuffix(".md")
    html = site / "index.html" if stem == "index" else site / stem / "index.html"
    parser = _Ids()
    parser.feed(html.read_text(encoding="utf-8"))
    return parser.ids


def test_site_builds_strict(site: Path) -> None:
    for page in DOCS.glob("*.md"):
        assert _anchors(site, page.name), page  # every page is in the nav and was built


def test_strict_build_fails_on_a_broken_anchor(tmp_path: Path) -> None:
    """The validation settings in mkdocs.yml really turn a bad link into a failed build."""
    shutil.copytree(DOCS, tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    guide = tmp_path / "docs" / "guide.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\nSee [nowhere](rules.md#no-such-rule).\n", encoding="utf-8")
    proc = _mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert proc.returncode != 0 and "no-such-rule" in proc.stderr, proc.stderr


def test_readme_fits_a_few_screens() -> None:
    size = len(README.read_bytes())
    assert size < README_LIMIT, f"README.md is {size} bytes; move detail into docs/ (limit {README_LIMIT})"


def test_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    opening = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert text.startswith("# tfmigrate\n\n```bash\n")
    assert opening.startswith("./run example") and "\n./run tests" in opening


def test_readme_links_resolve(site: Path) -> None:
    links = LINK.findall(README.read_text(encoding="utf-8"))
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), f"README links to {link}, which does not exist"
        if anchor:
            assert path.startswith("docs/") and path.endswith(".md"), link
            assert anchor in _anchors(site, path.removeprefix("docs/")), f"README links to {link}: no such anchor"


def test_runtime_reference_lists_every_public_name() -> None:
    """docs/runtime.md is hand-written (no TensorFlow at docs build time): it must keep up with `__all__`."""
    tree = ast.parse((ROOT / "runtime" / "__init__.py").read_text(encoding="utf-8"))
    (names,) = [
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    text = (DOCS / "runtime.md").read_text(encoding="utf-8")
    missing = [name for name in names if f"| `{name}` |" not in text]
    assert not missing, f"add these tfmigrate.runtime names to docs/runtime.md's 'Public names': {missing}"


def test_rules_md_is_in_the_site() -> None:
    assert "rules.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")

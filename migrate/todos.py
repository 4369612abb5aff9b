"""The `# TODO(tfmigrate TFMxxx): ...` comments a rule leaves where it cannot migrate (below the
rules and their text pass: both write them, the report reads them back)."""

from __future__ import annotations

import re

from . import docs_url

TODO_PREFIX = "# TODO(tfmigrate "
TODO_RE = re.compile(r"#\s*TODO\(tfmigrate (TFM\d{3})\):\s*(.*?)(?:\s+\(see https?://\S+\))?\s*$")


_LINE_BREAK = re.compile(r"[ \t]*\\?\r?\n\s*")


def todo_comment(code: str, message: str) -> str:
    """`# TODO(tfmigrate TFM201): <what to do> (see <docs entry for TFM201>)`, on one line: code a
    message quotes across lines (`from m import \\` and its next line) is joined with a space."""
    return f"{TODO_PREFIX}{code}): {_LINE_BREAK.sub(' ', message)} (see {docs_url(code)})"

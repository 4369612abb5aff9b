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


# TFM101's TODO on a name of the removed tf.estimator, left out above a statement whose estimator
# site rule already said what to do with it (`DNNEstimator`, `BoostedTreesClassifier`: TFM401's).
REMOVED_ESTIMATOR = "tf.estimator was removed in TF 2.16"
_SITE_RULES = frozenset({"TFM201", "TFM301", "TFM401"})


# TFM101's TODO on a chain TF has no name for, and its TODO on a module member TF2's module lacks:
# a later pass reads the module's respelled alias (`nest = tf.nest`) and finds the first unknown.
_UNKNOWN_CHAIN = re.compile(r"`tf\.([\w.]+)\.(\w+)` is in neither TF2's API nor TF 1\.x's exported API")


def superseded(code: str, message: str, existing) -> bool:
    """Whether the TODO `message` of rule `code` goes unwritten above a statement whose comment
    lines (str or UTF-8 bytes) are `existing`: TFM101's removed-estimator TODO where an estimator
    site rule's TODO is already there; its unknown-chain TODO on `tf.<module>.<name>` where its
    TODO saying TF2's `tf.<module>` has no `<name>` is."""
    if code != "TFM101":
        return False
    unknown = _UNKNOWN_CHAIN.match(message)
    if not message.startswith(REMOVED_ESTIMATOR) and unknown is None:
        return False
    for line in existing:
        match = TODO_RE.match((line.decode("utf-8") if isinstance(line, bytes) else line).strip())
        if match is None:
            continue
        if unknown is None and match.group(1) in _SITE_RULES:
            return True
        if unknown is not None and match.group(1) == code and \
                match.group(2).startswith(f"TF2's `tf.{unknown.group(1)}` has no `{unknown.group(2)}`"):
            return True
    return False

"""`--sarif FILE`: the run as SARIF 2.1.0, for code-scanning UIs (GitHub, GitLab, VS Code's viewer).

One run; `tool.driver.rules` lists every registered rule (id, name, short/full description,
helpUri: the absolute URL of its docs/rules.md entry (`tfmigrate.docs_url`), safe/targets as properties). Results:

- level `warning`: a `# TODO(tfmigrate ...)` left for a person, and W001 (a notebook cell not parsed);
- level `note`: a place a rule would change (--check/--diff), and an unsafe fix not applied
  under --safe-only (every mode);
- level `error`: a file that failed (E00x; these have no rule entry).

Locations are `artifactLocation.uri` relative to the current directory (`uriBaseId` %SRCROOT%) and
`region.startLine`/`endLine`, lines as in the JSON report. A notebook finding is addressed by its
cell: `region` lines are lines of that cell, and `properties.cell` (1-based) says which.
"""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path

from . import RULES_URL, __version__, docs_url
from .results import Finding
from .registry import all_rules
from .runner import CHECK, DIFF, FileOutcome

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


def rule_anchor(code: str) -> str:
    return code.lower()


def _rules() -> list[dict]:
    out = []
    for rule in all_rules():
        doc = inspect.cleandoc(rule.__doc__ or "")
        out.append(
            {
                "id": rule.CODE,
                "name": rule.__name__,
                "shortDescription": {"text": rule.SUMMARY},
                "fullDescription": {"text": doc.split("\n\n")[0].replace("\n", " ")},
                "helpUri": docs_url(rule.CODE),
                "help": {"text": doc},
                "defaultConfiguration": {"level": "note"},
                "properties": {"safe": rule.SAFE, "targets": sorted(rule.TARGETS), "structural": rule.STRUCTURAL},
            }
        )
    return out


def _uri(path: str, cwd: Path) -> str:
    full = Path(os.path.abspath(path))
    try:
        return full.relative_to(cwd).as_posix()
    except ValueError:
        return full.as_uri()


def _result(outcome: FileOutcome, finding: Finding, level: str, text: str, cwd: Path, index: dict[str, int]) -> dict:
    region: dict = {"startLine": max(finding.line, 1)}
    if finding.end_line is not None and finding.end_line >= region["startLine"]:
        region["endLine"] = finding.end_line
    uri = _uri(outcome.path, cwd)
    location: dict = {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}
    if not uri.startswith("file:"):
        location["physicalLocation"]["artifactLocation"]["uriBaseId"] = "%SRCROOT%"
    result: dict = {"ruleId": finding.code, "level": level, "message": {"text": text}, "locations": [location]}
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    if finding.cell is not None:
        result["message"]["text"] = f"cell {finding.cell}: {text}"
        result["properties"] = {"cell": finding.cell}
        location["logicalLocations"] = [{"name": f"cell_{finding.cell}", "kind": "module"}]
    return result


def to_sarif(outcomes: list[FileOutcome], *, mode: str, cwd: str | os.PathLike | None = None) -> dict:
    """The SARIF log (a dict ready for json.dump) for one run's outcomes."""
    base = Path(cwd if cwd is not None else os.getcwd()).resolve()
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for outcome in outcomes:
        for error in outcome.errors:
            results.append(_result(outcome, error, "error", error.message, base, index))
        if mode in (CHECK, DIFF):
            for change in outcome.changes:
                results.append(_result(outcome, change, "note", f"would change: {change.message}", base, index))
        for fix in outcome.unsafe_fixes:
            results.append(_result(outcome, fix, "note", f"unsafe fix available (not applied under --safe-only): {fix.message}", base, index))
        for todo in outcome.todos:
            results.append(_result(outcome, todo, "warning", todo.message, base, index))
        for warning in outcome.warnings:
            results.append(_result(outcome, warning, "warning", warning.message, base, index))
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tfmigrate",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": RULES_URL,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": base.as_uri() + "/"}},
                "invocations": [{"executionSuccessful": True}],
                "results": results,
            }
        ],
    }


def sarif_json(outcomes: list[FileOutcome], *, mode: str) -> str:
    return json.dumps(to_sarif(outcomes, mode=mode), indent=2)

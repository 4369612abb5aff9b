"""A first pass the engine calls settled needs no second: that pass would change nothing.

`migrate/settled.py` decides from what the text passes wrote; these tests run the second pass
anyway wherever it says so, over every fixture and test program under each option set, and hold
its verdict to the cases that must not settle.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import fixture_id, fixture_pairs
from tfmigrate import engine
from tfmigrate.engine import Options, transform_source
from tfmigrate.names import AliasTable
from tfmigrate.registry import all_rules
from tfmigrate.settled import PassRecord, settled

PROGRAMS = sorted((Path(__file__).parent / "data").rglob("*.py"))
OPTIONS = [Options(), Options(tf1_program=True), Options(target="ctl"), Options(tf1_program=True, target="ctl")]


def _first_pass(source: str, options: Options):
    return engine._transform(source, "<test>", options, reference=False)


@pytest.mark.parametrize("path", fixture_pairs() + PROGRAMS, ids=lambda p: fixture_id(p) if p.name.endswith(".in.py") else p.name)
def test_a_settled_first_pass_is_a_fixpoint(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    for options in OPTIONS:
        first = _first_pass(source, options)
        if not first.settled:
            continue
        again = _first_pass(first.output, options)
        assert not again.changed, f"{options}: the second pass changed {again.rules}:\n{first.output}\n---\n{again.output}"


def test_a_respelled_tf1_module_settles_in_one_pass() -> None:
    first = _first_pass("import tensorflow.compat.v1 as tf\nx = tf.to_float(1)\ny = tf.layers.dense(x, 3)\n", Options())
    assert first.changed and first.settled


def test_a_name_the_next_rule_reads_otherwise_moves_in_one_pass() -> None:
    # TFM102 (absl) runs before TFM101, which would spell the imported `logging` as TF's: TFM102
    # moves the import itself, through LibCST, and what it wrote needs no second pass.
    source = "from tensorflow.compat.v1 import logging\nimport tensorflow as tf\nlogging.info('x')\n"
    first = _first_pass(source, Options())
    assert first.settled and "from absl import logging" in first.output
    assert "tf.compat.v1.logging" not in transform_source(source).output


def test_what_a_cst_rule_wrote_is_read_back_from_its_text() -> None:
    source = "import tensorflow as tf\nx = 1\n"
    output = "import tensorflow as tf\nx = 1\ntf.logging.info('x')\n"
    record = PassRecord(cst_writers=["TFM201", "TFM301"])
    names = AliasTable(aliases={"tf": "tensorflow"})
    record.read_cst_writes(source, output, names)
    assert record.writes == [("TFM301", ["tf.logging.info('x')"])] and record.rebinds == []
    # TFM102 (logging) ran before the rule that wrote the call: the second pass runs.
    assert not settled(record, source, names, list(all_rules()), ["TFM102", "TFM201", "TFM301", "TFM101"])
    # A rebinding a CST rule made is read from the output's imports.
    record = PassRecord(cst_writers=["TFM201"])
    record.read_cst_writes(source, "import tensorflow as tf\nfrom absl import logging\nx = 1\n", names)
    assert record.rebinds == [("logging", "absl.logging")]


def _verdict(record: PassRecord, source: str = "", aliases: dict[str, str] | None = None, ran=("TFM101", "TFM103")) -> bool:
    names = AliasTable(aliases=dict(aliases or {"tf": "tensorflow.compat.v1"}))
    return settled(record, source, names, list(all_rules()), list(ran))


def test_the_verdict_of_each_kind_of_write() -> None:
    placeholder = PassRecord(rebinds=[("tf", "tensorflow")], writes=[("TFM101", ["tf.compat.v1.placeholder"])])
    # TFM104 acts on placeholders: it ran after TFM101, on what TFM101 wrote; else the second pass runs.
    assert _verdict(placeholder, ran=("TFM101", "TFM103", "TFM104"))
    assert not _verdict(placeholder, ran=("TFM101", "TFM103"))
    # A rule that may act on these symbols (TFM102: logging) saw them spelled otherwise.
    assert not _verdict(PassRecord(writes=[("TFM101", ["tf.compat.v1.logging.info"])]))
    # A rule that may act on any symbol (TFM101) ran before the one that wrote them.
    assert not _verdict(PassRecord(writes=[("TFM103", ["tf.shape"])]), ran=("TFM101", "TFM103"))
    assert not _verdict(PassRecord(opaque=True))


def test_the_verdict_of_each_kind_of_rebinding() -> None:
    logging = {"logging": "tensorflow.compat.v1.logging", "tf": "tensorflow"}
    assert not _verdict(PassRecord(rebinds=[("logging", "absl.logging")]), aliases=logging)
    assert _verdict(PassRecord(rebinds=[("logging", "absl.logging")]), "tf.logging.info('x')\n", {"tf": "tensorflow"})
    # A name bound by a new import that the file spelled before (here a variable) reads otherwise now.
    assert not _verdict(PassRecord(rebinds=[("tf", "tensorflow")]), "tf = make()\n", {"tf1": "tensorflow.compat.v1"})
    assert _verdict(PassRecord(rebinds=[("logging", None)]), aliases=logging)

"""`tf_upgrade_v2` as the benchmarks time it: its own command line, run under the oracle's Python, with
one change: a file it cannot annotate is reported and skipped instead of ending the run.

`tf_upgrade_v2 --intree` stops at the first file pasta fails on (an `AnnotationError`, exit 1) and
leaves the rest of the tree unconverted: on the estimator programs of `bench_real_code.py`
(tensorflow/tpu's `mask_utils.py` and `coco_metric.py`) it stopped after 115 of 700 files, and a
timing of that run measured a sixth of the work. Here each such file is listed on stderr and the
walk goes on, as tfmigrate reports a file it fails on and migrates the others.

    ORACLE_PYTHON benchmarks/tf_upgrade_v2_isolated.py --intree IN --outtree OUT --reportfile R

The last line on stderr reads `tf_upgrade_v2_isolated: N files, K skipped`.
"""

import sys

from tensorflow.tools.compatibility import ast_edits, tf_upgrade_v2_main

_process_file = ast_edits.ASTCodeUpgrader.process_file
_counts = {"files": 0, "skipped": 0}


def _isolated(self, in_filename, out_filename, no_change_to_outfile_on_error=False):
    _counts["files"] += 1
    try:
        return _process_file(self, in_filename, out_filename, no_change_to_outfile_on_error)
    except Exception as error:  # noqa: BLE001 - what tf_upgrade_v2 would have stopped on
        _counts["skipped"] += 1
        sys.stderr.write(f"tf_upgrade_v2_isolated: skipped {in_filename}: {type(error).__name__}\n")
        return 0, "", [f"{in_filename}: {type(error).__name__}"]


if __name__ == "__main__":
    ast_edits.ASTCodeUpgrader.process_file = _isolated
    sys.argv[0] = "tf_upgrade_v2"
    status = tf_upgrade_v2_main.main()
    sys.stderr.write(f"tf_upgrade_v2_isolated: {_counts['files']} files, {_counts['skipped']} skipped\n")
    sys.exit(status)

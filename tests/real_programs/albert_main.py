"""Runs one of ALBERT's `run_*` modules with command-line flags.

    python albert_main.py albert.run_classifier --task_name=MRPC --do_train=true ...

The `albert-tensorflow==1.1` wheel ships ALBERT's programs as modules only: `run_classifier`,
`run_pretraining` and `run_squad` read `FLAGS.<name>` and have a `main(_)`, but the flag
definitions and the `tf.app.run()` under `if __name__ == "__main__"` of google-research's scripts
were left out of the package. This driver is that missing entry point and nothing more: it defines
each flag given on its command line — its type read off its value (`true`/`false` a bool, an int,
a float, else a string; `None` a string flag without a value) — and runs the module's `main`
with absl's `app.run`, as the scripts did. The lane runs it on both sides: through
`tf1_launcher.py` on the oracle with the original package, and directly on current TensorFlow
with the migrated one.
"""

from __future__ import annotations

import importlib
import sys

from absl import app, flags


def _define(name: str, value: str) -> None:
    if value == "None":
        flags.DEFINE_string(name, None, name)
    elif value.lower() in ("true", "false"):
        flags.DEFINE_bool(name, value.lower() == "true", name)
    else:
        for define, kind in ((flags.DEFINE_integer, int), (flags.DEFINE_float, float)):
            try:
                define(name, kind(value), name)
                return
            except ValueError:
                continue
        flags.DEFINE_string(name, value, name)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    module_name, args = sys.argv[1], sys.argv[2:]
    for arg in args:
        if not arg.startswith("--") or "=" not in arg:
            sys.exit(f"albert_main.py takes --name=value flags only, not {arg!r}")
        name, value = arg[2:].split("=", 1)
        _define(name, value)
    module = importlib.import_module(module_name)
    app.run(module.main, argv=[f"{module_name}.py"])


if __name__ == "__main__":
    main()

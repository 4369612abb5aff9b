"""Generate tfmigrate's TF1 -> TF2 API symbol table from TensorFlow's own export metadata.

Two modes, each run with a different interpreter, in this order::

    # 1. TF 2.15.1 + tensorflow-estimator 2.15 + Keras 2.15: the last release where every
    #    exported symbol carries both its TF1 and its TF2 API names.
    /root/.cache/tfmigrate/oracle-py311-tf2.15/bin/python scripts/gen_api_table.py generate

    # 2. Current TF (2.21, Keras 3): which of those TF2 names still resolve, plus the list
    #    of every public tf.* path.
    /tmp/setup/cur/bin/python scripts/gen_api_table.py check-current

Options (both modes): ``--out-dir DIR`` (default: ``rules/data`` next to this script's
repository root) and ``--check`` (compute everything, write nothing, exit 1 if the files on disk
differ from what would be written; use it to verify the checked-in tables are up to date).

``generate`` walks ``tf.compat.v1`` recursively through its API submodules (including the
Keras- and Estimator-routed lazy modules; ``tf.compat.v1.compat`` is skipped, a submodule that
fails to import is skipped and reported, and a module already on the current path is not entered
again, so cycles terminate). For every exported object it reads the ``tf_export`` metadata that
``tensorflow.python.util.tf_export`` stores on the undecorated symbol: the attributes named by
``tf_export.API_ATTRS_V1`` / ``API_ATTRS`` (``_tf_api_names_v1`` / ``_tf_api_names``, and the
``_estimator_*`` and ``_keras_*`` counterparts), plus ``_tf_deprecated_api_names``. Constants
(dtypes, ``saved_model`` tag and signature keys, ``errors`` codes, ``newaxis``, ...) cannot
carry attributes, so for them it reads the ``_tf_api_constants_v1`` / ``_tf_api_constants`` lists
(and the estimator / keras ones) that ``export_constant`` leaves on the defining modules; a walked
path that is itself a registered constant name takes its names from there.

It writes ``rules/data/tf_api_v1_to_v2.json``::

    {
      "generated_by": "scripts/gen_api_table.py",
      "tensorflow_version": "2.15.1",          # the metadata source
      "estimator_version": "...", "keras_version": "...",
      "symbols": {                             # v1 path (relative to tf.compat.v1) ->
        "nn.relu": "nn.relu",                  #   preferred v2 path (relative to tf), or
        "gfile.Exists": "io.gfile.exists",     #   null: the symbol has no TF2 name at all
        "layers.dense": null, ...
      },
      "v2_alternatives": {                     # only for symbols with more than one v2 name:
        "add": ["math.add", "add"], ...        #   all of them, most preferred first
      },
      "v2_same_name_other_symbol": [           # v1 paths mapped to null although the same path
        "data.Dataset", "nn.conv2d", ...       #   is a v2 name -- of a different object
      ],                                       #   (DatasetV1 vs DatasetV2): same name, new API
      "tf_upgrade_v2_renames": {               # for v1 paths mapped to null: the non-compat.v1
        "gfile.Exists": "io.gfile.exists", ... #   target of TF's own tf_upgrade_v2 rename table
      },                                       #   (keyword renames/reorders NOT included)
      "v1_non_api_modules": {                  # v1 paths that are plain Python modules with no
        "app.flags": "tensorflow.python.platform.flags", ...   # export metadata (not walked)
      },
      "v1_without_metadata": [...],            # walked v1 paths no metadata covers (not in symbols)
      "skipped_v1_modules": {...},             # submodules whose import failed (path -> error type)
      # written by check-current:
      "current_tensorflow_version": "2.21.0",
      "current_keras_version": "3.x",
      "v1_absent_in_current_tf": [...],        # v1 symbols that do NOT resolve as
                                               # tf.compat.v1.<path> on current TF
      "v2_absent_in_current_tf": [...],        # v2 names mentioned anywhere above that do NOT
                                               # resolve as tf.<path> on current TF
      "v1_signature_changes": {...},           # v1 path -> {"v1": params, "v2": params}
      "v1_members_absent_in_v2": {             # v1 classes whose TF2 name is another class: the
        "lite.TFLiteConverter": ["from_session", ...]   # public members that one lacks
      }
    }

The preferred v2 name of a symbol is chosen among its v2 names (TensorFlow's names first, then
Estimator's, then Keras's, each in declaration order, like ``tf_export.get_v2_names``) by: not
deprecated (TF's own canonical-name rule), then not under ``compat.``, then declaration order.

``check-current`` loads that table, resolves every v2 name it mentions as an attribute chain on
the current ``tensorflow`` module, and records the ones that fail under
``"v2_absent_in_current_tf"`` (so the codemod never emits them). It also writes
``rules/data/tf2_api_paths.json``: ``{"generated_by", "tensorflow_version", "keras_version",
"paths": [...]}`` where ``paths`` is the sorted list of public ``tf.*`` paths (relative to
``tf``) on current TF: every public attribute (function, class, constant, submodule, and
exported ``__dunder__`` constants such as ``__version__``) reachable
through TF's generated API modules (``tensorflow._api.v2.*``) and through the public Keras API
modules behind ``tf.keras`` and the other Keras-routed names (``keras.src`` internals are not
entered). ``compat.v1`` / ``compat.v2`` are listed but not entered; non-API packages that merely
leak into the ``tensorflow`` namespace (``tf.tools``, ``tf.dtensor``, ``tf.security``) are left
out. Tests use it to check that migrated code only names symbols that exist, without importing TF.
It also writes ``rules/data/keras3_keywords.json``: ``{"generated_by", "keras_version",
"callables": {"keras.optimizers.Adam": {"accepts": [...], "ignores": ["decay"]}, ...}}``, the
keyword arguments each public Keras 3 callable under ``tf.keras`` takes where they are a closed set
(``_keywords_taken``): the codemod's check of calls that Keras 2 took and Keras 3 refuses.

Both modes are deterministic: inputs are walked in sorted order, every mapping is written with
sorted keys, lists are sorted, and no timestamps are recorded, so re-running either mode on an
unchanged environment leaves the files byte-identical. ``generate`` keeps the check-current
section of an existing table when the set of v2 names it mentions is unchanged, and drops it
(asking for a ``check-current`` re-run) otherwise.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any, Iterable, Iterator

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT_DIR = REPO_ROOT / "rules" / "data"
TABLE_NAME = "tf_api_v1_to_v2.json"
PATHS_NAME = "tf2_api_paths.json"
KERAS_KEYWORDS_NAME = "keras3_keywords.json"
GENERATED_BY = "scripts/gen_api_table.py"

# Keys of the table written by check-current (everything else is written by generate).
CHECK_KEYS = (
    "current_tensorflow_version", "current_keras_version", "v2_absent_in_current_tf", "v1_absent_in_current_tf",
    "v1_signature_changes", "v1_members_absent_in_v2",
)

# Module-name prefixes of the generated v1 API modules in TF 2.15 (TF itself, Keras 2.15's v1 API,
# tensorflow-estimator's v1 API). Anything else reachable from tf.compat.v1 is a plain module.
V1_API_MODULE_PREFIXES = (
    "tensorflow._api.v2.compat.v1",
    "tensorflow.compat.v1",
    "keras.api._v1",
    "tensorflow_estimator.python.estimator.api._v1",
)
# Top-level tf.compat.v1 children not to walk.
V1_SKIP_TOP = frozenset({"compat"})

# Current-TF paths listed but not entered. (Which modules count as API modules there: see
# _is_v2_api_module.)
V2_SKIP = frozenset({"compat.v1", "compat.v2"})


def _quiet_tensorflow() -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    warnings.filterwarnings("ignore")
    logging.getLogger("tensorflow").setLevel(logging.ERROR)


def _public_names(obj: Any) -> list[str]:
    return sorted(n for n in dir(obj) if not n.startswith("_"))


def _dump(data: Any) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def _write_or_check(path: Path, text: str, check: bool) -> bool:
    """Write `text` to `path` (or, with check, compare). Returns True when up to date."""
    old = path.read_text(encoding="utf-8") if path.exists() else None
    if old == text:
        print(f"{path}: up to date", file=sys.stderr)
        return True
    if check:
        print(f"{path}: OUT OF DATE", file=sys.stderr)
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"{path}: written ({len(text.encode())} bytes)", file=sys.stderr)
    return True


def _v2_names_mentioned(table: dict) -> set[str]:
    names = {v for v in table.get("symbols", {}).values() if v}
    for alts in table.get("v2_alternatives", {}).values():
        names.update(alts)
    names.update(table.get("v2_same_name_other_symbol", ()))
    names.update(table.get("tf_upgrade_v2_renames", {}).values())
    return names


# --------------------------------------------------------------------------- generate (TF 2.15)


class _Metadata:
    """Reads tf_export metadata, using tf_export's own attribute tables."""

    def __init__(self) -> None:
        from tensorflow.python.util import tf_decorator, tf_export

        self._unwrap = tf_decorator.unwrap
        # API order as in tf_export.get_v1_names/get_v2_names: tensorflow, estimator, keras.
        order = [tf_export.TENSORFLOW_API_NAME, tf_export.ESTIMATOR_API_NAME, tf_export.KERAS_API_NAME]
        self.v1_attrs = [tf_export.API_ATTRS_V1[a] for a in order]
        self.v2_attrs = [tf_export.API_ATTRS[a] for a in order]

    @staticmethod
    def _own(obj: Any, attr: str) -> Any:
        try:
            d = object.__getattribute__(obj, "__dict__")
        except Exception:
            return None
        try:
            return d[attr] if attr in d else None
        except Exception:
            return None

    def _lookup(self, obj: Any, attr: str) -> Any:
        # api_export stores the names on the undecorated symbol; TFDecorator wrappers created after
        # export copy them, wrappers created before do not, so look at the target first.
        try:
            _, target = self._unwrap(obj)
        except Exception:
            target = obj
        for cand in (target, obj):
            value = self._own(cand, attr)
            if value is not None:
                return value
        return None

    def names(self, obj: Any) -> tuple[list[str], list[str], list[str]] | None:
        """(v1 names, v2 names, deprecated names) of an exported object, None if unexported."""
        found = False
        v1: list[str] = []
        v2: list[str] = []
        for attrs1, attrs2 in zip(self.v1_attrs, self.v2_attrs):
            n1 = self._lookup(obj, attrs1.names)
            n2 = self._lookup(obj, attrs2.names)
            if n1 is not None or n2 is not None:
                found = True
            v1.extend(n1 or ())
            v2.extend(n2 or ())
        if not found:
            return None
        deprecated: list[str] = []
        # deprecated_endpoints(*names) is sometimes given a list instead of names: flatten.
        for item in self._lookup(obj, "_tf_deprecated_api_names") or ():
            deprecated.extend(item if isinstance(item, (list, tuple)) else [item])
        return v1, v2, deprecated

    def constants(self) -> dict[str, list[str]]:
        """v1 constant name -> its v2 names, from the export lists on every loaded module."""
        index: dict[str, list[str]] = {}
        for mod_name in sorted(sys.modules):
            module = sys.modules.get(mod_name)
            if module is None:
                continue
            for attrs1, attrs2 in zip(self.v1_attrs, self.v2_attrs):
                c1 = self._own(module, attrs1.constants)
                if not c1:
                    continue
                c2 = self._own(module, attrs2.constants) or []
                v2_by_attr: dict[str, list[str]] = {}
                for names2, attr in c2:
                    v2_by_attr.setdefault(attr, []).extend(names2)
                for names1, attr in c1:
                    for name in names1:
                        merged = index.setdefault(name, [])
                        for n in v2_by_attr.get(attr, ()):
                            if n not in merged:
                                merged.append(n)
        return index


def _rank_v2(names: list[str], deprecated: Iterable[str]) -> list[str]:
    """Dedupe and order v2 names: non-deprecated, then not under compat., then declared order."""
    deprecated = set(deprecated)
    unique = list(dict.fromkeys(names))
    return sorted(
        unique,
        key=lambda n: (n in deprecated, n.startswith("compat."), unique.index(n)),
    )


def _walk_v1(root: Any) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """All public non-module attributes reachable from tf.compat.v1 through API modules.

    Returns (path -> object, non-API module path -> module name, skipped path -> error).
    """
    objects: dict[str, Any] = {}
    non_api: dict[str, str] = {}
    skipped: dict[str, str] = {}

    def walk(module: Any, prefix: str, ancestors: frozenset[str]) -> None:
        try:
            names = _public_names(module)
        except Exception as e:  # a lazy loader whose import fails
            skipped[prefix.rstrip(".")] = type(e).__name__
            return
        for name in names:
            path = prefix + name
            if not prefix and name in V1_SKIP_TOP:
                continue
            try:
                obj = getattr(module, name)
            except Exception as e:
                skipped[path] = type(e).__name__
                continue
            if isinstance(obj, types.ModuleType):
                try:
                    mod_name = obj.__name__
                except Exception as e:
                    skipped[path] = type(e).__name__
                    continue
                if not mod_name.startswith(V1_API_MODULE_PREFIXES):
                    non_api[path] = mod_name
                elif mod_name not in ancestors:
                    walk(obj, path + ".", ancestors | {mod_name})
            else:
                objects[path] = obj

    walk(root, "", frozenset({root.__name__}))
    return objects, non_api, skipped


def generate(out_dir: Path, check: bool) -> bool:
    _quiet_tensorflow()
    import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)
    from tensorflow.python.util import tf_export as tf_export_module

    meta = _Metadata()
    objects, non_api, skipped = _walk_v1(tf.compat.v1)
    constants = meta.constants()

    symbols: dict[str, str | None] = {}
    alternatives: dict[str, list[str]] = {}
    without_metadata: list[str] = []
    for path in sorted(objects):
        if path in constants:
            v2 = _rank_v2(constants[path], ())
        else:
            names = meta.names(objects[path])
            if names is None:
                without_metadata.append(path)
                continue
            _, v2_names, deprecated = names
            v2 = _rank_v2(v2_names, deprecated)
        symbols[path] = v2[0] if v2 else None
        if len(v2) > 1:
            alternatives[path] = v2

    # Symbols with no v2 name whose own path is nevertheless a v2 name -- of a different object
    # (tf.compat.v1.data.Dataset is DatasetV1, tf.data.Dataset is DatasetV2), per tf_export's
    # registry of every name it exported.
    registry = getattr(tf_export_module, "_NAME_TO_SYMBOL_MAPPING", {})
    same_name = sorted(p for p, v in symbols.items() if v is None and p in registry)

    # TF's own upgrade tool (tf_upgrade_v2) renames, for symbols the metadata leaves unmapped.
    try:
        from tensorflow.tools.compatibility import all_renames_v2

        renames = dict(all_renames_v2.symbol_renames)
    except Exception as e:  # pragma: no cover - shipped with every TF 2.x wheel
        print(f"tf_upgrade_v2 renames unavailable: {e!r}", file=sys.stderr)
        renames = {}
    upgrade_renames: dict[str, str] = {}
    for old_name, new_name in sorted(renames.items()):
        if not (old_name.startswith("tf.") and new_name.startswith("tf.")):
            continue
        path, target = old_name[3:], new_name[3:]
        if path in symbols and symbols[path] is None and not target.startswith("compat.v1."):
            upgrade_renames[path] = target

    def version(module_name: str) -> str | None:
        try:
            return __import__(module_name).__version__
        except Exception:
            try:
                from importlib.metadata import version as dist_version

                return dist_version(module_name.replace("_", "-"))
            except Exception:
                return None

    table: dict[str, Any] = {
        "generated_by": GENERATED_BY,
        "tensorflow_version": tf.__version__,
        "estimator_version": version("tensorflow_estimator"),
        "keras_version": version("keras"),
        "symbols": symbols,
        "v2_alternatives": alternatives,
        "v2_same_name_other_symbol": same_name,
        "tf_upgrade_v2_renames": upgrade_renames,
        "v1_non_api_modules": non_api,
        "v1_without_metadata": without_metadata,
        "skipped_v1_modules": skipped,
    }

    out = out_dir / TABLE_NAME
    if out.exists():
        old = json.loads(out.read_text(encoding="utf-8"))
        if all(k in old for k in CHECK_KEYS):
            if _v2_names_mentioned(old) == _v2_names_mentioned(table):
                for k in CHECK_KEYS:
                    table[k] = old[k]
            else:
                print("v2 names changed: re-run `check-current` with the current-TF interpreter",
                      file=sys.stderr)

    with_v2 = sum(1 for v in symbols.values() if v)
    print(f"v1 symbols: {len(symbols)} ({with_v2} with a v2 name, {len(symbols) - with_v2} v1-only); "
          f"without metadata: {len(without_metadata)}; non-API modules: {len(non_api)}; "
          f"skipped modules: {len(skipped)}", file=sys.stderr)
    return _write_or_check(out, _dump(table), check)


# ---------------------------------------------------------------------- check-current (TF 2.21)


def _is_v2_api_module(module: Any) -> bool:
    """TF's generated API modules live in tensorflow/_api/v2 (some report a shorter __name__, e.g.
    tf.experimental is "tensorflow.experimental"); Keras 3's public API modules are named "keras.*"
    ("keras._tf_keras.keras.*" for the tf.keras flavour), its implementation "keras.src.*"."""
    try:
        name = module.__name__
    except Exception:
        return False
    if name.startswith("keras."):
        return not name.startswith("keras.src")
    if name.startswith("tensorflow._api.v2"):
        return True
    if name.startswith("tensorflow."):  # tf.experimental reports "tensorflow.experimental"
        file = getattr(module, "__file__", None) or ""
        return f"{os.sep}_api{os.sep}v2{os.sep}" in file
    return False


# Attributes every module gets from the import system; other __dunder__ scalars of API modules are
# exported constants (tf.__version__, tf.__git_version__, ...).
_MODULE_DUNDERS = frozenset(dir(types.ModuleType("_"))) | {
    "__file__", "__path__", "__cached__", "__builtins__", "__all__", "__getattr__", "__dir__",
    "__module__", "__qualname__"}


def _exported_dunders(module: Any) -> list[str]:
    out = []
    for name in sorted(getattr(module, "__dict__", {})):
        if name.startswith("__") and name.endswith("__") and name not in _MODULE_DUNDERS:
            value = module.__dict__[name]
            if isinstance(value, (str, int, float, bool)):
                out.append(name)
    return out


def _walk_v2(root: Any) -> list[str]:
    paths: set[str] = set()

    def walk(module: Any, prefix: str, ancestors: frozenset[int]) -> None:
        try:
            names = _public_names(module)
        except Exception:
            return
        paths.update(prefix + name for name in _exported_dunders(module))
        for name in names:
            path = prefix + name
            try:
                obj = getattr(module, name)
            except Exception:
                continue
            if isinstance(obj, types.ModuleType):
                if not _is_v2_api_module(obj):
                    continue
                paths.add(path)
                if path not in V2_SKIP and id(obj) not in ancestors:
                    walk(obj, path + ".", ancestors | {id(obj)})
            else:
                paths.add(path)

    walk(root, "", frozenset({id(root)}))
    return sorted(paths)


def _resolves(root: Any, path: str) -> bool:
    obj = root
    for part in path.split("."):
        try:
            obj = getattr(obj, part)
        except Exception:
            return False
    return True


def _lookup(root: Any, path: str) -> Any:
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _parameters(obj: Any) -> list[str] | None:
    """A callable's parameter names in order (None when it has no Python signature); `*` marks
    where keyword-only parameters start."""
    import inspect

    try:
        target = inspect.unwrap(obj)
        if inspect.isclass(target) and target.__init__ is object.__init__ and target.__new__ is object.__new__:
            return []  # a class that takes no arguments (TF2's `zeros_initializer`: `Zeros()`)
        signature = inspect.signature(target.__init__ if inspect.isclass(target) else target)
    except (TypeError, ValueError):
        return None
    names: list[str] = []
    for parameter in signature.parameters.values():
        if parameter.name == "self":
            continue
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in names:
            names.append("*")
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            return None  # takes anything: nothing to check a call against
        names.append(parameter.name)
    return names


def _namesake_pairs(tf: Any, symbols: dict[str, str | None], same_name: Any,
                    renames: dict[str, str]) -> Iterator[tuple[str, Any, Any]]:
    """(v1 path, TF1's object there, the object its TF2 name denotes on current TF) where the two
    differ, the TF2 name being the symbol's own or, for a v1 symbol with none, the same path
    (another object there: `v2_same_name_other_symbol`) or tf_upgrade_v2's rename
    (`count_nonzero` -> `math.count_nonzero`); both resolving on current TF."""
    same = set(same_name)
    for path, v2_path in sorted(symbols.items()):
        if v2_path is None:
            v2_path = path if path in same else renames.get(path)
        if v2_path is None or not (_resolves(tf.compat.v1, path) and _resolves(tf, v2_path)):
            continue
        v1_obj, v2_obj = _lookup(tf.compat.v1, path), _lookup(tf, v2_path)
        if v1_obj is not v2_obj:
            yield path, v1_obj, v2_obj


def _signature_changes(tf: Any, symbols: dict[str, str | None], same_name: Any,
                       renames: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """v1 path -> {"v1": params, "v2": params} for the functions whose TF2 name on current TF takes
    other parameters than their TF1 one (`nn.dropout`'s `keep_prob`, `reduce_sum`'s `keep_dims`),
    the TF2 name as `_namesake_pairs` finds it (`nn.conv2d_backprop_input` -> `nn.conv2d_transpose`,
    whose arguments tf_upgrade_v2 reorders and TFM101 does not). A call that passes what the TF2
    function does not take, or passes by position what it takes under another name, must stay
    `tf.compat.v1.<path>`."""
    changes: dict[str, dict[str, list[str]]] = {}
    for path, v1_obj, v2_obj in _namesake_pairs(tf, symbols, same_name, renames):
        if not callable(v1_obj) or not callable(v2_obj):
            continue
        v1_params, v2_params = _parameters(v1_obj), _parameters(v2_obj)
        if v1_params is None or v2_params is None or v1_params == v2_params:
            continue
        changes[path] = {"v1": v1_params, "v2": v2_params}
    return changes


def _members_absent_in_v2(tf: Any, symbols: dict[str, str | None], same_name: Any,
                          renames: dict[str, str]) -> dict[str, list[str]]:
    """v1 path -> the public members of TF1's class there that its TF2 name's class (another
    class: `lite.TFLiteConverter`'s v2 namesake is TFLiteConverterV2) lacks on current TF
    (`from_session`, `from_frozen_graph`): a chain that reads one off the class must stay
    `tf.compat.v1.<path>.<member>`. The TF2 name as `_namesake_pairs` finds it."""
    import inspect

    absent: dict[str, list[str]] = {}
    for path, v1_obj, v2_obj in _namesake_pairs(tf, symbols, same_name, renames):
        if not (inspect.isclass(v1_obj) and inspect.isclass(v2_obj)):
            continue
        missing = sorted(name for name in dir(v1_obj) if not name.startswith("_") and not hasattr(v2_obj, name))
        if missing:
            absent[path] = missing
    return absent


_POPPED = re.compile(r"""kwargs\.pop\(\s*["'](\w+)["']""")
_REFUSES_THE_REST = re.compile(r"\bif kwargs:\s*\n\s*raise\b")
_PASSES_THE_REST = re.compile(r"super\(\)\.__init__\([^)]*\*\*kwargs")
_IGNORED = re.compile(r"no longer supported|will be ignored|is ignored")


def _keywords_taken(obj: Any) -> tuple[set[str], set[str]] | None:
    """(the keyword arguments a Keras 3 callable takes, those among them it takes and ignores with a
    warning) where that set is closed: a function without `**kwargs`; a class whose `__init__`s,
    followed up the MRO through `super().__init__(..., **kwargs)`, end in one without `**kwargs` or
    in one that raises on what is left (Keras 3's `Layer`, its optimizers' base). The names an
    `__init__` pops off `kwargs` count as taken (`Layer`'s `input_shape`), and as ignored where a
    warning that they are ignored follows (the optimizers' `decay`). None where it takes anything."""
    import inspect

    def named(function: Any) -> tuple[set[str], bool] | None:
        try:
            parameters = inspect.signature(function).parameters.values()
        except (TypeError, ValueError):
            return None
        taken = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)} - {"self"}
        return taken, any(p.kind is p.VAR_KEYWORD for p in parameters)

    if not inspect.isclass(obj):
        found = named(obj) if callable(obj) else None
        return None if found is None or found[1] else (found[0], set())
    taken: set[str] = set()
    ignored: set[str] = set()
    for klass in obj.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        if klass is object:
            return taken, ignored
        found = named(init)
        if found is None:
            return None
        taken |= found[0]
        if not found[1]:
            return taken, ignored
        try:
            source = inspect.getsource(init)
        except (OSError, TypeError):
            return None
        for match in _POPPED.finditer(source):
            taken.add(match.group(1))
            if _IGNORED.search(source[match.end(): match.end() + 300]):
                ignored.add(match.group(1))
        if _REFUSES_THE_REST.search(source):
            return taken, ignored
        if not _PASSES_THE_REST.search(source):
            return None  # it keeps or reads `**kwargs` itself: anything may be taken
    return None


def _keras3_keywords(tf: Any, paths: list[str]) -> dict[str, dict[str, list[str]]]:
    """`keras.<path>` -> {"accepts": names, "ignores": names} for each public Keras 3 callable whose
    keyword arguments are a closed set (`_keywords_taken`): a call passing another keyword fails
    on current TF (Keras 2's `lr=`, `regularizers.l2(l=)`, `BatchNormalization(fused=)`)."""
    table: dict[str, dict[str, list[str]]] = {}
    for path in paths:
        if not path.startswith("keras."):
            continue
        try:
            obj = _lookup(tf, path)
        except Exception:
            continue
        if not callable(obj) or isinstance(obj, types.ModuleType):
            continue
        found = _keywords_taken(obj)
        if found is not None:
            table[path] = {"accepts": sorted(found[0]), "ignores": sorted(found[1])}
    return table


def check_current(out_dir: Path, check: bool) -> bool:
    _quiet_tensorflow()
    import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)
    try:
        import keras

        keras_version = keras.__version__
    except Exception:
        keras_version = None

    table_path = out_dir / TABLE_NAME
    if not table_path.exists():
        print(f"{table_path} not found: run `generate` with the TF 2.15 interpreter first",
              file=sys.stderr)
        return False
    table = json.loads(table_path.read_text(encoding="utf-8"))
    mentioned = sorted(_v2_names_mentioned(table))
    absent = [p for p in mentioned if not _resolves(tf, p)]
    table["current_tensorflow_version"] = tf.__version__
    table["current_keras_version"] = keras_version
    table["v2_absent_in_current_tf"] = absent
    # The v1 symbols `tf.compat.v1.<path>` no longer resolves (tf.compat.v1.estimator, .layers
    # under Keras 3, ...): the rest still run, as TF1 graph code, on current TF.
    v1 = tf.compat.v1
    table["v1_absent_in_current_tf"] = sorted(p for p in table["symbols"] if not _resolves(v1, p))
    table["v1_signature_changes"] = _signature_changes(
        tf, table["symbols"], table.get("v2_same_name_other_symbol", ()), table.get("tf_upgrade_v2_renames", {})
    )
    table["v1_members_absent_in_v2"] = _members_absent_in_v2(
        tf, table["symbols"], table.get("v2_same_name_other_symbol", ()), table.get("tf_upgrade_v2_renames", {})
    )

    paths = _walk_v2(tf)
    listed = set(paths)
    unlisted = [p for p in mentioned if p not in listed and p not in absent]
    print(f"v2 names checked: {len(mentioned)}; absent on TF {tf.__version__}: {len(absent)}; "
          f"resolving but not in the path list: {len(unlisted)}; tf2 paths: {len(paths)}",
          file=sys.stderr)
    if unlisted:
        print("  e.g. " + ", ".join(unlisted[:10]), file=sys.stderr)

    api_paths = {
        "generated_by": GENERATED_BY,
        "tensorflow_version": tf.__version__,
        "keras_version": keras_version,
        "paths": paths,
    }
    ok = _write_or_check(table_path, _dump(table), check)
    ok = _write_or_check(out_dir / PATHS_NAME, _dump(api_paths), check) and ok
    keywords = {"generated_by": GENERATED_BY, "keras_version": keras_version, "callables": _keras3_keywords(tf, paths)}
    ok = _write_or_check(out_dir / KERAS_KEYWORDS_NAME, _dump(keywords), check) and ok
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("generate", "check-current"))
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the files on disk are out of date")
    args = parser.parse_args(argv)
    run = generate if args.mode == "generate" else check_current
    return 0 if run(args.out_dir, args.check) else 1


if __name__ == "__main__":
    sys.exit(main())

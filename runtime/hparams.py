"""`tf.contrib.training.HParams` for TF2, which has no such class.

TF1 programs (the TPU reference models, NMT, tensor2tensor-style trainers) kept their
hyper-parameters in an `HParams` and overrode them from one command-line flag:

    hparams = HParams(learning_rate=0.1, hidden_units=[64, 32], optimizer='adam')
    hparams.parse(FLAGS.hparams)          # "learning_rate=0.3,hidden_units=[128,64]"

This class keeps that contract, which migrated programs and their launch scripts rely on:

  * every hyper-parameter has the type of its first value (int, float, bool, str, or a list of
    one of those); `parse`, `set_hparam` and `override_from_dict` cast to it and refuse values
    that would change its kind (a float into an int, a number into a bool or a str);
  * `parse` reads `name=value` pairs separated by commas, lists as `name=[a,b,c]`, single list
    elements as `name[i]=value`, booleans as true/True/false/False or an integer; a name given twice is
    an error; an unknown name is an error;
  * `values()`, `to_json()`/`parse_json()`, `get(key, default)`, `in`, `str`/`repr`,
    `add_hparam`/`del_hparam`, `set_model_structure`/`get_model_structure`.

It needs nothing from TensorFlow (`hparam_def` protos are not supported: they were the
`HParamDef` of a TF1 graph collection).
"""

from __future__ import annotations

import json
import numbers
import re
from typing import Any

__all__ = ["HParams", "parse_values"]

_PARAM = re.compile(
    r"""
    (?P<name>[a-zA-Z][\w.]*)           # the hyper-parameter's name
    (\[\s*(?P<index>\d+)\s*\])?        # an optional element index: name[2]=...
    \s*=\s*
    ((?P<val>[^,\[]*)                  # one value
     |
     \[(?P<vals>[^\]]*)\])             # or a bracketed list of values
    ($|,\s*)
    """,
    re.VERBOSE,
)


def _fail(name: str, kind: type, value: Any, values: str) -> None:
    raise ValueError(f"Could not parse hparam '{name}' of type '{kind.__name__}' with value '{value}' in {values}")


def _parse_bool(text: str) -> bool:
    """TF1's reading: true/True, false/False, else an integer (0 is False)."""
    if text in ("true", "True"):
        return True
    if text in ("false", "False"):
        return False
    return bool(int(text))


def _parse_one(kind: type, text: str) -> Any:
    if kind is bool:
        return _parse_bool(text)
    return kind(text)


def parse_values(values: str, type_map: dict[str, type], ignore_unknown: bool = False) -> dict[str, Any]:
    """`"a=1,b=[1,2],c[1]=3"` -> {'a': 1, 'b': [1, 2], 'c': {1: 3}}, each value of its type in
    `type_map`; element assignments give {index: value} dicts (merged by `HParams.parse`)."""
    results: dict[str, Any] = {}
    scalar_seen: set[str] = set()
    position = 0
    while position < len(values):
        match = _PARAM.match(values, position)
        if not match:
            raise ValueError(f"Malformed hyperparameter value: {values[position:]}")
        position = match.end()
        name = match.group("name")
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        kind = type_map[name]
        index = match.group("index")
        if index is not None:
            if name in scalar_seen:
                raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
            elements = results.setdefault(name, {})
            if not isinstance(elements, dict):
                raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
            if int(index) in elements:
                raise ValueError(f"Multiple assignments to variable '{name}[{index}]' in {values}")
            text = match.group("val")
            if text is None:
                raise ValueError(f"Element '{name}[{index}]' cannot be a list in {values}")
            try:
                elements[int(index)] = _parse_one(kind, text)
            except ValueError:
                _fail(name, kind, text, values)
            continue
        if name in results:
            raise ValueError(f"Multiple assignments to variable '{name}' in {values}")
        scalar_seen.add(name)
        if match.group("vals") is not None:
            items = match.group("vals").split(",") if match.group("vals").strip() else []
            try:
                results[name] = [_parse_one(kind, item) for item in items]
            except ValueError:
                _fail(name, kind, match.group("vals"), values)
        else:
            text = match.group("val") or ""
            try:
                results[name] = _parse_one(kind, text)
            except ValueError:
                _fail(name, kind, text, values)
    return results


def _cast(name: str, kind: type, value: Any) -> Any:
    """`value` as `kind`, refusing casts that change a hyper-parameter's kind."""
    failure = ValueError(f"Could not cast hparam '{name}' of type '{kind.__name__}' from value {value!r}")
    if isinstance(value, kind):
        return value
    if issubclass(kind, type(None)):
        return value
    if issubclass(kind, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise failure
    if issubclass(kind, bool) != isinstance(value, bool):
        raise failure
    if issubclass(kind, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise failure
    if issubclass(kind, numbers.Number) and not isinstance(value, numbers.Number):
        raise failure
    return kind(value)


class HParams:
    """Named hyper-parameters with fixed types (see the module docstring)."""

    _RESERVED = frozenset(
        {
            "add_hparam", "del_hparam", "set_hparam", "parse", "override_from_dict", "values", "get",
            "to_json", "parse_json", "set_model_structure", "get_model_structure",
        }
    )

    def __init__(self, hparam_def: Any = None, model_structure: Any = None, **kwargs: Any) -> None:
        self._hparam_types: dict[str, tuple[type, bool]] = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise ValueError("HParams(hparam_def=...) (a TF1 HParamDef proto) is not supported; pass keyword arguments")
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name: str, value: Any) -> None:
        if getattr(self, name, None) is not None or name in self._RESERVED:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name: str, value: Any) -> None:
        kind, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, kind, item) for item in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, _cast(name, kind, value))

    def del_hparam(self, name: str) -> None:
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values: str) -> "HParams":
        """Overrides hyper-parameters from `"name=value,..."` (see the module docstring)."""
        type_map = {name: kind for name, (kind, _) in self._hparam_types.items()}
        parsed = parse_values(values, type_map)
        for name, value in parsed.items():
            if isinstance(value, dict):  # element assignments: name[i]=v
                kind, is_list = self._hparam_types[name]
                if not is_list:
                    raise ValueError(f"Must not use an index for single-valued parameter: {name}")
                current = list(getattr(self, name))
                for index, item in value.items():
                    if index >= len(current):
                        raise ValueError(f"Index {index} is out of range for hparam '{name}' of length {len(current)}")
                    current[index] = item
                parsed[name] = current
        return self.override_from_dict(parsed)

    def override_from_dict(self, values_dict: dict[str, Any]) -> "HParams":
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure: Any) -> None:
        self._model_structure = model_structure

    def get_model_structure(self) -> Any:
        return self._model_structure

    def to_json(self, indent: int | None = None, separators: tuple[str, str] | None = None, sort_keys: bool = False) -> str:
        def plain(value: Any) -> Any:
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items() if not callable(v)}
            return value

        return json.dumps(plain(self.values()), indent=indent, separators=separators, sort_keys=sort_keys)

    def parse_json(self, values_json: str) -> "HParams":
        return self.override_from_dict(json.loads(values_json))

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self._hparam_types:
            return default
        if default is not None:
            kind, is_list = self._hparam_types[key]
            mismatch = ValueError(
                f"Hparam '{key}' of type '{kind.__name__}' is incompatible with default={default!r}"
            )
            if is_list and not isinstance(default, (list, tuple)):
                raise mismatch
            try:
                for item in default if is_list else [default]:
                    _cast(key, kind, item)
            except ValueError:
                raise mismatch from None
        return getattr(self, key)

    def __contains__(self, key: str) -> bool:
        return key in self._hparam_types

    def __str__(self) -> str:
        return str(sorted(self.values().items()))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"

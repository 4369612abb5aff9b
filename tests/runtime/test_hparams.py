"""`tfm.HParams`: `tf.contrib.training.HParams`'s contract (typed values, `parse`, JSON)."""

from __future__ import annotations

import json

import pytest

from tfmigrate.runtime import HParams
from tfmigrate.runtime.hparams import parse_values


def make() -> HParams:
    return HParams(learning_rate=0.1, num_layers=2, use_bn=True, optimizer="adam", units=[64, 32], ratios=[0.5])


def test_values_are_attributes_with_their_types():
    hparams = make()
    assert hparams.learning_rate == 0.1 and hparams.num_layers == 2 and hparams.use_bn is True
    assert hparams.values() == {
        "learning_rate": 0.1, "num_layers": 2, "use_bn": True, "optimizer": "adam", "units": [64, 32], "ratios": [0.5],
    }
    assert "units" in hparams and "dropout" not in hparams
    assert str(hparams).startswith("[('learning_rate', 0.1), ('num_layers', 2)")
    assert repr(hparams) == f"HParams({hparams})"


def test_parse_scalars_lists_and_elements():
    hparams = make().parse("learning_rate=0.3, num_layers=4,use_bn=false,optimizer=sgd,units=[128,64,32],ratios[0]=0.25")
    assert hparams.learning_rate == 0.3 and isinstance(hparams.learning_rate, float)
    assert hparams.num_layers == 4 and isinstance(hparams.num_layers, int)
    assert hparams.use_bn is False
    assert hparams.optimizer == "sgd"
    assert hparams.units == [128, 64, 32]
    assert hparams.ratios == [0.25]
    assert make().parse("units[1]=8").units == [64, 8]
    assert make().parse("units=[]").units == []
    # An int given to a float hyper-parameter becomes a float; TF1's booleans: True/False or an integer.
    assert make().parse("learning_rate=1").learning_rate == 1.0 and isinstance(make().parse("learning_rate=1").learning_rate, float)
    assert make().parse("use_bn=0").use_bn is False and make().parse("use_bn=True").use_bn is True


@pytest.mark.parametrize(
    "text, message",
    [
        ("num_layers=2.5", "Could not parse hparam 'num_layers'"),
        ("use_bn=yes", "Could not parse hparam 'use_bn'"),
        ("dropout=0.1", "Unknown hyperparameter type for dropout"),
        ("num_layers=1,num_layers=2", "Multiple assignments"),
        ("units=[1,2],units[0]=3", "Multiple assignments"),
        ("num_layers", "Malformed hyperparameter value"),
        ("num_layers=[1,2]", "Must not pass a list"),
        ("units=3", "Must pass a list"),
        ("units[5]=3", "out of range"),
        ("num_layers[0]=3", "Must not use an index"),
    ],
)
def test_parse_refuses_what_tf1_refused(text, message):
    hparams = make()
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        hparams.parse(text)


def test_parse_values_ignores_unknown_names_when_asked():
    assert parse_values("a=1,b=2", {"a": int}, ignore_unknown=True) == {"a": 1}
    assert parse_values("a[0]=1,a[2]=5", {"a": int}) == {"a": {0: 1, 2: 5}}


def test_set_hparam_keeps_each_hyper_parameters_kind():
    hparams = make()
    hparams.set_hparam("learning_rate", 2)
    assert hparams.learning_rate == 2.0 and isinstance(hparams.learning_rate, float)
    for name, value in [("num_layers", 2.5), ("use_bn", 1), ("optimizer", 3), ("learning_rate", "x")]:
        with pytest.raises(ValueError, match="Could not cast hparam"):
            hparams.set_hparam(name, value)
    with pytest.raises(KeyError):
        hparams.set_hparam("missing", 1)


def test_add_del_and_reserved_names():
    hparams = make()
    hparams.add_hparam("dropout", 0.1)
    assert hparams.parse("dropout=0.2").dropout == 0.2
    with pytest.raises(ValueError, match="reserved"):
        hparams.add_hparam("dropout", 0.3)
    with pytest.raises(ValueError, match="reserved"):
        HParams(values=1)
    with pytest.raises(ValueError, match="cannot be empty"):
        hparams.add_hparam("empty", [])
    hparams.del_hparam("dropout")
    assert "dropout" not in hparams and not hasattr(hparams, "dropout")


def test_json_round_trip_and_override_from_dict():
    hparams = make()
    text = hparams.to_json(sort_keys=True)
    assert json.loads(text) == hparams.values()
    other = make().parse("num_layers=9")
    assert other.parse_json(text).num_layers == 2
    assert make().override_from_dict({"units": [1], "optimizer": "rmsprop"}).values()["units"] == [1]


def test_get_with_defaults_checks_the_type():
    hparams = make()
    assert hparams.get("num_layers") == 2 and hparams.get("num_layers", 5) == 2
    assert hparams.get("missing", 7) == 7 and hparams.get("missing") is None
    assert hparams.get("units", [1]) == [64, 32]
    with pytest.raises(ValueError, match="incompatible"):
        hparams.get("num_layers", "two")
    with pytest.raises(ValueError, match="incompatible"):
        hparams.get("units", 3)


def test_model_structure_is_kept():
    hparams = HParams(model_structure={"layers": 3}, a=1)
    assert hparams.get_model_structure() == {"layers": 3}
    hparams.set_model_structure("other")
    assert hparams.get_model_structure() == "other"
    with pytest.raises(ValueError, match="hparam_def"):
        HParams(hparam_def=object())

"""`migrate/estimator/hoist.py`: a model-building helper's call nested in an expression moves out
only where that keeps what runs and in which order."""

from __future__ import annotations

import libcst as cst
import pytest

from tfmigrate.estimator.hoist import hoist_helper_call, nested_helper_call


def _helper(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "block"


def _hoisted(line: str) -> str | None:
    module = cst.parse_module(line + "\n")
    stmt = module.body[0]
    call = nested_helper_call(stmt, _helper)
    assert call is not None
    out = hoist_helper_call(stmt, call, "block_result")
    return None if out is None else "".join(module.code_for_node(s) for s in out)


def test_a_call_evaluated_first_moves_out_with_its_arguments() -> None:
    assert _hoisted("h = tf.nn.relu(block(x, make_init(0.1)))") == (
        "block_result = block(x, make_init(0.1))\nh = tf.nn.relu(block_result)\n"
    )
    assert _hoisted("h = tf.add(block(x, 8), x)") == "block_result = block(x, 8)\nh = tf.add(block_result, x)\n"


@pytest.mark.parametrize("line", [
    "h = tf.concat([other(x), block(x)], 1)",  # `other` runs first and may make variables
    "h = x if skip else tf.nn.relu(block(x))",  # runs only when not skipped
    "h = flag and block(x)",
    "h = [block(v) for v in xs]",
    "h = make()(block(x))",
])
def test_a_call_after_other_calls_or_run_conditionally_stays(line: str) -> None:
    assert _hoisted(line) is None


def test_a_statement_that_is_the_call_is_not_nested() -> None:
    stmt = cst.parse_module("h = block(x)\n").body[0]
    assert nested_helper_call(stmt, _helper) is None

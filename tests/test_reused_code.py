"""A module's code with its unchanged top-level statements copied from the text LibCST parsed
(`tfmigrate.reused_code`) is LibCST's render of it, whatever statement a pass rewrote, over
comments and blank lines each statement or block owns, and is not reused where the slices do not
tile the text."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from tfmigrate import parsing
from tfmigrate.reused_code import _tile, code_reusing

SOURCE = '''\
# licence
# more

"""Doc."""
import os  # c
import sys; import re


# about f
@dec(1)
# between decorators
@dec2
def f(x):
    """f."""
    if x:
        return 1
    elif x > 2:
        pass
        # owned by the elif block
    else:
        return 2
            # deeper
    # at the body's level

# at module level
class C(object):
    a = 1

    def m(self):
        try:
            return os.path
        except (ValueError, KeyError):
            pass
        finally:
            x = 3
        # after finally


def outer(a,
          b):  # a signature over two lines
    # above the first statement

    def inner():
        return a
        # owned by inner's body

    @staticmethod
    def g(): return b
    return inner, os.sep
  # a comment less indented than the body


x = f(1); y = 2
for i in range(3):
    x += i
else:
    x = 0
    # in else
while x:
    break
with open("a") as h: pass
if __name__ == "__main__":
    f(x)
# footer comment

'''


class Rename(cst.CSTTransformer):
    """Renames one Name wherever it is: the statements holding it are rebuilt, the rest shared."""

    def __init__(self, old: str) -> None:
        super().__init__()
        self.old = old

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value="renamed") if original.value == self.old else updated


@pytest.mark.parametrize("name", ["dec2", "os", "m", "x", "re", "h", "f", "a", "b", "inner", "nothing"])
def test_reused_code_is_libcsts(name: str) -> None:
    parsing.parse(SOURCE)  # (the engine's parse of the text is at hand)
    old = cst.parse_module(SOURCE)
    slices = _tile(old, SOURCE)
    assert slices is not None  # (the slices tile this text: the code below is reused)
    assert len(slices.defs) == 5  # f, C, C.m, outer, inner (g is one line): a changed body's head and footer kept
    new = old.visit(Rename(name))
    assert code_reusing(new, old, SOURCE) == new.code
    assert sum(stmt is kept for stmt, kept in zip(new.body, old.body)) < len(old.body) or name == "nothing"


@pytest.mark.parametrize("text", [
    "x = 1",  # no final line break
    "x = 1\r\ny = 2\r\n",
    "def f():\n    pass\n    # tail\n\n\n\n",
    "# only comments\n",
])
def test_texts_it_does_not_tile_are_rendered_whole(text: str) -> None:
    parsing.parse(text) if "\r" not in text else None
    old = cst.parse_module(text)
    new = old.visit(Rename("x"))
    assert code_reusing(new, old, text) == new.code


def test_without_the_texts_tree_at_hand_it_renders() -> None:
    parsing.forget_parses()
    text = SOURCE.replace("licence", "licence, not parsed")
    assert _tile(cst.parse_module(text), text) is None
    ast.parse(text)

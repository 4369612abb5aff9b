"""The real-program lane's session: inputs, oracle references and migrations, made once per
test process and shared by the lane's test modules (see lane.py)."""

from __future__ import annotations

import pytest

from .lane import Session


@pytest.fixture(scope="session")
def lane():
    session = Session()
    yield session
    session.close()

"""Fixtures of the payload tests."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["native", "python"])
def engine(request, monkeypatch):
    """Each test on both value engines: the native core (when built) and the Python engine alone."""
    if request.param == "python":
        monkeypatch.setenv("CQLSH_EXT_NATIVE", "0")
    else:
        from cqlsh_ext.payload import native

        if not native.available():
            pytest.skip("the native core is not built here (bin/setup builds it where cargo is)")
        monkeypatch.delenv("CQLSH_EXT_NATIVE", raising=False)
    return request.param

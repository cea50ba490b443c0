"""Shared fixtures: where the built programs are."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def bin_dir() -> pathlib.Path:
    build = pathlib.Path(os.environ.get("MQLAB_BUILD_DIR", REPO / "build"))
    path = build / "bin"
    if not path.is_dir():
        pytest.fail(f"no build at {path}: run `make build` first (or set MQLAB_BUILD_DIR)")
    return path

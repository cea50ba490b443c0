"""Shared fixtures: where the built programs are."""
import os
import pathlib
import shutil

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def bin_dir() -> pathlib.Path:
    build = pathlib.Path(os.environ.get("MQLAB_BUILD_DIR", REPO / "build"))
    path = build / "bin"
    if not path.is_dir():
        pytest.fail(f"no build at {path}: run `make build` first (or set MQLAB_BUILD_DIR)")
    return path


# A real-process test writes hundreds of MiB of broker stores into its
# tmp_path, and pytest keeps the last three runs' directories: about 9 GiB
# per run of the suite, enough to push a shared CI disk over the brokers'
# own space limits. A passing test's stores are deleted (its logs and
# configs stay); a failing test keeps everything for the post-mortem.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[_CALL_PASSED] = report.passed


_CALL_PASSED = pytest.StashKey[bool]()


@pytest.fixture(autouse=True)
def _drop_stores_of_passing_tests(request, tmp_path):
    yield  # set up before the tests' program fixtures: torn down after they stopped
    if not request.node.stash.get(_CALL_PASSED, False):
        return
    for store in tmp_path.glob("**/store"):
        if store.is_dir():
            shutil.rmtree(store, ignore_errors=True)

"""Shared fixtures: where the built programs are, and what every test's
teardown checks (sanitizer reports of the programs it started) and cleans
(the broker stores of a passing test)."""
import os
import pathlib
import re
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


# Sanitizer reports of the programs a test starts. In a sanitized build
# (`make sanitize`) a child's report goes to its stderr, which most tests
# capture and never read, and a test that only looks at a broker's data would
# pass over a heap overflow. So every test gets a directory for reports,
# ASAN_OPTIONS and UBSAN_OPTIONS point log_path there (every process the test
# starts inherits them, also those tools/mqrealrun.py starts), and the test
# fails at teardown when a report file exists. gcc's UBSan, running inside
# ASan's runtime, ignores log_path and always writes to stderr: the teardown
# also reads the stderr files of the programs started as Processes
# (<tag>.err, real_cluster.py and mqrealrun.py) for UBSan's "runtime error",
# and real_cluster's helpers fail on a sanitizer's exit status, which is
# SANITIZER_EXIT_CODE so that it is not mistaken for a program's own exit 1
# (bad input, a failed run). In a build without sanitizers nobody reads the
# variables and no report appears.
SANITIZER_EXIT_CODE = 66
SANITIZER_REPORTS_DIR = "sanitizer-reports"
# The options the suite was started with (the Makefile's, say), read once:
# each test adds its own log_path to these, not to the previous test's.
_INHERITED_OPTIONS = {variable: os.environ.get(variable, "") for variable in ("ASAN_OPTIONS", "UBSAN_OPTIONS")}


def direct_sanitizer_reports(patch, directory):
    """Sets ASAN_OPTIONS and UBSAN_OPTIONS (through the MonkeyPatch `patch`)
    so that reports go to files in `directory`; later options win over the
    inherited ones."""
    for variable, inherited in _INHERITED_OPTIONS.items():
        prefix = directory / variable.split("_")[0].lower()
        own = f"log_path={prefix}:exitcode={SANITIZER_EXIT_CODE}"
        patch.setenv(variable, f"{inherited}:{own}" if inherited else own)


# gcc's UBSan: "<file>:<line>:<column>: runtime error: <what>".
UBSAN_REPORT = re.compile(r":\d+:\d+: runtime error: ")


def sanitizer_report_in(text):
    """The first sanitizer report in a program's stderr, from its first line
    on, or None."""
    starts = [m.start() for m in (UBSAN_REPORT.search(text), re.search(r"==\d+==ERROR: \w+Sanitizer", text)) if m]
    if not starts:
        return None
    begin = text.rfind("\n", 0, min(starts)) + 1
    return text[begin:begin + 6000]


def fail_on_sanitizer_reports(directory, whose, stderr_files=()):
    """Fails when `directory` holds a report file or one of `stderr_files`
    (paths) holds a report."""
    found = [(path, path.read_text(errors="replace")[-6000:])
             for path in (sorted(directory.iterdir()) if directory.is_dir() else []) if path.is_file()]
    for path in stderr_files:
        report = sanitizer_report_in(path.read_text(errors="replace"))
        if report is not None:
            found.append((path, report))
    if not found:
        return
    text = "\n".join(f"--- {path}\n{report}" for path, report in found)
    pytest.fail(f"{len(found)} sanitizer report(s) from {whose}:\n{text}", pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def _sanitizer_reports_of_fixtures(tmp_path_factory):
    """Reports of programs started outside any one test's own directory (by
    module and session fixtures, e.g. a compare run shared by a module's
    tests): checked when the session ends."""
    reports = tmp_path_factory.mktemp(SANITIZER_REPORTS_DIR)
    with pytest.MonkeyPatch.context() as patch:
        direct_sanitizer_reports(patch, reports)
        yield
    fail_on_sanitizer_reports(reports, "programs started by module or session fixtures")


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
def _check_and_clean_at_teardown(request, tmp_path, monkeypatch):
    reports = tmp_path / SANITIZER_REPORTS_DIR
    reports.mkdir()
    direct_sanitizer_reports(monkeypatch, reports)
    yield  # set up before the tests' program fixtures: torn down after they stopped
    # Before the stores go: they may explain the report.
    fail_on_sanitizer_reports(reports, "programs this test started", sorted(tmp_path.rglob("*.err")))
    if not request.node.stash.get(_CALL_PASSED, False):
        return
    for store in tmp_path.glob("**/store"):
        if store.is_dir():
            shutil.rmtree(store, ignore_errors=True)

"""The sanitizer-report net of conftest.py: in a sanitized build
(`make sanitize`) every program a test starts writes its ASan, UBSan or
LeakSanitizer report into the test's own directory, and a report there fails
the test at teardown, whatever the test itself checked.

The last test makes a real ASan report happen in a real program: mqbroker
reading a 3 MB broker.conf while ASAN_OPTIONS caps one allocation at 1 MiB,
which ASan reports and dies of. The report must land in the directory given,
not in the captured stderr, and the exit status must be conftest's
SANITIZER_EXIT_CODE.
"""
import os
import subprocess

import pytest

from conftest import SANITIZER_EXIT_CODE, SANITIZER_REPORTS_DIR, fail_on_sanitizer_reports, sanitizer_report_in
from real_cluster import not_killed_by_a_sanitizer, scaled

# What gcc's UBSan (inside ASan's runtime, which ignores log_path for it)
# writes to a program's stderr, between ordinary log lines.
UBSAN_STDERR = ("2026-11-29 22:24:28,900 INFO  [BrokerStartup] recovered\n"
                "/work/main/sim/sim_apps.cc:85:65: runtime error: load of value 16, which is not a valid value for "
                "type 'bool'\n    #0 0x55a9486332a4 in operator() /work/main/sim/sim_apps.cc:85\n")


def test_each_test_sends_reports_to_its_own_directory(tmp_path):
    for variable, prefix in (("ASAN_OPTIONS", "asan"), ("UBSAN_OPTIONS", "ubsan")):
        options = os.environ[variable].split(":")
        # The last log_path and exitcode win over any the caller set.
        assert [o for o in options if o.startswith("log_path=")][-1] == \
            f"log_path={tmp_path / SANITIZER_REPORTS_DIR / prefix}"
        assert [o for o in options if o.startswith("exitcode=")][-1] == f"exitcode={SANITIZER_EXIT_CODE}"


def test_a_report_file_fails_the_test_and_is_quoted(tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    fail_on_sanitizer_reports(reports, "nobody")  # empty: passes
    (reports / "asan.4242").write_text("==4242==ERROR: AddressSanitizer: heap-use-after-free\n")
    with pytest.raises(pytest.fail.Exception, match=r"1 sanitizer report\(s\) from nobody(.|\n)*heap-use-after-free"):
        fail_on_sanitizer_reports(reports, "nobody")


def test_a_ubsan_report_in_a_programs_stderr_file_fails_the_test(tmp_path):
    assert sanitizer_report_in("INFO started\nWARN a runtime error: none (not a report)\n") is None
    assert sanitizer_report_in(UBSAN_STDERR).startswith("/work/main/sim/sim_apps.cc:85:65: runtime error: load")
    assert sanitizer_report_in("x\n==17==ERROR: LeakSanitizer: detected memory leaks\n").startswith("==17==ERROR")
    quiet = tmp_path / "broker-a-0-run1.stderr"  # not *.err: the teardown reads those
    quiet.write_text("2026-11-29 22:24:28,900 INFO  [BrokerStartup] boot success\n")
    fail_on_sanitizer_reports(tmp_path / "none", "nobody", [quiet])  # no report: passes
    loud = tmp_path / "mqnamesrv.stderr"
    loud.write_text(UBSAN_STDERR)
    with pytest.raises(pytest.fail.Exception, match=r"mqnamesrv.stderr\n/work/main/sim/sim_apps.cc:85:65: runtime"):
        fail_on_sanitizer_reports(tmp_path / "none", "nobody", [quiet, loud])


def test_a_helper_fails_on_a_sanitizers_exit_status_or_report():
    ok = subprocess.CompletedProcess(["mqadmin"], 1, stdout="", stderr="bad option\n")
    assert not_killed_by_a_sanitizer(ok) is ok  # a program's own failure is the test's business
    for dead in (subprocess.CompletedProcess(["mqadmin"], SANITIZER_EXIT_CODE, stdout="", stderr=""),
                 subprocess.CompletedProcess(["mqsim"], 1, stdout="", stderr=UBSAN_STDERR)):
        with pytest.raises(pytest.fail.Exception, match=f"{dead.args[0]} died of a sanitizer report"):
            not_killed_by_a_sanitizer(dead)


def is_asan_build(program):
    linked = subprocess.run(["ldd", str(program)], capture_output=True, text=True, timeout=30).stdout
    return "libasan" in linked


def test_a_sanitized_program_reports_into_the_directory_and_exits_with_the_code(bin_dir, tmp_path):
    mqbroker = bin_dir / "mqbroker"
    if not is_asan_build(mqbroker):
        pytest.skip(f"{mqbroker} is not built with AddressSanitizer (make sanitize builds one)")
    elsewhere = tmp_path / "elsewhere"  # not the test's own directory: this report is expected
    elsewhere.mkdir()
    conf = tmp_path / "big.conf"
    conf.write_text("# " + "x" * 3_000_000 + "\nbrokerName=broker-x\n")
    env = dict(os.environ, ASAN_OPTIONS=f"max_allocation_size_mb=1:allocator_may_return_null=0:"
                                        f"log_path={elsewhere / 'asan'}:exitcode={SANITIZER_EXIT_CODE}")
    result = subprocess.run([str(mqbroker), "-c", str(conf), "-p"], capture_output=True, text=True, env=env,
                            timeout=scaled(60))
    assert result.returncode == SANITIZER_EXIT_CODE, (result.returncode, result.stderr[-2000:])
    reports = sorted(elsewhere.iterdir())
    assert len(reports) == 1 and reports[0].name == f"asan.{reports[0].name[5:]}", reports  # asan.<pid>
    assert "ERROR: AddressSanitizer: requested allocation size" in reports[0].read_text()
    assert "AddressSanitizer" not in result.stderr  # in the file, not lost in a captured stderr
    assert not any((tmp_path / SANITIZER_REPORTS_DIR).iterdir())  # the test's own directory stays clean

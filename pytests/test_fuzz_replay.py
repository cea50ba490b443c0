"""fuzz_replay's crash path: a run that dies names the input it was on and
keeps it where `fuzz_replay TARGET FILE` runs it again. No fuzz target
crashes on purpose, so the crash is a fatal signal sent from outside, which
reaches the same handler a wild access or a failed MQ_ASSERT's abort does."""
import re
import signal
import subprocess
import time

from conftest import REPO


def test_a_fatal_signal_names_and_keeps_the_input(bin_dir, tmp_path):
    corpus = REPO / "fuzz" / "corpus" / "broker_conf"
    run = subprocess.Popen(
        [str(bin_dir / "fuzz_replay"), "broker_conf", "--mutations", "100000000", str(corpus)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # into the mutants: the corpus takes milliseconds
    assert run.poll() is None, run.communicate()
    run.send_signal(signal.SIGABRT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == -signal.SIGABRT, (run.returncode, out, err)
    match = re.search(r"fuzz_replay: crashed on (mutant \d+|\S+); the input is in (\S+)", err)
    assert match, err
    kept = tmp_path / match.group(2)
    assert kept.name == "fuzz-replay-crash-broker_conf"
    assert kept.is_file()

    # The kept input runs alone (it did not crash the target: the signal did).
    again = subprocess.run([str(bin_dir / "fuzz_replay"), "broker_conf", str(kept)],
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert "1 corpus inputs and 0 mutants" in again.stdout


def test_a_clean_run_keeps_nothing(bin_dir, tmp_path):
    run = subprocess.run(
        [str(bin_dir / "fuzz_replay"), "json_header", "--mutations", "200",
         str(REPO / "fuzz" / "corpus" / "json_header")],
        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(r"fuzz_replay json_header: \d+ corpus inputs and 200 mutants \(seed \d+\), no crash", run.stdout)
    assert not list(tmp_path.glob("fuzz-replay-crash-*"))


def test_bad_arguments_are_refused(bin_dir, tmp_path):
    run = subprocess.run([str(bin_dir / "fuzz_replay"), "no_such_target", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    assert "targets:" in run.stdout + run.stderr

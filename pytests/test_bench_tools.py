"""The benchmarks' helper programs and options: what they print and leave.

page_cache_fill runs before every benchmark (bench/run_all.sh, broker_bench);
a fill that wrote to disk, or printed what the results table cannot parse,
would spoil every figure after it. The --label options name the figures of
the profile-guided build's runs (make bench), which must not collide with
the plain build's."""
import re
import subprocess
from pathlib import Path

FIGURE = re.compile(r"^[a-z0-9_]+ -?[0-9]+(\.[0-9]+)? [A-Za-z/%]+$")


def mem_free_mib() -> int:
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemFree:"):
                return int(line.split()[1]) // 1024
    raise AssertionError("no MemFree in /proc/meminfo")


def test_page_cache_fill_reads_a_sparse_file_and_prints_figures(bin_dir, tmp_path):
    fill = tmp_path / "fill"
    # A reserve of all but about 64 MiB: a small fill, whatever the machine.
    reserve = max(mem_free_mib() - 64, 0)
    run = subprocess.run([str(bin_dir / "page_cache_fill"), "--file", str(fill), "--reserve-mib", str(reserve),
                          "--name", "t_fill"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines, "no figures printed"
    for line in lines:
        assert FIGURE.match(line), f"not a `name value unit` figure: {line!r}"
    figures = {line.split()[0]: float(line.split()[1]) for line in lines}
    assert {"t_fill_filled", "t_fill_free_memory_taken", "t_fill_seconds"} <= figures.keys()
    assert 0 <= figures["t_fill_filled"] <= 128
    # The file stays (the caller deletes it) and holds no disk block: holes only.
    assert fill.exists()
    assert fill.stat().st_size >= int(figures["t_fill_filled"]) * 1024 * 1024  # less when memory ran short
    assert fill.stat().st_blocks == 0


def test_page_cache_fill_without_a_file_says_so_and_exits_2(bin_dir):
    run = subprocess.run([str(bin_dir / "page_cache_fill")], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert "--file is required" in run.stderr


def test_sim_bench_names_its_figures_after_the_label(bin_dir):
    # The idle run alone (a few hundredths of a second): make bench runs the
    # profile-guided build's sim_bench as "sim_pgo" beside the plain "sim".
    run = subprocess.run([str(bin_dir / "sim_bench"), "--label", "t_sim", "--skip-scaling", "--skip-standard"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    figures = [line for line in run.stdout.splitlines() if not line.startswith("#")]
    assert figures, "no figures printed"
    for line in figures:
        assert re.match(r"^t_sim_[a-z0-9_]+ -?[0-9]+(\.[0-9]+)? [A-Za-z/%]+( ratio=[0-9.]+ vs [A-Za-z0-9_]+)?$", line), line
    names = {line.split()[0] for line in figures}
    assert {"t_sim_idle_speedup", "t_sim_idle_events_per_simulated_s", "t_sim_peak_rss"} <= names


def test_sim_bench_reports_the_median_of_repeated_standard_runs(bin_dir):
    # One simulated minute, three times: the figures are the median run's,
    # the best and worst speedups bracket them, and every run gave the same
    # trace.
    run = subprocess.run([str(bin_dir / "sim_bench"), "--skip-scaling", "--skip-idle", "--minutes", "1",
                          "--repeat", "3"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    figures = {line.split()[0]: float(line.split()[1]) for line in run.stdout.splitlines()
               if line and not line.startswith("#")}
    assert figures["sim_standard_runs"] == 3
    assert figures["sim_standard_speedup_best"] >= figures["sim_standard_speedup"] >= figures["sim_standard_speedup_worst"] > 0
    digests = re.findall(r"^# bench-standard seed \d+: .* digest (\w+)$", run.stdout, re.M)
    assert len(digests) == 3 and len(set(digests)) == 1, run.stdout
    assert figures["sim_host_reference_sort_4m"] > 0
    assert figures["sim_host_reference_sort_4m_worst"] >= figures["sim_host_reference_sort_4m"]
    assert re.search(r"^sim_host_reference_sort_4m_worst [\d.]+ ms ratio=[\d.]+ vs sim_host_reference_sort_4m$",
                     run.stdout, re.M), run.stdout


def test_sim_bench_refuses_zero_repeats(bin_dir):
    run = subprocess.run([str(bin_dir / "sim_bench"), "--repeat", "0", "--skip-scaling"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "--repeat must be positive" in run.stderr


def test_sim_bench_refuses_a_label_that_is_not_one_word(bin_dir):
    run = subprocess.run([str(bin_dir / "sim_bench"), "--label", "two words", "--skip-scaling", "--skip-standard"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "--label must be one word" in run.stderr


def test_cmake_refuses_an_unknown_pgo_mode(tmp_path):
    # make pgo configures with MQLAB_PGO=generate, then use; a typo must not
    # quietly build without a profile.
    root = Path(__file__).resolve().parent.parent
    run = subprocess.run(["cmake", "-S", str(root), "-B", str(tmp_path / "b"), "-DMQLAB_PGO=gen"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "MQLAB_PGO is 'gen': expected empty, generate or use" in run.stderr


def test_store_bench_names_its_store_figures_after_the_label(bin_dir):
    # make bench runs the profile-guided build's store_bench as "store_pgo";
    # the raw baselines keep their names, which the ratios refer to.
    run = subprocess.run([str(bin_dir / "store_bench"), "--label", "t_store", "--cases", "async", "--blocks",
                          "pretouched", "--inflight", "1", "--async-messages", "2000", "--segment-mib", "4"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    names = {line.split()[0] for line in run.stdout.splitlines() if line and not line.startswith("#")}
    assert "t_store_async_flush_1k_inflight1_pretouched" in names
    assert "raw_pwrite_seq_1k_pretouched_for_inflight1" in names
    assert not any(name.startswith("store_") for name in names), names
    bad = subprocess.run([str(bin_dir / "store_bench"), "--label", "a b"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert "--label must be one word" in bad.stderr


def run_sim_ab(args, bin_dir, tmp_path):
    root = Path(__file__).resolve().parent.parent
    env = {"PATH": "/usr/bin:/bin", "WORK": str(tmp_path / "ab"), "PLAIN_BUILD_DIR": str(bin_dir.parent)}
    return subprocess.run([str(root / "bench" / "sim_ab.sh"), *args], capture_output=True, text=True, timeout=60,
                          env=env, cwd=root)


def test_sim_ab_says_how_to_call_it(bin_dir, tmp_path):
    # bench/sim_ab.sh builds two profile-guided trees (minutes each): its
    # mistakes of use must stop it before any build.
    run = run_sim_ab([], bin_dir, tmp_path)
    assert run.returncode != 0
    assert "usage: bench/sim_ab.sh BASE [CANDIDATE [PAIRS]]" in run.stderr
    run = run_sim_ab(["HEAD", "HEAD", "eight"], bin_dir, tmp_path)
    assert run.returncode == 2
    assert "PAIRS must be a number, not 'eight'" in run.stderr


def test_sim_ab_refuses_an_unknown_commit_before_building(bin_dir, tmp_path):
    run = run_sim_ab(["no-such-commit-anywhere", "HEAD", "2"], bin_dir, tmp_path)
    assert run.returncode == 2
    assert "sim_ab: no commit 'no-such-commit-anywhere'" in run.stderr
    assert not list((tmp_path / "ab").glob("*/tree")), "no worktree for a commit that does not exist"

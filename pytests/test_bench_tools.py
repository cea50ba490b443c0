"""The benchmarks' helper programs: what they print and what they leave.

page_cache_fill runs before every benchmark (bench/run_all.sh, broker_bench);
a fill that wrote to disk, or printed what the results table cannot parse,
would spoil every figure after it."""
import re
import subprocess

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

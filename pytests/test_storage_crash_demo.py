"""Runs the storage crash demo (the main job until mqsim exists) and checks
its JSON report: SYNC_FLUSH keeps every acknowledged message through a power
loss; ASYNC_FLUSH keeps a prefix of what was written, with no hole and no
invented message; the same seed gives the same report."""
import json
import subprocess


def run_demo(bin_dir, *args):
    result = subprocess.run([str(bin_dir / "storage_crash_demo"), *args], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    return result


def test_demo_json_report(bin_dir, tmp_path):
    out = tmp_path / "demo.json"
    result = run_demo(bin_dir, "--seed", "7", "--json", str(out))
    assert "SYNC_FLUSH" in result.stdout and "ASYNC_FLUSH" in result.stdout
    report = json.loads(out.read_text())
    modes = {run["flush_disk_type"]: run for run in report["runs"]}
    assert set(modes) == {"SYNC_FLUSH", "ASYNC_FLUSH"}
    for run in report["runs"]:
        assert run["acknowledged"] > 0
        assert run["survived"] <= run["written"]
        assert run["corrupt_visible"] == 0
        assert run["holes"] == 0
        assert run["invented"] == 0
    sync = modes["SYNC_FLUSH"]
    assert sync["lost_acknowledged"] == 0, sync
    assert sync["survived"] >= sync["acknowledged"]


def test_demo_is_deterministic(bin_dir, tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    run_demo(bin_dir, "--seed", "11", "--json", str(first))
    run_demo(bin_dir, "--seed", "11", "--json", str(second))
    assert first.read_text() == second.read_text()


def test_demo_rejects_bad_arguments(bin_dir):
    result = subprocess.run([str(bin_dir / "storage_crash_demo"), "--messages", "-3"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2
    assert "messages" in result.stderr

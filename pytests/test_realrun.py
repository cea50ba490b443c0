"""tools/mqrealrun.py: one scenario file run on real processes (mqnamesrv,
mqbroker, mqadmin perf with --history), its faults applied from the same
fault schedule mqsim uses, judged by `mqsim check` into a report of `mqsim
run`'s shape, and printed side by side with the simulated run.

- loopback subset (kill -9 with restart, SIGSTOP/SIGCONT): always runs;
- a master partitioned away inside network namespaces (blackhole routes and
  blackhole policy rules in the broker's own namespace): skips, with the reason,
  where `ip netns add` is not permitted;
- a scenario with faults a real process cannot be given is refused up front.
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
DRIVER = REPO / "tools" / "mqrealrun.py"


def realrun(bin_dir, *args, deadline_s=600):
    env = dict(os.environ, MQLAB_BUILD_DIR=str(bin_dir.parent))
    result = subprocess.run([sys.executable, str(DRIVER), *map(str, args), "--bin", str(bin_dir)], capture_output=True,
                            text=True, timeout=deadline_s, env=env, cwd=REPO)
    return result.returncode, result.stdout, result.stderr


def netns_unavailable():
    """The reason namespaces cannot be used here, or None."""
    name = f"mqlab-probe-{os.getpid()}"
    try:
        added = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"ip netns add: {error}"
    if added.returncode != 0:
        return f"ip netns add failed: {added.stderr.strip()}"
    subprocess.run(["ip", "netns", "delete", name], capture_output=True, timeout=30)
    return None


def test_a_scenario_with_kill_and_pause_runs_on_real_processes_and_compares(bin_dir, tmp_path):
    out = tmp_path / "run"
    code, stdout, stderr = realrun(bin_dir, REPO / "scenarios" / "real-multi-master-kill-pause.yaml", "--compare",
                                   "--out", out, "--run-id", os.getpid() % 50000)
    print(stdout)
    print(stderr, file=sys.stderr)
    assert code == 0, stdout + stderr
    real = json.loads((out / "real.json").read_text())
    simulated = json.loads((out / "sim.json").read_text())
    assert real["source"] == "real" and real["scenario"] == simulated["scenario"] == "real-multi-master-kill-pause"
    assert set(real["figures"]) == set(simulated["figures"])  # the same report, figure for figure
    assert real["figures"]["lost"] == 0
    assert real["figures"]["corrupted"] == 0
    assert real["figures"]["acknowledged"] > 1000
    assert real["passed"] and real["converged"]
    # Every fault of the schedule was carried out, start and end.
    events = [json.loads(line) for line in (out / "driver.history").read_text().splitlines()[1:]]
    assert [e["fault_index"] for e in events if e["what"] == "fault_start"] == [0, 1]
    assert [e["fault_index"] for e in events if e["what"] == "fault_end"] == [0, 1]
    # The audit group read everything, as mqsim's liveness phase does.
    assert "mqsim_audit" in real["history"]["consumer_groups"]
    assert "mqsim run" in stdout and "real run" in stdout and "acknowledged" in stdout


def test_a_fault_real_processes_cannot_take_is_refused_before_anything_starts(bin_dir, tmp_path):
    code, stdout, stderr = realrun(bin_dir, REPO / "scenarios" / "single-master-async-power-loss.yaml", "--out",
                                   tmp_path / "run")
    assert code == 2, stdout + stderr
    assert "cannot run this scenario on real processes" in stderr
    assert "cannot be applied to real processes" in stderr
    assert not (tmp_path / "run").exists()


PARTITION_SCENARIO = """
name: real-partition
duration: 20s
topology: {preset: multi_master}
broker: {flushDiskType: ASYNC_FLUSH}
workload:
  topic: TopicPartition
  producers: {count: 1, rate: 200/s, message_size: 256B}
  consumer_groups: [{name: cg-part, consumers: 1}]
faults:
  - {at: 4s, kind: partition, side_a: [broker-a-0], side_b: [rest], duration: 6s}
  - {at: 12s, kind: partition, side_a: [broker-b-0], side_b: [rest], one_way: true, duration: 4s}
expect:
  lost: 0
"""


def test_a_master_partition_in_network_namespaces(bin_dir, tmp_path):
    reason = netns_unavailable()
    if reason:
        pytest.skip(f"no network namespaces here: {reason}")
    scenario = tmp_path / "real-partition.yaml"
    scenario.write_text(PARTITION_SCENARIO)
    out = tmp_path / "run"
    run_id = 50000 + os.getpid() % 40000
    try:
        code, stdout, stderr = realrun(bin_dir, scenario, "--netns", "on", "--out", out, "--run-id", run_id)
    finally:
        leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    print(stdout)
    print(stderr, file=sys.stderr)
    assert f"mqlab-{run_id % 100000}-" not in leftover, "namespaces left behind:\n" + leftover
    assert code == 0, stdout + stderr
    real = json.loads((out / "real.json").read_text())
    assert real["figures"]["lost"] == 0
    # Sends to the partitioned group failed for a while: a write-unavailable window on broker-a.
    assert any(w["broker"] == "broker-a" for w in real["unavailable_write_windows"]), real["unavailable_write_windows"]

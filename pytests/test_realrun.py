"""tools/mqrealrun.py: one scenario file run on real processes (mqnamesrv,
mqbroker, mqadmin perf with --history), its faults applied from the same
fault schedule mqsim uses, judged by `mqsim check` into a report of `mqsim
run`'s shape, and printed side by side with the simulated run.

- loopback subset (kill -9 with restart, SIGSTOP/SIGCONT): always runs;
- a master partitioned away inside network namespaces (blackhole routes and
  blackhole policy rules in the broker's own namespace): skips, with the reason,
  where `ip netns add` is not permitted;
- a SYNC_FLUSH power cut (crash_machine: SIGUSR2 to a broker running over the
  fault-injecting file layer, restart over the same store): always runs;
- the scenario's network (latency, jitter, loss: netem or tools/delay_relay.py;
  bandwidth: netem or tbf) on every broker's links: skips without namespaces;
- a scenario's client: section reaches every perf client (--clientConfig);
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


def realrun_in_namespaces(bin_dir, tmp_path, scenario_text, run_id_base, *args):
    """Runs scenario_text with network namespaces (skips where they cannot be
    made), checks the run removed its namespaces and passed its driver, and
    returns (out directory, real.json)."""
    reason = netns_unavailable()
    if reason:
        pytest.skip(f"no network namespaces here: {reason}")
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(scenario_text)
    out = tmp_path / "run"
    run_id = run_id_base + os.getpid() % 40000
    try:
        code, stdout, stderr = realrun(bin_dir, scenario, *args, "--out", out, "--run-id", run_id)
    finally:
        leftover = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    print(stdout)
    print(stderr, file=sys.stderr)
    assert f"mqlab-{run_id % 100000}-" not in leftover, "namespaces left behind:\n" + leftover
    assert code == 0, stdout + stderr
    return out, json.loads((out / "real.json").read_text())


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
    code, stdout, stderr = realrun(bin_dir, REPO / "scenarios" / "multi-master-sync-disk-failure.yaml", "--out",
                                   tmp_path / "run")
    assert code == 2, stdout + stderr
    assert "cannot run this scenario on real processes" in stderr
    assert "fail_disk cannot be applied to real processes" in stderr
    assert not (tmp_path / "run").exists()


def test_a_power_cut_of_a_nameserver_machine_is_refused(bin_dir, tmp_path):
    scenario = tmp_path / "real-namesrv-power.yaml"
    scenario.write_text(POWER_LOSS_SCENARIO.replace("target: broker-a-0", "target: namesrv-0"))
    code, stdout, stderr = realrun(bin_dir, scenario, "--out", tmp_path / "run")
    assert code == 2, stdout + stderr
    assert "only broker machines lose power on real runs" in stderr
    assert not (tmp_path / "run").exists()


def history_records(path, record_type):
    return [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == record_type]


# SYNC_FLUSH: a producer's send is acknowledged only once flushed, so a power
# cut (every write not fsynced dropped) takes nothing acknowledged from the
# store. A consumer can still have read a message that was written but not yet
# flushed (dispatch does not wait for the flush): the cut takes it, its queue
# offset is reused after recovery, and that consumer's committed offset skips
# the reusing message. The checker counts such a message lost for that group
# (the loss bound's "skipped"), so the scenario expects no lost: 0; what this
# test holds to zero is the store's loss: the audit group, reading every queue
# from its first offset after healing, must receive every acknowledged message.
POWER_LOSS_SCENARIO = """
name: real-power-loss
duration: 14s
topology: {preset: single_master}
broker: {flushDiskType: SYNC_FLUSH}
workload:
  topic: TopicRealPower
  producers: {count: 1, rate: 200/s, message_size: 256B}
  consumer_groups: [{name: cg-power, consumers: 1}]
faults:
  - {at: 5s, kind: crash_machine, target: broker-a-0, duration: 3s}
expect:
  corrupted: 0
"""


def test_a_sync_flush_power_cut_on_a_real_broker_keeps_every_acknowledged_message(bin_dir, tmp_path):
    scenario = tmp_path / "real-power-loss.yaml"
    scenario.write_text(POWER_LOSS_SCENARIO)
    out = tmp_path / "run"
    code, stdout, stderr = realrun(bin_dir, scenario, "--compare", "--out", out, "--netns", "off")
    print(stdout)
    print(stderr, file=sys.stderr)
    assert code == 0, stdout + stderr
    # The cut was the fault-injecting file layer's, and recovery was the abnormal one.
    cut = (out / "broker-a-0-run1.err").read_text()
    assert "powerLossInjection=true" in cut and "power cut: reverted" in cut, cut[-3000:]
    assert "abnormal recovery" in (out / "broker-a-0-run2.err").read_text()
    events = history_records(out / "driver.history", "event")
    assert [(e["what"], e["detail"]) for e in events if e["what"] == "process_stop"] == [("process_stop", "power cut")]
    assert [e["fault_index"] for e in events if e["what"] == "fault_end"] == [0]
    acknowledged = {r["seq"] for r in history_records(out / "producer-0.history", "send_result")
                    if r["outcome"] == "SEND_OK"}
    audited = {r["seq"] for r in history_records(out / "consumer-mqsim_audit-0.history", "receipt")}
    assert len(acknowledged) > 1000
    missing = sorted(acknowledged - audited)
    assert not missing, f"{len(missing)} acknowledged messages gone from the store after the cut: {missing[:20]}"
    real = json.loads((out / "real.json").read_text())
    assert real["figures"]["corrupted"] == 0 and real["passed"] and real["converged"]
    # Whatever a group missed was a reused offset of the cut, never a message the store lost.
    assert all(m["fault_index"] == 0 for m in real["lost_messages"]), real["lost_messages"][:5]
    table = stdout[stdout.index("mqsim run"):]
    for row in ("  redelivered", "  retried", "  stored twice", "expired by retention"):
        assert f"\n{row} " in table, table


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
    _, real = realrun_in_namespaces(bin_dir, tmp_path, PARTITION_SCENARIO, 50000, "--netns", "on")
    assert real["figures"]["lost"] == 0
    # Sends to the partitioned group failed for a while: a write-unavailable window on broker-a.
    assert any(w["broker"] == "broker-a" for w in real["unavailable_write_windows"]), real["unavailable_write_windows"]


# One SYNC_MASTER group over slow links: 15 ms one way between every two
# machines, a 1 % chance that a chunk is lost (TCP resends it a 200 ms RTO
# later), 20 Mbit/s per broker NIC. Without netem: tbf on the veths, the
# delaying relay (tools/delay_relay.py) between clients and brokers and between
# the slave and its master.
LATENCY_MS = 15
SLOW_LINKS_SCENARIO = f"""
name: real-slow-links
duration: 10s
topology: {{preset: sync_replication}}
broker: {{flushDiskType: ASYNC_FLUSH}}
network: {{latency: {LATENCY_MS}ms, jitter: 1ms, loss: 0.01, bandwidth: 20Mbit/s}}
workload:
  topic: TopicSlowLinks
  producers: {{count: 1, rate: 100/s, message_size: 512B}}
  consumer_groups: [{{name: cg-slow, consumers: 1}}]
expect:
  lost: 0
  corrupted: 0
"""


def test_the_plan_exports_the_scenarios_network(bin_dir, tmp_path):
    scenario = tmp_path / "real-slow-links.yaml"
    scenario.write_text(SLOW_LINKS_SCENARIO)
    plan = json.loads(subprocess.run([bin_dir / "mqsim", "plan", scenario], capture_output=True, text=True,
                                     check=True).stdout)
    assert plan["network"] == {"default": False, "latency_ms": 15.0, "jitter_ms": 1.0,
                               "bandwidth_bytes_per_sec": 2_500_000, "default_bandwidth_bytes_per_sec": 125_000_000,
                               "loss_probability": 0.01, "retransmission_timeout_ms": 200.0,
                               "tcp_user_timeout_ms": 30000.0}
    lan_scenario = REPO / "scenarios" / "real-multi-master-kill-pause.yaml"
    lan = json.loads(subprocess.run([bin_dir / "mqsim", "plan", lan_scenario], capture_output=True, text=True,
                                    check=True).stdout)
    assert lan["network"]["default"] is True  # no network: key, the host's own links
    # The perf producer's senders (-w) are the simulated producer's in-flight cap.
    assert plan["workload"]["producers"]["max_in_flight"] == 16


def test_a_client_section_reaches_the_real_perf_clients(bin_dir, tmp_path):
    lan_scenario = REPO / "scenarios" / "real-multi-master-kill-pause.yaml"
    lan = json.loads(subprocess.run([bin_dir / "mqsim", "plan", lan_scenario], capture_output=True, text=True,
                                    check=True).stdout)
    assert lan["client"]["default"] is True
    assert lan["client"]["slaveReadOnUnreachableMaster"] is True
    scenario = tmp_path / "real-rocketmq4-client.yaml"
    scenario.write_text(lan_scenario.read_text().rstrip("\n") +
                        "\nclient:\n  slaveReadOnUnreachableMaster: false\n  heartbeatBrokerInterval: 10000\n")
    plan = json.loads(subprocess.run([bin_dir / "mqsim", "plan", scenario], capture_output=True, text=True,
                                     check=True).stdout)
    assert plan["client"]["default"] is False
    assert plan["client"]["slaveReadOnUnreachableMaster"] is False
    assert plan["client"]["serializeType"] == "JSON"
    out = tmp_path / "run"
    code, stdout, stderr = realrun(bin_dir, scenario, "--out", out, "--run-id", os.getpid() % 50000 + 7)
    assert code == 0, stdout + stderr
    # Every perf client, the audit group's included, was started with the section.
    commands = {path.stem: path.read_text() for path in out.glob("*.cmd")}
    clients = [tag for tag in commands if tag.startswith(("producer-", "consumer-"))]
    assert "producer-0" in clients and "consumer-mqsim_audit-0" in clients, sorted(commands)
    for tag in clients:
        assert "--clientConfig" in commands[tag], commands[tag]
        assert "slaveReadOnUnreachableMaster=false" in commands[tag], commands[tag]
        assert "heartbeatBrokerInterval=10000" in commands[tag], commands[tag]
    assert "--clientConfig" not in commands["namesrv-0"]
    real = json.loads((out / "real.json").read_text())
    assert real["figures"]["acknowledged"] > 1000  # mqadmin took the option: the clients ran
    assert real["figures"]["lost"] == 0 and real["passed"]


def test_a_scenario_network_without_namespaces_is_refused(bin_dir, tmp_path):
    scenario = tmp_path / "real-slow-links.yaml"
    scenario.write_text(SLOW_LINKS_SCENARIO)
    code, stdout, stderr = realrun(bin_dir, scenario, "--netns", "off", "--out", tmp_path / "run")
    assert code == 2, stdout + stderr
    assert "latency, jitter, loss and bandwidth are applied in network namespaces" in stderr
    assert not (tmp_path / "run").exists()


def test_latency_loss_and_bandwidth_are_applied_to_real_links(bin_dir, tmp_path):
    out, real = realrun_in_namespaces(bin_dir, tmp_path, SLOW_LINKS_SCENARIO, 10000, "--compare")
    emulation = real["network_emulation"]
    assert emulation["mode"] in ("netem", "relay"), emulation
    assert emulation["qdiscs"], emulation  # every veth end shaped
    # A send is a round trip client -> master -> client, and SYNC_MASTER waits
    # for the slave, whose traffic crosses the slow links too.
    assert real["figures"]["send_latency"]["p50_ms"] >= 2 * LATENCY_MS, real["figures"]["send_latency"]
    assert real["figures"]["lost"] == 0 and real["passed"]
    if emulation["mode"] == "relay":
        relay = emulation["relay"]
        # The slave's HA connection went through the relay, not around it.
        assert any(link.startswith("broker-a-1 -> ") and size > 0 for link, size in relay["link_bytes"].items()), relay
        # 1 % of several thousand chunks drew the loss and waited an RTO.
        assert relay["chunks"] > 2000 and relay["chunks_retransmitted"] > 0, relay
        assert relay["mean_chunk_delay_ms"] >= LATENCY_MS, relay


# One master behind a 1 Mbit/s NIC (125,000 bytes/s each way) offered
# 100 x 4 KiB messages a second (410,000 bytes/s): whatever is acknowledged
# crossed the broker's veth, so the acknowledged rate cannot exceed what the
# NIC carries (the tbf burst, 16 KiB, is four messages).
BANDWIDTH_BYTES_PER_S = 125_000
MESSAGE_BYTES = 4096
NARROW_LINK_SCENARIO = f"""
name: real-narrow-link
duration: 8s
topology: {{preset: single_master}}
broker: {{flushDiskType: ASYNC_FLUSH}}
network: {{bandwidth: 1Mbit/s}}
workload:
  topic: TopicNarrowLink
  producers: {{count: 1, rate: 100/s, message_size: {MESSAGE_BYTES}B}}
  consumer_groups: []
expect:
  corrupted: 0
"""


def test_a_bandwidth_limit_bounds_what_a_real_broker_acknowledges(bin_dir, tmp_path):
    out, real = realrun_in_namespaces(bin_dir, tmp_path, NARROW_LINK_SCENARIO, 20000)
    emulation = real["network_emulation"]
    assert emulation["mode"] in ("netem", "tbf"), emulation  # no relay: the latency is the LAN's
    sends = history_records(out / "producer-0.history", "send_result")
    acked = sorted(r["at"] for r in sends if r["outcome"] == "SEND_OK")
    assert len(acked) > 50, f"only {len(acked)} acknowledged"
    window_s = (acked[-1] - acked[0]) / 1e9
    carried = (len(acked) - 4) * MESSAGE_BYTES / window_s  # less the burst
    assert carried <= 1.1 * BANDWIDTH_BYTES_PER_S, f"{carried:.0f} bytes/s acknowledged through a 1 Mbit/s link"
    # The limit, not the producer, set the pace: well under the offered 100/s.
    assert real["figures"]["throughput_msgs_per_s"] < 50, real["figures"]

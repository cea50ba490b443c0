"""A real run judged by mqsim's own checker: mqnamesrv and two masters as
real processes, `mqadmin perf produce --history` under load, kill -9 of a
master, restart, a consumer (`perf consume --history`) drained to the end;
then `mqsim check` merges the producer's and the consumer's history files
and prints the figures `mqsim run` prints. Nothing acknowledged is lost, and
the test shows the check can fail: the same history with one receipt of an
acknowledged message removed reports exactly that message lost.
"""
import json
import signal

import pytest

from real_cluster import (Cluster, acknowledged_in_history, drain_group, history_records, mqsim_check,  # noqa: F401
                          programs, wait_until)

TOPIC = "TopicChecked"
GROUP = "cg-checked"


def has_history_option(admin):
    import subprocess
    return "--history" in subprocess.run([str(admin.path), "perf", "produce", "-h"], capture_output=True, text=True,
                                         timeout=30).stdout


def without_one_receipt(records, produced):
    """The consumer's records minus the one receipt of an acknowledged
    message (by the producer's records) received exactly once, and that
    message's (producer, seq)."""
    acked = {(r["producer"], r["seq"]) for r in produced if r["type"] == "send_result" and r["outcome"] == "SEND_OK"}
    receipts = {}
    for r in records:
        if r["type"] == "receipt":
            receipts.setdefault((r["producer"], r["seq"]), []).append(r)
    victim = next(name for name in sorted(acked) if len(receipts.get(name, [])) == 1)
    return [r for r in records if r is not receipts[victim][0]], victim


@pytest.mark.parametrize("flush", ["ASYNC_FLUSH"])
def test_kill_9_of_a_master_under_load_judged_by_mqsim_check(programs, tmp_path, bin_dir, flush):
    cluster = Cluster(programs, tmp_path, bin_dir, groups=2, slaves=False, flush=flush)
    admin = cluster.admin
    if not has_history_option(admin):
        pytest.skip("mqadmin perf produce has no --history")
    cluster.create_topic(TOPIC)
    producer_history = tmp_path / "producer-0.history"
    consumer_history = tmp_path / "consumer.history"
    consumer = admin.start(programs, "perf", "consume", "-t", TOPIC, "-g", GROUP, "-p", "false", "--fromFirst",
                           "--history", consumer_history, tag="perf-consume")
    consumer.wait_for("Consumer Started.")
    load = admin.start(programs, "perf", "produce", "-t", TOPIC, "-w", 8, "--duration", 10, "--history",
                       producer_history, "--producer-id", "producer-0", tag="perf-produce")
    wait_until(lambda: acknowledged_in_history(producer_history) > 300, "300 acknowledged sends")
    victim = cluster.brokers[("broker-a", 0)]
    victim.signal(signal.SIGKILL)
    victim.proc.wait(timeout=30)
    acked_at_kill = acknowledged_in_history(producer_history)
    # Sends fail over to broker-b while broker-a is down.
    wait_until(lambda: acknowledged_in_history(producer_history) > acked_at_kill + 200,
               "200 more sends acknowledged while broker-a is down", deadline_s=60)
    cluster.start("broker-a", 0)
    assert load.wait_exit(deadline_s=120) in (0, 1), load.stdout()

    # Drain: the consumer reads everything stored, then stops (SIGINT: it
    # commits its offsets and writes the rest of its history).
    drain_group(admin, GROUP)
    consumer.signal(signal.SIGINT)
    assert consumer.wait_exit() == 0, consumer.stderr()

    report_path = tmp_path / "check.json"
    code, out, err = mqsim_check(bin_dir, producer_history, consumer_history, "--json", report_path)
    print(out)
    assert code == 0, out + err
    report = json.loads(report_path.read_text())
    figures = report["figures"]
    assert report["source"] == "real"
    assert figures["lost"] == 0
    assert figures["acknowledged"] > 500
    assert figures["acknowledged"] == acknowledged_in_history(producer_history)
    assert figures["corrupted"] == 0
    produced = history_records(producer_history)
    assert figures["sent"] == sum(1 for r in produced if r["type"] == "send")
    assert figures["send_latency"]["count"] == sum(1 for r in produced if r["type"] == "send_result")
    assert figures["e2e_latency"]["count"] >= figures["acknowledged"]
    assert report["history"]["producers"] == ["producer-0"]
    assert report["history"]["consumer_groups"] == [GROUP]
    assert report["history"]["receipts_without_send"] == 0
    assert "lost" in out and "acknowledged" in out and "PASSED" in out

    # The check can fail: remove one receipt of an acknowledged message.
    records, victim_name = without_one_receipt(history_records(consumer_history), produced)
    tampered = tmp_path / "consumer-tampered.history"
    tampered.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, out, err = mqsim_check(bin_dir, producer_history, tampered, "--json", tmp_path / "tampered.json")
    assert code == 1, out + err
    tampered_report = json.loads((tmp_path / "tampered.json").read_text())
    assert tampered_report["figures"]["lost"] == 1
    lost = tampered_report["lost_messages"][0]
    assert (lost["producer"], lost["producer_seq"]) == victim_name
    assert f"lost: producer-0 seq {victim_name[1]} " in out and "FAILED" in out


def test_mqsim_check_refuses_a_bad_history_line_with_file_and_line(tmp_path, bin_dir):
    path = tmp_path / "bad.history"
    path.write_text('{"type":"history","format":"mqlab-history","version":1,"clock":"wall_ns"}\n'
                    '{"type":"send","producer":"p","seq":0,"at":5,"body_crc":0}\n'
                    '{"type":"send_result","producer":"p","seq":0,"at":"late","outcome":"SEND_OK"}\n')
    code, out, err = mqsim_check(bin_dir, path)
    assert code == 2
    assert f"{path}:3: send_result record: field 'at' is \"late\"; expected an integer" in err, err

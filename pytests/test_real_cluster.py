"""Real clusters and real faults: mqnamesrv + mqbroker processes on 127.0.0.1
(free ports, temporary stores, stopped by PID at teardown), driven by mqadmin.

- 2 masters + 2 slaves (SYNC_MASTER and ASYNC_MASTER): produce, consume in a
  group with committed offsets, a second consumer run resumes, zero lag;
- kill -9 of a master under load, restart: no acknowledged message is lost
  (SYNC_FLUSH and ASYNC_FLUSH), and the slave serves reads while it is down;
- SIGSTOP/SIGCONT of a master: sends fail over, nothing acknowledged is lost;
- a torn CommitLog tail is truncated at restart and the rest is served;
- garbage, oversized and half frames over TCP: the broker keeps serving.

Acknowledged messages are known from `mqadmin perf produce --ack-log`, which
writes one line per stored send with a unique key.
"""
import re
import signal
import socket
import struct
import time

import pytest

from real_cluster import (Cluster, consumed_messages, has_ack_log_option, lost_report, programs,  # noqa: F401 (fixture)
                          read_ack_log, scaled, wait_until)

TOPIC = "TopicReal"


def perf_produce_summary(out):
    match = re.search(r"Send Status: SEND_OK (\d+)", out)
    assert match, out
    return int(match.group(1))


def consume_total(out):
    match = re.search(r"\[Complete\] Consume Total: (\d+)", out)
    assert match, out
    return int(match.group(1))


def diff_total(out):
    match = re.search(r"Diff Total: (-?\d+)", out)
    assert match, out
    return int(match.group(1))


@pytest.mark.parametrize("role", ["SYNC_MASTER", "ASYNC_MASTER"])
def test_two_masters_two_slaves_produce_consume_resume(programs, tmp_path, bin_dir, role):
    cluster = Cluster(programs, tmp_path, bin_dir, master_role=role)
    admin = cluster.admin
    cluster.create_topic(TOPIC)
    count = 2000
    out = admin("perf", "produce", "-t", TOPIC, "-q", count, "-w", 16, "-s", 128)
    assert perf_produce_summary(out) == count, out

    # Both groups got messages (the producer spreads over every write queue).
    stored = consumed_messages(admin, TOPIC, count + 10)
    assert len(stored) == count
    assert {m["brokerName"] for m in stored} == {"broker-a", "broker-b"}

    group = "GroupReal"
    first = admin("perf", "consume", "-t", TOPIC, "-g", group, "-p", "false", "-q", count, "--fromFirst",
                  "--duration", 60)
    assert consume_total(first) == count, first
    # The consumer committed on shutdown: the same group resumes after them.
    second = admin("perf", "consume", "-t", TOPIC, "-g", group, "-p", "false", "--duration", 3)
    assert consume_total(second) == 0, second
    progress = admin("consumerProgress", "-g", group)
    assert diff_total(progress) == 0, progress


def kill_master_under_load(programs, tmp_path, bin_dir, flush):
    cluster = Cluster(programs, tmp_path, bin_dir, master_role="ASYNC_MASTER", flush=flush, slaveReadEnable="true")
    admin = cluster.admin
    if not has_ack_log_option(admin):
        pytest.skip("mqadmin perf produce has no --ack-log")
    cluster.create_topic(TOPIC)
    # A slave learns a new topic's config only from its master's metadata
    # sync (every 10 s, as RocketMQ's SlaveSynchronize); a slave that missed
    # it answers pulls TOPIC_NOT_EXIST. Wait for it before killing the master.
    slave_port = cluster.keys[("broker-a", 1)]["listenPort"]
    wait_until(lambda: TOPIC.encode() in remoting_call(slave_port, 21, {})[2],  # GET_ALL_TOPIC_CONFIG
               "the slave's copy of the topic config", deadline_s=40, interval_s=0.5)
    ack_log = tmp_path / "acks.log"
    load = admin.start(programs, "perf", "produce", "-t", TOPIC, "-w", 8, "--duration", 8, "--ack-log", ack_log,
                       tag="perf-produce")
    wait_until(lambda: len(read_ack_log(ack_log)) > 300, "300 acknowledged sends")
    victim = cluster.brokers[("broker-a", 0)]
    victim.signal(signal.SIGKILL)
    victim.proc.wait(timeout=30)
    acked_before_kill = len(read_ack_log(ack_log))

    # While the master is down its slave serves reads (slaveReadEnable).
    wait_until(lambda: "MSGID: " in admin.run("consumeMessage", "-t", TOPIC, "-b", "broker-a", "-i", 0, "-c", 5).stdout,
               "a read of broker-a's queue 0 served by its slave", deadline_s=40, interval_s=1)

    assert load.wait_exit(deadline_s=120) in (0, 1), load.stdout()
    cluster.start("broker-a", 0)
    acked = read_ack_log(ack_log)
    assert len(acked) >= acked_before_kill
    stored = consumed_messages(admin, TOPIC, len(acked) * 2 + 1000)
    lost, report = lost_report(acked, stored, cluster)
    assert not lost, report
    return len(acked), len(stored)


@pytest.mark.parametrize("flush", ["SYNC_FLUSH", "ASYNC_FLUSH"])
def test_kill_9_of_a_master_under_load_loses_no_acknowledged_message(programs, tmp_path, bin_dir, flush):
    acked, stored = kill_master_under_load(programs, tmp_path, bin_dir, flush)
    assert acked > 300 and stored >= acked


def test_sigstop_of_a_master_fails_sends_over_and_loses_nothing(programs, tmp_path, bin_dir):
    cluster = Cluster(programs, tmp_path, bin_dir, slaves=False)
    admin = cluster.admin
    if not has_ack_log_option(admin):
        pytest.skip("mqadmin perf produce has no --ack-log")
    cluster.create_topic(TOPIC)
    ack_log = tmp_path / "acks.log"
    # The load must outlast both waits below: under sanitizers (2-3x slower)
    # an unscaled 10 s ended before broker-b alone had acknowledged 200.
    load = admin.start(programs, "perf", "produce", "-t", TOPIC, "-w", 8, "--duration", int(scaled(10)),
                       "--ack-log", ack_log, tag="perf-produce")
    wait_until(lambda: len(read_ack_log(ack_log)) > 200, "200 acknowledged sends")
    paused = cluster.brokers[("broker-a", 0)]
    paused.signal(signal.SIGSTOP)
    try:
        before = len(read_ack_log(ack_log))
        # Sends keep being acknowledged, by broker-b alone.
        wait_until(lambda: sum(1 for v in list(read_ack_log(ack_log).values())[before:] if v[1] == "broker-b") > 200,
                   "200 sends acknowledged by broker-b while broker-a is paused", deadline_s=30)
    finally:
        paused.signal(signal.SIGCONT)
    assert load.wait_exit(deadline_s=120) in (0, 1), load.stdout()
    acked = read_ack_log(ack_log)
    stored = consumed_messages(admin, TOPIC, len(acked) * 2 + 1000)
    lost, report = lost_report(acked, stored, cluster)
    assert not lost, report


def test_a_torn_commitlog_tail_is_truncated_and_the_rest_served(programs, tmp_path, bin_dir):
    cluster = Cluster(programs, tmp_path, bin_dir, groups=1, slaves=False, flush="SYNC_FLUSH")
    admin = cluster.admin
    cluster.create_topic(TOPIC, queues=1)
    bodies = [f"torn-{i:03d}" for i in range(20)]
    for body in bodies:
        assert "SEND_OK" in admin("sendMessage", "-t", TOPIC, "-p", body)
    broker = cluster.brokers[("broker-a", 0)]
    broker.signal(signal.SIGTERM)
    assert broker.wait_exit() == 0, broker.stderr()

    # Flip bytes inside the last record's body (its CRC no longer matches).
    segment = cluster.store("broker-a") / "commitlog" / ("0" * 20)
    data = bytearray(segment.read_bytes())
    at = data.rfind(bodies[-1].encode())
    assert at > 0
    for i in range(at, at + len(bodies[-1])):
        data[i] ^= 0xFF
    segment.write_bytes(bytes(data))
    (cluster.store("broker-a") / "abort").write_text("")  # as after a crash: recovery checks every record

    restarted = cluster.start("broker-a", 0)
    log = restarted.stderr()
    assert "abnormal recovery verified 19 records" in log and "BODYCRC" in log and "truncated everything past it" in log, log
    stored = consumed_messages(admin, TOPIC, 100)
    assert [m["body"] for m in stored] == bodies[:-1]
    # And it still accepts sends after the truncation point.
    assert "SEND_OK" in admin("sendMessage", "-t", TOPIC, "-p", "after-truncation")
    assert [m["body"] for m in consumed_messages(admin, TOPIC, 100)] == bodies[:-1] + ["after-truncation"]


def hostile_inputs():
    header = b'{"code":310,"flag":0,"language":"JAVA","opaque":1,"serializeTypeCurrentRPC":"JSON","version":317}'
    frame = struct.pack(">II", 4 + len(header), len(header)) + header
    return {
        "garbage": b"\x00\x01GET / HTTP/1.1\r\n\r\n" + bytes(range(256)) * 4,
        "oversized length": struct.pack(">I", 0x7FFFFFFF) + b"\x00" * 16,
        "negative header length": struct.pack(">II", 16, 0xFFFFFFF0) + b"\x00" * 12,
        "half frame": frame[: len(frame) // 2],
        "bad json header": struct.pack(">II", 4 + 9, 9) + b"{not json",
    }


def send_and_close(port, payload):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            s.settimeout(5)
            while s.recv(4096):
                pass
        except (ConnectionResetError, BrokenPipeError, socket.timeout):
            pass


def test_bad_input_over_tcp_leaves_broker_and_namesrv_serving(programs, tmp_path, bin_dir):
    cluster = Cluster(programs, tmp_path, bin_dir, groups=1, slaves=False)
    admin = cluster.admin
    cluster.create_topic(TOPIC, queues=1)
    broker_port = cluster.keys[("broker-a", 0)]["listenPort"]
    http_port = broker_port + 2
    for name, payload in hostile_inputs().items():
        for port in (broker_port, cluster.namesrv_port):
            send_and_close(port, payload)
    try:
        send_and_close(http_port, b"\x16\x03\x01garbage\r\n\r\nGET /\x00 HTTP/9\r\n\r\n" + b"A" * 70000)
    except ConnectionRefusedError:
        pass  # no HTTP console in this build
    for program in (cluster.brokers[("broker-a", 0)], cluster.namesrv):
        assert program.proc.poll() is None, program.stderr()
    assert "SEND_OK" in admin("sendMessage", "-t", TOPIC, "-p", "still-serving")
    assert [m["body"] for m in consumed_messages(admin, TOPIC, 10)] == ["still-serving"]


def remoting_call(port, code, ext, body=b"", opaque=7):
    """One RocketMQ remoting request (JSON header) and its response (code, extFields, body)."""
    import json
    header = json.dumps({"code": code, "flag": 0, "language": "JAVA", "opaque": opaque, "version": 317,
                         "serializeTypeCurrentRPC": "JSON", "extFields": ext}).encode()
    frame = struct.pack(">II", 4 + len(header) + len(body), len(header)) + header + body
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(frame)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">I", data[:4])[0]:
            chunk = s.recv(65536)
            assert chunk, "connection closed before the response"
            data += chunk
    header_len = struct.unpack(">I", data[4:8])[0] & 0xFFFFFF
    response = json.loads(data[8:8 + header_len])
    return response["code"], response.get("extFields", {}), data[8 + header_len:]


def test_a_java_client_auto_creates_a_topic_through_the_default_topic_route(programs, tmp_path, bin_dir):
    """What a Java producer does for an unknown topic: the NameServer answers
    TOPIC_NOT_EXIST, the client takes TBW102's route and sends
    SEND_MESSAGE_V2 with defaultTopic TBW102; a broker with
    autoCreateTopicEnable creates the topic and registers it."""
    import json
    cluster = Cluster(programs, tmp_path, bin_dir, groups=1, slaves=False, autoCreateTopicEnable="true")
    code, _, body = remoting_call(cluster.namesrv_port, 105, {"topic": "TBW102"})
    assert code == 0
    # RocketMQ's fastjson writes brokerAddrs keys unquoted ({0:"host:port"}).
    route = json.loads(re.sub(rb'([{,])\s*(-?\d+)\s*:', rb'\1"\2":', body))
    assert route["queueDatas"] and route["brokerDatas"][0]["brokerAddrs"]["0"] == cluster.addr("broker-a")
    code, _, _ = remoting_call(cluster.namesrv_port, 105, {"topic": "AutoTopic"})
    assert code == 17  # TOPIC_NOT_EXIST: the client falls back to TBW102
    ext = {"a": "PG", "b": "AutoTopic", "c": "TBW102", "d": 4, "e": 0, "f": 0, "g": int(time.time() * 1000),
           "h": 0, "i": "", "j": 0, "k": False}
    code, fields, _ = remoting_call(cluster.keys[("broker-a", 0)]["listenPort"], 310, ext, b"auto-created")
    assert code == 0, fields
    assert int(fields["queueOffset"]) == 0
    wait_until(lambda: "broker-a" in cluster.admin.run("topicRoute", "-t", "AutoTopic").stdout,
               "AutoTopic registered with the NameServer")
    assert [m["body"] for m in consumed_messages(cluster.admin, "AutoTopic", 10)] == ["auto-created"]

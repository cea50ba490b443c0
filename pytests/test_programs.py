"""The real programs: mqnamesrv and mqbroker on 127.0.0.1 with free ports and
temporary store directories, stopped by PID.

What is checked: -p prints the effective configuration; an unknown key is a
warning naming key and line; a bad value exits 2 naming key, value and what is
allowed; both programs boot (RocketMQ's boot line); SIGTERM shuts a broker
down cleanly (exit 0, abort file removed); kill -9 leaves the abort file and
the next start logs an abnormal recovery; a SLAVE finds its master through
the NameServer and connects to its HA port.

Waiting for a log line has a generous deadline (a liveness bound, not a
timing assertion): on a loaded machine a boot may take seconds.
"""
import os
import pathlib
import signal
import socket
import subprocess
import time

import pytest

from real_cluster import (REPO, BOOT_DEADLINE_S, broker_keys, port_block, programs, run,  # noqa: F401 (fixture)
                          start_broker, start_namesrv, write_conf)


# ------------------------------------------------------------ configuration


def test_print_config_prints_every_key_and_exits(bin_dir, tmp_path):
    conf = write_conf(tmp_path / "broker.conf", brokerName="broker-x", listenPort=20911,
                      storePathRootDir="store-x", flushDiskType="SYNC_FLUSH")
    result = run(bin_dir, "mqbroker", "-c", str(conf), "-n", "127.0.0.1:19876", "-p", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    printed = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert printed["brokerName"] == "broker-x"
    assert printed["flushDiskType"] == "SYNC_FLUSH"
    assert printed["namesrvAddr"] == "127.0.0.1:19876"  # -n overrides
    assert printed["haListenPort"] == "20912"
    assert printed["httpPort"] == "20913"
    assert printed["storePathRootDir"] == str(tmp_path / "store-x")  # relative to the working directory
    assert printed["storePathCommitLog"] == str(tmp_path / "store-x" / "commitlog")
    assert printed["abortFile"] == str(tmp_path / "store-x" / "abort")
    assert not (tmp_path / "store-x").exists(), "-p must not touch the store"

    # The printed configuration is a valid broker.conf giving the same output.
    again = write_conf(tmp_path / "printed.conf", **printed)
    result2 = run(bin_dir, "mqbroker", "-c", str(again), "-p")
    assert result2.returncode == 0 and result2.stderr == "", result2.stderr
    assert result2.stdout == result.stdout

    namesrv = run(bin_dir, "mqnamesrv", "-p")
    assert namesrv.returncode == 0, namesrv.stderr
    assert "listenPort=9876\n" in namesrv.stdout


def test_every_example_config_prints_without_warnings(bin_dir):
    confs = sorted((REPO / "conf").rglob("*.properties")) + [REPO / "conf" / "broker.conf"]
    assert len(confs) == 11
    for conf in confs:
        result = run(bin_dir, "mqbroker", "-c", str(conf), "-p")
        assert result.returncode == 0 and result.stderr == "", f"{conf}: {result.stderr}"
    result = run(bin_dir, "mqnamesrv", "-c", str(REPO / "conf" / "namesrv.conf"), "-p")
    assert result.returncode == 0 and result.stderr == "", result.stderr


def test_an_unknown_key_is_a_warning_naming_key_and_line(bin_dir, tmp_path):
    conf = tmp_path / "broker.conf"
    conf.write_text("brokerName=broker-a\n# a comment\nflushDiskTyp=SYNC_FLUSH\n")
    result = run(bin_dir, "mqbroker", "-c", str(conf), "-p")
    assert result.returncode == 0, result.stderr
    assert f"warning: {conf}:3: unknown key 'flushDiskTyp' ignored" in result.stderr
    assert "flushDiskType=ASYNC_FLUSH\n" in result.stdout


def test_a_bad_value_exits_2_naming_key_value_and_what_is_allowed(bin_dir, tmp_path):
    conf = tmp_path / "broker.conf"
    conf.write_text("brokerName=broker-a\nbrokerRole=MASTER\nlistenPort=ten\n")
    result = run(bin_dir, "mqbroker", "-c", str(conf))
    assert result.returncode == 2
    assert f"{conf}:2: brokerRole=MASTER: must be one of ASYNC_MASTER, SYNC_MASTER, SLAVE" in result.stderr
    assert f"{conf}:3: listenPort=ten: not an integer" in result.stderr
    assert result.stdout == ""

    missing = run(bin_dir, "mqbroker", "-c", str(tmp_path / "nope.conf"))
    assert missing.returncode == 2 and "nope.conf" in missing.stderr
    usage = run(bin_dir, "mqbroker", "--no-such-flag")
    assert usage.returncode == 2
    bad_namesrv = tmp_path / "namesrv.conf"
    bad_namesrv.write_text("listenPort=0\n")
    result = run(bin_dir, "mqnamesrv", "-c", str(bad_namesrv))
    assert result.returncode == 2 and "listenPort=0: must be an integer in 1..65535" in result.stderr


# ------------------------------------------------------------ running


def test_sigterm_shuts_down_cleanly_and_removes_the_abort_file(programs, tmp_path):
    namesrv, namesrv_port = start_namesrv(programs, tmp_path)
    keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port)
    broker = start_broker(programs, tmp_path, keys, "broker-a")
    abort = pathlib.Path(keys["storePathRootDir"]) / "abort"
    assert abort.exists(), "a running broker has its abort file"
    assert "last exit was clean" in broker.stderr()

    broker.signal(signal.SIGTERM)
    assert broker.wait_exit() == 0, broker.stderr()
    assert not abort.exists()
    assert (pathlib.Path(keys["storePathRootDir"]) / "checkpoint").exists()
    assert "shutdown complete" in broker.stderr()

    namesrv.signal(signal.SIGINT)
    assert namesrv.wait_exit() == 0, namesrv.stderr()


def test_kill_9_leaves_the_abort_file_and_the_restart_recovers(programs, tmp_path):
    _, namesrv_port = start_namesrv(programs, tmp_path)
    keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port, flushDiskType="SYNC_FLUSH")
    broker = start_broker(programs, tmp_path, keys, "first")
    broker.signal(signal.SIGKILL)
    broker.proc.wait()
    abort = pathlib.Path(keys["storePathRootDir"]) / "abort"
    assert abort.exists(), "kill -9 runs no shutdown"

    restarted = start_broker(programs, tmp_path, keys, "second")
    log = restarted.stderr()
    assert f"abort file {abort} found, the last exit was not clean; abnormal recovery" in log
    assert "truncated 0 bytes" in log
    restarted.signal(signal.SIGTERM)
    assert restarted.wait_exit() == 0, restarted.stderr()
    assert not abort.exists()


def test_two_brokers_cannot_share_a_store(programs, tmp_path):
    _, namesrv_port = start_namesrv(programs, tmp_path)
    keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port)
    start_broker(programs, tmp_path, keys, "first")
    second = programs("mqbroker", "-c", str(write_conf(tmp_path / "second.conf", **{**keys, "listenPort": port_block(3)})),
                      tag="second")
    assert second.wait_exit() == 1
    assert "MQ already started" in second.stderr()


def test_a_slave_finds_its_master_through_the_namesrv_and_replicates(programs, tmp_path):
    _, namesrv_port = start_namesrv(programs, tmp_path)
    master_keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port, brokerRole="SYNC_MASTER")
    master = start_broker(programs, tmp_path, master_keys, "master")
    ha_port = master_keys["listenPort"] + 1
    with socket.create_connection(("127.0.0.1", ha_port), timeout=10):
        pass  # the HA port listens (haListenPort = listenPort + 1)
    slave_keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port, brokerRole="SLAVE", brokerId=1)
    slave = start_broker(programs, tmp_path, slave_keys, "slave")
    slave.wait_for(f"slave connected to master 127.0.0.1:{ha_port}", where="stderr")
    master.wait_for("slave connected from", where="stderr")

    for program in (slave, master):
        program.signal(signal.SIGTERM)
        assert program.wait_exit() == 0, program.stderr()


# ------------------------------------------------------------ with mqadmin


@pytest.fixture
def mqadmin(bin_dir):
    path = bin_dir / "mqadmin"
    if not path.exists():
        pytest.skip("mqadmin is not built")

    def call(*args):
        result = subprocess.run([str(path), *map(str, args)], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"mqadmin {args}: {result.stdout}\n{result.stderr}"
        return result.stdout

    return call


def test_sent_messages_survive_kill_9_and_are_consumed_after_recovery(programs, tmp_path, mqadmin):
    _, namesrv_port = start_namesrv(programs, tmp_path)
    namesrv = f"127.0.0.1:{namesrv_port}"
    keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port, flushDiskType="SYNC_FLUSH")
    broker = start_broker(programs, tmp_path, keys, "first")
    mqadmin("updateTopic", "-n", namesrv, "-c", "TestCluster", "-t", "TopicKill")
    bodies = [f"message-{i}" for i in range(5)]
    for body in bodies:
        assert "SEND_OK" in mqadmin("sendMessage", "-n", namesrv, "-t", "TopicKill", "-p", body)
    broker.signal(signal.SIGKILL)
    broker.proc.wait()

    restarted = start_broker(programs, tmp_path, keys, "second")
    assert "abnormal recovery verified 5 records" in restarted.stderr()
    consumed = mqadmin("consumeMessage", "-n", namesrv, "-t", "TopicKill", "-c", 5)
    for body in bodies:
        assert f"BODY: {body}" in consumed
    restarted.signal(signal.SIGTERM)
    assert restarted.wait_exit() == 0, restarted.stderr()


def test_a_slave_holds_the_masters_commitlog_bytes(programs, tmp_path, mqadmin):
    _, namesrv_port = start_namesrv(programs, tmp_path)
    namesrv = f"127.0.0.1:{namesrv_port}"
    master_keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port)
    slave_keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port, brokerRole="SLAVE", brokerId=1)
    master = start_broker(programs, tmp_path, master_keys, "master")
    slave = start_broker(programs, tmp_path, slave_keys, "slave")
    slave.wait_for("slave connected to master", where="stderr")
    mqadmin("updateTopic", "-n", namesrv, "-c", "TestCluster", "-t", "TopicHA")
    for i in range(5):
        assert "SEND_OK" in mqadmin("sendMessage", "-n", namesrv, "-t", "TopicHA", "-p", f"replicated-{i}")

    def commitlog(keys):  # what was written, page cache included
        path = pathlib.Path(keys["storePathRootDir"]) / "commitlog" / ("0" * 20)
        return path.read_bytes().rstrip(b"\0") if path.exists() else b""

    written = commitlog(master_keys)
    assert written.count(b"replicated-") == 5
    deadline = time.monotonic() + BOOT_DEADLINE_S
    while commitlog(slave_keys) != written and time.monotonic() < deadline:
        time.sleep(0.05)
    assert commitlog(slave_keys) == written, slave.stderr()
    for program in (slave, master):
        program.signal(signal.SIGTERM)
        assert program.wait_exit() == 0, program.stderr()

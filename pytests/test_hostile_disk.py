"""Unlucky disks under a real mqbroker (issue 9, section 2, disk half):

- two brokers configured with one store directory: the second is refused by
  {storePathRootDir}/lock, naming the directory and the first one's pid;
- a read-only store directory (a read-only tmpfs mount): start-up fails,
  naming the path;
- consume queue files deleted while the broker was stopped: rebuilt from the
  CommitLog at start, consumers see every message from queue offset 0;
- disk full (a small tmpfs): puts fail with a clear status, nothing
  acknowledged is lost, and puts succeed again once space returns (a tmpfs
  remount with a larger size).

The mount-based cases need root and a working mount(8); without them they
skip with the reason. Acknowledged messages come from `mqadmin perf produce
--ack-log`.
"""
import os
import re
import shutil
import signal
import subprocess
import uuid

import pytest

from real_cluster import (Cluster, broker_keys, consumed_messages, has_ack_log_option, lost_report, port_block,  # noqa: F401
                          programs, read_ack_log, start_namesrv, wait_until, write_conf)

TOPIC = "TopicDisk"


def send_ok(out):
    match = re.search(r"Send Status: SEND_OK (\d+)", out)
    assert match, out
    return int(match.group(1))


@pytest.fixture
def tmpfs(tmp_path):
    """mount(size, read_only=False) -> path of a fresh tmpfs; unmounted at teardown."""
    mounted = []

    def mount(size, read_only=False):
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root")
        path = tmp_path / f"tmpfs-{uuid.uuid4().hex[:8]}"
        path.mkdir()
        options = f"size={size}" + (",ro" if read_only else "")
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "mqlab-test", str(path)],
                                capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
        mounted.append(path)
        return path

    yield mount
    for path in reversed(mounted):
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def remount(path, options):
    result = subprocess.run(["mount", "-o", f"remount,{options}", str(path)], capture_output=True, text=True,
                            timeout=30)
    assert result.returncode == 0, result.stderr


def test_a_second_broker_on_the_same_store_is_refused_naming_dir_and_pid(programs, tmp_path, bin_dir):
    cluster = Cluster(programs, tmp_path, bin_dir, groups=1, slaves=False)
    first = cluster.brokers[("broker-a", 0)]
    store = cluster.store("broker-a")
    keys = dict(cluster.keys[("broker-a", 0)])
    keys.update(brokerName="broker-z", listenPort=port_block(3))
    conf = write_conf(tmp_path / "second.conf", **keys)
    second = programs("mqbroker", "-c", str(conf), tag="second")
    assert second.wait_exit() == 1, second.stderr()
    err = second.stderr()
    assert f"store directory {store} is in use by another broker" in err, err
    assert f"{store}/lock: locked by another process (pid {first.proc.pid})" in err, err
    assert "boot success" not in second.stdout()
    # The first broker never noticed.
    cluster.create_topic(TOPIC, queues=2)
    assert send_ok(cluster.admin("perf", "produce", "-t", TOPIC, "-q", 50, "-w", 2, "-s", 64)) == 50
    # Once the first exits (kill -9 here: the kernel drops its flock), the store is free.
    first.signal(signal.SIGKILL)
    first.proc.wait(timeout=30)
    cluster.start("broker-a", 0)


def test_a_read_only_store_directory_fails_start_naming_the_path(programs, tmp_path, bin_dir, tmpfs):
    read_only = tmpfs("1m", read_only=True)
    namesrv, namesrv_port = start_namesrv(programs, tmp_path)
    keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port, storePathRootDir=read_only)
    conf = write_conf(tmp_path / "ro.conf", **keys)
    broker = programs("mqbroker", "-c", str(conf), tag="ro")
    assert broker.wait_exit() == 1, broker.stderr()
    err = broker.stderr()
    assert f"store directory {read_only} is not writable" in err, err
    assert "Read-only file system" in err, err
    assert os.listdir(read_only) == []


def test_consume_queues_deleted_while_stopped_are_rebuilt_from_the_commitlog(programs, tmp_path, bin_dir):
    # ~70 KiB segments: 2000 small messages span many more than the three
    # segments a clean start re-dispatches.
    cluster = Cluster(programs, tmp_path, bin_dir, groups=1, slaves=False, maxMessageSize=4096,
                      mappedFileSizeCommitLog=4096 + 65536 + 8, mappedFileSizeConsumeQueue=20 * 100)
    cluster.create_topic(TOPIC, queues=4)
    count = 2000
    assert send_ok(cluster.admin("perf", "produce", "-t", TOPIC, "-q", count, "-w", 8, "-s", 128)) == count
    before = consumed_messages(cluster.admin, TOPIC, count + 10)
    assert len(before) == count
    broker = cluster.brokers[("broker-a", 0)]
    broker.signal(signal.SIGTERM)
    assert broker.wait_exit() == 0, broker.stderr()
    store = cluster.store("broker-a")
    assert len(os.listdir(store / "commitlog")) > 3
    shutil.rmtree(store / "consumequeue")

    restarted = cluster.start("broker-a", 0)
    assert "no consume queue entry on disk: rebuilding every queue" in restarted.stderr()
    after = consumed_messages(cluster.admin, TOPIC, count + 10)
    assert len(after) == count

    def by_queue(messages):
        return sorted((int(m["queueId"]), int(m["queueOffset"]), m["keys"]) for m in messages)
    assert by_queue(after) == by_queue(before)
    for queue_id in range(4):
        offsets = sorted(int(m["queueOffset"]) for m in after if int(m["queueId"]) == queue_id)
        assert offsets == list(range(len(offsets))), f"queue {queue_id} has a hole or does not start at 0"


def test_disk_full_refuses_puts_loses_nothing_and_recovers_when_space_returns(programs, tmp_path, bin_dir, tmpfs):
    disk = tmpfs("6m")
    # A 4 MiB segment fits once in 6 MiB; the next cannot be allocated.
    cluster = Cluster(programs, tmp_path, bin_dir, groups=1, slaves=False, flush="SYNC_FLUSH",
                      storePathRootDir=disk / "store", maxMessageSize=1024 * 1024,
                      mappedFileSizeCommitLog=4 * 1024 * 1024, mappedFileSizeConsumeQueue=20 * 1000,
                      maxHashSlotNum=500, maxIndexNum=2000)
    admin = cluster.admin
    if not has_ack_log_option(admin):
        pytest.skip("mqadmin perf produce has no --ack-log")
    cluster.create_topic(TOPIC, queues=4)
    broker = cluster.brokers[("broker-a", 0)]
    full_log = tmp_path / "acks-full.log"
    # 1 KiB bodies: ~3500 fill the segment; produce until the sends fail.
    load = admin.start(programs, "perf", "produce", "-t", TOPIC, "-w", 4, "-s", 1024, "--duration", 15,
                       "--ack-log", full_log, tag="perf-full")
    wait_until(lambda: "No space left on device" in broker.stderr(), "the broker refusing puts: disk full",
               deadline_s=120)
    assert load.wait_exit(deadline_s=120) in (0, 1), load.stdout()
    acked_full = read_ack_log(full_log)
    assert len(acked_full) > 1000, load.stdout()
    assert broker.proc.poll() is None, "the broker keeps running"

    # Space returns: the same mount, twice the size.
    remount(disk, "size=16m")
    again = admin("perf", "produce", "-t", TOPIC, "-q", 200, "-w", 2, "-s", 1024)
    assert send_ok(again) == 200, again

    stored = consumed_messages(admin, TOPIC, len(acked_full) + 10000)
    lost, report = lost_report(acked_full, stored, cluster)
    assert not lost, report
    assert len(stored) >= len(acked_full) + 200
    print(f"\ndisk full: {len(acked_full)} acknowledged before the disk filled, "
          f"{len(stored)} stored after space returned")

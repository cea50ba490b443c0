"""Helpers for tests that run the real programs (mqnamesrv, mqbroker,
mqadmin) on 127.0.0.1 with free ports and temporary store directories.

Every started process is stopped by PID in the fixture's teardown, which
pytest runs even when the test failed: politely first (SIGTERM, so that a
sanitized build's LeakSanitizer and the shutdown path are checked on every
run), by SIGKILL when it does not exit in time. Every wait has a deadline (a
liveness bound, not a timing assertion: on a loaded machine a boot may take
seconds), scaled by MQLAB_TIMEOUT_SCALE.
"""
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import mqrealrun  # noqa: E402 (tools/ is not a package)
from conftest import SANITIZER_EXIT_CODE, sanitizer_report_in  # noqa: E402


def timeout_scale():
    """MQLAB_TIMEOUT_SCALE (default 1): every deadline here is multiplied by
    it. A Debug build under ASan + UBSan (`make sanitize`, which sets it)
    runs the programs several times slower than RelWithDebInfo; the tests'
    deadlines are liveness bounds, so they stretch instead of being skipped."""
    text = os.environ.get("MQLAB_TIMEOUT_SCALE", "1")
    try:
        scale = float(text)
    except ValueError:
        scale = 0
    if not scale >= 1:
        raise pytest.UsageError(f"MQLAB_TIMEOUT_SCALE={text!r}: want a number >= 1 (how much slower this build is)")
    return scale


TIMEOUT_SCALE = timeout_scale()


def scaled(seconds):
    return seconds * TIMEOUT_SCALE


BOOT_DEADLINE_S = scaled(60)
# How long a program may take to shut down after SIGTERM at teardown before
# it is killed; a broker flushes and unregisters, well under a second.
STOP_GRACE_S = scaled(20)


def not_killed_by_a_sanitizer(result):
    """A finished subprocess.run result, failing the test when a sanitizer
    killed the program (gcc's UBSan reports on stderr only: conftest.py)."""
    report = sanitizer_report_in(result.stderr or "")
    if result.returncode == SANITIZER_EXIT_CODE or report is not None:
        pytest.fail(f"{result.args[0]} died of a sanitizer report (exit {result.returncode}):\n"
                    f"{report or (result.stderr or '')[-6000:]}", pytrace=False)
    return result


def port_block(count):
    """A first port p such that p .. p+count-1 are all free on 127.0.0.1
    (the real-run driver's probe, failing the test instead of the run)."""
    try:
        return mqrealrun.free_port_block(count)
    except mqrealrun.RunError as error:
        pytest.fail(str(error))


class Program(mqrealrun.Process):
    """One started program; its stdout and stderr go to files in the test's
    directory. The real-run driver's Process, failing the test where the
    driver would fail its run."""

    def __init__(self, bin_dir, name, args, workdir, tag):
        super().__init__([str(bin_dir / name), *args], workdir, tag)

    def stdout(self):
        return self.text("stdout")

    def stderr(self):
        return self.text("stderr")

    def wait_for(self, text, where="stdout", deadline_s=60):
        try:
            super().wait_for(text, where, scaled(deadline_s))
        except mqrealrun.RunError as error:
            pytest.fail(f"{error}\n--- stdout\n{self.stdout()[-4000:]}")

    def wait_exit(self, deadline_s=60):
        try:
            status = super().wait_exit(scaled(deadline_s))
        except mqrealrun.RunError as error:
            self.proc.kill()
            self.proc.wait()
            pytest.fail(f"{error}:\n--- stderr\n{self.stderr()[-4000:]}")
        if status == SANITIZER_EXIT_CODE:
            pytest.fail(f"{self.tag} died of a sanitizer report (exit {status}):\n"
                        f"{sanitizer_report_in(self.stderr()) or self.stderr()[-4000:]}", pytrace=False)
        return status

    def stop_politely(self):
        """SIGTERM (after SIGCONT, for a paused one), then SIGKILL when it has
        not exited within STOP_GRACE_S. Its exit status is not judged here (a
        test may have broken its store on purpose); a sanitizer report is,
        by conftest.py."""
        if self.proc.poll() is not None:
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            self.stop()


@pytest.fixture
def programs(bin_dir, tmp_path):
    """start(name, *args, tag=None) -> Program; all are killed by PID at teardown."""
    started = []

    def start(name, *args, tag=None):
        program = Program(bin_dir, name, [str(a) for a in args], tmp_path, tag or name)
        started.append(program)
        return program

    yield start
    # Newest first: clients and brokers go before the NameServer they
    # unregister from.
    for program in reversed(started):
        program.stop_politely()


def write_conf(path, **keys):
    path.write_text("".join(f"{k}={v}\n" for k, v in keys.items()))
    return path


def broker_keys(tmp_path, name, port, namesrv_port, **extra):
    keys = {
        "brokerClusterName": "TestCluster",
        "brokerName": name,
        "brokerIP1": "127.0.0.1",
        "listenPort": port,
        "namesrvAddr": f"127.0.0.1:{namesrv_port}",
        "storePathRootDir": tmp_path / "store" / f"{name}-{extra.get('brokerId', 0)}",
        # The smallest segment the default maxMessageSize allows, so a test
        # broker does not reserve 1 GiB of disk.
        "mappedFileSizeCommitLog": 8 * 1024 * 1024,
        # RocketMQ's space rules read the whole partition: on a shared CI
        # disk above diskSpaceCleanForciblyRatio (1 - available/capacity)
        # the broker deletes segments regardless of age, as it should, and
        # a test reading its messages back would see them gone (a CI run on
        # a 99%-full disk lost one group's messages that way). Tests own
        # only their temp store: forced deletion is off and the thresholds
        # go to the top of their ranges.
        "diskMaxUsedSpaceRatio": 95,
        "diskSpaceCleanForciblyRatio": 0.99,
        "diskSpaceWarningLevelRatio": 0.995,
        "cleanFileForciblyEnable": "false",
    }
    keys.update(extra)
    return keys


def run(bin_dir, name, *args, cwd=None):
    return not_killed_by_a_sanitizer(subprocess.run([str(bin_dir / name), *args], capture_output=True, text=True,
                                                    timeout=scaled(60), cwd=cwd))


def start_namesrv(programs, tmp_path, tag="mqnamesrv"):
    port = port_block(3)
    conf = write_conf(tmp_path / f"{tag}.conf", listenPort=port)
    namesrv = programs("mqnamesrv", "-c", str(conf), tag=tag)
    namesrv.wait_for("The Name Server boot success. serializeType=JSON")
    return namesrv, port


def start_broker(programs, tmp_path, keys, tag):
    conf = write_conf(tmp_path / f"{tag}.conf", **keys)
    broker = programs("mqbroker", "-c", str(conf), tag=tag)
    broker.wait_for(f"The broker[{keys['brokerName']}, 127.0.0.1:{keys['listenPort']}] boot success. "
                    f"serializeType=JSON and name server is {keys['namesrvAddr']}")
    return broker


# ------------------------------------------------------------ mqadmin


class MqAdmin:
    """mqadmin against one NameServer; each call has a deadline."""

    def __init__(self, bin_dir, namesrv_addr, workdir):
        self.path = bin_dir / "mqadmin"
        self.namesrv = namesrv_addr
        self.workdir = workdir

    def run(self, *args, deadline_s=120):
        return not_killed_by_a_sanitizer(subprocess.run([str(self.path), *map(str, args), "-n", self.namesrv],
                                                        capture_output=True, text=True, timeout=scaled(deadline_s),
                                                        cwd=self.workdir))

    def __call__(self, *args, deadline_s=120):
        result = self.run(*args, deadline_s=deadline_s)
        assert result.returncode == 0, f"mqadmin {args}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result.stdout

    def start(self, programs, *args, tag):
        """A long-running mqadmin (perf produce) as a Program stopped at teardown."""
        return programs("mqadmin", *map(str, args), "-n", self.namesrv, tag=tag)


def has_ack_log_option(admin):
    return "--ack-log" in not_killed_by_a_sanitizer(subprocess.run([str(admin.path), "perf", "produce", "-h"],
                                                                   capture_output=True, text=True,
                                                                   timeout=scaled(30))).stdout


def read_ack_log(path):
    """{key: (msgId, brokerName, queueId, queueOffset)} from perf produce --ack-log."""
    acked = {}
    if not path.exists():
        return acked
    lines = path.read_text().split("\n")
    # The last piece is "" after a complete line, else the line perf is
    # writing right now (the log is read while perf runs): not yet an ack.
    for line in lines[:-1]:
        msg_id, broker, queue_id, offset, key = line.split(" ")
        acked[key] = (msg_id, broker, int(queue_id), int(offset))
    return acked


class StoredMessages(list):
    """The messages consumeMessage printed, plus its other lines (`notes`:
    "no matched msg", "print msg finished. status=...", a broker the route
    gave no address), which say why a queue was read short."""

    def __init__(self, messages, notes):
        super().__init__(messages)
        self.notes = notes


def consumed_messages(admin, topic, count):
    """Every stored message of the topic (consumeMessage reads each queue from
    its min offset, commits nothing): a StoredMessages of dicts with
    brokerName, queueId, queueOffset, keys, body."""
    out = admin("consumeMessage", "-t", topic, "-c", count)
    messages = []
    notes = []
    for line in out.splitlines():
        if not line.startswith("MSGID: "):
            notes.append(line)
            continue
        fields = line.split(" MessageExt [", 1)[1].split("] BODY: ", 1)
        record = dict(item.split("=", 1) for item in fields[0].split(", "))
        record["body"] = fields[1] if len(fields) > 1 else ""
        messages.append(record)
    return StoredMessages(messages, notes)


def lost_report(acked, stored, cluster=None):
    """The acknowledged keys missing from `stored`, and a message that says
    which brokers and queues acknowledged them and what consumeMessage said
    about its queues: enough to tell a lost write from a short read."""
    keys = {m["keys"] for m in stored}
    lost = sorted(set(acked) - keys, key=int)
    by_queue = {}
    for key in lost:
        _, broker, queue_id, _ = acked[key]
        by_queue[(broker, queue_id)] = by_queue.get((broker, queue_id), 0) + 1
    stored_by_queue = {}
    for m in stored:
        queue = (m["brokerName"], int(m["queueId"]))
        stored_by_queue[queue] = stored_by_queue.get(queue, 0) + 1
    message = (f"{len(lost)} of {len(acked)} acknowledged messages lost, first: {lost[:10]}; "
               f"lost by (broker, queue): {sorted(by_queue.items())}; "
               f"read by (broker, queue): {sorted(stored_by_queue.items())}; "
               f"consumeMessage notes: {getattr(stored, 'notes', [])[:20]}")
    if cluster is not None:
        message += f"; log clues: {cluster.loss_clues()[:20]}"
    return lost, message


def wait_until(predicate, what, deadline_s=60, interval_s=0.2):
    deadline_s = scaled(deadline_s)
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    pytest.fail(f"timed out after {deadline_s} s waiting for {what}")


def require_disk_headroom(path, refuse_above=0.99):
    """Fails at once, saying why, when the partition of `path` is so full
    (1 - available/capacity, the broker's own measure) that a broker would
    refuse puts (diskSpaceWarningLevelRatio 0.995) partway through a test:
    the loss or failed sends that follow would be the disk's, not mqlab's."""
    stat = os.statvfs(path)
    used = 1 - stat.f_bavail / stat.f_blocks
    if used > refuse_above:
        pytest.fail(f"the disk of {path} is {used:.1%} used ({stat.f_bavail * stat.f_frsize >> 20} MiB available): "
                    f"a broker refuses puts above 99.5%; free some space and rerun")


class Cluster:
    """A NameServer and broker groups broker-a, broker-b, ... each with a
    master and (optionally) one slave, all in TestCluster."""

    def __init__(self, programs, tmp_path, bin_dir, groups=2, slaves=True, master_role="ASYNC_MASTER",
                 flush="ASYNC_FLUSH", **extra):
        require_disk_headroom(tmp_path)
        self.programs = programs
        self.tmp_path = tmp_path
        self.namesrv, self.namesrv_port = start_namesrv(programs, tmp_path)
        self.namesrv_addr = f"127.0.0.1:{self.namesrv_port}"
        self.admin = MqAdmin(bin_dir, self.namesrv_addr, tmp_path)
        self.keys = {}  # (brokerName, brokerId) -> broker.conf keys
        self.brokers = {}  # (brokerName, brokerId) -> Program
        self.restarts = 0
        for g in range(groups):
            name = f"broker-{chr(ord('a') + g)}"
            self.keys[(name, 0)] = broker_keys(tmp_path, name, port_block(3), self.namesrv_port,
                                               brokerRole=master_role, flushDiskType=flush, **extra)
            if slaves:
                self.keys[(name, 1)] = broker_keys(tmp_path, name, port_block(3), self.namesrv_port,
                                                   brokerRole="SLAVE", brokerId=1, flushDiskType=flush, **extra)
        for key in self.keys:
            self.start(*key)
        if slaves:
            for (name, broker_id), broker in self.brokers.items():
                if broker_id == 1:
                    broker.wait_for("slave connected to master", where="stderr")

    def start(self, name, broker_id):
        self.restarts += 1
        tag = f"{name}-{broker_id}-run{self.restarts}"
        self.brokers[(name, broker_id)] = start_broker(self.programs, self.tmp_path, self.keys[(name, broker_id)], tag)
        return self.brokers[(name, broker_id)]

    def addr(self, name, broker_id=0):
        return f"127.0.0.1:{self.keys[(name, broker_id)]['listenPort']}"

    def store(self, name, broker_id=0):
        return pathlib.Path(self.keys[(name, broker_id)]["storePathRootDir"])

    def loss_clues(self):
        """Log lines that explain messages missing from a read: the
        NameServer dropping a broker or a topic (a route without a group
        makes its messages unreadable though stored), and brokers deleting
        segments or refusing puts for disk space."""
        words = ("dropping", "removed", "no address of", "deleted expired segment", "diskSpace", "disk full")
        programs = [("mqnamesrv", self.namesrv)] + [(f"{n}-{i}", p) for (n, i), p in sorted(self.brokers.items())]
        return [f"{tag}: {line}" for tag, program in programs for line in program.stderr().splitlines()
                if any(w in line for w in words)]

    def create_topic(self, topic, queues=4):
        out = self.admin("updateTopic", "-c", "TestCluster", "-t", topic, "-r", queues, "-w", queues)
        # The brokers register the topic with the NameServer; wait until the
        # route names every group.
        groups = {name for name, _ in self.keys}
        wait_until(lambda: all(g in self.admin.run("topicRoute", "-t", topic).stdout for g in groups),
                   f"route of {topic} naming {sorted(groups)}")
        return out


# ------------------------------------------------------------ history files (mqadmin perf --history)


def history_records(path):
    """The records of a history file written by mqadmin perf ... --history
    (JSON lines; broker/admin_cli/perf_history.h), as dicts. A file still
    being written may end in a partial line: it is left out."""
    import json
    records = []
    if not path.exists():
        return records
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            break
    return records


def acknowledged_in_history(path):
    return sum(1 for r in history_records(path) if r.get("type") == "send_result" and r.get("outcome") == "SEND_OK")


def mqsim_check(bin_dir, *args, cwd=None):
    """mqsim check ARGS...: (exit code, stdout, stderr)."""
    result = not_killed_by_a_sanitizer(subprocess.run([str(bin_dir / "mqsim"), "check", *map(str, args)],
                                                      capture_output=True, text=True, timeout=scaled(300), cwd=cwd))
    return result.returncode, result.stdout, result.stderr


def drain_group(admin, group, deadline_s=120):
    """Waits until consumerProgress shows group with nothing left to read
    (Diff Total 0: every queue's committed offset at its max)."""
    import re

    def drained():
        out = admin.run("consumerProgress", "-g", group)
        match = re.search(r"Diff Total: (-?\d+)", out.stdout)
        return out.returncode == 0 and match is not None and int(match.group(1)) == 0

    wait_until(drained, f"consumer group {group} drained", deadline_s=deadline_s, interval_s=1)

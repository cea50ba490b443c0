#!/usr/bin/env python3
"""mqrealrun: runs one scenario file on real processes, judged as mqsim judges it.

    tools/mqrealrun.py SCENARIO [--seed N] [--out DIR] [--bin DIR] [--compare] [--netns auto|on|off]

What it does, in the scenario's own terms (the plan comes from `mqsim plan`:
the same loader, machine naming and fault schedule as `mqsim run`):
  1. starts mqnamesrv and every broker of the topology as real processes on
     free ports with temporary store directories (in network namespaces, one
     per broker machine, with --netns; see below), creates the topic;
  2. starts the consumer groups (`mqadmin perf consume --history`) and the
     producers (`mqadmin perf produce --rate --history`); that instant is the
     scenario's time 0;
  3. applies the fault timeline at its times: kill_process = kill -9 (its end
     restarts the broker over the same store), pause_process = SIGSTOP (end:
     SIGCONT), crash_machine of a broker machine = a power cut (brokers run
     with powerLossInjection=true when the schedule has one: SIGUSR2 drops
     every write not fsynced and the process exits; the end restarts it over
     the same store), power_loss_all = that cut for every broker at once;
     with namespaces also partition / isolate_machine (blackhole routes and
     rules inside a broker's namespace; one-way or symmetric);
  4. after the duration heals whatever is still active, waits for the
     producers, starts the audit group (mqsim_audit, from the first offset,
     as mqsim's liveness phase does) and drains every group
     (consumerProgress Diff Total 0) within the scenario's liveness bound;
  5. runs `mqsim check` over every history file plus its own event file
     (faults, broker_down/broker_up) with --scenario and --seed, which prints
     the figure table and writes DIR/real.json, a report of mqsim run's shape;
  6. with --compare also runs `mqsim run` of the same scenario and seed into
     DIR/sim.json and prints the two reports' figures side by side.

The scenario's network, when the file sets one (latency, jitter, loss,
bandwidth), needs namespaces and is applied to every broker's links: with
`tc netem` where the kernel has it; otherwise bandwidth with `tc tbf` and
latency, jitter and loss with tools/delay_relay.py between the clients (and
the other brokers) and each broker (realrun_netns.py says how). Traffic to
and from the NameServer is not delayed.

A fault a real process cannot be given (disk faults, clock skew,
destroy_machine, promote_slave; partitions without namespaces; a power cut
of a NameServer or client machine) is refused before anything starts,
naming the fault. A scenario's client: section reaches the perf clients
as mqadmin's --clientConfig. Exit status: that of mqsim check (0 passed, 1
failed), 2 for a scenario this driver cannot run or a run that broke.
Every process it starts is stopped by PID on the way out, namespaces it
created are deleted.
"""
import argparse
import json
import os
import pathlib
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))
import realrun_netns  # noqa: E402

BOOT_DEADLINE_S = 60
AUDIT_GROUP = "mqsim_audit"  # sim/sim_world.h kAuditGroup
CLUSTER = "RealRunCluster"
LOOPBACK_FAULTS = {"kill_process", "pause_process"}
POWER_FAULTS = {"crash_machine", "power_loss_all"}
EXIT_POWER_CUT = 99  # mqbroker's exit status after a SIGUSR2 power cut (broker/env/posix_env.h)
NETNS_FAULTS = {"partition", "isolate_machine"}


class RunError(Exception):
    pass


def free_port_block(count, host="127.0.0.1"):
    """A first port p such that p .. p+count-1 are all free on host."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind((host, 0))
            first = probe.getsockname()[1]
        if first + count > 65535:
            continue
        sockets = []
        try:
            for port in range(first, first + count):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind((host, port))
                sockets.append(s)
            return first
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RunError("no block of free ports")


class Process:
    """One started program; output to DIR/<tag>.out and .err, its command line to DIR/<tag>.cmd."""

    def __init__(self, argv, workdir, tag):
        self.tag = tag
        self.out_path = workdir / f"{tag}.out"
        self.err_path = workdir / f"{tag}.err"
        (workdir / f"{tag}.cmd").write_text(shlex.join(map(str, argv)) + "\n")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=workdir)
        self.paused = False

    def text(self, where="stdout"):
        return (self.out_path if where == "stdout" else self.err_path).read_text(errors="replace")

    def wait_for(self, needle, where="stdout", deadline_s=BOOT_DEADLINE_S):
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            if needle in self.text(where):
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RunError(f"{self.tag}: no '{needle}' in its {where} (exit {self.proc.poll()}):\n"
                       f"{self.text('stderr')[-2000:]}")

    def signal(self, number):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, number)

    def wait_exit(self, deadline_s):
        try:
            return self.proc.wait(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            raise RunError(f"{self.tag} did not exit within {deadline_s} s")

    def stop(self):
        if self.proc.poll() is None:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)  # a SIGSTOPped process must not outlive the run
            except ProcessLookupError:
                pass
            self.proc.kill()
            self.proc.wait()


class EventLog:
    """DIR/driver.history: the run's start and end, faults, broker up/down,
    in the history format (broker/admin_cli/perf_history.h)."""

    def __init__(self, path):
        self.file = open(path, "w")
        self.write({"type": "history", "format": "mqlab-history", "version": 1, "process": "mqrealrun",
                    "role": "driver", "clock": "wall_ns"})

    def write(self, record):
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()

    def event(self, what, target="", detail="", fault_index=-1, at=None):
        self.write({"type": "event", "at": at if at is not None else time.time_ns(), "what": what, "target": target,
                    "detail": detail, "fault_index": fault_index})

    def close(self):
        self.file.close()


class RealRun:
    def __init__(self, args, plan, workdir):
        self.args = args
        self.plan = plan
        self.bin = pathlib.Path(args.bin).resolve()
        self.workdir = workdir
        self.processes = []
        self.brokers = {}  # process name -> Process
        self.broker_keys = {}  # process name -> broker.conf keys
        self.broker_group = {}  # process name -> broker group
        self.restarts = 0
        self.events = EventLog(workdir / "driver.history")
        self.netns = None  # realrun_netns.Network when namespaces are in use
        self.host = "127.0.0.1"
        self.relay = None  # tools/delay_relay.py's Process in relay mode
        self.emulation = {"mode": "none"}  # what carried out the scenario's network (into real.json)
        self.power_loss = any(f["kind"] in POWER_FAULTS for f in plan["faults"])

    # ------------------------------------------------------------ processes

    def start(self, name, args, tag, netns=None):
        argv = [str(self.bin / name), *map(str, args)]
        if netns is not None:
            argv = ["ip", "netns", "exec", netns, *argv]
        process = Process(argv, self.workdir, tag)
        self.processes.append(process)
        return process

    def mqadmin(self, *args, deadline_s=120):
        result = subprocess.run([str(self.bin / "mqadmin"), *map(str, args), "-n", self.namesrv_addr],
                                capture_output=True, text=True, timeout=deadline_s, cwd=self.workdir)
        return result

    def start_namesrv(self):
        port = free_port_block(3, self.host)
        conf = self.workdir / "namesrv.conf"
        conf.write_text(f"listenPort={port}\n")
        self.namesrv_addr = f"{self.host}:{port}"
        self.namesrv = self.start("mqnamesrv", ["-c", conf], "namesrv-0")
        self.namesrv.wait_for("The Name Server boot success")

    def broker_conf(self, machine):
        name = machine["name"]
        ip = self.netns.service_address_of(name) if self.netns else self.host
        port = free_port_block(3, "127.0.0.1" if self.netns else self.host)
        keys = dict(self.plan["broker_conf"])
        keys.update({
            "brokerClusterName": CLUSTER,
            "brokerName": machine["broker_group"],
            "brokerId": machine["broker_id"],
            "brokerIP1": ip,
            "listenPort": port,
            "namesrvAddr": self.namesrv_addr,
            "storePathRootDir": self.workdir / "store" / name,
            # Small segments: a test host has no GiB to spare per broker.
            "mappedFileSizeCommitLog": 8 * 1024 * 1024,
            # The space rules read the whole (shared) partition: raise them so a
            # full CI disk does not delete this run's messages.
            "diskMaxUsedSpaceRatio": 95,
            "diskSpaceCleanForciblyRatio": 0.99,
            "diskSpaceWarningLevelRatio": 0.995,
        })
        if machine["broker_id"] > 0:
            keys["brokerRole"] = "SLAVE"
        if self.power_loss:
            # Files through the fault-injecting layer: SIGUSR2 is a power cut.
            keys["powerLossInjection"] = "true"
        return keys

    def start_broker(self, name):
        keys = self.broker_keys[name]
        self.restarts += 1
        tag = f"{name}-run{self.restarts}"
        conf = self.workdir / f"{tag}.conf"
        conf.write_text("".join(f"{k}={v}\n" for k, v in keys.items()))
        broker = self.start("mqbroker", ["-c", conf], tag, netns=self.netns.namespace_of(name) if self.netns else None)
        self.brokers[name] = broker
        broker.wait_for(f"The broker[{keys['brokerName']}, {keys['brokerIP1']}:{keys['listenPort']}] boot success")
        self.events.event("process_start", name)
        self.events.event("broker_up", self.broker_group[name], name)
        return broker

    def start_cluster(self):
        brokers = [m for m in self.plan["machines"] if m["role"] == "broker"]
        if self.args.netns != "off":
            self.netns = realrun_netns.try_network(self.args.run_id, [m["name"] for m in brokers],
                                                   required=self.args.netns == "on")
            if self.netns is not None:
                self.host = self.netns.host_address
                self.shape_network()
        self.start_namesrv()
        for machine in brokers:
            self.broker_group[machine["name"]] = machine["broker_group"]
            self.broker_keys[machine["name"]] = self.broker_conf(machine)
        if self.emulation["mode"] == "relay":
            self.start_relay()
        for machine in brokers:
            self.start_broker(machine["name"])
        workload = self.plan["workload"]
        queues = workload["queues_per_broker"]
        result = self.mqadmin("updateTopic", "-c", CLUSTER, "-t", workload["topic"], "-r", queues, "-w", queues)
        if result.returncode != 0:
            raise RunError(f"updateTopic failed: {result.stdout}{result.stderr}")
        groups = {m["broker_group"] for m in brokers}
        self.wait_until(lambda: all(g in self.mqadmin("topicRoute", "-t", workload["topic"]).stdout for g in groups),
                        f"the route of {workload['topic']} naming every broker group", 60)

    # ------------------------------------------------------------ network

    def shape_network(self):
        """The scenario's links on the brokers' veths (netem, or tbf + relay)."""
        network = self.plan["network"]
        if network["default"]:
            return  # the LAN the file left alone: the real one is used as it is
        latency, jitter, loss = network["latency_ms"], network["jitter_ms"], network["loss_probability"]
        bandwidth = network["bandwidth_bytes_per_sec"]
        rate = f"{bandwidth * 8}bit"
        self.emulation = {"latency_ms": latency, "jitter_ms": jitter, "loss_probability": loss,
                          "bandwidth_bytes_per_sec": bandwidth}
        if self.netns.netem_available():
            # netem's jitter is symmetric around the mean and its loss a real
            # drop (TCP retransmits it); SimNet's is an exponential tail and a delay.
            args = ["netem", "delay", f"{latency + jitter}ms", f"{jitter}ms", "loss", f"{100 * loss}%", "rate", rate]
            self.netns.shape(args)
            self.emulation.update(mode="netem", qdiscs=self.netns.qdiscs)
            return
        if bandwidth < network["default_bandwidth_bytes_per_sec"]:
            # burst: 10 ms of traffic, at least 16 KiB (tbf segments a larger
            # GSO packet itself); the queue holds half a second before it drops.
            burst = max(16 * 1024, bandwidth // 100)
            self.netns.shape(["tbf", "rate", rate, "burst", burst, "latency", "500ms"])
        delays = (latency, jitter, loss) != (0.25, 0.05, 0.0)  # sim/scenario.h NetworkSpec's LAN
        if delays and any(f["kind"] in NETNS_FAULTS for f in self.plan["faults"]):
            raise RunError("partitions and delayed links together need netem: the relay would carry "
                           "traffic around the blackhole routes")
        self.emulation.update(mode="relay" if delays else "tbf", qdiscs=self.netns.qdiscs)
        if delays:
            self.netns.enable_relay()

    def start_relay(self):
        """delay_relay.py on every broker's service address, listen and HA port."""
        network = self.plan["network"]
        argv = [sys.executable, str(REPO / "tools" / "delay_relay.py"), "--upstream-netns",
                self.netns.relay_namespace_path(), "--latency-ms", network["latency_ms"], "--jitter-ms",
                network["jitter_ms"], "--loss", network["loss_probability"], "--rto-ms",
                network["retransmission_timeout_ms"], "--seed", self.plan["seed"], "--stats",
                self.workdir / "relay.json"]
        for name, keys in self.broker_keys.items():
            for port in (keys["listenPort"], keys["listenPort"] + 1):  # haListenPort: listenPort + 1
                argv += ["--map", f"{keys['brokerIP1']}:{port}={keys['brokerIP1']}:{port}"]
            argv += ["--upstream-name", f"{keys['brokerIP1']}={name}"]
        for address, machine in self.netns.relay_peers().items():
            argv += ["--peer", f"{address}={machine}"]
        self.relay = Process([str(a) for a in argv], self.workdir, "relay")
        self.relay.wait_for("relay ready")

    def stop_relay(self):
        if self.relay is None or self.relay.proc.poll() is not None:
            return
        self.relay.signal(signal.SIGTERM)  # it writes relay.json on the way out
        try:
            self.relay.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.relay.stop()
        stats = self.workdir / "relay.json"
        if stats.exists():
            self.emulation["relay"] = json.loads(stats.read_text())

    # ------------------------------------------------------------ workload

    def client_config_args(self):
        """The scenario's client: section as mqadmin's --clientConfig (none at the defaults)."""
        client = self.plan["client"]
        if client["default"]:
            return []
        settings = ";".join(f"{key}={str(value).lower() if isinstance(value, bool) else value}"
                            for key, value in client.items() if key != "default")
        return ["--clientConfig", settings]

    def start_consumer(self, group, index):
        history = self.workdir / f"consumer-{group}-{index}.history"
        consumer = self.start("mqadmin", ["perf", "consume", "-t", self.plan["workload"]["topic"], "-g", group, "-p",
                                          "false", "--fromFirst", "--history", history, "-n", self.namesrv_addr,
                                          *self.client_config_args()],
                              f"consumer-{group}-{index}")
        consumer.wait_for("Consumer Started.")
        return consumer

    def start_workload(self):
        workload = self.plan["workload"]
        self.consumers = {}
        for group in workload["consumer_groups"]:
            self.consumers[group["name"]] = [self.start_consumer(group["name"], i) for i in range(group["consumers"])]
        producers = workload["producers"]
        duration = max(1, int(round(self.plan["duration_s"])))
        rate = max(1, int(round(producers["rate_per_sec"])))
        self.run_start = time.time_ns()
        self.started_monotonic = time.monotonic()
        self.events.event("run_start", at=self.run_start)
        self.producers = []
        for i in range(producers["count"]):
            self.producers.append(self.start(
                "mqadmin", ["perf", "produce", "-t", workload["topic"], "-w", producers.get("max_in_flight", 16),
                            "-s", producers["message_size_bytes"],
                            "--rate", rate, "--duration", duration, "--history",
                            self.workdir / f"producer-{i}.history", "--producer-id", f"producer-{i}",
                            "-n", self.namesrv_addr, *self.client_config_args()],
                f"producer-{i}"))

    # ------------------------------------------------------------ faults

    def apply(self, index, start):
        fault = self.plan["faults"][index]
        kind, target = fault["kind"], fault["target"]
        self.events.event("fault_start" if start else "fault_end", target, fault["describe"], index)
        if kind == "kill_process":
            if start:
                self.brokers[target].signal(signal.SIGKILL)
                self.brokers[target].proc.wait()
                self.events.event("process_stop", target, "kill -9")
                self.events.event("broker_down", self.broker_group[target], target)
            else:
                self.start_broker(target)
        elif kind == "pause_process":
            broker = self.brokers[target]
            broker.signal(signal.SIGSTOP if start else signal.SIGCONT)
            broker.paused = start
            self.events.event("broker_down" if start else "broker_up", self.broker_group[target], target)
        elif kind in POWER_FAULTS:
            targets = [target] if kind == "crash_machine" else sorted(self.brokers)
            for name in targets:
                if start:
                    self.power_cut(name)
                else:
                    self.start_broker(name)
        elif kind in NETNS_FAULTS:
            if start:
                self.netns.partition(fault)
            else:
                self.netns.heal(fault)
        else:
            raise RunError(f"fault {fault['describe']}: not applicable to real processes")
        print(f"[{self.elapsed():7.2f} s] {'start' if start else 'end  '} {fault['describe']}", flush=True)

    def power_cut(self, name):
        broker = self.brokers[name]
        if broker.proc.poll() is None:
            if broker.paused:
                broker.signal(signal.SIGCONT)  # a stopped process takes no signal handler
                broker.paused = False
            broker.signal(signal.SIGUSR2)
            code = broker.wait_exit(deadline_s=30)
            if code != EXIT_POWER_CUT:
                raise RunError(f"{broker.tag}: exit {code} after SIGUSR2, not the power cut's {EXIT_POWER_CUT}:\n"
                               f"{broker.text('stderr')[-2000:]}")
        self.events.event("process_stop", name, "power cut")
        self.events.event("broker_down", self.broker_group[name], name)

    def elapsed(self):
        return time.monotonic() - self.started_monotonic

    def run_faults(self):
        active = set()
        for action in self.plan["timeline"]:
            if action["at_s"] >= self.plan["duration_s"]:
                break
            self.sleep_until(action["at_s"])
            self.apply(action["fault_index"], action["start"])
            (active.add if action["start"] else active.discard)(action["fault_index"])
        self.sleep_until(self.plan["duration_s"])
        for index in sorted(active):  # the end-of-run healing
            self.apply(index, start=False)

    def sleep_until(self, at_s):
        while (left := at_s - self.elapsed()) > 0:
            time.sleep(min(left, 0.05))

    # ------------------------------------------------------------ the end

    def wait_until(self, predicate, what, deadline_s):
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.5)
        raise RunError(f"timed out after {deadline_s} s waiting for {what}")

    def diff_total(self, group):
        import re
        out = self.mqadmin("consumerProgress", "-g", group)
        match = re.search(r"Diff Total: (-?\d+)", out.stdout)
        return int(match.group(1)) if out.returncode == 0 and match else None

    def drain(self):
        for producer in self.producers:
            producer.wait_exit(deadline_s=120)
        self.consumers[AUDIT_GROUP] = [self.start_consumer(AUDIT_GROUP, 0)]
        bound = self.plan["liveness_bound_s"]
        deadline = time.monotonic() + bound
        self.converged = True
        for group, consumers in self.consumers.items():
            while time.monotonic() < deadline and self.diff_total(group) != 0:
                time.sleep(1)
            if self.diff_total(group) != 0:
                self.converged = False
                print(f"mqrealrun: group {group} not drained {bound:.0f} s after healing", file=sys.stderr)
            for consumer in consumers:
                consumer.signal(signal.SIGINT)
            for consumer in consumers:
                consumer.wait_exit(deadline_s=60)
        self.events.event("run_end")

    def stop_all(self):
        self.stop_relay()
        for process in reversed(self.processes):
            process.stop()
        self.events.close()
        if self.netns is not None:
            self.netns.delete()


# ------------------------------------------------------------ plan, check, compare


def mqsim(bin_dir, *args):
    return subprocess.run([str(pathlib.Path(bin_dir) / "mqsim"), *map(str, args)], capture_output=True, text=True,
                          timeout=3600)


def refuse_unsupported(plan, netns_mode):
    problems = []
    for fault in plan["faults"]:
        kind = fault["kind"]
        if kind in LOOPBACK_FAULTS:
            if not fault["target"].startswith("broker-"):
                problems.append(f"{fault['describe']}: only broker processes are killed or paused on real runs")
            continue
        if kind in NETNS_FAULTS:
            if netns_mode == "off":
                problems.append(f"{fault['describe']}: a partition needs network namespaces (--netns auto|on, root)")
            continue
        if kind in POWER_FAULTS:
            if kind == "crash_machine" and not fault["target"].startswith("broker-"):
                problems.append(f"{fault['describe']}: only broker machines lose power on real runs (the "
                                "fault-injecting file layer is mqbroker's)")
            continue
        problems.append(f"{fault['describe']}: {kind} cannot be applied to real processes (disk faults, "
                        "destroy_machine, clock skew and promote_slave are not wired)")
    if not plan["network"]["default"] and netns_mode == "off":
        problems.append("network: latency, jitter, loss and bandwidth are applied in network namespaces "
                        "(--netns auto|on, root)")
    return problems


FIGURES = [("sent", "sent"), ("acknowledged", "acknowledged"), ("lost", "lost"), ("unknown", "unknown"),
           ("failed", "failed"), ("duplicates", "duplicates"),
           ("  redelivered", "duplicates_by_cause.redelivered"),  # the same stored copy read again
           ("  retried", "duplicates_by_cause.retried"),  # the handler asked to reconsume
           ("  stored twice", "duplicates_by_cause.stored_twice"),  # another copy (a send retried)
           ("reordered", "reordered"),
           ("corrupted", "corrupted"), ("expired by retention", "expired_by_retention"),
           ("unavailable write s", "unavailable_write_s"),
           ("unavailable read s", "unavailable_read_s"), ("send p50 ms", "send_latency.p50_ms"),
           ("send p99 ms", "send_latency.p99_ms"), ("send p999 ms", "send_latency.p999_ms"),
           ("e2e p99 ms", "e2e_latency.p99_ms"), ("throughput msgs/s", "throughput_msgs_per_s")]


def figure(report, path):
    """A figure by dotted path; "-" when the report predates it."""
    value = report["figures"]
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return "-"
        value = value[part]
    return value


def side_by_side(sim_report, real_report):
    width = max(len(label) for label, _ in FIGURES)
    lines = [f"{'figure':<{width}} {'mqsim run':>12} {'real run':>12}"]
    for label, path in FIGURES:
        a, b = figure(sim_report, path), figure(real_report, path)
        fmt = lambda v: f"{v:>12.2f}" if isinstance(v, float) else f"{v:>12}"  # noqa: E731
        lines.append(f"{label:<{width}} {fmt(a)} {fmt(b)}")
    lines.append(f"{'passed':<{width}} {str(sim_report['passed']):>12} {str(real_report['passed']):>12}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--out", help="directory for histories, logs and reports (default: a temporary one)")
    parser.add_argument("--bin", default=str(pathlib.Path(os.environ.get("MQLAB_BUILD_DIR", REPO / "build")) / "bin"))
    parser.add_argument("--compare", action="store_true", help="also run mqsim run and print both summaries")
    parser.add_argument("--netns", choices=["auto", "on", "off"], default="auto",
                        help="put each broker machine in a network namespace (auto: when the scenario needs it)")
    parser.add_argument("--run-id", default=str(os.getpid()), help="namespace names: mqlab-<run-id>-...")
    args = parser.parse_args(argv)

    plan_args = ["plan", args.scenario] + (["--seed", args.seed] if args.seed is not None else [])
    planned = mqsim(args.bin, *plan_args)
    if planned.returncode != 0:
        print(planned.stderr, end="", file=sys.stderr)
        return 2
    plan = json.loads(planned.stdout)
    if "network" not in plan:
        print("mqrealrun: this mqsim's plan has no network settings (an older build): links used as they are",
              file=sys.stderr)
        plan["network"] = {"default": True}
    seed = plan["seed"]
    needs_netns = any(f["kind"] in NETNS_FAULTS for f in plan["faults"]) or not plan["network"]["default"]
    if args.netns == "auto":
        args.netns = "on" if needs_netns else "off"  # a partition cannot be carried out without them
    problems = refuse_unsupported(plan, args.netns)
    if problems:
        print("mqrealrun: cannot run this scenario on real processes:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 2

    workdir = pathlib.Path(args.out) if args.out else pathlib.Path(tempfile.mkdtemp(prefix="mqrealrun-"))
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"mqrealrun: {plan['scenario']} seed {seed} on real processes, in {workdir}", flush=True)
    run = RealRun(args, plan, workdir)
    previous = signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        run.start_cluster()
        run.start_workload()
        run.run_faults()
        run.drain()
    except (RunError, KeyboardInterrupt, OSError, realrun_netns.NetnsError) as error:
        print(f"mqrealrun: {error}", file=sys.stderr)
        return 2
    finally:
        run.stop_all()
        signal.signal(signal.SIGTERM, previous)

    histories = sorted(str(p) for p in workdir.glob("*.history"))
    real_json = workdir / "real.json"
    checked = mqsim(args.bin, "check", *histories, "--scenario", args.scenario, "--seed", seed, "--json", real_json)
    print(checked.stdout, end="")
    print(checked.stderr, end="", file=sys.stderr)
    if checked.returncode not in (0, 1):
        return 2
    real_report = json.loads(real_json.read_text())
    real_report["converged"] = run.converged
    real_report["network_emulation"] = run.emulation
    real_json.write_text(json.dumps(real_report, indent=2) + "\n")
    if args.compare:
        sim_json = workdir / "sim.json"
        simulated = mqsim(args.bin, "run", args.scenario, "--seed", seed, "--json", sim_json, "--quiet")
        if simulated.returncode not in (0, 1):
            print(simulated.stdout + simulated.stderr, file=sys.stderr)
            return 2
        print(side_by_side(json.loads(sim_json.read_text()), real_report))
    print(f"reports: {real_json}" + (f", {workdir / 'sim.json'}" if args.compare else ""))
    return checked.returncode if run.converged else 1


if __name__ == "__main__":
    sys.exit(main())

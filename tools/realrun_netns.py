"""Network namespaces for mqrealrun: each broker machine of a scenario is a
"host" of its own (faults/ names machines; here a machine is a namespace).

Layout, all named with the run's prefix so nothing else is touched:
  bridge  mq<id>br in the root namespace, address 10.213.<k>.1/24; the
          NameServer, producers and consumers run in the root namespace and
          reach the brokers through it (they are the "rest" of a partition);
  broker machine N: namespace mqlab-<id>-b<N>, a veth pair mq<id>v<N> (root
          side, on the bridge) / eth0 (inside), address 10.213.<k>.<10+N>.

Faults, applied inside the namespaces (with ip alone: this host has no
iptables or nft, and no tc action modules):
  x cannot send to y     a blackhole route to y's address in x's namespace;
  x cannot hear from y   a policy rule in x's namespace sending packets from
                         y's address (arriving on eth0) to a blackhole, when
                         y has no namespace of its own;
  a partition of side_a from side_b cuts a->b (and b->a unless one_way);
  isolate_machine cuts the machine from every other address both ways.
Dropping rather than rejecting is what a real partition looks like to TCP:
connections stall until their timeouts, as SimNet models.

The scenario's network (latency, jitter, loss, bandwidth), see shape():
  netem   where the kernel has it: `tc qdisc netem` on both ends of every
          broker's veth, all four settings, nothing else changes;
  tbf     otherwise the bandwidth: `tc qdisc tbf` on both ends of every
          broker's veth (a broker's NIC, each direction);
  relay   otherwise latency, jitter and loss: tools/delay_relay.py. Each
          broker N gets a service address 10.214.<k>.<10+N> (brokerIP1, so
          NameServer routes and HA addresses name it) that exists twice: on
          lo inside its namespace, where the broker binds it, and on the
          bridge in the root namespace, where the relay binds the same
          IP:port. Clients (root namespace) and other brokers (routed to
          10.214.<k>.0/24 via the bridge) reach the relay; the relay's
          upstream connections are made from a namespace of their own
          (mqlab-<id>-relay, 10.213.<k>.250, routing each service address
          via its broker's eth0), so they still cross the broker's veth and
          its tbf.

try_network() returns None (with the reason on stderr) when namespaces
cannot be created (no privilege) unless required; delete() removes every
namespace, veth and the bridge it created, also after a failure.
"""
import subprocess
import sys


class NetnsError(Exception):
    pass


def sh(*argv, netns=None, check=True):
    command = (["ip", "netns", "exec", netns] if netns else []) + [str(a) for a in argv]
    result = subprocess.run(command, capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise NetnsError(f"{' '.join(command)}: {result.stderr.strip() or result.stdout.strip()}")
    return result


class Network:
    def __init__(self, run_id, machines):
        self.id = str(int(run_id) % 100000)
        self.subnet = 1 + int(run_id) % 250
        self.prefix = f"mqlab-{self.id}-"
        self.bridge = f"mq{self.id}br"
        self.host_address = f"10.213.{self.subnet}.1"
        self.machines = list(machines)
        self.created_namespaces = []
        self.created_links = []
        self.applied = {}  # fault index -> list of undo commands (argv, netns)
        self.relay_namespace = None  # set by enable_relay()
        self.qdiscs = []  # what shape() applied: "<namespace or root> <dev>: <qdisc>"

    def namespace_of(self, machine):
        return f"{self.prefix}b{self.machines.index(machine)}"

    def service_address_of(self, machine):
        """The address machine's broker binds and advertises (brokerIP1)."""
        if self.relay_namespace is None:
            return self.address_of(machine)
        return f"10.214.{self.subnet}.{10 + self.machines.index(machine)}"

    def relay_peers(self):
        """Source address -> machine name, for the relay's per-link wires. A
        connection from the root namespace to a local service address comes
        from that address: those are the clients'."""
        peers = {self.service_address_of(m): "clients" for m in self.machines}
        peers[self.host_address] = "clients"
        peers.update({self.address_of(m): m for m in self.machines})
        return peers

    def address_of(self, machine):
        if machine in self.machines:
            return f"10.213.{self.subnet}.{10 + self.machines.index(machine)}"
        return self.host_address  # namesrv and client machines live in the root namespace

    def create(self):
        sh("ip", "link", "add", self.bridge, "type", "bridge")
        self.created_links.append(self.bridge)
        sh("ip", "addr", "add", f"{self.host_address}/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for index, machine in enumerate(self.machines):
            self.add_bridged_namespace(self.namespace_of(machine), f"mq{self.id}v{index}", f"mq{self.id}i{index}",
                                       self.address_of(machine))

    def add_bridged_namespace(self, namespace, outside, inside, address):
        """A namespace whose eth0 (the veth end `inside`, renamed) holds
        address/24 and whose other end `outside` is on the bridge."""
        sh("ip", "netns", "add", namespace)
        self.created_namespaces.append(namespace)
        sh("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
        self.created_links.append(outside)
        sh("ip", "link", "set", inside, "netns", namespace)
        sh("ip", "link", "set", outside, "master", self.bridge)
        sh("ip", "link", "set", outside, "up")
        sh("ip", "link", "set", inside, "name", "eth0", netns=namespace)
        sh("ip", "addr", "add", f"{address}/24", "dev", "eth0", netns=namespace)
        sh("ip", "link", "set", "eth0", "up", netns=namespace)
        sh("ip", "link", "set", "lo", "up", netns=namespace)

    def veth_ends(self):
        """(namespace or None, device) of both ends of every broker's veth."""
        for index, machine in enumerate(self.machines):
            yield None, f"mq{self.id}v{index}"
            yield self.namespace_of(machine), "eth0"

    def netem_available(self):
        """Whether this kernel has the netem qdisc (probed on a veth of ours)."""
        namespace, device = next(self.veth_ends())
        probe = sh("tc", "qdisc", "add", "dev", device, "root", "netem", "delay", "1ms", netns=namespace, check=False)
        if probe.returncode != 0:
            return False
        sh("tc", "qdisc", "del", "dev", device, "root", netns=namespace, check=False)
        return True

    def shape(self, qdisc_args):
        """The same root qdisc on both ends of every broker's veth."""
        for namespace, device in self.veth_ends():
            sh("tc", "qdisc", "replace", "dev", device, "root", *qdisc_args, netns=namespace)
            self.qdiscs.append(f"{namespace or 'root'} {device}: {' '.join(map(str, qdisc_args))}")

    def enable_relay(self):
        """Service addresses and the relay's upstream namespace (see the top)."""
        namespace = f"{self.prefix}relay"
        self.add_bridged_namespace(namespace, f"mq{self.id}o", f"mq{self.id}p", f"10.213.{self.subnet}.250")
        self.relay_namespace = namespace
        for machine in self.machines:
            service = self.service_address_of(machine)
            sh("ip", "addr", "add", f"{service}/32", "dev", self.bridge)
            sh("ip", "addr", "add", f"{service}/32", "dev", "lo", netns=self.namespace_of(machine))
            sh("ip", "route", "add", f"10.214.{self.subnet}.0/24", "via", self.host_address,
               netns=self.namespace_of(machine))
            # Via the eth0 address: an ARP for the service address itself would
            # be answered by the root namespace too (it holds it on the bridge).
            sh("ip", "route", "add", f"{service}/32", "via", self.address_of(machine), netns=namespace)

    def relay_namespace_path(self):
        return f"/run/netns/{self.relay_namespace}"

    def delete(self):
        for namespace in reversed(self.created_namespaces):
            sh("ip", "netns", "delete", namespace, check=False)
        for link in reversed(self.created_links):
            sh("ip", "link", "delete", link, check=False)
        self.created_namespaces.clear()
        self.created_links.clear()

    # ------------------------------------------------------------ faults

    def cut(self, source, destination, undo):
        """Traffic from machine source to machine destination is dropped."""
        if source in self.machines:
            namespace = self.namespace_of(source)
            route = ["ip", "route", "add", "blackhole", f"{self.address_of(destination)}/32"]
            if sh(*route, netns=namespace, check=False).returncode == 0:  # already cut by another fault: keep one
                undo.append((["ip", "route", "del", "blackhole", f"{self.address_of(destination)}/32"], namespace))
        elif destination in self.machines:
            # A policy rule on the input route: packets from source arriving on
            # eth0 find a blackhole (no netfilter or tc actions needed).
            namespace = self.namespace_of(destination)
            rule = ["from", f"{self.address_of(source)}/32", "iif", "eth0", "blackhole"]
            if sh("ip", "rule", "add", *rule, netns=namespace, check=False).returncode == 0:
                undo.append((["ip", "rule", "del", *rule], namespace))
        else:
            print(f"mqrealrun: {source} -> {destination}: both outside namespaces, not cut", file=sys.stderr)

    def partition(self, fault):
        undo = []
        if fault["kind"] == "isolate_machine":
            side_a, side_b, one_way = [fault["target"]], ["rest"], False
        else:
            side_a, side_b, one_way = fault["side_a"], fault["side_b"], fault["one_way"]
        rest = ["namesrv", "client"]  # the root namespace, one address for all of them
        expand = lambda side: [m for m in side if m in self.machines] + (  # noqa: E731
            rest[:1] if any(m not in self.machines for m in side) else [])
        for a in expand(side_a):
            for b in expand(side_b):
                if a == b:
                    continue
                self.cut(a, b, undo)
                if not one_way:
                    self.cut(b, a, undo)
        self.applied[fault["index"]] = undo

    def heal(self, fault):
        for argv, namespace in reversed(self.applied.pop(fault["index"], [])):
            sh(*argv, netns=namespace, check=False)


def try_network(run_id, machines, required):
    network = Network(run_id, machines)
    try:
        network.create()
        return network
    except (NetnsError, OSError) as error:
        network.delete()
        if required:
            raise NetnsError(f"cannot create network namespaces: {error}")
        print(f"mqrealrun: no network namespaces ({error}); running on loopback", file=sys.stderr)
        return None

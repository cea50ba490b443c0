#!/usr/bin/env python3
"""delay_relay: a TCP relay that delays each direction's bytes as SimNet does,
for real runs on a kernel without `tc netem` (a small Toxiproxy).

    tools/delay_relay.py --map LISTEN_IP:PORT=UPSTREAM_IP:PORT ... [--upstream-netns PATH]
                         [--latency-ms L] [--jitter-ms J] [--loss P] [--rto-ms R]
                         [--bandwidth BYTES_PER_S] [--peer IP=NAME ...] [--upstream-name IP=NAME ...]
                         [--stats FILE] [--seed N]

Every chunk the relay reads (one recv(), up to 64 KiB) is held for the one-way
latency: L plus an exponential tail of mean J capped at 10 J, and with
probability P one retransmission timeout R more, as SimNet treats a lost
segment (sim/sim_net.cc send_on_wire: TCP hides a loss as delay). A direction
never reorders: a chunk leaves at max(its own due time, the previous chunk's).
With --bandwidth each directed link (peer machine -> upstream, and back) is a
wire of that many bytes per second shared by its connections, as SimNet's
wire_free_at. A new connection waits one latency before it is passed on (the
SYN's trip).

--upstream-netns: after the listening sockets are bound (in the namespace the
relay starts in), the relay enters that network namespace, so every upstream
connection is made from there: the listener can own an address that is the
broker's own address inside the broker's namespace (see realrun_netns.py).

The relay prints "relay ready" once it listens. On SIGTERM or SIGINT it writes
its counters to --stats as JSON and exits 0.
"""
import argparse
import asyncio
import ctypes
import json
import math
import os
import random
import signal
import sys

CHUNK_BYTES = 64 * 1024
QUEUE_CHUNKS = 256  # per direction: a reader stops when this much is in flight (bounded memory)
JITTER_CAP_IN_MEANS = 10.0  # sim/sim_net.cc kJitterCapInMeans
CLONE_NEWNET = 0x40000000


def enter_netns(path):
    """setns(2) into the network namespace at path (Python 3.11 has no os.setns)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"setns({path}): {os.strerror(error)}")
    finally:
        os.close(fd)


def host_port(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"{text}: want IP:PORT")
    return host, int(port)


class Counters:
    def __init__(self):
        self.connections = 0
        self.refused = 0
        self.chunks = 0
        self.bytes = 0
        self.retransmitted = 0  # chunks that drew the loss: one RTO more
        self.delay_s_total = 0.0  # sum over chunks of (leave - read)
        self.link_bytes = {}  # "from -> to" -> bytes relayed

    def count(self, link, size):
        self.chunks += 1
        self.bytes += size
        key = f"{link[0]} -> {link[1]}"
        self.link_bytes[key] = self.link_bytes.get(key, 0) + size

    def json(self):
        return {"connections": self.connections, "refused": self.refused, "chunks": self.chunks,
                "bytes": self.bytes, "chunks_retransmitted": self.retransmitted,
                "mean_chunk_delay_ms": 1000 * self.delay_s_total / self.chunks if self.chunks else 0.0,
                "link_bytes": dict(sorted(self.link_bytes.items()))}


class Relay:
    def __init__(self, args):
        self.args = args
        self.random = random.Random(args.seed)
        self.counters = Counters()
        self.wire_free_at = {}  # (from, to) -> loop time the link's wire is free again
        self.peers = dict(args.peer)
        self.upstream_names = dict(args.upstream_name)

    def one_way_delay_s(self):
        latency = self.args.latency_ms
        if self.args.jitter_ms > 0:
            # Inverse CDF of the exponential, as SimNet::Core::draw_jitter.
            draw = -self.args.jitter_ms * math.log1p(-self.random.random())
            latency += min(draw, JITTER_CAP_IN_MEANS * self.args.jitter_ms)
        if self.args.loss > 0 and self.random.random() < self.args.loss:
            latency += self.args.rto_ms
            self.counters.retransmitted += 1
        return latency / 1000.0

    def on_wire(self, link, size, now):
        """When the last byte of size bytes read now has left the link's wire."""
        if self.args.bandwidth <= 0:
            return now
        start = max(now, self.wire_free_at.get(link, 0.0))
        self.wire_free_at[link] = start + size / self.args.bandwidth
        return self.wire_free_at[link]

    async def pump(self, reader, writer, link):
        """Copies reader to writer, each chunk held for its delay, in order."""
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue(QUEUE_CHUNKS)

        async def deliver():
            try:
                while True:
                    due, read_at, data = await queue.get()
                    wait = due - loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    if data is None:
                        if writer.can_write_eof():
                            writer.write_eof()
                        return
                    writer.write(data)
                    await writer.drain()
                    self.counters.delay_s_total += loop.time() - read_at
            except (ConnectionError, OSError):
                return

        sender = asyncio.ensure_future(deliver())
        last_due = 0.0
        try:
            while True:
                data = await reader.read(CHUNK_BYTES)
                now = loop.time()
                size = len(data)
                due = max(last_due, self.on_wire(link, max(size, 1), now) + self.one_way_delay_s())
                last_due = due
                if not data:
                    await queue.put((due, now, None))
                    break
                self.counters.count(link, size)
                await queue.put((due, now, data))
        except (ConnectionError, OSError):
            sender.cancel()
        await asyncio.gather(sender, return_exceptions=True)

    async def serve(self, client_reader, client_writer, upstream):
        self.counters.connections += 1
        peer_ip = (client_writer.get_extra_info("peername") or ("?",))[0]
        source = self.peers.get(peer_ip, peer_ip)
        destination = f"{self.upstream_names.get(upstream[0], upstream[0])}:{upstream[1]}"
        await asyncio.sleep(self.one_way_delay_s())  # the SYN's trip
        try:
            up_reader, up_writer = await asyncio.open_connection(*upstream)
        except OSError:
            self.counters.refused += 1  # the broker is down: the client sees the connection close
            client_writer.close()
            return
        try:
            await asyncio.gather(self.pump(client_reader, up_writer, (source, destination)),
                                 self.pump(up_reader, client_writer, (destination, source)))
        finally:
            for w in (up_writer, client_writer):
                w.close()


async def main_async(args):
    relay = Relay(args)
    servers = []
    for (listen, upstream) in args.map:
        servers.append(await asyncio.start_server(
            lambda r, w, up=upstream: relay.serve(r, w, up), listen[0], listen[1], reuse_address=True))
    if args.upstream_netns:
        enter_netns(args.upstream_netns)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    print("relay ready", flush=True)
    await stop.wait()
    for server in servers:
        server.close()
    if args.stats:
        with open(args.stats, "w") as out:
            json.dump(relay.counters.json(), out)
            out.write("\n")


def parse_map(text):
    listen, sep, upstream = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text}: want LISTEN_IP:PORT=UPSTREAM_IP:PORT")
    return host_port(listen), host_port(upstream)


def parse_peer(text):
    ip, sep, name = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text}: want IP=NAME")
    return ip, name


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--map", type=parse_map, action="append", required=True)
    parser.add_argument("--upstream-netns")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    parser.add_argument("--loss", type=float, default=0.0)
    parser.add_argument("--rto-ms", type=float, default=200.0)
    parser.add_argument("--bandwidth", type=float, default=0.0, help="bytes per second per directed link; 0: none")
    parser.add_argument("--peer", type=parse_peer, action="append", default=[], help="names a link's far end")
    parser.add_argument("--upstream-name", type=parse_peer, action="append", default=[],
                        help="names an upstream address in the counters")
    parser.add_argument("--stats")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for name in ("latency_ms", "jitter_ms", "rto_ms", "bandwidth"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must be >= 0")
    if not 0 <= args.loss < 1:
        parser.error("--loss must be in [0, 1)")
    try:
        asyncio.run(main_async(args))
    except OSError as error:
        print(f"delay_relay: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The HTTP console and /metrics of the real programs: a NameServer and a
broker on 127.0.0.1 (free ports, temporary stores), their pages and
Prometheus text, what a sent message changes there, and hostile HTTP input
(garbage, an oversized head, a held half request, more connections than
allowed) after which the broker still serves HTTP and its remoting port.
"""
import http.client
import json
import re
import socket
import time
import urllib.error
import urllib.request

import pytest

from real_cluster import MqAdmin, broker_keys, port_block, programs, start_broker, start_namesrv  # noqa: F401

HTTP_DEADLINE_S = 30
SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^\\"\n])*"'
                    r'(,[a-zA-Z_][a-zA-Z0-9_]*="(\\[\\"n]|[^\\"\n])*")*\})? -?[0-9.e+]+$')


def get(port, path):
    """(status, content type, body text) of GET http://127.0.0.1:port/path."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=HTTP_DEADLINE_S) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def get_eventually(port, path):
    """get(), retried while connections the test just closed may still hold
    the server's slots (a liveness bound, not a timing assertion)."""
    deadline = time.monotonic() + HTTP_DEADLINE_S
    while True:
        try:
            return get(port, path)
        except (ConnectionError, http.client.HTTPException, urllib.error.URLError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def raw(port, data):
    """Sends bytes, returns what comes back until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=HTTP_DEADLINE_S) as s:
        s.sendall(data)
        received = b""
        while chunk := s.recv(65536):
            received += chunk
        return received


def metric_values(text):
    """{'name{labels}': value} for every sample; asserts every line parses."""
    values = {}
    for line in text.splitlines():
        if not line or line.startswith("# HELP ") or line.startswith("# TYPE "):
            continue
        assert SAMPLE.match(line), f"not a sample line: {line!r}"
        key, value = line.rsplit(" ", 1)
        values[key] = float(value)
    return values


@pytest.fixture
def cluster(programs, tmp_path, bin_dir):
    namesrv, namesrv_port = start_namesrv(programs, tmp_path)
    keys = broker_keys(tmp_path, "broker-a", port_block(3), namesrv_port, flushDiskType="SYNC_FLUSH")
    broker = start_broker(programs, tmp_path, keys, "broker-a")
    admin = MqAdmin(bin_dir, f"127.0.0.1:{namesrv_port}", tmp_path)
    return {"namesrv_http": namesrv_port + 2, "broker_http": keys["listenPort"] + 2, "broker": broker,
            "keys": keys, "admin": admin}


def test_broker_and_namesrv_serve_their_pages_and_metrics(cluster):
    port = cluster["broker_http"]
    admin = cluster["admin"]
    admin("updateTopic", "-c", "TestCluster", "-t", "Orders", "-r", 2, "-w", 2)
    for i in range(5):
        admin("sendMessage", "-t", "Orders", "-p", f"order-{i}")

    status, content_type, text = get(port, "/metrics")
    assert status == 200
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    values = metric_values(text)
    assert values['mqlab_put_messages_total{result="stored"}'] == 5
    assert values["mqlab_put_latency_seconds_count"] == 5
    assert values['mqlab_put_latency_seconds_bucket{le="+Inf"}'] == 5
    assert values["mqlab_commitlog_flush_latency_seconds_count"] >= 1  # SYNC_FLUSH
    assert values["mqlab_commitlog_dirty_bytes"] == 0
    assert sum(v for k, v in values.items() if k.startswith('mqlab_queue_max_offset{topic="Orders"')) == 5
    assert "# TYPE mqlab_put_latency_seconds histogram" in text

    status, content_type, page = get(port, "/")
    assert (status, content_type) == (200, "text/html; charset=utf-8")
    assert "/api/status" in page and "<script" in page and " src=" not in page

    status, content_type, body = get(port, "/api/status")
    assert (status, content_type) == (200, "application/json")
    data = json.loads(body)
    assert data["broker"]["broker_role"] == "ASYNC_MASTER"
    assert data["counters"]["msg_put_total"] == 5
    assert {t["name"] for t in data["topics"]} >= {"Orders"}

    assert get(port, "/nope")[0] == 404

    status, _, cluster_json = get(cluster["namesrv_http"], "/api/cluster")
    assert status == 200
    (broker,) = json.loads(cluster_json)["brokers"]
    assert broker["broker_addr"] == f"127.0.0.1:{cluster['keys']['listenPort']}"
    assert broker["console_url"] == f"http://127.0.0.1:{port}/"
    assert "mqlab NameServer" in get(cluster["namesrv_http"], "/")[2]


def test_bad_http_input_leaves_the_broker_serving(cluster):
    port = cluster["broker_http"]
    assert raw(port, b"\x16\x03\x01\x00\xa5garbage\r\n\r\n").startswith(b"HTTP/1.1 400 ")
    assert raw(port, b"GET / HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n").startswith(b"HTTP/1.1 431 ")
    assert raw(port, b"DELETE /metrics HTTP/1.1\r\nConnection: close\r\n\r\n").startswith(b"HTTP/1.1 405 ")
    # A half request held open and more connections than the server takes (64):
    # neither stops a full request from being answered.
    held = [socket.create_connection(("127.0.0.1", port), timeout=HTTP_DEADLINE_S) for _ in range(70)]
    try:
        held[0].sendall(b"GET /metr")
        for s in held[64:]:
            assert s.recv(1) == b"", "a connection over the limit is closed"
    finally:
        for s in held:
            s.close()
    assert get_eventually(port, "/metrics")[0] == 200
    cluster["admin"]("updateTopic", "-c", "TestCluster", "-t", "AfterHttpGarbage")
    cluster["admin"]("sendMessage", "-t", "AfterHttpGarbage", "-p", "still serving")
    assert get(port, "/api/status")[0] == 200
    assert cluster["broker"].proc.poll() is None

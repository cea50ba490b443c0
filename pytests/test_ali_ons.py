"""Compatibility with a real RocketMQ 4.x client: ali-ons 3.12.0 (pure
JavaScript, pytests/compat/) against mqnamesrv + two mqbroker masters.

The topic is created beforehand with `mqadmin updateTopic` (ali-ons never
auto-creates). ali-ons sends M messages synchronously; a push consumer in a
group receives every one and commits its offsets on close; a second run of
the same group resumes after them (nothing old arrives) and consumerProgress
shows no lag. Skipped only when node or npm is missing.
"""
import json
import re
import shutil
import subprocess

import pytest

from real_cluster import REPO, Cluster, programs  # noqa: F401 (fixture)

COMPAT = REPO / "pytests" / "compat"
SCRIPT = COMPAT / "ali_ons_roundtrip.js"


@pytest.fixture(scope="module")
def node():
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed to run the ali-ons client (apt-get install nodejs npm)")
    if not (COMPAT / "node_modules" / "ali-ons").is_dir():
        result = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=COMPAT, capture_output=True, text=True,
                                timeout=300)
        assert result.returncode == 0, f"npm ci failed:\n{result.stdout}\n{result.stderr}"
    return node


def run_node(node, *args, deadline_s=120):
    result = subprocess.run([node, str(SCRIPT), *map(str, args)], cwd=COMPAT, capture_output=True, text=True,
                            timeout=deadline_s)
    assert result.returncode == 0, f"{args[0]}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_ali_ons_sends_and_a_push_consumer_group_consumes_and_resumes(programs, tmp_path, bin_dir, node):
    cluster = Cluster(programs, tmp_path, bin_dir, groups=2, slaves=False)
    topic, group, count = "TopicAliOns", "GroupAliOns", 40
    cluster.create_topic(topic)

    sends = [json.loads(line) for line in run_node(node, "send", cluster.namesrv_addr, topic, count, "k").splitlines()]
    assert [s["status"] for s in sends] == ["SEND_OK"] * count, sends
    assert {s["broker"] for s in sends} == {"broker-a", "broker-b"}
    keys = {s["key"] for s in sends}

    first = json.loads(run_node(node, "consume", cluster.namesrv_addr, topic, group, count, 60_000, 2_000))
    print("ali-ons errors (first run):", first["errors"])
    assert set(first["received"]) == keys, first

    # The offsets were committed: the same group gets nothing old.
    second = json.loads(run_node(node, "consume", cluster.namesrv_addr, topic, group, 0, 30_000, 4_000))
    assert second["received"] == [], second

    progress = cluster.admin("consumerProgress", "-g", group)
    assert re.search(r"Diff Total: 0\b", progress), progress

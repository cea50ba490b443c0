"""Drives mqsim as a user would and checks it through its JSON reports: every
example scenario meets its expectations except the canaries, which must fail
and report loss; bad files exit 2 naming file:line; a sweep's shards merge
into the unsharded sweep; shrink finds the one fault that loses data; and the
same scenario and seed always give the same traces and digests (the CI
determinism sweep)."""
import json
import os
import pathlib
import pty
import subprocess

import pytest

from real_cluster import scaled

REPO = pathlib.Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "scenarios"
CANARY = SCENARIOS / "single-master-async-power-loss-canary.yaml"
# Large files: the benchmark (bench/, not globbed) and the compare matrix.
TOO_LARGE = {"topology-matrix.yaml"}

# 20 s of virtual time (about 0.2 s of wall time): an ASYNC_FLUSH master
# losing power, so figures vary from seed to seed, but no loss expectation.
SHORT = """\
name: short-power-cut
duration: 20s
seeds: 1..3
topology: {preset: single_master}
broker: {flushDiskType: ASYNC_FLUSH}
workload:
  producers: {count: 1, rate: 100/s, arrival: poisson}
faults:
  - {at: 5s, kind: kill_process, target: broker-a-0, duration: 2s}
  - {at: 10s, kind: crash_machine, target: broker-a-0, duration: 3s}
expect:
  corrupted: 0
"""

RUN_KEYS = {
    "scenario": str, "seed": int, "replay_key": str, "mqlab_version": str, "passed": bool, "converged": bool,
    "liveness_failure": str, "faults": list, "figures": dict, "unavailable_write_windows": list,
    "unavailable_read_windows": list, "lost_by_fault": dict, "lost_messages": list, "recoveries": list,
    "expectations": list, "events_run": int, "virtual_end_s": (int, float), "trace_digest": str, "trace_lines": int,
    "scenario_file": str, "scenario_hash": str, "history_digest": str, "history_lines": int,
    "wall_seconds": (int, float),
}
COUNT_FIGURES = ["sent", "acknowledged", "stored_unconfirmed", "failed", "unknown_outcome", "lost",
                 "lost_unconfirmed", "unknown", "unknown_delivered", "failed_delivered", "duplicates", "reordered",
                 "corrupted"]
REAL_FIGURES = ["lost_per_million", "unavailable_write_s", "unavailable_read_s", "throughput_msgs_per_s"]
LATENCY_KEYS = ["count", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]
SWEEP_KEYS = {
    "report": str, "scenario": str, "scenario_file": str, "scenario_hash": str, "mqlab_version": str,
    "seed_ranges": list, "runs": list, "totals": dict, "figures": dict, "failing_seeds": list, "missing_seeds": list,
    "wall_seconds": (int, float),
}


@pytest.fixture(scope="session")
def mqsim(bin_dir):
    path = bin_dir / "mqsim"
    if not path.exists():
        pytest.fail(f"no {path}: build the mqsim target first")
    return path


@pytest.fixture
def short(tmp_path):
    path = tmp_path / "short.yaml"
    path.write_text(SHORT)
    return path


def run(mqsim, *args, timeout=300):
    return subprocess.run([str(mqsim), *map(str, args)], capture_output=True, text=True, timeout=scaled(timeout))


def example_scenarios():
    return sorted(p for p in SCENARIOS.glob("*.yaml") if p.name not in TOO_LARGE)


def without_wall_time(value):
    """The report with every wall_seconds removed: all that must repeat exactly."""
    if isinstance(value, dict):
        return {k: without_wall_time(v) for k, v in value.items() if k != "wall_seconds"}
    if isinstance(value, list):
        return [without_wall_time(v) for v in value]
    return value


def digests(sweep):
    return {r["seed"]: (r["verdict"], r["trace_digest"], r["history_digest"]) for r in sweep["runs"]}


def check_run_report(report):
    for key, kind in RUN_KEYS.items():
        assert isinstance(report.get(key), kind), f"{key}: {report.get(key)!r} is not {kind}"
    figures = report["figures"]
    for name in COUNT_FIGURES:
        assert isinstance(figures[name], int) and figures[name] >= 0, name
    for name in REAL_FIGURES:
        assert isinstance(figures[name], (int, float)) and figures[name] >= 0, name
    for latency in ("send_latency", "e2e_latency"):
        assert set(LATENCY_KEYS) <= set(figures[latency]), latency
    assert figures["acknowledged"] <= figures["sent"]
    for expectation in report["expectations"]:
        assert {"metric", "measured", "held", "describe"} <= set(expectation)
    assert len(report["trace_digest"]) == 16 and len(report["history_digest"]) == 16
    assert report["replay_key"].startswith(report["scenario_hash"] + ":" + str(report["seed"]) + ":")


def check_sweep_report(report, seeds):
    for key, kind in SWEEP_KEYS.items():
        assert isinstance(report.get(key), kind), f"{key}: {report.get(key)!r} is not {kind}"
    assert report["report"] == "mqsim-sweep"
    assert [r["seed"] for r in report["runs"]] == seeds
    totals = report["totals"]
    assert totals["runs"] == len(seeds) == totals["passed"] + totals["failed"] + totals["crashed"]
    for name, spread in report["figures"].items():
        assert spread["min"] <= spread["median"] <= spread["max"], name
    assert "lost" in report["figures"] and "send_latency.p99_ms" in report["figures"]
    assert len(report["failing_seeds"]) == totals["failed"] + totals["crashed"]


# ------------------------------------------------------------ the examples

@pytest.mark.parametrize("scenario", example_scenarios(), ids=lambda p: p.name)
def test_example_scenario_meets_its_expectations(mqsim, scenario, tmp_path):
    out = tmp_path / "run.json"
    result = run(mqsim, "run", scenario, "--quiet", "--json", out)
    assert out.exists(), result.stderr
    report = json.loads(out.read_text())
    check_run_report(report)
    failed = [e["describe"] for e in report["expectations"] if not e["held"]]
    if "canary" in scenario.stem:
        # A canary passing means the harness stopped seeing loss (scenarios/README.md, The canary).
        assert result.returncode == 1, f"canary {scenario.name} passed: the checker is blind to loss"
        assert report["passed"] is False
        assert report["figures"]["lost"] > 0
    else:
        assert result.returncode == 0, f"{failed} liveness: {report['liveness_failure']}\n{result.stderr}"
        assert report["passed"] is True


BAD_FILES = [
    ("duration: 1m\ntopology:\n  brokr_groups: 2\n", ":3:", "brokr_groups"),
    ("duration: 30 sec\n", ":1:", "duration"),
    ("duration: 1m\nfaults:\n  - {at: 10s, kind: kill_process, target: broker-c-0}\n", ":3:", "broker-c-0"),
]


@pytest.mark.parametrize("command", ["run", "sweep", "shrink"])
@pytest.mark.parametrize("text,line,mentions", BAD_FILES, ids=["unknown-key", "bad-duration", "bad-target"])
def test_bad_scenario_file_exits_2_naming_file_and_line(mqsim, tmp_path, command, text, line, mentions):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    result = run(mqsim, command, path)
    assert result.returncode == 2
    assert f"{path}{line}" in result.stderr and mentions in result.stderr, result.stderr


@pytest.mark.parametrize("args", [
    ["sweep", CANARY, "--seeds", "5-1"],
    ["sweep", CANARY, "--seeds", "x"],
    ["sweep", CANARY, "--shard", "2/2"],
    ["sweep", CANARY, "--jobs", "0"],
    ["sweep", SCENARIOS / "topology-matrix.yaml"],
    ["merge", "out.json"],
    ["replay", CANARY, "--seed", "1"],
    ["run", SCENARIOS / "no-such-file.yaml"],
    ["run", CANARY, "--no-such-option"],
], ids=lambda a: " ".join(map(str, a)) if isinstance(a, list) else a)
def test_bad_arguments_exit_2(mqsim, args):
    result = run(mqsim, *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr


# ------------------------------------------------------------ replay and determinism

def test_replay_reproduces_a_run_event_for_event(mqsim, short, tmp_path):
    first, second, other = (tmp_path / f"{n}.txt" for n in ("first", "second", "other"))
    reports = []
    for trace, seed in ((first, 2), (second, 2), (other, 3)):
        out = trace.with_suffix(".json")
        assert run(mqsim, "replay", short, "--seed", seed, "--trace", trace, "--json", out).returncode == 0
        reports.append(json.loads(out.read_text()))
    assert first.read_bytes() == second.read_bytes()
    assert without_wall_time(reports[0]) == without_wall_time(reports[1])
    assert first.read_bytes() != other.read_bytes()
    assert reports[0]["history_digest"] != reports[2]["history_digest"]
    text = first.read_text()
    for part in (" fault_start ", " send #", " SEND_OK ", " receive #", " log INFO "):
        assert part in text, part
    assert reports[0]["history_lines"] == sum(" send #" in l or " receive #" in l for l in text.splitlines())


def test_ci_sweep_twice_gives_the_same_digests(mqsim, short, tmp_path):
    """The CI determinism sweep: a sample of seeds run twice must give equal
    digests, so nondeterminism is caught the day it is introduced."""
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        result = run(mqsim, "sweep", short, "--seeds", "1-3", "--jobs", "2", "--json", path)
        assert result.returncode == 0, result.stdout + result.stderr
    a, b = (json.loads(p.read_text()) for p in paths)
    assert digests(a) == digests(b)
    assert without_wall_time(a) == without_wall_time(b)
    assert len({d[2] for d in digests(a).values()}) == 3, "three seeds gave the same messages"
    # Merging two sweeps of one seed range is a determinism check too.
    merged = run(mqsim, "merge", tmp_path / "ab.json", *paths)
    assert merged.returncode == 0, merged.stderr


# ------------------------------------------------------------ sweep, shard, merge

def test_sharded_sweep_merges_into_the_unsharded_sweep(mqsim, short, tmp_path):
    whole = tmp_path / "whole.json"
    result = run(mqsim, "sweep", short, "--seeds", "1-3", "--jobs", "2", "--json", whole)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "\r" not in result.stdout  # the progress line is for terminals only
    shards = [tmp_path / f"shard{i}.json" for i in range(2)]
    for i, shard in enumerate(shards):
        assert run(mqsim, "sweep", short, "--seeds", "1-3", "--shard", f"{i}/2", "--json", shard).returncode == 0
    merged = tmp_path / "merged.json"
    result = run(mqsim, "merge", merged, *shards)
    assert result.returncode == 0, result.stderr
    whole_report, merged_report = json.loads(whole.read_text()), json.loads(merged.read_text())
    shard_reports = [json.loads(s.read_text()) for s in shards]
    check_sweep_report(whole_report, [1, 2, 3])
    check_sweep_report(merged_report, [1, 2, 3])
    assert [[r["seed"] for r in s["runs"]] for s in shard_reports] == [[1, 3], [2]]
    assert shard_reports[1]["shard"] == {"index": 1, "count": 2}
    assert digests(merged_report) == digests(whole_report)
    assert without_wall_time(merged_report) == without_wall_time(whole_report)


def test_sweep_lists_failing_seeds_with_replay_commands(mqsim, tmp_path):
    out = tmp_path / "canary.json"
    result = run(mqsim, "sweep", CANARY, "--seeds", "1-2", "--jobs", "2", "--json", out)
    assert result.returncode == 1
    report = json.loads(out.read_text())
    check_sweep_report(report, [1, 2])
    assert report["totals"]["failed"] == 2
    for failing in report["failing_seeds"]:
        assert "lost == 0" in failing["reason"]
        assert failing["replay"] == f"mqsim replay {CANARY} --seed {failing['seed']} --trace trace.txt"
        assert failing["replay"] in result.stdout
    assert report["figures"]["lost"]["min"] > 0


def test_merge_refuses_reports_of_different_scenarios(mqsim, short, tmp_path):
    other = tmp_path / "other.yaml"
    other.write_text(SHORT.replace("rate: 100/s", "rate: 50/s"))
    reports = [tmp_path / "short.json", tmp_path / "other.json"]
    for scenario, report in zip((short, other), reports):
        run(mqsim, "sweep", scenario, "--seeds", "1", "--json", report)
    result = run(mqsim, "merge", tmp_path / "both.json", *reports)
    assert result.returncode == 2
    assert "different scenario files" in result.stderr
    for report in reports:
        assert json.loads(report.read_text())["scenario_hash"] in result.stderr
    assert not (tmp_path / "both.json").exists()


def test_merge_refuses_a_seed_that_ran_two_ways(mqsim, short, tmp_path):
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    run(mqsim, "sweep", short, "--seeds", "1", "--json", first)
    report = json.loads(first.read_text())
    report["runs"][0]["history_digest"] = "0" * 16
    second.write_text(json.dumps(report))
    result = run(mqsim, "merge", tmp_path / "out.json", first, second)
    assert result.returncode == 2
    assert "seed 1" in result.stderr and "nondeterminism" in result.stderr


def test_merge_reports_missing_shards(mqsim, short, tmp_path):
    shard = tmp_path / "shard0.json"
    run(mqsim, "sweep", short, "--seeds", "1-3", "--shard", "0/2", "--json", shard)
    result = run(mqsim, "merge", tmp_path / "out.json", shard)
    assert result.returncode == 1
    merged = json.loads((tmp_path / "out.json").read_text())
    assert merged["missing_seeds"] == [2] and merged["totals"]["missing"] == 1


def test_progress_line_on_a_terminal(mqsim, short):
    main, secondary = pty.openpty()
    process = subprocess.Popen([str(mqsim), "sweep", str(short), "--seeds", "1-2"], stdout=secondary,
                               stderr=subprocess.DEVNULL)
    os.close(secondary)
    output = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal closed: the sweep is done
            break
        if not chunk:
            break
        output += chunk
    os.close(main)
    assert process.wait(timeout=120) == 0
    assert b"2/2 runs done, 0 failed" in output and b"ETA" in output


# ------------------------------------------------------------ shrink

def test_shrink_of_the_canary_keeps_exactly_the_power_cut(mqsim, tmp_path):
    result = run(mqsim, "shrink", CANARY, "--seed", "1")
    assert result.returncode == 1, result.stdout + result.stderr
    faults = [line for line in result.stdout.splitlines() if line.startswith("  - {")]
    assert len(faults) == 1, result.stdout
    assert "kind: crash_machine" in faults[0] and "target: broker-a-0" in faults[0]
    assert f"mqsim replay {CANARY} --seed 1" in result.stdout
    # Pasted into the scenario, the minimal list still fails the same way.
    text = CANARY.read_text()
    pasted = text[:text.index("faults:")] + "faults:\n" + faults[0] + "\n\nexpect:\n  lost: 0\n"
    path = tmp_path / "pasted.yaml"
    path.write_text(pasted)
    assert run(mqsim, "run", path, "--seed", "1", "--quiet").returncode == 1


def test_shrink_of_a_passing_seed_has_nothing_to_do(mqsim, short):
    result = run(mqsim, "shrink", short, "--seed", "1")
    assert result.returncode == 0
    assert "nothing to shrink" in result.stdout

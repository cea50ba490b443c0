"""The seeds' claims, checked: each claim of the source material (RocketMQ's
deployment advice, as issue 6 lists it) against the measured figures. A
verdict is computed here from report.json every time, never written down:
"confirmed", "partly" (some of it holds), "not confirmed", or "not measured"
(the matrix lacks the topology or fault the claim is about). The evidence
sentence gives the numbers the verdict rests on.

Thresholds, and why:
  "a little" (ASYNC_FLUSH, power loss)   at most 2 x flushIntervalCommitLog of
      traffic: one interval unflushed plus one flush in flight
  "a few milliseconds" (async replication)  at most 100 ms of traffic
  "about 10%" (sync dual-write latency)  a slowdown of at most 25% at p50 and p99
  "a good default"                       no acknowledged loss under any single
      failure, and fault-free p99 within 25% of the fastest configuration's
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from reports import model

CONFIRMED, PARTLY, NOT_CONFIRMED, NOT_MEASURED = "confirmed", "partly", "not confirmed", "not measured"
MASTER_DOWN_KINDS = ("kill_process", "crash_machine", "destroy_machine", "partition")
POWER_KINDS = ("crash_machine", "power_loss_all")
UNREPLICATED = ("single_master", "multi_master", "multi_master_raid10")
FEW_MS = 100.0
ABOUT_TEN_PERCENT = 1.25


@dataclasses.dataclass
class Claim:
    claim: str
    status: str
    evidence: str


def _cells(report: dict, topology: str, flush: Optional[str], kinds: tuple) -> list[tuple[dict, dict, dict]]:
    """(config, fault, cell) of topology (and flush) under faults of these kinds, that ran."""
    found = []
    for config in model.configurations(report):
        if config["topology"] != topology or (flush and config["flush"] != flush):
            continue
        for fault in model.faults(report):
            c = model.cell(config, fault["name"])
            if model.fault_kind(fault) in kinds and c and c["seeds"] > 0:
                found.append((config, fault, c))
    return found


def _outage_s(report: dict, fault: dict) -> float:
    events = fault["events"]
    start = min(e["at_s"] for e in events)
    end = max(e["at_s"] + e["duration_s"] if e["duration_s"] > 0 else report["duration_s"] for e in events)
    return end - start


def _worst_seed_lost(report: dict, config: dict, fault: dict) -> int:
    runs = model.runs_of(report, config["topology"], config["flush"], fault["name"])
    return max((int(r["run"]["figures"]["lost"]) for r in runs), default=0)


def _ack_ratio(c: dict) -> float:
    return c["acknowledged"] / c["sent"] if c["sent"] else 0.0


def _p(cell: dict, key: str) -> float:
    return float(cell[key])


def _reference_latency(report: dict, config: dict) -> Optional[dict]:
    """The cell latencies are compared in: the fault-free column, else None."""
    base = model.baseline_fault(report)
    if base is None:
        return None
    c = model.cell(config, base["name"])
    return c if c and c["seeds"] > 0 else None


def single_master_spof(report: dict) -> Claim:
    text = "A single master is a single point of failure: while it is down nothing can be written."
    cells = _cells(report, "single_master", None, MASTER_DOWN_KINDS)
    if not cells:
        return Claim(text, NOT_MEASURED, "The matrix has no single_master run with a fault that stops the master.")
    stopped, parts = 0, []
    for fault in model.faults(report):
        mine = [c for _, f, c in cells if f["name"] == fault["name"]]
        if not mine:
            continue
        outage = _outage_s(report, fault)
        others = [oc for topology in report["matrix"]["topologies"] if topology != "single_master"
                  for _, of, oc in _cells(report, topology, None, (model.fault_kind(fault),))
                  if of["name"] == fault["name"]]
        failed_s = min(c["unavailable_write_s"] for c in mine)  # over the flush types: the kindest
        acked = max(_ack_ratio(c) for c in mine)
        worst_other = min((_ack_ratio(oc) for oc in others), default=None)
        held = failed_s >= 0.5 * outage and (worst_other is None or acked < worst_other)
        stopped += held
        parts.append(f"{fault['name']}: sends failed for {failed_s:.1f} s of a {outage:.0f} s outage, "
                     f"{100 * acked:.1f}% of sends acknowledged"
                     + (f" (every multi-group topology ≥ {100 * worst_other:.1f}%)" if worst_other is not None else ""))
    status = CONFIRMED if stopped == len(parts) else PARTLY if stopped else NOT_CONFIRMED
    return Claim(text, status, "; ".join(parts) + ".")


def raid10_sync_flush(report: dict) -> Claim:
    text = ("Multi-master with RAID10 and SYNC_FLUSH loses nothing when a disk fails, but a down master's "
            "messages cannot be read until it returns.")
    disk = _cells(report, "multi_master_raid10", "SYNC_FLUSH", ("fail_disk",))
    down = _cells(report, "multi_master_raid10", "SYNC_FLUSH", ("kill_process", "crash_machine"))
    if not disk and not down:
        return Claim(text, NOT_MEASURED, "The matrix has no multi_master_raid10 SYNC_FLUSH run under a disk failure "
                                         "or a master outage.")
    parts, holds = [], []
    for _, fault, c in disk:
        holds.append(c["lost"] == 0)
        parts.append(f"{fault['name']}: {c['lost']} lost of {c['acknowledged']} acknowledged")
        plain = _cells(report, "multi_master", "SYNC_FLUSH", ("fail_disk",))
        for _, pf, pc in plain:
            if pf["name"] == fault["name"]:
                parts.append(f"(multi_master without RAID10: {pc['lost']} lost)")
    for _, fault, c in down:
        outage = _outage_s(report, fault)
        holds.append(c["lost"] == 0 and c["unavailable_read_s"] >= 0.5 * outage)
        parts.append(f"{fault['name']}: {c['lost']} lost, acknowledged messages unreadable for "
                     f"{c['unavailable_read_s']:.1f} s of a {outage:.0f} s outage")
    status = CONFIRMED if all(holds) and disk and down else PARTLY if any(holds) else NOT_CONFIRMED
    return Claim(text, status, "; ".join(parts) + ".")


def async_flush_power_loss(report: dict) -> Claim:
    interval_ms = float(report["broker"]["flushIntervalCommitLog"])
    limit_ms = 2 * interval_ms
    text = ("ASYNC_FLUSH loses a little on power loss (what was acknowledged since the last flush); SYNC_FLUSH "
            "loses nothing.")
    async_cells = [x for t in UNREPLICATED for x in _cells(report, t, "ASYNC_FLUSH", POWER_KINDS)]
    sync_cells = [x for t in UNREPLICATED for x in _cells(report, t, "SYNC_FLUSH", POWER_KINDS)]
    if not async_cells:
        return Claim(text, NOT_MEASURED, "The matrix has no unreplicated ASYNC_FLUSH run under a power loss.")
    parts, little, some = [], 0, 0
    for config, fault, c in async_cells:
        ms = model.messages_as_ms(report, _worst_seed_lost(report, config, fault))
        some += c["lost"] > 0
        little += 0 < ms <= limit_ms
        parts.append(f"{config['topology']} {fault['name']}: up to {ms:.0f} ms of writes lost "
                     f"({_worst_seed_lost(report, config, fault)} messages, worst seed)")
    sync_lost = sum(c["lost"] for _, _, c in sync_cells)
    parts.append(f"SYNC_FLUSH under the same faults: {sync_lost} lost" if sync_cells else "SYNC_FLUSH not measured")
    if little == len(async_cells) and sync_lost == 0:
        status = CONFIRMED
    elif some:
        status = PARTLY
    else:
        status = NOT_CONFIRMED
    return Claim(text, status, "; ".join(parts) + f" (\"a little\": at most {limit_ms:.0f} ms, twice "
                                                  f"flushIntervalCommitLog).")


def _lag_before(report: dict, topology: str, flush: str, fault: dict) -> Optional[int]:
    """The largest replication lag of broker-a sampled before the fault, bytes, over seeds."""
    at = min(e["at_s"] for e in fault["events"])
    worst = None
    for run in model.runs_of(report, topology, flush, fault["name"]):
        lag = run["run"].get("series", {}).get("replication_lag", {})
        for group in lag.get("groups", [])[:1]:
            for k, sample in enumerate(group["bytes"]):
                if sample is not None and (k + 1) * lag["interval_s"] < at:
                    worst = sample if worst is None else max(worst, sample)
    return worst


def async_replication_master_lost(report: dict) -> Claim:
    text = "Async replication loses a few milliseconds of messages when a master is lost."
    cells = _cells(report, "async_replication", None, ("destroy_machine",))
    if not cells:
        return Claim(text, NOT_MEASURED, "The matrix has no async_replication run that loses a master for good.")
    parts, few, lost_any = [], 0, 0
    for config, fault, c in cells:
        worst = _worst_seed_lost(report, config, fault)
        ms = model.messages_as_ms(report, worst)
        lag = _lag_before(report, config["topology"], config["flush"], fault)
        lost_any += worst > 0
        few += ms <= FEW_MS
        parts.append(f"{config['flush']}: up to {ms:.0f} ms of writes lost ({worst} messages, worst seed)"
                     + (f", replication lag before the loss at most {lag} bytes" if lag is not None else ""))
    if few == len(cells) and lost_any:
        status = CONFIRMED
    elif few == len(cells):
        status = PARTLY
        parts.append(f"no loss measured: at {model.total_rate_per_s(report):g} msgs/s a few ms is under one message")
    else:
        status = PARTLY if few else NOT_CONFIRMED
    return Claim(text, status, "; ".join(parts) + f" (\"a few\": at most {FEW_MS:.0f} ms).")


def sync_dual_write(report: dict) -> Claim:
    text = "Sync dual-write (SYNC_MASTER) loses nothing, and costs about 10% in latency."
    cells = [x for x in _cells(report, "sync_replication", None, tuple(model.FAULT_PHRASES)) if x[1]["single_failure"]]
    if not cells and not model.find_config(report, "sync_replication", "SYNC_FLUSH") and \
            not model.find_config(report, "sync_replication", "ASYNC_FLUSH"):
        return Claim(text, NOT_MEASURED, "The matrix has no sync_replication topology.")
    lost = sum(c["lost"] for _, _, c in cells)
    parts = [f"{lost} acknowledged messages lost under {len(cells)} single-failure cells"]
    costs = []
    for flush in report["matrix"]["flush"]:
        sync = model.find_config(report, "sync_replication", flush)
        asynchronous = model.find_config(report, "async_replication", flush)
        if not sync or not asynchronous:
            continue
        s, a = _reference_latency(report, sync), _reference_latency(report, asynchronous)
        if not s or not a or _p(a, "send_p50_ms") <= 0 or _p(a, "send_p99_ms") <= 0:
            continue
        p50, p99 = _p(s, "send_p50_ms") / _p(a, "send_p50_ms"), _p(s, "send_p99_ms") / _p(a, "send_p99_ms")
        costs.append(max(p50, p99))
        parts.append(f"{flush}: fault-free send p50 {_p(s, 'send_p50_ms'):.2f} vs {_p(a, 'send_p50_ms'):.2f} ms "
                     f"({100 * (p50 - 1):+.0f}%), p99 {_p(s, 'send_p99_ms'):.2f} vs {_p(a, 'send_p99_ms'):.2f} ms "
                     f"({100 * (p99 - 1):+.0f}%) against async replication")
    if not costs:
        parts.append("latency not compared (needs async_replication and a fault-free column)")
    loses_nothing = bool(cells) and lost == 0
    cheap = bool(costs) and all(cost <= ABOUT_TEN_PERCENT for cost in costs)
    status = CONFIRMED if loses_nothing and cheap else PARTLY if loses_nothing or cheap else NOT_CONFIRMED
    return Claim(text, status, "; ".join(parts) + f" (\"about 10%\": at most {100 * (ABOUT_TEN_PERCENT - 1):.0f}%).")


def async_flush_sync_master_default(report: dict) -> Claim:
    text = "ASYNC_FLUSH with SYNC_MASTER is a good default."
    config = model.find_config(report, "sync_replication", "ASYNC_FLUSH")
    if not config:
        return Claim(text, NOT_MEASURED, "The matrix has no sync_replication ASYNC_FLUSH configuration.")
    single = [f for f in model.faults(report) if f["single_failure"] and (model.cell(config, f["name"]) or {}).get("seeds")]
    lost = sum(model.cell(config, f["name"])["lost"] for f in single)
    parts = [f"{lost} acknowledged messages lost under {len(single)} single failures"]
    mine = _reference_latency(report, config)
    references = [(_reference_latency(report, c), c) for c in model.configurations(report)]
    references = [(r, c) for r, c in references if r]
    fast_enough = None
    if mine and references:
        fastest, fastest_config = min(references, key=lambda rc: _p(rc[0], "send_p99_ms"))
        ratio = _p(mine, "send_p99_ms") / max(_p(fastest, "send_p99_ms"), 1e-9)
        fast_enough = ratio <= ABOUT_TEN_PERCENT
        parts.append(f"fault-free send p99 {_p(mine, 'send_p99_ms'):.2f} ms, {ratio:.2f}x the fastest "
                     f"({model.config_name(fastest_config)}, {_p(fastest, 'send_p99_ms'):.2f} ms)")
        sync_flush = model.find_config(report, "sync_replication", "SYNC_FLUSH")
        sf = _reference_latency(report, sync_flush) if sync_flush else None
        if sf:
            parts.append(f"sync_replication SYNC_FLUSH: {_p(sf, 'send_p99_ms'):.2f} ms")
    else:
        parts.append("latency not compared (needs a fault-free column)")
    no_loss = bool(single) and lost == 0
    if no_loss and fast_enough:
        status = CONFIRMED
    elif no_loss or fast_enough:
        status = PARTLY
    else:
        status = NOT_CONFIRMED
    return Claim(text, status, "; ".join(parts) + ".")


def check_claims(report: dict) -> list[Claim]:
    return [single_master_spof(report), raid10_sync_flush(report), async_flush_power_loss(report),
            async_replication_master_lost(report), sync_dual_write(report), async_flush_sync_master_default(report)]

"""The compare report as the renderers read it: configurations and their
cells, the columns of the comparison table with one formatting rule each (so
the Markdown, the HTML and the tests show a figure the same way), fault
metadata and plain-words names. Everything here reads report.json only."""
from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Callable, Optional


def load(path: pathlib.Path) -> dict:
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    if report.get("report") != "mqsim-compare":
        raise ValueError(f"{path}: not a compare report (its \"report\" is {report.get('report')!r})")
    return report


def fmt_int(value: Any) -> str:
    return "—" if value is None else str(int(value))


def fmt_fixed(digits: int) -> Callable[[Any], str]:
    def fmt(value: Any) -> str:
        return "—" if value is None else f"{float(value):.{digits}f}"
    return fmt


@dataclasses.dataclass(frozen=True)
class Column:
    key: str      # the cell's figure in report.json
    header: str   # short, for the table head
    title: str    # the long name, for a tooltip and the README
    fmt: Callable[[Any], str]


# One column group per fault in the comparison table, in this order.
COLUMNS = [
    Column("acknowledged", "acked", "acknowledged sends, all seeds", fmt_int),
    Column("lost", "lost", "acknowledged and never consumed, all seeds", fmt_int),
    Column("lost_per_million", "lost/M", "lost per million acknowledged", fmt_fixed(1)),
    Column("expired_by_retention", "expired",
           "acknowledged, deleted by CommitLog retention before a group read them (not lost), all seeds", fmt_int),
    Column("unknown", "unknown", "outcome never learned and never consumed, all seeds", fmt_int),
    Column("duplicates", "dup", "consumed more than once, all seeds", fmt_int),
    Column("duplicates_stored_twice", "dup 2x",
           "of the duplicates, receipts of a second stored copy (a producer retry), all seeds", fmt_int),
    Column("unavailable_write_s", "unavail W s", "seconds in which sends failed (worst seed)", fmt_fixed(1)),
    Column("unavailable_read_s", "unavail R s", "seconds in which acknowledged messages were unreadable (worst seed)",
           fmt_fixed(1)),
    Column("send_p50_ms", "send p50", "send round trip p50, ms (worst seed)", fmt_fixed(2)),
    Column("send_p99_ms", "send p99", "send round trip p99, ms (worst seed)", fmt_fixed(2)),
    Column("send_p999_ms", "send p999", "send round trip p99.9, ms (worst seed)", fmt_fixed(2)),
    Column("e2e_p99_ms", "e2e p99", "send to receipt p99, ms (worst seed)", fmt_fixed(2)),
    Column("throughput_relative", "thru rel", "acknowledged throughput over the fastest configuration's, same fault",
           fmt_fixed(2)),
    Column("recovery_s", "recovery s", "longest broker restart-to-serving time after a fault (worst seed)",
           fmt_fixed(2)),
]

# Every cell figure, for the CSV, full precision.
CSV_FIGURES = ["seeds", "crashed", "failed", "sent", "acknowledged", "lost", "lost_per_million",
               "expired_by_retention", "unknown", "duplicates", "duplicates_stored_twice", "unavailable_write_s", "unavailable_read_s", "send_p50_ms", "send_p99_ms",
               "send_p999_ms", "e2e_p99_ms", "throughput_msgs_per_s", "throughput_relative", "recovery_s",
               "outcome", "worst_seed"]

# What each outcome means, for legends; the colour classes share the names.
OUTCOMES = {
    "no_loss": "no acknowledged message lost",
    "loss_within_bound": "lost acknowledged messages, within the configuration's loss bound (the design working)",
    "loss": "lost acknowledged messages",
    "loss_exceeds_bound": "lost more than the configuration's loss bound: a defect",
    "crashed": "a run crashed (an assertion); see its replay command",
    "no_runs": "not run (a shard's share, or missing)",
}

# Plain words for a fault, by the kind of its first event.
FAULT_PHRASES = {
    "kill_process": "the master's process is killed (kill -9)",
    "pause_process": "the master's process is paused",
    "crash_machine": "a master's machine loses power",
    "power_loss_all": "the whole data centre loses power",
    "destroy_machine": "a master's machine is lost for good",
    "fail_disk": "a master's disk fails",
    "slow_disk": "a master's disk slows down",
    "stall_disk": "a master's disk stalls",
    "partition": "a master is partitioned away",
    "isolate_machine": "a master is isolated",
    "clock_skew": "a master's clock jumps",
    "promote_slave": "the operator fails a group over to its slave",
}


def configurations(report: dict) -> list[dict]:
    return report["configurations"]


def config_name(config: dict) -> str:
    return f"{config['topology']} {config['flush']}"


def faults(report: dict) -> list[dict]:
    return report["matrix"]["faults"]


def fault_kind(fault: dict) -> Optional[str]:
    events = fault.get("events") or []
    return events[0]["kind"] if events else None


def fault_phrase(fault: dict) -> str:
    kind = fault_kind(fault)
    if kind is None:
        return "nothing fails"
    return FAULT_PHRASES.get(kind, fault["name"].replace("_", " "))


def fault_duration_s(fault: dict) -> Optional[float]:
    """How long the fault list keeps something broken (None: until the end-of-run healing)."""
    events = fault.get("events") or []
    if not events or any(e["duration_s"] <= 0 for e in events):
        return None
    return max(e["at_s"] + e["duration_s"] for e in events) - min(e["at_s"] for e in events)


def cell(config: dict, fault_name: str) -> Optional[dict]:
    for c in config["cells"]:
        if c["fault"] == fault_name:
            return c
    return None


def find_config(report: dict, topology: str, flush: str) -> Optional[dict]:
    for config in configurations(report):
        if config["topology"] == topology and config["flush"] == flush:
            return config
    return None


def faults_of_kind(report: dict, kind: Optional[str]) -> list[dict]:
    return [f for f in faults(report) if fault_kind(f) == kind]


def baseline_fault(report: dict) -> Optional[dict]:
    """The fault-free column (`none: []`), when the matrix has one."""
    found = faults_of_kind(report, None)
    return found[0] if found else None


def total_rate_per_s(report: dict) -> float:
    w = report["workload"]
    return float(w["producers"]) * float(w["rate_per_sec"])


def messages_as_ms(report: dict, messages: float) -> float:
    """Acknowledged messages as milliseconds of the workload's traffic."""
    rate = total_rate_per_s(report)
    return 1000.0 * messages / rate if rate > 0 else 0.0


def finished_runs(report: dict) -> list[dict]:
    return [r for r in report["runs"] if r.get("run")]


def runs_of(report: dict, topology: str, flush: str, fault: Optional[str] = None) -> list[dict]:
    return [r for r in finished_runs(report)
            if r["topology"] == topology and r["flush"] == flush and (fault is None or r["fault"] == fault)]


def bound_text(c: dict) -> str:
    """The cell's loss bound in words, or "" when the runs carry none."""
    b = c.get("loss_bound")
    if not b:
        return ""
    bound = b["messages"]
    if b["within_bound"]:
        return f"≤ {bound:g} (within)"
    return f"≤ {bound:g}: exceeded by {b['exceeded_by']:g}"


def span_text(lost_class: dict) -> str:
    """The span of a lost class's acknowledgements, ms; "≥" when the checker listed only some of them."""
    return ("" if lost_class.get("complete", True) else "≥ ") + f"{lost_class['acked_span_ms']:.0f}"

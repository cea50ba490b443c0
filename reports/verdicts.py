"""A verdict per configuration in plain words, computed from its cells and
runs: what it loses under a single failure (one machine, disk, process or
link), under the rest (the whole data centre), and for how long writes and
reads stop. "Loses up to N ms of acknowledged writes" converts the worst
seed's lost messages into milliseconds of the workload's traffic."""
from __future__ import annotations

import dataclasses

from reports import model

MAX_NAMED_FAULTS = 2  # a verdict names the worst faults; the table has the rest


@dataclasses.dataclass
class Verdict:
    text: str
    severity: str  # "good", "warn" or "bad": the row's colour


def _worst_seed_lost(report: dict, config: dict, fault_name: str) -> int:
    runs = model.runs_of(report, config["topology"], config["flush"], fault_name)
    return max((int(r["run"]["figures"]["lost"]) for r in runs), default=0)


def _duration_text(ms: float) -> str:
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _loss_phrases(report: dict, config: dict, faults: list[dict]) -> str:
    """"loses up to X of acknowledged writes when P" for the worst few faults, the rest counted."""
    by_size = sorted(faults, key=lambda f: -_worst_seed_lost(report, config, f["name"]))
    parts = []
    for fault in by_size[:MAX_NAMED_FAULTS]:
        lost = _worst_seed_lost(report, config, fault["name"])
        what = " of acknowledged writes" if not parts else ""
        parts.append(f"up to {_duration_text(model.messages_as_ms(report, lost))}{what} ({lost} messages) when "
                     f"{model.fault_phrase(fault)}")
    more = len(by_size) - MAX_NAMED_FAULTS
    rest = f", and less under {more} more fault{'s' if more > 1 else ''}" if more > 0 else ""
    return "loses " + ", ".join(parts) + rest


def _outage_phrase(config: dict, faults: list[dict]) -> str:
    cells = [(model.cell(config, f["name"]), f) for f in faults]
    write_cell, write_fault = max(cells, key=lambda cf: cf[0]["unavailable_write_s"])
    read_cell, read_fault = max(cells, key=lambda cf: cf[0]["unavailable_read_s"])
    parts = []
    if write_cell["unavailable_write_s"] >= 1.0:
        parts.append(f"sends fail for up to {write_cell['unavailable_write_s']:.0f} s when "
                     f"{model.fault_phrase(write_fault)}")
    if read_cell["unavailable_read_s"] >= 1.0:
        parts.append(f"acknowledged messages are unreadable for up to {read_cell['unavailable_read_s']:.0f} s when "
                     f"{model.fault_phrase(read_fault)}")
    return "; ".join(parts)


def verdict(report: dict, config: dict) -> Verdict:
    faults = [f for f in model.faults(report) if model.cell(config, f["name"]) and
              model.cell(config, f["name"])["seeds"] + model.cell(config, f["name"])["crashed"] > 0]
    if not faults:
        return Verdict("not run", "warn")
    crashed = [f["name"] for f in faults if model.cell(config, f["name"])["crashed"] > 0]
    if crashed:
        return Verdict(f"a run crashed under {', '.join(crashed)}: see its replay command below", "bad")
    exceeded = [f for f in faults if model.cell(config, f["name"])["outcome"] == "loss_exceeds_bound"]
    single = [f for f in faults if f["single_failure"]]
    multiple = [f for f in faults if not f["single_failure"]]
    single_loss = [f for f in single if model.cell(config, f["name"])["lost"] > 0]
    multiple_loss = [f for f in multiple if model.cell(config, f["name"])["lost"] > 0]
    sentences = []
    if single_loss:
        sentences.append(_loss_phrases(report, config, single_loss))
    elif single:
        sentences.append("no acknowledged loss under any single failure")
    if multiple_loss:
        sentences.append(_loss_phrases(report, config, multiple_loss))
    elif multiple and not single_loss:
        when = "when " + " or ".join(model.fault_phrase(f) for f in multiple)
        # A matrix with no single-failure schedule has no sentence to continue.
        if sentences:
            sentences[-1] += " nor " + when
        else:
            sentences.append("no acknowledged loss " + when)
    outage = _outage_phrase(config, faults)
    if outage:
        sentences.append(outage)
    if exceeded:
        worst = max(model.cell(config, f["name"])["loss_bound"]["exceeded_by"] for f in exceeded)
        sentences.insert(0, f"LOSES MORE THAN ITS BOUND under {', '.join(f['name'] for f in exceeded)} "
                            f"(by up to {worst:g} messages): a defect")
    text = ". ".join(s[0].upper() + s[1:] for s in sentences if s) + "."
    if exceeded:
        return Verdict(text, "bad")
    if single_loss:
        within = all(model.cell(config, f["name"])["outcome"] == "loss_within_bound" for f in single_loss)
        return Verdict(text, "warn" if within else "bad")
    return Verdict(text, "warn" if multiple_loss else "good")

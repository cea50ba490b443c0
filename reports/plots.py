"""The report's plots, drawn with matplotlib's Agg backend (no display): each
is saved as PNG and SVG beside the report, and the SVG is inlined in
index.html. Every plot reads report.json's figures and per-run series only.

  latency_cdf         send latency CDF per topology, a line per flush type
                      (fault-free, and under faults pooled)
  loss_vs_latency     one point per configuration: lost per million over all
                      faults against fault-free send p99
  availability-FAULT  per fault, a row per run: when the fault was active and
                      when sends failed or acknowledged messages were unreadable
  replication_lag     per fault, replication lag over time of the replicated
                      topologies
"""
from __future__ import annotations

import io
import math
import pathlib
import re
from typing import Optional

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

from reports import model  # noqa: E402

# Reproducible files: no timestamps, fixed ids.
matplotlib.rcParams.update({
    "svg.hashsalt": "mqlab",
    "svg.fonttype": "none",  # text stays text: smaller, searchable
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
})
SVG_METADATA = {"Date": None, "Creator": "mqlab reports"}
PNG_METADATA = {"Software": "mqlab reports"}

FLUSH_COLORS = {"SYNC_FLUSH": "#1f77b4", "ASYNC_FLUSH": "#d62728"}
TOPOLOGY_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
FAULT_COLOR = "#bbbbbb"
WRITE_COLOR = "#d62728"
READ_COLOR = "#ff9f1c"


class Plot:
    def __init__(self, name: str, title: str, caption: str, svg: str):
        self.name = name        # file stem: NAME.png, NAME.svg
        self.title = title
        self.caption = caption
        self.svg = svg          # the <svg> element, for inlining


def _save(fig, out_dir: pathlib.Path, name: str, title: str, caption: str) -> Plot:
    fig.savefig(out_dir / f"{name}.png", dpi=110, metadata=PNG_METADATA)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata=SVG_METADATA)
    plt.close(fig)
    svg_text = buffer.getvalue()
    (out_dir / f"{name}.svg").write_text(svg_text, encoding="utf-8")
    # Inline: the <svg> element alone (no XML declaration or DOCTYPE), scalable.
    element = svg_text[svg_text.index("<svg"):]
    element = re.sub(r'<svg([^>]*?) width="[^"]*" height="[^"]*"', r'<svg\1', element, count=1)
    element = element.replace("<svg", f'<svg role="img" aria-label="{title}" class="plot"', 1)
    return Plot(name, title, caption, element)


def _histogram_cdf(histograms: list[dict]) -> tuple[list[float], list[float]]:
    """Summed histograms as a CDF: x the upper edge of each bucket in ms, y the fraction at or below."""
    if not histograms:
        return [], []
    counts: dict[int, int] = {}
    h0 = histograms[0]
    for h in histograms:
        for bucket, count in h["counts"]:
            counts[bucket] = counts.get(bucket, 0) + count
    total = sum(counts.values())
    if total == 0:
        return [], []
    xs, ys, seen = [], [], 0
    for bucket in sorted(counts):
        seen += counts[bucket]
        xs.append(h0["min_ms"] * 10 ** ((bucket + 1) / h0["buckets_per_decade"]))
        ys.append(seen / total)
    return xs, ys


def _latency_histograms(report: dict, topology: str, flush: str, baseline: Optional[bool]) -> list[dict]:
    base = model.baseline_fault(report)
    out = []
    for run in model.runs_of(report, topology, flush):
        if baseline is True and (base is None or run["fault"] != base["name"]):
            continue
        if baseline is False and base is not None and run["fault"] == base["name"]:
            continue
        series = run["run"].get("series")
        if series:
            out.append(series["send_latency_histogram"])
    return out


def latency_cdf(report: dict, out_dir: pathlib.Path) -> Plot:
    topologies = report["matrix"]["topologies"]
    base = model.baseline_fault(report)
    columns = min(3, len(topologies))
    rows = math.ceil(len(topologies) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False, sharey=True)
    for index, topology in enumerate(topologies):
        ax = axes[index // columns][index % columns]
        for flush in report["matrix"]["flush"]:
            color = FLUSH_COLORS.get(flush, None)
            variants = [(True, "-", "no fault"), (False, ":", "under faults")] if base else [(None, "-", "all runs")]
            for which, style, label in variants:
                xs, ys = _histogram_cdf(_latency_histograms(report, topology, flush, which))
                if xs:
                    # Clip to the logit axis's open interval.
                    ys = [min(max(y, 1e-4), 1 - 1e-4) for y in ys]
                    ax.step(xs, ys, where="post", linestyle=style, color=color, label=f"{flush}, {label}")
        ax.set_xscale("log")
        ax.set_yscale("logit")
        ax.set_ylim(0.01, 0.9999)
        ticks = [0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999]
        ax.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
        ax.yaxis.set_major_formatter(matplotlib.ticker.FixedFormatter(["p1", "p10", "p50", "p90", "p99", "p99.9",
                                                                       "p99.99"]))
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_title(topology)
        ax.set_xlabel("send latency, ms")
        if index % columns == 0:
            ax.set_ylabel("percentile of sends")
        ax.legend(fontsize=7, loc="lower right")
    for index in range(len(topologies), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    fig.tight_layout()
    caption = ("Send round-trip latency CDF per topology (log x; logit y, so the p99 and p99.9 tails are "
               "visible). " + ("Solid: the fault-free column; dotted: every fault pooled." if base else
                               "Every run pooled."))
    return _save(fig, out_dir, "latency_cdf", "Send latency CDF per topology", caption)


def _config_p99(report: dict, config: dict) -> float:
    base = model.baseline_fault(report)
    if base is not None:
        c = model.cell(config, base["name"])
        if c and c["seeds"] > 0:
            return c["send_p99_ms"]
    # No fault-free column: the median over faults of the cells' p99.
    values = sorted(c["send_p99_ms"] for c in config["cells"] if c["seeds"] > 0)
    return values[len(values) // 2] if values else 0.0


def config_loss_per_million(config: dict) -> float:
    lost = sum(c["lost"] for c in config["cells"])
    acked = sum(c["acknowledged"] for c in config["cells"])
    return 1e6 * lost / acked if acked else 0.0


def _place_labels(ax, points: list[tuple[float, float, str]]) -> None:
    """Labels beside their points, nudged apart vertically so none overlaps another (in display pixels)."""
    fig = ax.figure
    fig.canvas.draw()
    transform = ax.transData
    placed: list[tuple[float, float]] = []
    line_px, width_px = 11.0, 190.0
    for x, y, text in sorted(points, key=lambda p: (p[1], p[0])):
        px, py = transform.transform((x, y))
        ly = py
        while any(abs(ly - oy) < line_px and abs(px - ox) < width_px for ox, oy in placed):
            ly += line_px
        placed.append((px, ly))
        ax.annotate(text, (x, y), xytext=(8, ly - py), textcoords="offset points", fontsize=7, va="center",
                    arrowprops={"arrowstyle": "-", "color": "#999", "linewidth": 0.5} if ly != py else None)


def loss_vs_latency(report: dict, out_dir: pathlib.Path) -> Plot:
    fig, ax = plt.subplots(figsize=(10, 5.6))
    topologies = report["matrix"]["topologies"]
    points = []
    for config in model.configurations(report):
        x = _config_p99(report, config)
        y = config_loss_per_million(config)
        marker = TOPOLOGY_MARKERS[topologies.index(config["topology"]) % len(TOPOLOGY_MARKERS)]
        ax.scatter([x], [y], marker=marker, s=70, color=FLUSH_COLORS.get(config["flush"]), edgecolor="black",
                   linewidth=0.5, zorder=3, alpha=0.85)
        points.append((x, y, model.config_name(config)))
    top = max([p[1] for p in points] + [10.0])
    bottom = min([p[1] for p in points] + [top])
    if bottom > 0:  # every configuration lost something: a plain log scale around the points
        ax.set_yscale("log")
        ax.set_ylim(bottom / 3, top * 3)
    else:  # 0 at the bottom, then logarithmic
        ax.set_yscale("symlog", linthresh=10)
        ax.set_ylim(-1, top * 3)
    xs = [p[0] for p in points] or [1.0]
    span = max(xs) - min(xs)
    ax.set_xlim(max(0.0, min(xs) - 0.15 * span - 0.05), max(xs) + 0.6 * span + 0.3)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    _place_labels(ax, points)
    base = model.baseline_fault(report)
    ax.set_xlabel("send p99, ms" + (" (fault-free column, worst seed)" if base else " (median over faults)"))
    ax.set_ylabel("acknowledged messages lost per million\n(every fault of the matrix together)")
    handles = [plt.Line2D([], [], marker=TOPOLOGY_MARKERS[i % len(TOPOLOGY_MARKERS)], linestyle="", color="grey",
                          label=t) for i, t in enumerate(topologies)]
    handles += [plt.Line2D([], [], marker="o", linestyle="", color=c, label=f) for f, c in FLUSH_COLORS.items()
                if f in report["matrix"]["flush"]]
    ax.legend(handles=handles, fontsize=7, loc="lower right")
    fig.tight_layout()
    caption = ("Each configuration one point: what it loses (lost per million acknowledged, every fault of the "
               "matrix together; 0 at the bottom, then a log scale) against what it costs (send p99). Lower left "
               "is better.")
    return _save(fig, out_dir, "loss_vs_latency", "Loss against latency, one point per configuration", caption)


def availability(report: dict, out_dir: pathlib.Path, fault: dict) -> Optional[Plot]:
    runs = [r for r in model.finished_runs(report) if r["fault"] == fault["name"]]
    if not any(r["run"].get("fault_events") or r["run"]["unavailable_write_windows"] or
               r["run"]["unavailable_read_windows"] for r in runs):
        return None  # nothing happened: no timeline to show
    fig, ax = plt.subplots(figsize=(11, 0.28 * len(runs) + 1.4))
    labels = []
    end = max(r["run"]["virtual_end_s"] for r in runs)
    for row, record in enumerate(runs):
        run = record["run"]
        y = len(runs) - 1 - row
        labels.append(f"{record['topology']} {record['flush']} #{record['seed']}")
        for event in run.get("fault_events", []):
            ax.broken_barh([(event["from_s"], event["to_s"] - event["from_s"])], (y - 0.45, 0.9),
                           color=FAULT_COLOR, zorder=1)
        writes = [(w["from_s"], w["to_s"] - w["from_s"]) for w in run["unavailable_write_windows"]]
        reads = [(w["from_s"], w["to_s"] - w["from_s"]) for w in run["unavailable_read_windows"]]
        ax.broken_barh(writes, (y + 0.02, 0.36), color=WRITE_COLOR, zorder=2)
        ax.broken_barh(reads, (y - 0.38, 0.36), color=READ_COLOR, zorder=2)
    ax.axvline(report["duration_s"], color="black", linewidth=0.8, linestyle="--")
    ax.set_yticks(range(len(runs)))
    ax.set_yticklabels(list(reversed(labels)), fontsize=7)
    ax.set_xlim(0, end)
    ax.set_ylim(-0.6, len(runs) - 0.4)
    ax.set_xlabel("virtual time, s (dashed: the workload stops, every fault is healed, consumers drain)")
    ax.grid(axis="y", visible=False)
    handles = [matplotlib.patches.Patch(color=FAULT_COLOR, label="fault active"),
               matplotlib.patches.Patch(color=WRITE_COLOR, label="sends failed"),
               matplotlib.patches.Patch(color=READ_COLOR, label="acknowledged messages unreadable")]
    ax.legend(handles=handles, fontsize=7, loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=3, frameon=False)
    ax.set_title(f"{fault['name']}: {model.fault_phrase(fault)}", loc="left")
    fig.tight_layout()
    name = f"availability-{fault['name']}"
    caption = (f"Availability timeline of every run under {fault['name']}: grey while the fault is active, red "
               "(upper half) while sends to a broker group failed, orange (lower half) while acknowledged messages "
               "could not be read.")
    return _save(fig, out_dir, name, f"Availability under {fault['name']}", caption)


def replication_lag(report: dict, out_dir: pathlib.Path) -> Optional[Plot]:
    """Per fault, each replicated configuration's first seed: the lag of broker-a (the group every fault hits)."""
    series_by_fault: dict[str, list[tuple[str, float, list]]] = {}
    for fault in model.faults(report):
        lines = []
        for config in model.configurations(report):
            runs = model.runs_of(report, config["topology"], config["flush"], fault["name"])
            if not runs:
                continue
            lag = runs[0]["run"].get("series", {}).get("replication_lag", {})
            groups = lag.get("groups", [])
            if groups:
                lines.append((model.config_name(config), lag["interval_s"], groups[0]["bytes"]))
        if lines:
            series_by_fault[fault["name"]] = lines
    if not series_by_fault:
        return None
    names = list(series_by_fault)
    columns = min(2, len(names))
    rows = math.ceil(len(names) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 2.6 * rows), squeeze=False, sharex=True)
    faults_by_name = {f["name"]: f for f in model.faults(report)}
    for index, name in enumerate(names):
        ax = axes[index // columns][index % columns]
        for event in faults_by_name[name].get("events", []):
            to = event["at_s"] + event["duration_s"] if event["duration_s"] > 0 else report["duration_s"]
            ax.axvspan(event["at_s"], to, color=FAULT_COLOR, alpha=0.5, linewidth=0)
        for label, interval, samples in series_by_fault[name]:
            xs = [(k + 1) * interval for k in range(len(samples))]
            ys = [float("nan") if s is None else s / 1024.0 for s in samples]
            ax.plot(xs, ys, linewidth=1, label=label, color=FLUSH_COLORS.get(label.split()[-1]),
                    linestyle="-" if label.startswith("sync") else "--")
        ax.set_yscale("symlog", linthresh=1)
        peak = max([s / 1024.0 for _, _, samples in series_by_fault[name] for s in samples if s is not None] + [1.0])
        ax.set_ylim(0, peak * 2)
        ax.set_title(f"{name}", fontsize=9)
        ax.set_ylabel("lag, KiB")
        if index // columns == rows - 1:
            ax.set_xlabel("virtual time, s")
        ax.legend(fontsize=6, loc="upper left")
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    fig.tight_layout()
    caption = ("Replication lag of broker-a (the group every fault hits) over the workload, first seed: the "
               "master's CommitLog end minus its slave's, sampled every 0.5 s; gaps while the master or slave is "
               "down; grey while the fault is active. Solid: SYNC_MASTER (sync_replication); dashed: ASYNC_MASTER.")
    return _save(fig, out_dir, "replication_lag", "Replication lag over time", caption)


def draw_all(report: dict, out_dir: pathlib.Path) -> list[Plot]:
    plots = [latency_cdf(report, out_dir), loss_vs_latency(report, out_dir)]
    lag = replication_lag(report, out_dir)
    if lag:
        plots.append(lag)
    for fault in model.faults(report):
        plot = availability(report, out_dir, fault)
        if plot:
            plots.append(plot)
    return plots

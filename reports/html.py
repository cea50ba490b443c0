"""index.html: the comparison a person would rather look at than read, as one
self-contained file (CSS inline, plots as inline SVG, no script, nothing
fetched) that opens offline. Sections: the overview with a verdict per
configuration, the seeds' claims, the full comparison table (a column group
per fault), the plots, the lost-message classes with their replay commands,
every run, and the scenario file itself."""
from __future__ import annotations

import html

from reports import claims as claims_module
from reports import model, tables, verdicts

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px 32px; color: #1d1d1f;
       max-width: 1500px; }
h1 { font-size: 24px; margin-bottom: 4px; } h2 { font-size: 19px; margin-top: 36px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin-bottom: 4px; }
.meta { color: #555; } code, pre { font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
pre { background: #f6f6f6; padding: 10px; overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { border: 1px solid #d0d0d0; padding: 3px 6px; }
th { background: #f0f0f3; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { white-space: nowrap; font-weight: 600; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid #e4e4e4; }
.scroll table { margin: 0; font-size: 12px; }
.scroll th.sticky, .scroll td.sticky { position: sticky; left: 0; background: #fff; z-index: 1; }
.scroll th.sticky { background: #f0f0f3; }
colgroup.fault { border-left: 3px solid #888; }
.no_loss { background: #d9f2d9; } .loss_within_bound { background: #fff1b8; } .loss { background: #ffc9c9; }
.loss_exceeds_bound { background: #ff8a8a; font-weight: 700; } .crashed { background: #444; color: #fff; }
.no_runs { background: #eee; color: #888; }
.unavail-none { background: #eef8ee; } .unavail-some { background: #fff6d6; } .unavail-long { background: #ffe0cc; }
tr.good td.verdict { background: #e9f7e9; } tr.warn td.verdict { background: #fff6d6; }
tr.bad td.verdict { background: #ffe1e1; }
td.verdict { min-width: 360px; font-size: 13px; }
table.overview { width: 100%; } table.overview th.fault { max-width: 90px; font-size: 12px; }
table.overview td.name { font-size: 13px; }
.claim { margin: 6px 0 12px; padding: 6px 10px; border-left: 5px solid #999; background: #fafafa; }
.claim.confirmed { border-color: #2e9b2e; } .claim.partly { border-color: #e0a800; }
.claim.not-confirmed { border-color: #d62728; } .claim.not-measured { border-color: #aaa; }
.status { font-weight: 700; text-transform: uppercase; font-size: 12px; margin-right: 6px; }
.legend span { display: inline-block; padding: 1px 8px; margin-right: 6px; border: 1px solid #ccc; font-size: 12px; }
figure { margin: 16px 0 28px; } figcaption { color: #444; font-size: 13px; max-width: 1100px; }
svg.plot { width: 100%; max-width: 1300px; height: auto; }
details summary { cursor: pointer; font-weight: 600; margin: 8px 0; }
"""


def esc(value) -> str:
    return html.escape(str(value), quote=True)


def _unavailable_class(seconds) -> str:
    if seconds is None:
        return ""
    return "unavail-none" if seconds < 1 else "unavail-some" if seconds < 10 else "unavail-long"


def _cell_td(column: model.Column, c: dict) -> str:
    value = c.get(column.key) if c["seeds"] > 0 else None
    css = ["num"]
    if column.key in ("lost", "lost_per_million"):
        css.append(c["outcome"])
    elif column.key.startswith("unavailable_"):
        css.append(_unavailable_class(value))
    elif c["outcome"] in ("crashed", "no_runs"):
        css.append(c["outcome"])
    return f'<td class="{" ".join(x for x in css if x)}">{esc(column.fmt(value))}</td>'


def overview(report: dict) -> str:
    faults = model.faults(report)
    rows = []
    for config in model.configurations(report):
        v = verdicts.verdict(report, config)
        tds = [f'<td class="name">{esc(model.config_name(config))}</td>']
        for fault in faults:
            c = model.cell(config, fault["name"])
            text = "—" if c["seeds"] == 0 else f"{c['lost']}"
            title = model.OUTCOMES.get(c["outcome"], "") + (f"; bound {model.bound_text(c)}" if c.get("loss_bound") else "")
            tds.append(f'<td class="num {c["outcome"]}" title="{esc(title)}">{esc(text)}'
                       f'<br><small>{esc(model.fmt_fixed(1)(c["unavailable_write_s"]))} s</small></td>')
        tds.append(f'<td class="verdict">{esc(v.text)}</td>')
        rows.append(f'<tr class="{v.severity}">{"".join(tds)}</tr>')
    head = "".join(f'<th class="fault" title="{esc(model.fault_phrase(f))}">{_breakable(f["name"])}</th>'
                   for f in faults)
    legend = "".join(f'<span class="{k}">{esc(v)}</span>' for k, v in model.OUTCOMES.items() if k != "no_runs")
    return (f'<p>Each cell: acknowledged messages lost (all seeds) and, below, seconds in which sends failed (worst '
            f'seed). Hover a fault for what it does.</p><p class="legend">{legend}</p>'
            f'<table class="overview"><thead><tr><th>configuration</th>{head}<th>verdict</th></tr>'
            f'</thead><tbody>{"".join(rows)}</tbody></table>')


def _breakable(name: str) -> str:
    """A fault name that may wrap after its underscores, to keep columns narrow."""
    return "_<wbr>".join(esc(part) for part in name.split("_"))


def comparison_table(report: dict) -> str:
    faults = model.faults(report)
    columns = model.COLUMNS
    colgroups = '<colgroup><col></colgroup>' + "".join(
        f'<colgroup class="fault" span="{len(columns)}"></colgroup>' for _ in faults)
    head1 = '<tr><th class="sticky" rowspan="2">configuration</th>' + "".join(
        f'<th colspan="{len(columns)}" title="{esc(model.fault_phrase(f))}">{esc(f["name"])}</th>' for f in faults) + "</tr>"
    head2 = "<tr>" + "".join(f'<th title="{esc(c.title)}">{esc(c.header)}</th>' for _ in faults for c in columns) + "</tr>"
    rows = []
    for config in model.configurations(report):
        tds = [f'<td class="name sticky">{esc(model.config_name(config))}</td>']
        for fault in faults:
            c = model.cell(config, fault["name"])
            tds += [_cell_td(column, c) for column in columns]
        rows.append(f"<tr>{''.join(tds)}</tr>")
    return (f'<div class="scroll"><table id="comparison">{colgroups}<thead>{head1}{head2}</thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def bounds_section(report: dict) -> str:
    if not any(c.get("loss_bound") for config in model.configurations(report) for c in config["cells"]):
        return "<p>These runs carry no loss bounds.</p>"
    faults = model.faults(report)
    rows = []
    for config in model.configurations(report):
        tds = [f'<td class="name">{esc(model.config_name(config))}</td>']
        for fault in faults:
            c = model.cell(config, fault["name"])
            b = c.get("loss_bound")
            if not b:
                tds.append('<td class="no_runs">—</td>')
                continue
            text = f"{c['lost']} ≤ {b['messages']:g}" if b["within_bound"] else \
                f"{c['lost']} &gt; {b['messages']:g} (by {b['exceeded_by']:g})"
            tds.append(f'<td class="num {c["outcome"]}" title="{esc(b.get("reason", ""))}">{text}</td>')
        rows.append(f"<tr>{''.join(tds)}</tr>")
    head = "".join(f"<th>{esc(f['name'])}</th>" for f in faults)
    return ('<p>For each configuration the checker computes from its settings and the run\'s own measurements how '
            'many acknowledged messages its faults may destroy by design (ASYNC_FLUSH: what was acknowledged since '
            'the last completed flush; async replication: what the slave lacked when the master was lost; '
            'SYNC_FLUSH, SYNC_MASTER, RAID10 under one disk loss: nothing). Each cell: lost (all seeds) against the '
            'largest bound of a seed; a cell above its bound is a defect. Hover for the reason.</p>'
            f'<div class="scroll"><table><thead><tr><th>configuration</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def claims_section(report: dict) -> str:
    out = []
    for claim in claims_module.check_claims(report):
        css = claim.status.replace(" ", "-")
        out.append(f'<div class="claim {css}"><span class="status">{esc(claim.status)}</span>{esc(claim.claim)}'
                   f'<br><small>{esc(claim.evidence)}</small></div>')
    return "".join(out)


def lost_section(report: dict) -> str:
    if not report["lost_classes"]:
        return "<p>No acknowledged message was lost in any run.</p>"
    rows = "".join(
        f'<tr><td>{esc(lc["cell"])}</td><td>{esc(lc["cause"])}</td><td class="num">{lc["messages"]}</td>'
        f'<td class="num">{model.span_text(lc)}</td><td><code>{esc(lc["replay"])}</code></td></tr>'
        for lc in report["lost_classes"])
    return ('<p>Each class: a cell and the fault the checker attributes its lost messages to, the messages lost over '
            'all seeds, the span of their acknowledgements in the worst seed, and the command that replays the '
            'worst seed with a full trace.</p>'
            '<div class="scroll"><table><thead><tr><th>cell</th><th>caused by</th><th>lost</th><th>acked span ms</th>'
            f'<th>replay the worst seed</th></tr></thead><tbody>{rows}</tbody></table></div>')


def failed_section(report: dict) -> str:
    unhappy = tables.failed_runs(report)
    if not unhappy:
        return ""
    items = "".join(f"<li>{esc(r['cell'])} seed {r['seed']}: {esc(tables.run_problem(r))}<br>"
                    f"<code>{esc(r['replay'])}</code></li>" for r in unhappy)
    return f"<h3>Runs that failed or crashed</h3><ul>{items}</ul>"


def runs_section(report: dict) -> str:
    rows = []
    for r in report["runs"]:
        run = r.get("run") or {}
        figures = run.get("figures", {})
        rows.append(f'<tr><td>{esc(r["cell"])}</td><td class="num">{r["seed"]}</td><td>{esc(r["verdict"])}</td>'
                    f'<td class="num">{figures.get("acknowledged", "")}</td><td class="num">{figures.get("lost", "")}'
                    f'</td><td><code>{esc(run.get("trace_digest", r.get("crash", "")))}</code></td>'
                    f'<td><code>{esc(r["replay"])}</code></td></tr>')
    return (f'<details><summary>All {len(report["runs"])} runs</summary><div class="scroll"><table><thead><tr>'
            '<th>cell</th><th>seed</th><th>verdict</th><th>acked</th><th>lost</th><th>trace digest</th>'
            f'<th>replay</th></tr></thead><tbody>{"".join(rows)}</tbody></table></div></details>')


def plots_section(plots: list) -> str:
    return "".join(f'<figure id="{esc(p.name)}"><h3>{esc(p.title)}</h3>{p.svg}<figcaption>{esc(p.caption)} '
                   f'<a href="{esc(p.name)}.png">PNG</a></figcaption></figure>' for p in plots)


def index_html(report: dict, plots: list) -> str:
    t = report["totals"]
    seeds = report["matrix"]["seeds"]
    title = f"mqsim compare: {report['scenario']}"
    fault_list = "".join(f"<li><b>{esc(f['name'])}</b>: {esc(model.fault_phrase(f))} "
                         f"(<code>{esc(_schedule_text(f))}</code>)</li>" for f in model.faults(report))
    per_fault = "".join(f'<h3>{esc(f["name"])}</h3>' + _fault_detail(report, f["name"]) for f in model.faults(report))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{esc(title)}</title><style>{CSS}</style></head><body>
<h1>{esc(title)}</h1>
<p class="meta">{esc(report.get('description', ''))}<br>
mqlab {esc(report['mqlab_version'])} · <code>{esc(report['scenario_file'])}</code> (hash {esc(report['scenario_hash'])})
· {len(model.configurations(report))} configurations × {len(model.faults(report))} faults × seeds {seeds['first']}–{seeds['last']}
· {report['duration_s']:g} s of virtual time each, {model.total_rate_per_s(report):g} msgs/s
· {t['runs']} runs: {t['passed']} passed, {t['failed']} failed, {t['crashed']} crashed, {t['missing']} missing</p>
<h2>Which configuration loses what</h2>{overview(report)}
<h2>The seeds' claims, checked</h2>{claims_section(report)}
<h2>Plots</h2>{plots_section(plots[:2])}
<h2>The comparison table</h2>
<p>One row per configuration, one column group per fault. Counts over all seeds; seconds and latencies (ms) of the worst
seed; <i>thru rel</i>: throughput over the fastest configuration's under the same fault; <i>recovery s</i>: the longest
broker restart-to-serving time. Hover a heading for its meaning.</p>{comparison_table(report)}
<details><summary>The same, one table per fault</summary>{per_fault}</details>
<h2>Loss bounds</h2>{bounds_section(report)}
<h2>Lost messages: cause and replay</h2>{lost_section(report)}
<h2>Availability and replication over time</h2>{plots_section(plots[2:])}
<h2>Runs</h2>{failed_section(report)}{runs_section(report)}
<h2>The scenario</h2><p>Faults:</p><ul>{fault_list}</ul>
<details><summary>{esc(report['scenario_file'])}</summary><pre>{esc(report['scenario_text'])}</pre></details>
</body></html>
"""


def _schedule_text(fault: dict) -> str:
    return "; ".join(e["describe"] for e in fault["events"]) or "no fault"


def _fault_detail(report: dict, fault_name: str) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in tables.fault_table_head(report, fault_name))
    body = "".join("<tr>" + "".join(f'<td class="{"name" if i == 0 else "num"}">{esc(v)}</td>'
                                    for i, v in enumerate(row)) + "</tr>"
                   for row in tables.fault_table_rows(report, fault_name))
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'

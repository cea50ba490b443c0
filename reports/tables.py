"""summary.csv and summary.md: the comparison for a spreadsheet and for a
pull request. The CSV has one row per (topology, flush, fault) with every
figure at full precision; the Markdown has the overview (lost messages and
a verdict per configuration), one table per fault with the comparison
table's columns, the seeds' claims, and the lost-message classes with the
commands that replay them. Both format figures with model.COLUMNS' rules,
as index.html does."""
from __future__ import annotations

import csv
import io

from reports import claims as claims_module
from reports import model, verdicts

OUTCOME_MARKS = {"no_loss": "", "loss_within_bound": " ✓bound", "loss": " ✗", "loss_exceeds_bound": " ✗✗",
                 "crashed": " CRASH", "no_runs": ""}


def summary_csv(report: dict) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    bound_columns = ["loss_bound_messages", "within_bound", "exceeded_by"]
    writer.writerow(["topology", "flush", "fault"] + model.CSV_FIGURES + bound_columns)
    for config in model.configurations(report):
        for c in config["cells"]:
            b = c.get("loss_bound") or {}
            row = [config["topology"], config["flush"], c["fault"]]
            row += ["" if c.get(key) is None else c[key] for key in model.CSV_FIGURES]
            row += [b.get("messages", ""), b.get("within_bound", ""), b.get("exceeded_by", "")]
            writer.writerow(row)
    return out.getvalue()


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def _md_table(head: list[str], rows: list[list[str]], numeric: set[int]) -> list[str]:
    """numeric: the columns aligned right."""
    lines = [_md_row(head), "|" + "|".join("---:" if i in numeric else "---" for i in range(len(head))) + "|"]
    lines += [_md_row(row) for row in rows]
    return lines


def overview_rows(report: dict) -> list[list[str]]:
    """Per configuration: lost messages (all seeds) per fault, marked by outcome, and the verdict."""
    rows = []
    for config in model.configurations(report):
        row = [model.config_name(config)]
        for fault in model.faults(report):
            c = model.cell(config, fault["name"])
            if c["outcome"] == "crashed":
                row.append("CRASH")
            else:
                row.append("—" if c["seeds"] == 0 else f"{c['lost']}{OUTCOME_MARKS.get(c['outcome'], '')}")
        row.append(verdicts.verdict(report, config).text)
        rows.append(row)
    return rows


def fault_table_rows(report: dict, fault_name: str) -> list[list[str]]:
    rows = []
    has_bounds = any((model.cell(config, fault_name) or {}).get("loss_bound") for config in model.configurations(report))
    for config in model.configurations(report):
        c = model.cell(config, fault_name)
        ran = c["seeds"] > 0
        row = [model.config_name(config)] + [column.fmt(c.get(column.key) if ran else None) for column in model.COLUMNS]
        if has_bounds:
            row.append(model.bound_text(c))
        rows.append(row)
    return rows


def fault_table_head(report: dict, fault_name: str) -> list[str]:
    has_bounds = any((model.cell(config, fault_name) or {}).get("loss_bound") for config in model.configurations(report))
    return ["configuration"] + [column.header for column in model.COLUMNS] + (["loss bound"] if has_bounds else [])


def failed_runs(report: dict) -> list[dict]:
    return [r for r in report["runs"] if r["verdict"] != "passed"]


def run_problem(record: dict) -> str:
    """Why a run did not pass, in a few words."""
    if record["verdict"] == "crashed":
        return f"crashed ({record['crash']})"
    run = record["run"]
    reasons = [] if run.get("converged", True) else [f"liveness: {run.get('liveness_failure', '')}"]
    reasons += [e.get("describe", e.get("metric", "")) for e in run.get("expectations", []) if not e.get("held", True)]
    return "failed: " + ("; ".join(reasons) if reasons else "see its report")


def summary_md(report: dict, plots: list) -> str:
    t = report["totals"]
    lines = [f"# mqsim compare: {report['scenario']}", ""]
    if report.get("description"):
        lines += [report["description"], ""]
    lines += [f"mqlab {report['mqlab_version']}, `{report['scenario_file']}` (hash {report['scenario_hash']}), "
              f"{len(model.configurations(report))} configurations x {len(model.faults(report))} faults, seeds "
              f"{report['matrix']['seeds']['first']}-{report['matrix']['seeds']['last']}, "
              f"{report['duration_s']:g} s of virtual time each: {t['runs']} runs, {t['passed']} passed, "
              f"{t['failed']} failed, {t['crashed']} crashed, {t['missing']} missing.", ""]
    lines += ["## Acknowledged messages lost, per configuration and fault", "",
              "All seeds together. ✓bound: within the configuration's loss bound (the design working); "
              "✗: lost; ✗✗: lost more than the bound (a defect).", ""]
    head = ["configuration"] + [f["name"] for f in model.faults(report)] + ["verdict"]
    lines += _md_table(head, overview_rows(report), set(range(1, len(head) - 1))) + [""]
    lines += ["## The comparison, fault by fault", "",
              "Counts are over all seeds; seconds and latencies (ms) are the worst seed's; `thru rel` is "
              "throughput over the fastest configuration's under the same fault.", ""]
    for fault in model.faults(report):
        lines += [f"### {fault['name']}: {model.fault_phrase(fault)}", ""]
        head = fault_table_head(report, fault["name"])
        lines += _md_table(head, fault_table_rows(report, fault["name"]), set(range(1, len(head)))) + [""]
    lines += ["## The seeds' claims, checked", ""]
    for claim in claims_module.check_claims(report):
        lines += [f"- **{claim.status.upper()}**: {claim.claim}  ", f"  {claim.evidence}"]
    lines += [""]
    lines += ["## Lost messages: the fault that caused them and the run that shows it", ""]
    if report["lost_classes"]:
        rows = [[lc["cell"], lc["cause"], str(lc["messages"]), model.span_text(lc), f"`{lc['replay']}`"]
                for lc in report["lost_classes"]]
        lines += _md_table(["cell", "caused by", "lost (all seeds)", "acked span ms", "replay the worst seed"], rows,
                           {2, 3})
    else:
        lines += ["No acknowledged message was lost in any run."]
    unhappy = failed_runs(report)
    if unhappy:
        lines += ["", "## Runs that failed or crashed", ""]
        lines += [f"- {r['cell']} seed {r['seed']}: {run_problem(r)}; `{r['replay']}`" for r in unhappy]
    lines += ["", "## Plots", ""]
    lines += [f"- [{plot.title}]({plot.name}.png)" for plot in plots]
    return "\n".join(lines) + "\n"

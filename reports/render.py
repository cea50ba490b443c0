"""python3 -m reports.render REPORT_JSON [--out DIR]

Renders the report.json of `mqsim compare` into its folder (or DIR):
summary.csv, summary.md, index.html and the plots (NAME.png and NAME.svg).
`mqsim compare` runs this itself; run it by hand to re-render a report, e.g.
after changing the renderers.

Exit status: 0 rendered; 2 the report cannot be read (not JSON, not a
compare report); 3 python3-matplotlib is missing (Debian:
`apt-get install python3-matplotlib`, or scripts/setup-deps.sh).
"""
from __future__ import annotations

import argparse
import pathlib
import sys

EXIT_BAD_REPORT = 2
EXIT_MISSING_PACKAGE = 3


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m reports.render", description=__doc__.splitlines()[2])
    parser.add_argument("report", type=pathlib.Path, help="report.json of mqsim compare")
    parser.add_argument("--out", type=pathlib.Path, help="the folder to write into (default: the report's)")
    args = parser.parse_args(argv)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("reports.render: python3-matplotlib is missing; install it with `apt-get install python3-matplotlib` "
              f"(or scripts/setup-deps.sh), and run {sys.executable} (Debian's python3)", file=sys.stderr)
        return EXIT_MISSING_PACKAGE
    from reports import html, model, plots, tables  # after the check: plots imports matplotlib

    try:
        report = model.load(args.report)
    except (OSError, ValueError) as error:  # json.JSONDecodeError is a ValueError
        print(f"reports.render: {error}", file=sys.stderr)
        return EXIT_BAD_REPORT
    out = args.out or args.report.parent
    out.mkdir(parents=True, exist_ok=True)
    drawn = plots.draw_all(report, out)
    (out / "summary.csv").write_text(tables.summary_csv(report), encoding="utf-8")
    (out / "summary.md").write_text(tables.summary_md(report, drawn), encoding="utf-8")
    (out / "index.html").write_text(html.index_html(report, drawn), encoding="utf-8")
    print(f"reports.render: wrote {out}/index.html, summary.md, summary.csv and {len(drawn)} plots")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

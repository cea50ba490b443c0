"""mqlab's reports: turns the report.json of `mqsim compare` into summary.md,
summary.csv and a self-contained index.html with plots (SVG inline, PNG
beside). Run as `python3 -m reports.render report.json`; see README.md."""

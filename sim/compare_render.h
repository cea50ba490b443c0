// Rendering a compare report: report.json becomes summary.md, summary.csv
// and index.html (with the plots as SVG inline and PNG beside) by the Python
// package reports/ of the source tree (MQLAB_SOURCE_DIR, set by the build),
// run as `/usr/bin/python3 -m reports.render DIR/report.json` with that
// directory as its working directory and PYTHONPATH. Debian's python3 is
// named by path because the first python3 on PATH may be another install
// without python3-matplotlib.
#pragma once

#include <string>

#include "broker/common/status.h"

namespace mqlab::sim {

inline constexpr char kReportRendererPython[] = "/usr/bin/python3";

// Writes report.json (pretty-printed) into dir, creating dir and its parents.
// IoError naming the path when it cannot.
Status write_report_folder_json(const std::string& dir, const std::string& json_text);

// Renders dir/report.json into dir. Unavailable with what to install when
// python3 or python3-matplotlib is missing (the renderer exits 3 then);
// Aborted when the renderer failed otherwise (it printed why on stderr).
Status render_report_folder(const std::string& dir);

}  // namespace mqlab::sim

// A report for SIGBUS, the signal a copy into a mapping (File::
// map_for_appends) gets when the kernel cannot back the page: an I/O error
// reading it in, or the file cut below the mapping by another process.
// Without it the broker dies with the shell's bare "Bus error". With it,
// one line on stderr names the signal, the address and what it means for
// the store; then the default action runs (the faulting copy is retried
// with the handler reset: the process dies of SIGBUS, with a core dump when
// the system keeps them). Real programs only (mqbroker); nothing is
// recovered in the handler: a put's bytes may be half copied, and recovery
// at the next start verifies every record after the checkpoint.
#pragma once

namespace mqlab::env {

// Installs the report for the whole process. program names it in the line;
// it must outlive the process (a string literal).
void install_mapped_write_fault_report(const char* program);

}  // namespace mqlab::env

// `dlenv __live-probe`: the hidden mode in which dlenv is its own live-probe child
// (probe/live_isolation.h). Not in the command table: no help, completion or man page.
#pragma once

namespace dlenv {

// Caps its memory, keeps the real standard output for the protocol (libraries that print
// write to stderr instead), serves the requests on stdin and returns the exit status.
int run_live_probe_child();

// The protocol's output (live_probe_cmd_posix.cc / _win32.cc): takes over standard output
// and points the process's own stdout at stderr; writes one line at once.
int take_stdout_for_protocol();
void write_protocol_line(int fd, const char* data, unsigned long size);

}  // namespace dlenv

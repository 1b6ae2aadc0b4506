// The command line: one table of subcommands. Output goes to the given streams
// so the whole CLI is testable in-process.
#pragma once

#include <iosfwd>

namespace dlenv {

// Exit codes (DESIGN.md): 0 no error finding, 1 error finding (--strict: warnings
// too), 2 usage error, 3 the tool itself failed.
enum ExitCode { kExitOk = 0, kExitFindings = 1, kExitUsage = 2, kExitToolFailed = 3 };

int cli_main(int argc, const char* const* argv, std::ostream& out, std::ostream& err,
             bool stdout_is_tty);

// The dlenv executable's argv[0], for main() only: the live-probe child is started from it
// where /proc/self/exe does not name dlenv (a chroot without /proc, `ld.so dlenv ...`).
void remember_invocation(const char* argv0);

}  // namespace dlenv

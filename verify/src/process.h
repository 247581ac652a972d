// Runs a child process with a time limit, streaming its stdout line by line.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace parity::verify {

struct ProcessResult {
  int exit_code = -1;   // valid when !signaled && !timed_out
  int signal = 0;       // the signal that ended the child, if any
  bool timed_out = false;
  std::string stderr_tail;  // last lines of the child's stderr, for error messages
  std::string stdout_text;  // the whole stdout, when asked for (keep_stdout)
};

// `on_line` gets each stdout line as it arrives; stderr is passed through to ours when `echo_stderr`.
// Safe to call from several threads at once (the environment is built before fork; pipes are CLOEXEC).
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::function<void(const std::string&)>& on_line, bool echo_stderr = false,
                          const std::vector<std::pair<std::string, std::string>>& extra_env = {},
                          bool keep_stdout = false);

}  // namespace parity::verify

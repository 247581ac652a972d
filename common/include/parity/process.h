// The one way Parity starts a child process (cli and verify): argv (no shell, so nothing to quote),
// a time limit, stdout streamed line by line, stderr kept (and optionally echoed).
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace parity {

struct ProcessResult {
  int exit_code = -1;  // valid when !signaled && !timed_out
  int signal = 0;      // the signal that ended the child, if any
  bool timed_out = false;
  std::string stderr_tail;  // last lines of the child's stderr, for error messages
  std::string stdout_text;  // the whole stdout, when asked for (keep_stdout)
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};

// `on_line` gets each stdout line as it arrives; stderr is passed through to ours when `echo_stderr`.
// `extra_env` entries replace or add environment variables. Safe to call from several threads at once
// (the environment is built before fork; pipes are CLOEXEC). Throws parity::Error when the child
// cannot be started at all (an exec failure is exit code 127 with the message in stderr_tail).
ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::function<void(const std::string&)>& on_line, bool echo_stderr = false,
                          const std::vector<std::pair<std::string, std::string>>& extra_env = {},
                          bool keep_stdout = false);

}  // namespace parity

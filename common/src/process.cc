#include "parity/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "parity/error.h"

namespace parity {

namespace {

// The environment with `extra_env` applied, as KEY=VALUE strings.
std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& extra_env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    bool overridden = false;
    for (const auto& [k, v] : extra_env) overridden = overridden || k == key;
    if (!overridden) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : extra_env) env_strings.push_back(k + "=" + v);
  return env_strings;
}

struct Child {
  pid_t pid;
  int out_fd, err_fd;
};

// Forks and execs argv with its stdout and stderr on pipes, stdin from /dev/null, in its own group.
Child spawn(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& extra_env) {
  // Everything the child needs is prepared here: between fork and exec only async-signal-safe calls.
  std::vector<std::string> env_strings = child_environment(extra_env);
  std::vector<char*> envp, args;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    throw Error({"process"}, std::string("pipe failed: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw Error({"process"}, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // own process group: a timeout kills the child and everything it started
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execvpe(args[0], args.data(), envp.data());
    const char* what = "cannot execute ";
    (void)!write(STDERR_FILENO, what, std::strlen(what));
    (void)!write(STDERR_FILENO, args[0], std::strlen(args[0]));
    (void)!write(STDERR_FILENO, "\n", 1);
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  return {pid, out_pipe[0], err_pipe[0]};
}

// Reads the child's pipes until both close or the deadline passes (then kills its group).
void pump(const Child& child, double timeout_seconds, const std::function<void(const std::string&)>& on_line,
          bool echo_stderr, bool keep_stdout, ProcessResult& result, std::string& err_buf) {
  std::string out_buf;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  pollfd fds[2] = {{child.out_fd, POLLIN, 0}, {child.err_fd, POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      kill(-child.pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(std::min<long>(left.count(), 1000))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      if (i == 0) {
        out_buf.append(buf, static_cast<size_t>(n));
        if (keep_stdout) result.stdout_text.append(buf, static_cast<size_t>(n));
        for (size_t nl; (nl = out_buf.find('\n')) != std::string::npos;) {
          if (on_line) on_line(out_buf.substr(0, nl));
          out_buf.erase(0, nl + 1);
        }
      } else {
        if (echo_stderr) (void)!write(STDERR_FILENO, buf, static_cast<size_t>(n));
        err_buf.append(buf, static_cast<size_t>(n));
        if (err_buf.size() > 16384) err_buf.erase(0, err_buf.size() - 8192);
      }
    }
  }
  for (auto& fd : fds)
    if (fd.fd >= 0) close(fd.fd);
  if (!out_buf.empty() && on_line) on_line(out_buf);
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, double timeout_seconds,
                          const std::function<void(const std::string&)>& on_line, bool echo_stderr,
                          const std::vector<std::pair<std::string, std::string>>& extra_env, bool keep_stdout) {
  const Child child = spawn(argv, extra_env);
  ProcessResult result;
  std::string err_buf;
  pump(child, timeout_seconds, on_line, echo_stderr, keep_stdout, result, err_buf);
  int status = 0;
  waitpid(child.pid, &status, 0);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.stderr_tail = err_buf.size() > 2000 ? err_buf.substr(err_buf.size() - 2000) : err_buf;
  return result;
}

}  // namespace parity

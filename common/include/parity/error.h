// The one error type of Parity: says which stage failed, on which file/node/op, and why.
#pragma once
#include <stdexcept>
#include <string>

namespace parity {

struct ErrorContext {
  std::string stage;  // "pt2", "export", "onnx-load", "run", "verify", "cli", ...
  std::string file;   // file being read or written, if any
  std::string node;   // graph node name, if any
  std::string op;     // op type / ATen target, if any
};

// What kind of failure: decides the exit code at the CLI boundary.
enum class ErrorKind {
  kInput,        // unreadable or malformed input, or a failure while processing it
  kUnsupported,  // valid input that Parity does not support yet (an ATen op, an ONNX op)
  kUsage,        // a bad command line
};

class Error : public std::runtime_error {
 public:
  Error(ErrorContext ctx, const std::string& message, ErrorKind kind = ErrorKind::kInput);
  const ErrorContext& context() const { return ctx_; }
  const std::string& message() const { return message_; }
  ErrorKind kind() const { return kind_; }

  // A copy of this error with missing context fields filled from `outer`.
  Error with_context(const ErrorContext& outer) const;

 private:
  static std::string format(const ErrorContext& ctx, const std::string& message);
  ErrorContext ctx_;
  std::string message_;
  ErrorKind kind_;
};

// Exit codes of the parity binary (documented in the README).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,       // verification or matrix found mismatches/failures
  kExitUsage = 2,        // bad command line
  kExitInputError = 3,   // unreadable or malformed input (archive, model, tensor, path)
  kExitUnsupported = 4,  // valid input that Parity does not support yet (unknown op, ...)
  kExitNotTested = 5,    // a check this machine cannot run (PARITY_REFRT_ISA above the CPU's level)
};

}  // namespace parity

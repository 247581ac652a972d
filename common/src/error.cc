#include "parity/error.h"

namespace parity {

std::string Error::format(const ErrorContext& ctx, const std::string& message) {
  std::string out;
  if (!ctx.stage.empty()) out += ctx.stage + ": ";
  if (!ctx.file.empty()) out += ctx.file + ": ";
  if (!ctx.node.empty()) out += "node '" + ctx.node + "'";
  if (!ctx.op.empty()) out += (ctx.node.empty() ? "op " : " (") + ctx.op + (ctx.node.empty() ? "" : ")");
  if (!ctx.node.empty() || !ctx.op.empty()) out += ": ";
  return out + message;
}

Error::Error(ErrorContext ctx, const std::string& message, ErrorKind kind)
    : std::runtime_error(format(ctx, message)), ctx_(std::move(ctx)), message_(message), kind_(kind) {}

Error Error::with_context(const ErrorContext& outer) const {
  ErrorContext merged = ctx_;
  if (merged.stage.empty()) merged.stage = outer.stage;
  if (merged.file.empty()) merged.file = outer.file;
  if (merged.node.empty()) merged.node = outer.node;
  if (merged.op.empty()) merged.op = outer.op;
  return Error(merged, message_, kind_);
}

}  // namespace parity

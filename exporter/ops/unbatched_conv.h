// conv1d/2d/3d and conv_transposeNd take an unbatched input (C, spatial...) too; ONNX's Conv needs a batch:
// the input gets one (Unsqueeze) and the result loses it again (Squeeze) in finish().
#pragma once
#include <string>

#include "../src/translate.h"

namespace parity::exporter {

class UnbatchedConv {
 public:
  explicit UnbatchedConv(TranslateContext& ctx) : ctx_(ctx), unbatched_(ctx.rank("input") == ctx.rank("weight") - 1) {}
  std::string input() const {
    return unbatched_ ? ctx_.emit1("Unsqueeze", {ctx_.tensor("input"), ctx_.graph.constant_i64({0})}, "batched")
                      : ctx_.tensor("input");
  }
  std::string result() const { return unbatched_ ? (batched_ = ctx_.temp("batched_out")) : ctx_.output(); }
  void finish() const {
    if (unbatched_) ctx_.emit("Squeeze", {batched_, ctx_.graph.constant_i64({0})}, {ctx_.output()});
  }

 private:
  TranslateContext& ctx_;
  bool unbatched_;
  mutable std::string batched_;
};

}  // namespace parity::exporter

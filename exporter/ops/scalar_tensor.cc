// aten::tensor.{float,int,bool}(t, dtype?, device?, requires_grad): a 0-d tensor holding a Python number
// (TorchScript's torch.tensor(scalar)); the value may be symbolic, so it is emitted as a value, not folded.
#include "../src/translate.h"

namespace parity::exporter {
namespace {

void tensor_of_scalar(TranslateContext& ctx) {
  ctx.emit("Identity", {ctx.value("t", ctx.output_meta().dtype)}, {ctx.output()});
}

}  // namespace

PARITY_TRANSLATION("aten::tensor.float", tensor_of_scalar, 18);
PARITY_TRANSLATION("aten::tensor.int", tensor_of_scalar, 18);
PARITY_TRANSLATION("aten::tensor.bool", tensor_of_scalar, 18);

}  // namespace parity::exporter

// libFuzzer target: an ONNX ModelProto through refrt's loader and session creation (parse, validation,
// external data next to the model, kernel construction, planning, constant folding).
#include <string>

#include "model_dir.h"
#include "parity/error.h"
#include "parity/refrt/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string origin = parity::fuzz::model_dir() + "/model.onnx";
  try {
    auto session = parity::refrt::Session::load_bytes(std::string(reinterpret_cast<const char*>(data), size), origin);
    (void)session->inputs();
    (void)session->outputs();
  } catch (const parity::Error&) {}
  return 0;
}

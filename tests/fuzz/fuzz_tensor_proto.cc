// libFuzzer target: a serialized TensorProto (test_data_set_<k>/input_<i>.pb) -> Tensor.
#include <string>

#include "parity/error.h"
#include "parity/tensor_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const parity::NamedTensor t =
        parity::parse_tensor_proto(std::string(reinterpret_cast<const char*>(data), size), "fuzz.pb");
    if (t.tensor.nbytes()) {  // the whole payload must be readable
      const auto* p = static_cast<const unsigned char*>(t.tensor.raw());
      volatile unsigned keep = p[0] + p[t.tensor.nbytes() - 1];
      (void)keep;
    }
    (void)parity::serialize_tensor_proto(t.tensor, t.name);
  } catch (const parity::Error&) {}
  return 0;
}

// libFuzzer target: external-data resolution of one initializer (location, offset, length, dtype, dims),
// against a folder holding a data file, a subfolder, a symlink and a hard link (tests/fuzz/model_dir.h).
#include <string>

#include "../../refrt/src/external_data.h"
#include "fuzz_util.h"
#include "model_dir.h"
#include "parity/error.h"
#include "parity/internal/onnx_tensor.h"

namespace {

const char* const kLocations[] = {"w.bin",    "sub/w.bin",     "./w.bin", "link.bin", "hard.bin", "missing.bin",
                                  "../w.bin", "/etc/hostname", "sub",     ".",        "",         "sub/../w.bin"};

std::string number_or_text(parity::fuzz::Consumer& in) {
  const uint8_t how = in.take<uint8_t>();
  if (how % 4 == 0) return in.string(24);                        // anything
  if (how % 4 == 1) return std::to_string(in.take<uint16_t>());  // small, often in range
  return std::to_string(in.take<uint64_t>());                    // anything numeric
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::Consumer in(data, size);
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(in.take<uint8_t>() % 24);
  const int rank = in.take<uint8_t>() % 5;
  for (int i = 0; i < rank; ++i) {
    const uint8_t kind = in.take<uint8_t>();
    proto.add_dims(kind % 8 == 0 ? in.take<int64_t>() : static_cast<int64_t>(kind % 40));
  }
  proto.set_data_location(in.take<uint8_t>() % 8 == 0 ? onnx::TensorProto::DEFAULT : onnx::TensorProto::EXTERNAL);
  const int entries = in.take<uint8_t>() % 6;
  for (int i = 0; i < entries; ++i) {
    auto* kv = proto.add_external_data();
    const uint8_t key = in.take<uint8_t>();
    if (key % 5 == 0) {
      kv->set_key("location");
      const uint8_t pick = in.take<uint8_t>();
      kv->set_value(pick < 200 ? kLocations[pick % (sizeof(kLocations) / sizeof(*kLocations))] : in.string(32));
    } else if (key % 5 == 1) {
      kv->set_key("offset");
      kv->set_value(number_or_text(in));
    } else if (key % 5 == 2) {
      kv->set_key("length");
      kv->set_value(number_or_text(in));
    } else if (key % 5 == 3) {
      kv->set_key("checksum");
      kv->set_value(in.string(8));
    } else {
      kv->set_key(in.string(8));
      kv->set_value(in.string(8));
    }
  }
  const parity::refrt::ModelDirExternalData resolver(parity::fuzz::model_dir(), "fuzz.onnx");
  try {
    const parity::Tensor t = parity::tensor_from_proto(proto, "fuzz.onnx", &resolver);
    if (t.nbytes()) {  // every byte the tensor claims must be readable
      const auto* p = static_cast<const unsigned char*>(t.raw());
      unsigned sum = 0;
      for (size_t i = 0; i < t.nbytes(); i += 61) sum += p[i];
      volatile unsigned keep = sum + p[t.nbytes() - 1];
      (void)keep;
    }
  } catch (const parity::Error&) {}
  return 0;
}

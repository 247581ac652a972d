// libFuzzer target: the program JSON. The input is models/model.json of an otherwise valid archive; after
// a NUL byte, the rest is the weights config (data/weights/model_weights_config.json).
#include <string>

#include "../exporter/zip_writer.h"
#include "fuzz_util.h"
#include "parity/error.h"
#include "parity/exporter/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string model = input.substr(0, nul);
  const std::string config = nul == std::string::npos
                                 ? R"({"config": {"w": {"path_name": "weight_0", "is_param": true, "use_pickle": false,
               "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 2}], "requires_grad": false,
               "device": {"type": "cpu"}, "strides": [{"as_int": 2}, {"as_int": 1}], "storage_offset": {"as_int": 0},
               "layout": 7}}}})"
                                 : input.substr(nul + 1);
  const float w[4] = {1, 2, 3, 4};
  const std::string archive = parity::testing::make_zip({
      {"model/archive_format", "pt2"},
      {"model/models/model.json", model},
      {"model/data/weights/model_weights_config.json", config},
      {"model/data/weights/weight_0", std::string(reinterpret_cast<const char*>(w), sizeof(w))},
  });
  parity::fuzz::MemFile file(reinterpret_cast<const uint8_t*>(archive.data()), archive.size());
  if (!file.ok()) return 0;
  try {
    const parity::pt2::Program program = parity::pt2::read_pt2(file.path());
    (void)program.user_output_names();
    (void)program.mutations();
  } catch (const parity::Error&) {}
  return 0;
}

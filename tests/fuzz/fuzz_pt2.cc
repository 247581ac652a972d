// libFuzzer target: a whole PT2 archive through read_pt2 (zip, program JSON, weights and constants).
#include "fuzz_util.h"
#include "parity/error.h"
#include "parity/exporter/program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::MemFile file(data, size);
  if (!file.ok()) return 0;
  try {
    const parity::pt2::Program program = parity::pt2::read_pt2(file.path());
    unsigned sum = 0;
    for (const auto* stored : {&program.weights, &program.constants})
      for (const auto& [name, t] : *stored)
        if (t.nbytes()) {  // the first and last byte of every stored tensor must be readable
          const auto* p = static_cast<const unsigned char*>(t.raw());
          sum += p[0] + p[t.nbytes() - 1];
        }
    volatile unsigned keep = sum;
    (void)keep;
  } catch (const parity::Error&) {}
  return 0;
}

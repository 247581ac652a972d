// libFuzzer target: the zip container reader of PT2 archives (central directory, zip64, local headers).
#include "fuzz_util.h"
#include "parity/error.h"
#include "../../exporter/src/zip_reader.h"  // private to the exporter; the fuzz target drives it directly

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  parity::fuzz::MemFile file(data, size);
  if (!file.ok()) return 0;
  try {
    const parity::ZipArchive zip = parity::ZipArchive::open(file.path());
    unsigned sum = 0;
    for (const auto& name : zip.names()) {
      const std::string_view bytes = zip.entry(name);  // every entry's range must lie inside the file
      if (!bytes.empty()) sum += static_cast<unsigned char>(bytes.front()) + static_cast<unsigned char>(bytes.back());
    }
    (void)zip.contains("archive_format");
    volatile unsigned keep = sum;
    (void)keep;
  } catch (const parity::Error&) {}
  return 0;
}

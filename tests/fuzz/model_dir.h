// A folder the ONNX fuzz targets resolve external data against, made once per process: a data file, one in
// a subfolder, a symlink to it and a hard-linked pair (both must be refused), removed at exit.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace parity::fuzz {

inline const std::string& model_dir() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    const fs::path d = fs::temp_directory_path() / ("parity_fuzz_" + std::to_string(::getpid()));
    std::error_code ec;
    fs::remove_all(d, ec);
    fs::create_directories(d / "sub", ec);
    std::string bytes(4096 + 64, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7);
    std::ofstream(d / "w.bin", std::ios::binary) << bytes;
    std::ofstream(d / "sub" / "w.bin", std::ios::binary) << bytes.substr(0, 256);
    std::ofstream(d / "hard.bin", std::ios::binary) << bytes.substr(0, 256);
    fs::create_hard_link(d / "hard.bin", d / "hard2.bin", ec);
    fs::create_symlink(d / "w.bin", d / "link.bin", ec);
    static std::string keep = d.string();
    std::atexit([] {
      std::error_code e;
      std::filesystem::remove_all(keep, e);
    });
    return d.string();
  }();
  return dir;
}

}  // namespace parity::fuzz

// File helpers: whole-file reads, atomic writes, read-only memory maps. Errors name the file.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace parity {

std::string read_file(const std::string& path, const std::string& stage = "io");
// Writes to `path.tmp.<pid>` in the same directory, then renames: readers never see a partial file.
void write_file_atomic(const std::string& path, const std::string& data, const std::string& stage = "io");

class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path, const std::string& stage = "io");
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile() = default;
  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace parity

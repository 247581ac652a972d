// Minimal reader of the zip container used by PT2 archives. PT2 stores every record uncompressed,
// so an entry is a byte range of the memory-mapped file: no copy, no inflate.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parity/fs.h"

namespace parity {

class ZipArchive {
 public:
  // Maps the file and reads its central directory; every offset and size is bounds-checked.
  static ZipArchive open(const std::string& path);

  bool contains(const std::string& name) const { return entries_.count(name) != 0; }
  // Bytes of a stored entry; throws parity::Error naming the archive and entry when missing.
  std::string_view entry(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<MappedFile>& file() const { return file_; }

 private:
  struct Entry {
    uint64_t data_offset = 0;
    uint64_t size = 0;
  };
  std::shared_ptr<MappedFile> file_;
  std::map<std::string, Entry> entries_;
};

}  // namespace parity

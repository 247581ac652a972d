#include "zip_reader.h"

#include <cstring>

#include "parity/error.h"

namespace parity {

namespace {

constexpr uint32_t kEndOfCentralDir = 0x06054b50;
constexpr uint32_t kZip64EndOfCentralDir = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;

// Bounds-checked little-endian reads over the mapped file.
class Cursor {
 public:
  Cursor(const unsigned char* data, size_t size, const std::string& path) : data_(data), size_(size), path_(path) {}
  void need(uint64_t offset, uint64_t len, const char* what) const {
    if (offset > size_ || len > size_ - offset)
      throw Error({"pt2", path_}, std::string("truncated or corrupt zip archive (") + what + " past end of file)");
  }
  template <typename T>
  T read(uint64_t offset, const char* what) const {
    need(offset, sizeof(T), what);
    T v;
    std::memcpy(&v, data_ + offset, sizeof(T));
    return v;  // x86-64 and aarch64 are little-endian like the zip format
  }
  std::string str(uint64_t offset, uint64_t len, const char* what) const {
    need(offset, len, what);
    return std::string(reinterpret_cast<const char*>(data_ + offset), len);
  }
  size_t size() const { return size_; }

 private:
  const unsigned char* data_;
  size_t size_;
  const std::string& path_;
};

// The central directory's entry count, size and offset, from the end record (zip64's when the 32-bit
// fields are saturated).
struct CentralDirectory {
  uint64_t count = 0, size = 0, offset = 0;
};

CentralDirectory find_central_directory(const Cursor& c, const std::string& path) {
  const std::string not_zip = "not a PT2 archive (no zip end-of-central-directory record; truncated or not a zip)";
  if (c.size() < 22) throw Error({"pt2", path}, not_zip);

  // The end record sits in the last 22 + 65535 (comment) bytes.
  uint64_t eocd = UINT64_MAX;
  const uint64_t lowest = c.size() > 22 + 65535 ? c.size() - 22 - 65535 : 0;
  for (uint64_t pos = c.size() - 22;; --pos) {
    if (c.read<uint32_t>(pos, "end record") == kEndOfCentralDir) {
      eocd = pos;
      break;
    }
    if (pos == lowest) break;
  }
  if (eocd == UINT64_MAX) throw Error({"pt2", path}, not_zip);

  CentralDirectory cd;
  cd.count = c.read<uint16_t>(eocd + 10, "end record");
  cd.size = c.read<uint32_t>(eocd + 12, "end record");
  cd.offset = c.read<uint32_t>(eocd + 16, "end record");
  if ((cd.count == 0xFFFF || cd.offset == 0xFFFFFFFF || cd.size == 0xFFFFFFFF) && eocd >= 20 &&
      c.read<uint32_t>(eocd - 20, "zip64 locator") == kZip64Locator) {
    const uint64_t z64 = c.read<uint64_t>(eocd - 20 + 8, "zip64 locator");
    if (c.read<uint32_t>(z64, "zip64 end record") != kZip64EndOfCentralDir)
      throw Error({"pt2", path}, "corrupt zip64 end record");
    cd.count = c.read<uint64_t>(z64 + 32, "zip64 end record");
    cd.size = c.read<uint64_t>(z64 + 40, "zip64 end record");
    cd.offset = c.read<uint64_t>(z64 + 48, "zip64 end record");
  }
  c.need(cd.offset, cd.size, "central directory");
  return cd;
}

}  // namespace

ZipArchive ZipArchive::open(const std::string& path) {
  ZipArchive zip;
  zip.file_ = MappedFile::open(path, "pt2");
  const Cursor c(zip.file_->data(), zip.file_->size(), path);
  const CentralDirectory cd = find_central_directory(c, path);
  uint64_t pos = cd.offset;
  for (uint64_t i = 0; i < cd.count; ++i) {
    if (c.read<uint32_t>(pos, "central directory") != kCentralHeader)
      throw Error({"pt2", path}, "corrupt zip central directory entry " + std::to_string(i));
    const uint16_t method = c.read<uint16_t>(pos + 10, "central directory");
    uint64_t comp_size = c.read<uint32_t>(pos + 20, "central directory");
    uint64_t size = c.read<uint32_t>(pos + 24, "central directory");
    const uint16_t name_len = c.read<uint16_t>(pos + 28, "central directory");
    const uint16_t extra_len = c.read<uint16_t>(pos + 30, "central directory");
    const uint16_t comment_len = c.read<uint16_t>(pos + 32, "central directory");
    uint64_t local = c.read<uint32_t>(pos + 42, "central directory");
    const std::string name = c.str(pos + 46, name_len, "entry name");

    // zip64 extra field: present values replace the 0xFFFFFFFF placeholders, in this order.
    uint64_t extra = pos + 46 + name_len;
    const uint64_t extra_end = extra + extra_len;
    while (extra + 4 <= extra_end) {
      const uint16_t id = c.read<uint16_t>(extra, "extra field");
      const uint16_t len = c.read<uint16_t>(extra + 2, "extra field");
      uint64_t field = extra + 4;
      if (id == 0x0001) {
        if (size == 0xFFFFFFFF) {
          size = c.read<uint64_t>(field, "zip64 field");
          field += 8;
        }
        if (comp_size == 0xFFFFFFFF) {
          comp_size = c.read<uint64_t>(field, "zip64 field");
          field += 8;
        }
        if (local == 0xFFFFFFFF) {
          local = c.read<uint64_t>(field, "zip64 field");
          field += 8;
        }
      }
      extra += 4 + uint64_t{len};
    }
    if (method != 0)
      throw Error({"pt2", path}, "entry '" + name + "' is compressed (method " + std::to_string(method) +
                                     "); PT2 archives store records uncompressed");
    if (comp_size != size) throw Error({"pt2", path}, "entry '" + name + "' has inconsistent sizes");
    if (c.read<uint32_t>(local, "local header") != kLocalHeader)
      throw Error({"pt2", path}, "corrupt local header of entry '" + name + "'");
    const uint64_t data =
        local + 30 + c.read<uint16_t>(local + 26, "local header") + c.read<uint16_t>(local + 28, "local header");
    c.need(data, size, ("data of entry '" + name + "'").c_str());
    zip.entries_[name] = Entry{data, size};
    pos += 46 + uint64_t{name_len} + extra_len + comment_len;
  }
  return zip;
}

std::string_view ZipArchive::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw Error({"pt2", path()}, "archive has no entry '" + name + "'");
  return {reinterpret_cast<const char*>(file_->data() + it->second.data_offset), it->second.size};
}

std::vector<std::string> ZipArchive::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : entries_) out.push_back(name);
  return out;
}

}  // namespace parity

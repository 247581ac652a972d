// File helpers: whole-file reads, atomic writes, read-only memory maps. Errors name the file.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

namespace parity {

std::string read_file(const std::string& path, const std::string& stage = "io");
// Writes to `path.tmp.<pid>` in the same directory, then renames: readers never see a partial file.
void write_file_atomic(const std::string& path, const std::string& data, const std::string& stage = "io");

// A memory-mapped file. Read-only mappings (`open`) are registered process-wide so that their resident
// pages can be handed back to the page cache (`release_pages`, `release_all_pages`): the pages are
// clean, so the next access reads them again from the file, and the data never changes.
class MappedFile {
 public:
  static std::shared_ptr<MappedFile> open(const std::string& path, const std::string& stage = "io");
  // A private copy-on-write mapping: writes stay in this process and this mapping (never reach the
  // file); each call gives fresh, unwritten contents. Not registered (its pages may hold writes).
  static std::shared_ptr<MappedFile> open_private_writable(const std::string& path, const std::string& stage = "io");
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  bool writable() const { return writable_; }
  unsigned char* mutable_data() const { return writable_ ? const_cast<unsigned char*>(data_) : nullptr; }

  // The registered read-only mapping whose bytes contain `p` (null when none); the caller keeps it alive.
  static std::shared_ptr<MappedFile> containing(const void* p);
  // Drops the resident pages wholly inside [p, p + n) when they belong to a read-only mapping (a no-op
  // for any other memory): resident size goes down, contents stay the same.
  static void release_pages(const void* p, size_t n);
  // release_pages over every live read-only mapping of the process.
  static void release_all_pages();

 private:
  MappedFile() = default;
  static std::shared_ptr<MappedFile> map(const std::string& path, const std::string& stage, bool writable);
  bool writable_ = false;
  std::string path_;
  const unsigned char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace parity

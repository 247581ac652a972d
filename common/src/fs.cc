#include "parity/fs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>
#include <algorithm>
#include <sstream>

#include "parity/error.h"

namespace parity {

namespace {
std::string errno_text() { return std::strerror(errno); }
}  // namespace

std::string read_file(const std::string& path, const std::string& stage) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Error({stage, path}, "is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error({stage, path}, "cannot open file: " + errno_text());
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error({stage, path}, "read failed: " + errno_text());
  return ss.str();
}

void write_file_atomic(const std::string& path, const std::string& data, const std::string& stage) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error({stage, path}, "cannot create file: " + errno_text());
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      throw Error({stage, path}, "write failed: " + errno_text());
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error({stage, path}, "cannot move temporary file into place: " + ec.message());
  }
}

namespace {

// Live read-only mappings, for release_pages / containing. Never destroyed (mappings may outlive main).
struct MappingRegistry {
  std::mutex mutex;
  std::vector<std::weak_ptr<MappedFile>> live;
  static MappingRegistry& instance() {
    static MappingRegistry* r = new MappingRegistry();
    return *r;
  }
};

size_t page_size() {
  static const size_t size = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

}  // namespace

std::shared_ptr<MappedFile> MappedFile::map(const std::string& path, const std::string& stage, bool writable) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error({stage, path}, "cannot open file: " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error({stage, path}, "not a regular file");
  }
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
  f->size_ = static_cast<size_t>(st.st_size);
  f->writable_ = writable;
  if (f->size_ > 0) {
    // MAP_PRIVATE either way: a writable mapping is copy-on-write, the file is never modified.
    void* p = ::mmap(nullptr, f->size_, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw Error({stage, path}, "mmap failed: " + errno_text());
    }
    f->data_ = static_cast<const unsigned char*>(p);
  }
  ::close(fd);
  return f;
}

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path, const std::string& stage) {
  auto f = map(path, stage, /*writable=*/false);
  if (f->size_ > 0) {
    auto& registry = MappingRegistry::instance();
    std::lock_guard<std::mutex> lock(registry.mutex);
    std::erase_if(registry.live, [](const std::weak_ptr<MappedFile>& w) { return w.expired(); });
    registry.live.push_back(f);
  }
  return f;
}

std::shared_ptr<MappedFile> MappedFile::open_private_writable(const std::string& path, const std::string& stage) {
  return map(path, stage, /*writable=*/true);
}

std::shared_ptr<MappedFile> MappedFile::containing(const void* p) {
  const auto* q = static_cast<const unsigned char*>(p);
  auto& registry = MappingRegistry::instance();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (const auto& w : registry.live)
    if (auto f = w.lock())
      if (q >= f->data_ && q < f->data_ + f->size_) return f;
  return nullptr;
}

void MappedFile::release_pages(const void* p, size_t n) {
  const auto f = containing(p);
  if (!f || n == 0) return;
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t end = std::min(begin + n, reinterpret_cast<uintptr_t>(f->data_) + f->size_);
  const uintptr_t page = page_size();
  const uintptr_t first = (begin + page - 1) / page * page;  // whole pages only: neighbours stay resident
  const uintptr_t last = end / page * page;
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void MappedFile::release_all_pages() {
  std::vector<std::shared_ptr<MappedFile>> files;
  {
    auto& registry = MappingRegistry::instance();
    std::lock_guard<std::mutex> lock(registry.mutex);
    for (const auto& w : registry.live)
      if (auto f = w.lock()) files.push_back(std::move(f));
  }
  for (const auto& f : files)  // the mapping itself is page-aligned
    ::madvise(const_cast<unsigned char*>(f->data_), f->size_, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace parity

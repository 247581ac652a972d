#include "parity/fs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
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

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path, const std::string& stage) {
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
  if (f->size_ > 0) {
    void* p = ::mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw Error({stage, path}, "mmap failed: " + errno_text());
    }
    f->data_ = static_cast<const unsigned char*>(p);
  }
  ::close(fd);
  return f;
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

}  // namespace parity

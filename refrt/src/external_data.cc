#include "external_data.h"

#include <sys/stat.h>

#include <charconv>
#include <cstring>
#include <filesystem>

#include "parity/error.h"

namespace parity::refrt {
namespace {

namespace fs = std::filesystem;

uint64_t parse_size(const std::string& text, const std::string& key, const std::string& what,
                    const ErrorContext& where) {
  uint64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end)
    throw Error(where, what + ": external data " + key + " '" + text + "' is not a non-negative integer");
  return v;
}

}  // namespace

ModelDirExternalData::ModelDirExternalData(std::string base_dir, std::string origin)
    : base_dir_(base_dir.empty() ? "." : std::move(base_dir)), origin_(std::move(origin)) {}

std::shared_ptr<MappedFile> ModelDirExternalData::open_checked(const std::string& location,
                                                               const std::string& what) const {
  const ErrorContext where{"refrt", origin_};
  if (location.empty()) throw Error(where, what + ": external data has no location");
  if (location.find('\0') != std::string::npos) throw Error(where, what + ": external data location contains NUL");
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    throw Error(where,
                what + ": external data location '" + location + "' is absolute; it must be relative to the model");
  for (const auto& part : rel)
    if (part == "..") throw Error(where, what + ": external data location '" + location + "' contains '..'");
  auto cached = files_.find(location);
  if (cached != files_.end()) return cached->second;

  // Walk the components so that no symlink on the way can lead out of the model's directory.
  fs::path path(base_dir_);
  struct stat st {};
  for (const auto& part : rel) {
    if (part.empty() || part == ".") continue;
    path /= part;
    if (::lstat(path.c_str(), &st) != 0)
      throw Error(where, what + ": external data file '" + path.string() + "' cannot be read: " + std::strerror(errno));
    if (S_ISLNK(st.st_mode))
      throw Error(where, what + ": external data path '" + path.string() + "' goes through a symlink");
  }
  if (!S_ISREG(st.st_mode)) throw Error(where, what + ": external data '" + path.string() + "' is not a regular file");
  if (st.st_nlink > 1)
    throw Error(where, what + ": external data file '" + path.string() + "' is hard-linked (" +
                           std::to_string(st.st_nlink) + " links); refusing it");
  std::shared_ptr<MappedFile> file;
  try {
    file = MappedFile::open(path.string(), "refrt");
  } catch (const Error& e) {
    throw Error(where, what + ": " + e.what());
  }
  // The file that was mapped must be the one that was checked (a swap in between is refused).
  struct stat after {};
  if (::lstat(path.c_str(), &after) != 0 || after.st_ino != st.st_ino || after.st_dev != st.st_dev ||
      static_cast<size_t>(after.st_size) != file->size())
    throw Error(where, what + ": external data file '" + path.string() + "' changed while it was opened");
  files_[location] = file;
  return file;
}

Tensor ModelDirExternalData::resolve(const onnx::TensorProto& proto, DType dtype, const Shape& shape) const {
  const std::string what = "initializer '" + proto.name() + "'";
  const ErrorContext where{"refrt", origin_};
  std::string location;
  uint64_t offset = 0, length = 0;
  bool has_length = false;
  for (const auto& kv : proto.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = parse_size(kv.value(), "offset", what, where);
    else if (kv.key() == "length")
      length = parse_size(kv.value(), "length", what, where), has_length = true;
  }
  const uint64_t expected = static_cast<uint64_t>(checked_numel(shape)) * dtype_size(dtype);
  if (has_length && length != expected)
    throw Error(where, what + ": external data length " + std::to_string(length) + " but shape " + shape_str(shape) +
                           " x " + dtype_name(dtype) + " needs " + std::to_string(expected));
  length = expected;
  const auto file = open_checked(location, what);
  if (offset > file->size() || length > file->size() - offset)
    throw Error(where, what + ": external data offset " + std::to_string(offset) + " + length " +
                           std::to_string(length) + " is past the end of '" + location + "' (" +
                           std::to_string(file->size()) + " bytes)");
  const unsigned char* data = file->data() + offset;
  if (length == 0) return Tensor(dtype, shape);
  // Used in place whenever the elements are naturally aligned (the mapping is page-aligned, so this is the
  // offset's alignment): the kernels need no more. Only a misaligned offset is copied (unaligned loads
  // would be undefined behaviour).
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) == 0) return Tensor::view(dtype, shape, file, data);
  Tensor t(dtype, shape);
  std::memcpy(t.mutable_raw(), data, length);
  return t;
}

}  // namespace parity::refrt

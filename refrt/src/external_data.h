// Internal: resolves initializers stored as ONNX external data, treating every path as hostile.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "parity/fs.h"
#include "parity/internal/onnx_tensor.h"

namespace parity::refrt {

// Files must be relative to the model's directory, with no `..`, no symlink on the way, not
// hard-linked, regular, and offset + length within the file. Data at an offset aligned to its
// element size is used in place from the memory-mapped file (never copied); misaligned data is copied.
class ModelDirExternalData : public ExternalDataResolver {
 public:
  ModelDirExternalData(std::string base_dir, std::string origin);
  Tensor resolve(const onnx::TensorProto& proto, DType dtype, const Shape& shape) const override;

 private:
  std::shared_ptr<MappedFile> open_checked(const std::string& location, const std::string& what) const;
  std::string base_dir_, origin_;
  mutable std::map<std::string, std::shared_ptr<MappedFile>> files_;  // one mapping per file per load
};

}  // namespace parity::refrt

// TensorProto round trips and hostile tensor files. The oracle for the bytes is numpy (via onnx's
// numpy_helper) in the end-to-end tests; here we check the decoding rules of the ONNX spec.
#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/internal/onnx_tensor.h"
#include "parity/tensor_io.h"

namespace parity {
namespace {

// A fresh directory (mkdtemp: unique, so parallel runs never share a file), removed with its contents.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "parity_tensor_io_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

TEST(TensorIo, RoundTripKeepsNameShapeAndBytes) {
  Tensor t(DType::kFloat32, {2, 3});
  for (int i = 0; i < 6; ++i) t.data<float>()[i] = 0.5f * i;
  const NamedTensor back = parse_tensor_proto(serialize_tensor_proto(t, "x"), "memory");
  EXPECT_EQ(back.name, "x");
  EXPECT_TRUE(back.tensor.bitwise_equal(t));
}

TEST(TensorIo, TypedFieldsAreDecoded) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::INT64);
  p.add_dims(3);
  for (int64_t v : {-1, 0, 7}) p.add_int64_data(v);
  const Tensor t = tensor_from_proto(p, "memory");
  EXPECT_EQ(t.data<int64_t>()[0], -1);
  EXPECT_EQ(t.data<int64_t>()[2], 7);
}

TEST(TensorIo, RawDataLengthMismatchIsAnError) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(4);
  p.set_raw_data(std::string(12, '\0'));
  try {
    tensor_from_proto(p, "model.onnx");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("raw_data has 12 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
  }
}

TEST(TensorIo, NegativeAndAbsurdDimsAreErrors) {
  onnx::TensorProto p;
  p.set_data_type(onnx::TensorProto::FLOAT);
  p.add_dims(-2);
  EXPECT_THROW(tensor_from_proto(p, "memory"), Error);
  p.clear_dims();
  p.add_dims(int64_t{1} << 40);
  p.add_dims(int64_t{1} << 40);
  EXPECT_THROW(tensor_from_proto(p, "memory"), Error);
}

TEST(TensorIo, GarbageFileNamesTheFile) {
  const TempDir tmp;
  const std::string path = (tmp.path / "parity_garbage.pb").string();
  write_file_atomic(path, std::string("\xff\xff\xff\xff not a tensor", 17));
  try {
    read_tensor_file(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_tensor_file(path + ".missing"), Error);
}

TEST(TensorIo, AtomicWriteLeavesNoTemporaryFiles) {
  const TempDir tmp;
  const auto dir = tmp.path / "parity_atomic";  // not there yet: write_file_atomic creates it
  write_file_atomic((dir / "a.txt").string(), "hello");
  EXPECT_EQ(read_file((dir / "a.txt").string()), "hello");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

}  // namespace
}  // namespace parity

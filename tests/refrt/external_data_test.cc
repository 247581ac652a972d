// External data: initializers stored next to the model. Paths are hostile input: absolute paths,
// `..`, symlinks, hard links and ranges past the end of the file are refused with a clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <cstring>
#include <fstream>

#include "../../refrt/src/external_data.h"
#include "model_builder.h"
#include "parity/error.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::make;
using testing::ModelBuilder;

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("refrt_external_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
    write("w.bin", 0);
    write("sub/w.bin", 0);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Four floats 1, 2, 3, 4 after `pad` zero bytes.
  void write(const std::string& name, size_t pad) {
    std::string bytes(pad, '\0');
    const float w[4] = {1, 2, 3, 4};
    bytes.append(reinterpret_cast<const char*>(w), sizeof(w));
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
  }

  // y = x + w, with w in external data.
  std::string model_path(const std::string& location, const std::string& offset = "", const std::string& length = "") {
    ModelBuilder b;
    b.input("x", DType::kFloat32, {4});
    auto* w = b.g().add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const std::string& k, const std::string& v) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    if (!offset.empty()) add("offset", offset);
    if (!length.empty()) add("length", length);
    b.node("Add", {"x", "w"}, {"y"}, "add_w");
    b.output("y");
    const fs::path path = dir_ / "model.onnx";
    std::ofstream(path, std::ios::binary) << b.bytes();
    return path.string();
  }

  void expect_load_error(const std::string& path, const std::vector<std::string>& needles) {
    try {
      refrt::Session::load_file(path);
      ADD_FAILURE() << "expected a load error";
    } catch (const Error& e) {
      EXPECT_EQ(e.context().stage, "refrt") << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("initializer 'w'"), std::string::npos) << e.what();
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  }

  static std::vector<float> run(const std::string& path) {
    auto s = refrt::Session::load_file(path);
    const Tensor y = s->run({make<float>(DType::kFloat32, {4}, {10, 20, 30, 40})}).outputs.at(0);
    return std::vector<float>(y.data<float>(), y.data<float>() + 4);
  }

  fs::path dir_;
};

const std::vector<float> kExpected = {11, 22, 33, 44};

TEST_F(ExternalData, RelativeFileAlignedAndUnalignedOffsets) {
  EXPECT_EQ(run(model_path("w.bin")), kExpected);
  EXPECT_EQ(run(model_path("sub/w.bin", "0", "16")), kExpected);
  write("padded64.bin", 64);  // page-aligned mapping + 64: used in place
  EXPECT_EQ(run(model_path("padded64.bin", "64")), kExpected);
  write("padded3.bin", 3);  // misaligned for float: copied
  EXPECT_EQ(run(model_path("padded3.bin", "3", "16")), kExpected);
}

TEST_F(ExternalData, LoadBytesResolvesNextToOrigin) {
  const std::string path = model_path("w.bin");
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto s = refrt::Session::load_bytes(bytes, path);
  EXPECT_EQ(s->run({make<float>(DType::kFloat32, {4}, {0, 0, 0, 0})}).outputs[0].data<float>()[3], 4.f);
}

TEST_F(ExternalData, AbsolutePathIsRefused) { expect_load_error(model_path((dir_ / "w.bin").string()), {"absolute"}); }

TEST_F(ExternalData, DotDotIsRefused) {
  expect_load_error(model_path("../w.bin"), {"'..'"});
  expect_load_error(model_path("sub/../w.bin"), {"'..'"});
}

TEST_F(ExternalData, SymlinksAreRefused) {
  fs::create_symlink(dir_ / "w.bin", dir_ / "link.bin");
  expect_load_error(model_path("link.bin"), {"symlink"});
  fs::create_directory_symlink(dir_ / "sub", dir_ / "linkdir");
  expect_load_error(model_path("linkdir/w.bin"), {"symlink"});
}

TEST_F(ExternalData, HardLinksAreRefused) {
  fs::create_hard_link(dir_ / "sub/w.bin", dir_ / "hard.bin");
  expect_load_error(model_path("hard.bin"), {"hard-linked"});
}

TEST_F(ExternalData, RangePastEndOfFileIsRefused) {
  expect_load_error(model_path("w.bin", "8"), {"past the end", "16 bytes"});
  expect_load_error(model_path("w.bin", "18446744073709551615"), {"past the end"});
}

TEST_F(ExternalData, BadLengthAndOffsetAreRefused) {
  expect_load_error(model_path("w.bin", "0", "12"), {"length 12", "needs 16"});
  expect_load_error(model_path("w.bin", "abc"), {"offset 'abc'"});
  expect_load_error(model_path("w.bin", "-4"), {"offset '-4'"});
}

TEST_F(ExternalData, MissingFileOrDirectoryIsRefused) {
  expect_load_error(model_path("nowhere.bin"), {"cannot be read"});
  expect_load_error(model_path("sub"), {"not a regular file"});
  expect_load_error(model_path(""), {"no location"});
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// Naturally aligned external data is used in place from the mapped file (no copy); misaligned data is
// copied. MappedFile::containing tells which: it finds the read-only mapping a pointer lies in.
TEST(ExternalDataMapping, AlignedDataIsMappedMisalignedDataIsCopied) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("refrt_external_map_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string bytes(64, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i);
  std::ofstream(dir / "d.bin", std::ios::binary) << bytes;
  const refrt::ModelDirExternalData resolver(dir.string(), "m.onnx");
  auto proto = [](const std::string& offset) {
    onnx::TensorProto t;
    t.set_name("w");
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(4);
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"location", "d.bin"}, {"offset", offset}}) {
      auto* e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    return t;
  };
  const Tensor aligned = tensor_from_proto(proto("4"), "m.onnx", &resolver);
  const Tensor misaligned = tensor_from_proto(proto("3"), "m.onnx", &resolver);
  EXPECT_NE(MappedFile::containing(aligned.raw()), nullptr);
  EXPECT_EQ(MappedFile::containing(misaligned.raw()), nullptr);
  EXPECT_EQ(std::memcmp(aligned.raw(), bytes.data() + 4, 16), 0);
  EXPECT_EQ(std::memcmp(misaligned.raw(), bytes.data() + 3, 16), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace parity

// Exporter: ONNX external data written by export_program_to_file. The layout is the standard one
// (location / offset / length, offsets aligned); refrt reading the files back is the end-to-end check here,
// onnx.checker and onnxruntime are in tests/python/test_external_data.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnx/onnx-ml.pb.h"
#include "parity/error.h"
#include "parity/exporter/export.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"
#include "pt2_fixture.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::Pt2Fixture;

class ExternalDataExport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("parity_extdata_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    program_ = pt2::read_pt2(fixture_.write("extdata_" + std::to_string(::getpid()) + ".pt2"));
  }
  void TearDown() override { fs::remove_all(dir_); }

  onnx::ModelProto load(const fs::path& p) {
    onnx::ModelProto m;
    EXPECT_TRUE(m.ParseFromString(read_file(p.string())));
    return m;
  }
  static std::map<std::string, std::string> external(const onnx::TensorProto& t) {
    std::map<std::string, std::string> kv;
    for (const auto& e : t.external_data()) kv[e.key()] = e.value();
    return kv;
  }
  // y = relu(x @ W^T + b) with the fixture's weights, on refrt.
  std::vector<float> run(const fs::path& onnx_path) {
    auto session = refrt::Session::load_file(onnx_path.string());
    Tensor x(DType::kFloat32, {2, 3});
    const float xs[6] = {1, 1, 1, 0.5f, -1, 2};
    std::copy(xs, xs + 6, x.data<float>());
    const Tensor y = session->run({x}).outputs.at(0);
    return {y.data<float>(), y.data<float>() + y.numel()};
  }

  Pt2Fixture fixture_;
  pt2::Program program_;
  fs::path dir_;
};

// Oracle: the fixture's numbers by hand. W = [[1,-2,3],[-4,5,-6]], b = [0.5,-0.5].
const std::vector<float> kExpected = {2.5f, 0.0f, 9.0f, 0.0f};

TEST_F(ExternalDataExport, OnRequestEveryInitializerAboveTheThresholdGoesToTheDataFile) {
  exporter::ExportOptions o;
  o.external_data = true;
  o.external_data_threshold = 16;  // the weight (24 bytes) goes out, the bias (8 bytes) stays inline
  const fs::path onnx_path = dir_ / "m.onnx";
  EXPECT_TRUE(exporter::export_program_to_file(program_, onnx_path.string(), o));
  ASSERT_TRUE(fs::exists(dir_ / "m.onnx.data"));
  const onnx::ModelProto m = load(onnx_path);
  int external_count = 0;
  for (const auto& t : m.graph().initializer()) {
    if (t.name() == "fc.weight") {
      EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL);
      EXPECT_FALSE(t.has_raw_data());
      auto kv = external(t);
      EXPECT_EQ(kv["location"], "m.onnx.data");
      EXPECT_EQ(std::stoull(kv["offset"]) % 64, 0u);
      EXPECT_EQ(kv["length"], "24");
      // The bytes at offset are the weight's bytes.
      const std::string data = read_file((dir_ / "m.onnx.data").string());
      EXPECT_EQ(data.substr(std::stoull(kv["offset"]), 24), fixture_.weight_bytes);
      ++external_count;
    } else if (t.name() == "fc.bias") {
      EXPECT_NE(t.data_location(), onnx::TensorProto::EXTERNAL);
      EXPECT_EQ(t.raw_data(), fixture_.bias_bytes);
    }
  }
  EXPECT_EQ(external_count, 1);
  EXPECT_EQ(run(onnx_path), kExpected);
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file left
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << e.path();
}

TEST_F(ExternalDataExport, ALargeModelSwitchesToExternalDataByItself) {
  exporter::ExportOptions o;
  o.external_data_threshold = 16;
  o.external_data_auto_bytes = 64;  // stands in for protobuf's 2 GiB
  const fs::path onnx_path = dir_ / "auto.onnx";
  EXPECT_TRUE(exporter::export_program_to_file(program_, onnx_path.string(), o));
  EXPECT_TRUE(fs::exists(dir_ / "auto.onnx.data"));
  EXPECT_EQ(run(onnx_path), kExpected);
}

TEST_F(ExternalDataExport, SmallModelsStayInOneFileAndMatchExportProgram) {
  const fs::path onnx_path = dir_ / "inline.onnx";
  EXPECT_FALSE(exporter::export_program_to_file(program_, onnx_path.string(), {}));
  EXPECT_FALSE(fs::exists(dir_ / "inline.onnx.data"));
  EXPECT_EQ(read_file(onnx_path.string()), exporter::export_program(program_, {}));
  EXPECT_EQ(run(onnx_path), kExpected);
}

TEST_F(ExternalDataExport, ACustomFileNameIsUsedAndAPathIsRefused) {
  exporter::ExportOptions o;
  o.external_data = true;
  o.external_data_threshold = 0;
  o.external_data_file = "weights.bin";
  EXPECT_TRUE(exporter::export_program_to_file(program_, (dir_ / "n.onnx").string(), o));
  EXPECT_TRUE(fs::exists(dir_ / "weights.bin"));
  EXPECT_EQ(run(dir_ / "n.onnx"), kExpected);
  for (const std::string bad : {"../w.bin", "/tmp/w.bin", "sub/w.bin", "..", "bad.onnx"}) {
    o.external_data_file = bad;
    try {
      exporter::export_program_to_file(program_, (dir_ / "bad.onnx").string(), o);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(fs::exists(dir_ / "bad.onnx"));
}

TEST_F(ExternalDataExport, AFailedWriteLeavesNothingBehind) {
  exporter::ExportOptions o;
  o.external_data = true;
  o.external_data_threshold = 0;
  fs::create_directories(dir_ / "taken.onnx" / "x");  // the target is a non-empty folder: rename fails
  EXPECT_THROW(exporter::export_program_to_file(program_, (dir_ / "taken.onnx").string(), o), Error);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"taken.onnx"});
}

}  // namespace
}  // namespace parity

// The libtorch reference executor on a hand-written program, against a naive loop (not libtorch).
#include <gtest/gtest.h>

#include <cstring>

#include "../exporter/pt2_fixture.h"
#include "parity/error.h"
#include "parity/exporter/program.h"
#include "parity/verify/reference.h"

namespace parity {
namespace {

TEST(Reference, LinearReluMatchesNaiveLoop) {
  testing::Pt2Fixture f;
  const auto program = pt2::read_pt2(f.write("reference.pt2"));
  for (int64_t batch : {1, 4}) {
    Tensor x(DType::kFloat32, {batch, 3});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 0.25f * static_cast<float>(i) - 1.0f;
    const auto result = verify::run_reference(program, {x}, true);
    ASSERT_EQ(result.outputs.size(), 1u);
    const Tensor& y = result.outputs[0];
    ASSERT_EQ(y.shape(), (Shape{batch, 2}));
    const float w[6] = {1, -2, 3, -4, 5, -6}, b[2] = {0.5f, -0.5f};
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t o = 0; o < 2; ++o) {
        float acc = b[o];
        for (int64_t k = 0; k < 3; ++k) acc += x.data<float>()[r * 3 + k] * w[o * 3 + k];
        EXPECT_NEAR(y.data<float>()[r * 2 + o], std::max(acc, 0.0f), 1e-6);
      }
    EXPECT_EQ(result.intermediates.count("linear"), 1u);  // every intermediate is kept on request
  }
}

TEST(Reference, WrongInputCountIsAnError) {
  testing::Pt2Fixture f;
  const auto program = pt2::read_pt2(f.write("reference_count.pt2"));
  EXPECT_THROW(verify::run_reference(program, {}), Error);
}

TEST(Reference, UnknownOperatorNamesNode) {
  testing::Pt2Fixture f;
  f.model["graph_module"]["graph"]["nodes"][1]["target"] = "torch.ops.aten.frobnicate.default";
  const auto program = pt2::read_pt2(f.write("reference_unknown.pt2"));
  Tensor x(DType::kFloat32, {1, 3}, true);
  try {
    verify::run_reference(program, {x});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("aten::frobnicate"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("relu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace parity

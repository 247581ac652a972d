// Load-time graph optimisation (refrt/src/graph_optimize.h) on the fusion_* rows of the case tables
// (tests/refrt/cases/fusion.py, numpy oracle; backend_cases_test runs them with every pass on):
// the passes fire (a profiled run reports the replaced nodes with no outputs), each one on its own
// can be switched off, the results agree with the unoptimised plan, and intermediates stay available.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

#include "parity/error.h"
#include "parity/refrt/cpu_isa.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "tensor_expect.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> fusion_cases() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(REFRT_CASES_DIR, ec))
    if (entry.is_directory() && entry.path().filename().string().rfind("fusion_", 0) == 0)
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<Tensor> case_inputs(const std::string& name) {
  std::vector<Tensor> inputs;
  const auto sets = list_test_data_sets((fs::path(REFRT_CASES_DIR) / name).string());
  for (auto& named : read_tensor_dir(sets.at(0), "input")) inputs.push_back(named.tensor);
  return inputs;
}

std::string model_of(const std::string& name) { return (fs::path(REFRT_CASES_DIR) / name / "model.onnx").string(); }

// The row's tolerance against numpy (tolerance.txt: rtol atol; 1e-5 1e-6 without one). Fused and
// unfused plans round differently (a folded batch norm scales the weights before the sum, not the sum):
// each is within this of the exact answer, so they are held to it against each other too.
std::pair<double, double> case_tolerance(const std::string& name) {
  double rtol = 1e-5, atol = 1e-6;
  if (std::ifstream in(fs::path(REFRT_CASES_DIR) / name / "tolerance.txt"); in) in >> rtol >> atol;
  return {rtol, atol};
}

// Tensors the run produced: nodes a fused node replaced are reported with no outputs, and outputs
// nobody reads are not computed, so every pass that fires lowers this count.
size_t produced(const refrt::RunResult& r) {
  size_t n = 0;
  for (const auto& t : r.timings) n += t.outputs.size();
  return n;
}

// What ran, node by node, and the types it wrote (a pass may keep the node count and swap the kernel: the unfused
// plan folds a DequantizeLinear of constant weights away, the fused one reads the quantized weights; keep_widened
// changes how a value is stored).
std::vector<std::string> impls(const refrt::RunResult& r) {
  std::vector<std::string> v;
  for (const auto& t : r.timings) {
    std::string types;
    for (const auto& o : t.outputs) types += ":" + dtype_name(o.dtype);
    v.push_back(t.op_type + ":" + t.impl + types);
  }
  std::sort(v.begin(), v.end());
  return v;
}

refrt::RunResult run(const std::string& name, refrt::SessionOptions options, bool keep = false) {
  auto s = refrt::Session::load_file(model_of(name), options);
  return s->run(case_inputs(name), {.keep_intermediates = keep, .profile = true});
}

TEST(GraphOptimize, FusionRowsFuseAndMatchTheUnoptimisedPlan) {
  const auto names = fusion_cases();
  ASSERT_GE(names.size(), 20u) << "the fusion_* rows of tests/refrt/cases/fusion.py were not generated";
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const bool keep = name.rfind("fusion_keep_", 0) == 0;
    const bool weight_only = name.rfind("fusion_weight_only_", 0) == 0;
    const bool siblings = name.rfind("fusion_siblings_", 0) == 0;  // one node writes every output
    refrt::SessionOptions off;
    off.optimize = false;
    const auto fused = run(name, {}), plain = run(name, off);
    if (keep || weight_only || siblings)
      EXPECT_EQ(produced(fused), produced(plain));
    else
      EXPECT_LT(produced(fused), produced(plain));
    if (weight_only || siblings) EXPECT_NE(impls(fused), impls(plain));
    // Every model node appears once in both profiles.
    EXPECT_EQ(fused.timings.size(), plain.timings.size());
    ASSERT_EQ(fused.outputs.size(), plain.outputs.size());
    const auto [rtol, atol] = case_tolerance(name);
    for (size_t i = 0; i < fused.outputs.size(); ++i)
      EXPECT_TRUE(testing::tensors_close(fused.outputs[i], plain.outputs[i], rtol, atol)) << "output " << i;
  }
}

// Each pass is switchable on its own, and each one is what fuses some row: with it disabled, fewer
// nodes are fused away there than with every pass on.
// A grouped-query expansion of K and V (Unsqueeze, Expand, Reshape) is read through by the fused attention: those
// nodes report no outputs; where the expanded V is also a graph output, they run.
TEST(GraphOptimize, GroupedQueryExpansionFoldsIntoTheAttention) {
  for (const auto& [name, folded] : {std::pair<std::string, bool>{"fusion_attention_gqa_repeat_interleave", true},
                                     {"fusion_attention_gqa_decode_kv_batch_broadcast", true},
                                     {"fusion_attention_gqa_expanded_v_also_output", false},
                                     {"fusion_attention_gqa_flat_decode", true},
                                     {"fusion_attention_gqa_flat_batch2_prefill", true},
                                     {"fusion_attention_gqa_flat_kv_batch_broadcast", true}}) {
    SCOPED_TRACE(name);
    const auto r = run(name, {});
    int expands = 0;
    for (const auto& t : r.timings)
      if (t.op_type == "Expand" || t.op_type == "Unsqueeze") {
        ++expands;
        EXPECT_EQ(t.outputs.empty(), folded) << t.node;
      }
    EXPECT_EQ(expands, 4);
  }
}

// A float16 Conv's BatchNormalization folds into float32 weights, and the Add and Relu after it join the conv.
TEST(GraphOptimize, Float16BatchNormalizationFoldsIntoTheConv) {
  const auto r = run("half_conv_batchnorm_add_relu_f16", {});
  int fused = 0;
  for (const auto& t : r.timings) {
    if (t.op_type == "Conv") EXPECT_EQ(t.outputs.size(), 1u);
    if (t.op_type == "BatchNormalization" || t.op_type == "Add" || t.op_type == "Relu") {
      ++fused;
      EXPECT_TRUE(t.outputs.empty()) << t.op_type << " ran";
    }
  }
  EXPECT_EQ(fused, 3);
}

TEST(GraphOptimize, EachPassCanBeDisabledAndMatters) {
  const auto names = fusion_cases();
  ASSERT_FALSE(names.empty());
  for (const auto& pass : refrt::optimization_passes()) {
    SCOPED_TRACE(pass);
    bool mattered = false;
    for (const auto& name : names) {
      refrt::SessionOptions without;
      without.disabled_passes = {pass};
      const auto all = run(name, {}), less = run(name, without);
      mattered = mattered || produced(less) > produced(all) || impls(less) != impls(all);
      const auto [rtol, atol] = case_tolerance(name);
      for (size_t i = 0; i < all.outputs.size(); ++i)
        EXPECT_TRUE(testing::tensors_close(less.outputs[i], all.outputs[i], rtol, atol)) << name << " output " << i;
    }
    EXPECT_TRUE(mattered) << "no fusion_* row is fused by " << pass;
  }
}

// Convs whose readers are all convs hand them channel blocks (keep_conv_blocks): at refrt's AVX2 levels and up, with
// oneDNN's convs on, the ResNet stage's a, b, c and d are [N, C / B, H, W, B] (channels last, B = C, with AVX-512;
// B = 8 below), and
// the graph output e is NCHW; without oneDNN (the scalar level) every value is NCHW. A value asked for by name comes
// back NCHW, equal to the unfused plan's, and the outputs equal the plan's without the pass.
TEST(GraphOptimize, ConvChainsHandEachOtherChannelBlocks) {
  const char* off = std::getenv("PARITY_REFRT_CONV_DNNL");
  const bool onednn = refrt::isa_allows(refrt::IsaLevel::kAvx2) && !(off && std::string(off) == "0");
  const bool channels_last = refrt::isa_allows(refrt::IsaLevel::kAvx512);
  const std::string name = "fusion_conv_blocks_resnet_stage";
  auto s = refrt::Session::load_file(model_of(name), {});
  const auto r = s->run(case_inputs(name), {.keep_values = {"b", "d"}, .profile = true});
  int blocked = 0;
  for (const auto& t : r.timings)
    if (t.op_type == "Conv" && t.outputs.size() == 1 && t.outputs[0].shape.size() == 5) {
      ++blocked;
      if (channels_last)
        EXPECT_EQ(t.outputs[0].shape[1], 1) << t.node;
      else
        EXPECT_EQ(t.outputs[0].shape[4], 8) << t.node;
    }
  EXPECT_EQ(blocked, onednn ? 4 : 0);
  const auto plain = run(name, {}, true);
  for (const char* v : {"b", "d"}) {
    ASSERT_TRUE(r.intermediates.count(v)) << v;
    EXPECT_EQ(r.intermediates.at(v).shape(), plain.intermediates.at(v).shape()) << v;
    EXPECT_TRUE(testing::tensors_close(r.intermediates.at(v), plain.intermediates.at(v), 1e-4, 1e-5)) << v;
  }
  refrt::SessionOptions without;
  without.disabled_passes = {"keep_conv_blocks"};
  const auto nchw = run(name, without);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].shape(), (Shape{2, 32, 6, 6}));
  EXPECT_TRUE(testing::tensors_close(r.outputs[0], nchw.outputs[0], 1e-5, 1e-6));
  // A float16 chain (BatchNormalization folded into float32 weights): h and r are in the chain's layout and widened,
  // float32 holding their float16 values, and the output equals the NCHW plan's bit for bit (the same sums, each
  // value rounded once where it is written); kept, h and r come back float16 NCHW with the NCHW plan's bits.
  for (const std::string half_row : {"half_conv_blocks_f16_chain", "half_conv_blocks_f16_chain_rounded"}) {
    SCOPED_TRACE(half_row);
    const auto half = refrt::Session::load_file(model_of(half_row), {})
                          ->run(case_inputs(half_row), {.keep_values = {"h", "r"}, .profile = true});
    int half_blocked = 0;
    for (const auto& t : half.timings)
      if (t.op_type == "Conv" && t.outputs.size() == 1 && t.outputs[0].shape.size() == 5) {
        ++half_blocked;
        EXPECT_EQ(t.outputs[0].dtype, DType::kFloat32) << t.node;
      }
    EXPECT_EQ(half_blocked, onednn ? 2 : 0);
    const auto half_nchw =
        refrt::Session::load_file(model_of(half_row), without)->run(case_inputs(half_row), {.keep_values = {"h", "r"}});
    EXPECT_TRUE(testing::tensors_close(half.outputs.at(0), half_nchw.outputs.at(0), 0, 0));
    for (const char* v : {"h", "r"}) {
      ASSERT_TRUE(half.intermediates.count(v) && half_nchw.intermediates.count(v)) << v;
      EXPECT_EQ(half.intermediates.at(v).dtype(), DType::kFloat16) << v;
      EXPECT_EQ(half.intermediates.at(v).shape(), half_nchw.intermediates.at(v).shape()) << v;
      EXPECT_TRUE(testing::tensors_close(half.intermediates.at(v), half_nchw.intermediates.at(v), 0, 0)) << v;
    }
  }
}

// float16 values read by products on constant weights are widened once (keep_widened): the normalisation read only by
// products writes float32, and so does a product read only by a product where oneDNN runs it (refrt's AVX2 levels
// and up); a normalisation that a residual Add reads too is widened once by the first of its three projections, which
// hands its float32 copy to the other two. At every level: the outputs are the bits of the plan without the pass, and
// the values a run keeps come back float16 with those bits (the fused plan's, without the pass).
TEST(GraphOptimize, Float16ValuesAreWidenedOnceForTheirProducts) {
  const bool onednn = refrt::isa_allows(refrt::IsaLevel::kAvx2);
  refrt::SessionOptions without;
  without.disabled_passes = {"keep_widened"};
  const auto wrote = [](const refrt::RunResult& r, const std::string& op) {
    std::vector<DType> types;
    for (const auto& t : r.timings)
      if (t.op_type == op && !t.outputs.empty()) types.push_back(t.outputs[0].dtype);
    return types;
  };
  const std::string ffn = "fusion_keep_widened_layernorm_products_f16";
  auto s = refrt::Session::load_file(model_of(ffn), {});
  const auto r = s->run(case_inputs(ffn), {.keep_values = {"n", "h"}, .profile = true});
  EXPECT_EQ(wrote(r, "LayerNormalization"), std::vector<DType>{DType::kFloat32});
  const DType product = onednn ? DType::kFloat32 : DType::kFloat16;  // the first product's h
  EXPECT_EQ(wrote(r, "MatMul"), (std::vector<DType>{product, DType::kFloat16, DType::kFloat16}));
  const auto unwidened =
      refrt::Session::load_file(model_of(ffn), without)->run(case_inputs(ffn), {.keep_values = {"n", "h"}});
  for (const char* v : {"n", "h"}) {
    ASSERT_TRUE(r.intermediates.count(v) && unwidened.intermediates.count(v)) << v;
    EXPECT_EQ(r.intermediates.at(v).dtype(), DType::kFloat16) << v;
    EXPECT_TRUE(testing::tensors_close(r.intermediates.at(v), unwidened.intermediates.at(v), 0, 0)) << v;
  }
  ASSERT_EQ(r.outputs.size(), 2u);
  for (size_t i = 0; i < r.outputs.size(); ++i)
    EXPECT_TRUE(testing::tensors_close(r.outputs[i], unwidened.outputs[i], 0, 0)) << "output " << i;

  for (const std::string name : {"half_widened_shared_cast_f16", "half_widened_one_row_f16",
                                 "half_widened_linear_relu_chain_f16", "half_widened_gemm_relu_chain_f16"}) {
    SCOPED_TRACE(name);
    const bool shared = name == "half_widened_shared_cast_f16", chain = name.find("chain") != std::string::npos;
    const auto widened = run(name, {}), unwidened_rows = run(name, without);
    // The shared copy: the first projection's second output, float32; no node added (every timing is a model node's).
    int copies = 0;
    for (const auto& t : widened.timings) {
      EXPECT_NE(t.op_type, "Cast") << t.node;
      if (t.outputs.size() == 2 && t.outputs[1].dtype == DType::kFloat32) ++copies;
    }
    EXPECT_EQ(widened.timings.size(), unwidened_rows.timings.size());
    EXPECT_EQ(copies, shared ? 1 : 0);
    if (chain)
      EXPECT_EQ(wrote(widened, name.find("gemm") != std::string::npos ? "Gemm" : "MatMul"),
                (std::vector<DType>{product, DType::kFloat16}));
    else
      EXPECT_EQ(wrote(widened, "LayerNormalization"), std::vector<DType>{shared ? DType::kFloat16 : DType::kFloat32});
    ASSERT_EQ(widened.outputs.size(), unwidened_rows.outputs.size());
    for (size_t i = 0; i < widened.outputs.size(); ++i)
      EXPECT_TRUE(testing::tensors_close(widened.outputs[i], unwidened_rows.outputs[i], 0, 0)) << "output " << i;
  }
}

TEST(GraphOptimize, IntermediatesComeFromTheUnfusedPlan) {
  refrt::SessionOptions off;
  off.optimize = false;
  const auto r = run("fusion_conv_bn_relu", {}, true), plain = run("fusion_conv_bn_relu", off);
  EXPECT_EQ(produced(r), produced(plain));  // the run that keeps values uses every model node
  EXPECT_TRUE(r.intermediates.count("c") && r.intermediates.count("n"));
  const auto again = run("fusion_conv_bn_relu", {});
  EXPECT_LT(produced(again), produced(plain));
  EXPECT_TRUE(testing::tensors_close(r.outputs.at(0), again.outputs.at(0), 1e-5, 1e-6));
}

TEST(GraphOptimize, UnknownPassIsAUsageError) {
  refrt::SessionOptions options;
  options.disabled_passes = {"no_such_pass"};
  try {
    refrt::Session::load_file(model_of("fusion_conv_bn"), options);
    FAIL() << "loaded with an unknown pass name";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUsage);
    EXPECT_NE(std::string(e.what()).find("no_such_pass"), std::string::npos);
  }
}

}  // namespace
}  // namespace parity

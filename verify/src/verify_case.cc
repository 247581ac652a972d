// parity verify for one case, in stages: load, export, run (refrt), reference (libtorch), compare,
// fresh dims, report. Each stage records its failure in the entry and says whether to go on; nothing
// here prints (the CLI prints the entry).
#include "parity/verify/verify_case.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "fresh_inputs.h"
#include "intermediates.h"
#include "onnx_graph.h"
#include "parity/error.h"
#include "parity/exporter/complex_dtype.h"
#include "parity/exporter/export.h"
#include "parity/fs.h"
#include "parity/refrt/session.h"
#include "parity/tensor_io.h"
#include "parity/verify/case_info.h"
#include "parity/verify/compare.h"
#include "parity/verify/reference.h"
#include "peers.h"
#include "requant_rule.h"
#include "parity/tensor_io.h"
#include <cstdlib>
#include "ties.h"

namespace parity::verify {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json number_or_string(double v) { return std::isfinite(v) ? json(v) : json(std::isnan(v) ? "NaN" : "Infinity"); }

ProfileSummary profile_summary(const std::vector<refrt::NodeTiming>& timings, const std::string& set_name) {
  std::map<std::string, ProfileOp> by_op;
  ProfileSummary p{set_name, 0, timings.size(), {}};
  for (const auto& t : timings) {
    ProfileOp& op = by_op[t.op_type];
    op.op_type = t.op_type, ++op.count, op.ms += t.ms, p.total_ms += t.ms;
  }
  for (const auto& [name, op] : by_op) p.ops.push_back(op);
  std::sort(p.ops.begin(), p.ops.end(), [](const ProfileOp& a, const ProfileOp& b) { return a.ms > b.ms; });
  return p;
}

uint64_t name_seed(const std::string& s) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: a stable seed per case, the same on every run
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// What the stages of one case share.
struct CaseRun {
  std::string case_dir, out_dir;
  const VerifyOptions& options;
  CaseInfo info;
  CaseEntry entry;
  pt2::Program program;
  std::string onnx_path;
  std::unique_ptr<refrt::Session> session;
  std::map<std::string, OnnxProducer> producers;
  // Program value -> the ONNX value that carries it, for the values the export's passes renamed away.
  std::map<std::string, std::string> value_aliases;
  std::vector<std::vector<Tensor>> captured_inputs;
  double max_abs = 0, max_rel = 0;
  bool all_passed = true;
  int64_t first_index = -1;
  std::optional<Fp64Rule> fp64;  // refrt's fp64-rule verdict nearest to failing, over all sets and outputs
};

// One input set: its tensors and both engines' results.
struct SetRun {
  InputSetEntry entry;
  std::vector<Tensor> inputs;
  std::vector<NamedTensor> expected;
  std::vector<NamedTensor> state;  // eager's final value of each tensor the call wrote (case.json eager_state)
  std::vector<Tensor> fp64;        // eager's float64 outputs, where capture saved them (undefined elsewhere)
  refrt::RunResult ours;
  ReferenceResult reference;
  std::optional<std::map<std::string, Tensor>> kept;  // every libtorch value, for index ties
  std::optional<RequantRun> requant;  // libtorch on refrt's quantized activations (the requantized rule)
};

bool load_stage(CaseRun& r) {
  r.entry.case_name = r.info.name, r.entry.mode = r.info.mode, r.entry.onnx_given = !r.options.onnx_path.empty();
  r.entry.onnx = Nullable<std::string>{};
  if (r.info.status != "captured") {
    fail(r.entry, "capture_failed", "capture", r.info.error.empty() ? "capture did not finish" : r.info.error);
    return false;
  }
  // A case with custom ops lists its TORCH_LIBRARY libraries (the libtorch reference dispatches their
  // ops) and the exporter plugins that translate them: case.json "torch_libraries", "export_plugins".
  try {
    for (const auto& library : r.info.torch_libraries) load_torch_library(library);
  } catch (const Error& e) {
    fail(r.entry, "error", "reference", e.what());
    return false;
  }
  return true;
}

// Export, or take the model we were given.
bool export_stage(CaseRun& r) {
  r.onnx_path = r.options.onnx_path;
  try {
    r.program = pt2::read_pt2((fs::path(r.case_dir) / "model.pt2").string());
    if (r.onnx_path.empty()) {
      r.onnx_path = (fs::path(r.out_dir) / "model.onnx").string();
      exporter::ExportOptions eo;
      eo.opset = r.options.opset;
      eo.plugins = r.info.export_plugins;
      eo.value_aliases = &r.value_aliases;
      fs::create_directories(r.out_dir);
      exporter::export_program_to_file(r.program, r.onnx_path, eo);  // external data past 2 GiB, streamed
      r.entry.export_status = "ok";
    }
    r.entry.onnx = Nullable<std::string>{r.onnx_path};
  } catch (const Error& e) {
    r.entry.export_status = "error";
    fail(r.entry, "error", e.context().stage.empty() ? "export" : e.context().stage, e.what());
    return false;
  }
  return true;
}

bool load_session_stage(CaseRun& r) {
  try {
    r.session = refrt::Session::load_file(r.onnx_path);
    if (r.options.intermediates) r.producers = onnx_producers(r.onnx_path);
  } catch (const Error& e) {
    r.entry.run = "error";
    fail(r.entry, "error", "refrt", e.what());
    return false;
  }
  return true;
}

bool read_set(CaseRun& r, const std::string& set_dir, SetRun& s) {
  s.entry.name = fs::path(set_dir).filename().string();
  try {
    for (auto& n : read_tensor_dir(set_dir, "input")) s.inputs.push_back(std::move(n.tensor));
    s.expected = read_tensor_dir(set_dir, "output");
    s.fp64 = read_fp64_outputs(set_dir, s.expected.size());
    if (r.info.eager_state) s.state = read_tensor_dir(set_dir, "state");
  } catch (const Error& e) {
    fail(r.entry, "error", "inputs", e.what());
    return false;
  }
  r.captured_inputs.push_back(s.inputs);
  return true;
}

bool run_stage(CaseRun& r, SetRun& s) {
  try {
    refrt::RunOptions ro;
    ro.keep_intermediates = r.options.intermediates;
    ro.profile = !r.entry.profile;  // one profiled run per case (the first set)
    s.ours = r.session->run(s.inputs, ro);
    if (ro.profile) r.entry.profile = profile_summary(s.ours.timings, s.entry.name);
    r.entry.run = "ok";
  } catch (const Error& e) {
    r.entry.run = "error";
    fail(r.entry, "error", "refrt", e.what());
    return false;
  }
  return true;
}

bool reference_stage(CaseRun& r, SetRun& s) {
  try {
    s.reference = run_reference(r.program, s.inputs, r.options.intermediates);
    if (!s.reference.notes.empty()) s.entry.reference_notes = s.reference.notes;
    // Debugging the reference itself (docs/report.md): with --intermediates, every FX value it computed.
    if (const char* dir = std::getenv("PARITY_REFERENCE_DUMP_DIR"))
      for (const auto& [name, t] : s.reference.intermediates)
        write_tensor_file(std::string(dir) + "/" + s.entry.name + "." + name + ".pb", t, name);
  } catch (const Error& e) {
    fail(r.entry, "error", "reference", e.what());
    return false;
  }
  return true;
}

// Index outputs with ties: the input the indices select from, from libtorch's run of this set
// (repeated with every value kept only when an index output differs).
void settle(CaseRun& r, SetRun& s, Comparison& cmp, size_t i, const Tensor& want, const Tensor& got) {
  const auto user_outputs = r.program.user_output_names();
  if (cmp.passed || i >= user_outputs.size()) return;
  const auto source = index_source(r.program, user_outputs[i]);
  if (!source) return;
  if (!s.kept)
    s.kept =
        r.options.intermediates ? s.reference.intermediates : run_reference(r.program, s.inputs, true).intermediates;
  const auto input = s.kept->find(source->input_value);
  if (input != s.kept->end()) settle_ties(cmp, *source, input->second, want, got);
}

std::string output_name(const CaseRun& r, size_t i) {
  return r.session->outputs().size() > i ? r.session->outputs()[i].name : "";
}

// The case's fp64 summary keeps refrt's verdict nearest to failing, with where it was.
void note_fp64(CaseRun& r, const SetRun& s, size_t i, const Comparison& ours) {
  if (!ours.fp64_rule) return;
  Fp64Rule here = *ours.fp64_rule;
  here.input_set = s.entry.name, here.output = static_cast<int64_t>(i);
  r.fp64 = r.fp64 ? closer_to_failing(*r.fp64, here) : here;
}

// A floating output (dequantized or float) that failed against eager and is computed from quantized
// activations gets the requantized rule (compare.h): ours and the refrt/libtorch comparison take its verdict.
void requant(CaseRun& r, SetRun& s, size_t i, Comparison& ours, Comparison& cross) {
  // A dequantized output within one step still gets the rule when some element is a step off: each such
  // step must come from flips at near-ties inside the net, not from a layer computing a wrong value (an
  // off-by-one deep in the net shrinks to at most a step by the output).
  const bool unexplained_steps = ours.passed && ours.quant_scale > 0 && ours.one_step > 0;
  if ((ours.passed && !unexplained_steps) || !ours.problem.empty() || !dtype_is_floating(s.ours.outputs[i].dtype()))
    return;
  if (!s.requant) {
    const auto activations = quantized_activations(r.program);
    if (activations.empty()) return;
    try {
      s.requant = requantized_reference(r.program, *r.session, s.inputs, activations, r.value_aliases);
    } catch (const Error& e) {
      s.requant = RequantRun{};
      s.requant->base.problem = e.what();
    }
  }
  if (s.requant->base.activations == 0 && s.requant->base.problem.empty()) return;
  const RequantRule rule = requant_verdict(*s.requant, i, s.ours.outputs[i]);
  ours.requant_rule = cross.requant_rule = rule;
  ours.passed = rule.passed, cross.passed = cross.passed || rule.passed;
}

// "complex64" / "complex128" / "complex32" for a complex program value, "" for a real one (or a number).
std::string complex_dtype_of(const pt2::Program& program, const std::string& fx) {
  const auto it = program.graph.tensor_values.find(fx);
  if (it == program.graph.tensor_values.end()) return "";
  return pt2::complex_dtype_name(it->second.torch_dtype);
}

void compare_user_outputs(CaseRun& r, SetRun& s) {
  const auto user_outputs = r.program.user_output_names();
  for (size_t i = 0; i < s.expected.size(); ++i) {
    const Tensor& eager = s.expected[i].tensor;
    // A dequantized output is compared in steps of its scale (compare.h's quantized rule); others against
    // eager by the fixed rule, then the fp64 rule where capture saved eager's float64 output.
    const auto scale = i < user_outputs.size() ? dequantize_scale(r.program, user_outputs[i]) : std::nullopt;
    // A complex output (its pairs in every case folder and model, docs/complex.md) is compared as complex numbers.
    const std::string complex = i < user_outputs.size() ? complex_dtype_of(r.program, user_outputs[i]) : "";
    auto against_eager = [&](const Tensor& got) {
      if (!complex.empty()) return compare_complex(eager, got, complex);
      return scale ? compare_quantized(eager, got, *scale) : compare_with_eager(eager, got, s.fp64[i]);
    };
    Comparison ours = against_eager(s.ours.outputs[i]);
    Comparison torch = against_eager(s.reference.outputs[i]);
    Comparison cross = !complex.empty() ? compare_complex(s.reference.outputs[i], s.ours.outputs[i], complex)
                       : scale          ? compare_quantized(s.reference.outputs[i], s.ours.outputs[i], *scale)
                                        : compare_tensors(s.reference.outputs[i], s.ours.outputs[i]);
    note_fp64(r, s, i, ours);
    // Dequantized outputs too: past the last layer a step more than one is what flips deep in the net add up
    // to; with refrt's activations in libtorch, each layer is judged on the same input.
    requant(r, s, i, ours, cross);
    settle(r, s, ours, i, eager, s.ours.outputs[i]);
    settle(r, s, torch, i, eager, s.reference.outputs[i]);
    settle(r, s, cross, i, s.reference.outputs[i], s.ours.outputs[i]);
    r.all_passed = r.all_passed && ours.passed && torch.passed;
    r.max_abs = std::max(r.max_abs, ours.problem.empty() ? ours.max_abs_error : INFINITY);
    r.max_rel = std::max(r.max_rel, ours.max_rel_error);
    OutputEntry o{
        i,    output_name(r, i), {}, complex.empty() ? dtype_name(eager.dtype()) : complex, eager.shape(), ours, torch,
        cross};
    s.entry.outputs.push_back(std::move(o));
  }
}

// The value the tensor behind mutation output `name` held before the call: a user input of this set, or
// the program's stored parameter / buffer.
std::optional<Tensor> initial_state(const CaseRun& r, const SetRun& s, const std::string& name) {
  using Kind = pt2::InputSpec::Kind;
  const auto users = r.program.user_input_names();
  for (const auto& spec : r.program.input_specs) {
    if (!spec.arg.is_tensor()) continue;
    const std::string placeholder = spec.arg.tensor_name();
    if (spec.kind == Kind::kUserInput && name == "mutated_input." + placeholder) {
      const auto k = std::find(users.begin(), users.end(), placeholder) - users.begin();
      if (static_cast<size_t>(k) < s.inputs.size()) return s.inputs[static_cast<size_t>(k)];
    }
    if ((spec.kind == Kind::kBuffer && name == "mutated_buffer." + spec.target) ||
        (spec.kind == Kind::kParameter && name == "mutated_parameter." + spec.target))
      return r.program.stored_tensor(spec);
  }
  return std::nullopt;
}

// Mutated state against eager's final state (recorded at capture: the tensors the call wrote; the others
// kept their initial value), and against libtorch's run of the same program. Without an eager record
// (case folders from before it, or from elsewhere) libtorch is the only oracle.
void compare_mutations(CaseRun& r, SetRun& s) {
  const size_t n_user = s.expected.size();
  const auto mutations = r.program.mutations();
  std::set<std::string> judged;
  for (size_t i = 0; i < s.reference.mutations.size(); ++i) {
    const Tensor& got = s.ours.outputs[n_user + i];
    const Tensor& libtorch = s.reference.mutations[i];
    const std::string name = i < mutations.size() ? mutations[i].output_name : output_name(r, n_user + i);
    const Comparison cross = compare_tensors(libtorch, got);
    OutputEntry o{
        n_user + i, output_name(r, n_user + i), "mutation", dtype_name(libtorch.dtype()), libtorch.shape(), {}, {},
        cross};
    r.all_passed = r.all_passed && cross.passed;
    std::optional<Tensor> eager;
    for (const auto& recorded : s.state)
      if (recorded.name == name) eager = recorded.tensor;
    if (r.info.eager_state && !eager) eager = initial_state(r, s, name);
    if (eager) {
      judged.insert(name);
      const Comparison ours = compare_with_eager(*eager, got, Tensor());
      const Comparison torch = compare_with_eager(*eager, libtorch, Tensor());
      r.all_passed = r.all_passed && ours.passed && torch.passed;
      r.max_abs = std::max(r.max_abs, ours.problem.empty() ? ours.max_abs_error : INFINITY);
      r.max_rel = std::max(r.max_rel, ours.max_rel_error);
      o.refrt_vs_eager = ours, o.libtorch_vs_eager = torch;
    } else {
      r.max_abs = std::max(r.max_abs, cross.problem.empty() ? cross.max_abs_error : INFINITY);
    }
    s.entry.outputs.push_back(std::move(o));
  }
  // State eager wrote that the export returns no output for: the model would lose that update.
  for (const auto& recorded : s.state)
    if (!judged.count(recorded.name)) {
      Comparison missing;
      missing.passed = false;
      missing.problem = "eager writes this state, but the exported model has no output for it";
      OutputEntry o{n_user + s.reference.mutations.size(),
                    recorded.name,
                    "mutation",
                    dtype_name(recorded.tensor.dtype()),
                    recorded.tensor.shape(),
                    missing,
                    missing,
                    missing};
      r.all_passed = false;
      r.max_abs = INFINITY;
      s.entry.outputs.push_back(std::move(o));
    }
}

// Every FX value of one set against the ONNX value of the same name; the earliest divergence over all
// sets becomes the case's first divergence. Returns the {compared, unmatched, values} record.
json scan_intermediates(CaseRun& r, const std::string& set_name, const std::map<std::string, Tensor>& reference,
                        const std::map<std::string, Tensor>& ours) {
  const IntermediateScan scan = compare_intermediates(r.program, r.producers, reference, ours);
  if (scan.first_index >= 0 && (r.first_index < 0 || scan.first_index < r.first_index)) {
    r.first_index = scan.first_index;
    FirstDivergence d = scan.first_divergence.get<FirstDivergence>();
    d.input_set = set_name;
    r.entry.first_divergence = d;
  }
  return json{{"compared", scan.values.size()}, {"unmatched", scan.unmatched}, {"values", scan.values}};
}

void compare_intermediate_values(CaseRun& r, SetRun& s) {
  s.entry.intermediates = scan_intermediates(r, s.entry.name, s.reference.intermediates, s.ours.intermediates);
}

// A failing case explains itself without --intermediates: the first failing set runs again on both
// engines with every value kept, which names the node, op and source line where they part. Only
// failing cases pay for it. Returns the set's intermediates record (or {"error": ...}).
json localise(CaseRun& r, const std::vector<Tensor>& inputs, const std::string& set_name) {
  try {
    if (r.producers.empty()) r.producers = onnx_producers(r.onnx_path);
    refrt::RunOptions ro;
    ro.keep_intermediates = true;
    const refrt::RunResult ours = r.session->run(inputs, ro);
    const ReferenceResult reference = run_reference(r.program, inputs, true);
    json scan = scan_intermediates(r, set_name, reference.intermediates, ours.intermediates);
    scan["localised"] = true;
    return scan;
  } catch (const Error& e) {
    return json{{"error", e.what()}, {"localised", true}};
  }
}

bool output_failed(const OutputEntry& o) {
  return !o.refrt_vs_libtorch.passed || (o.refrt_vs_eager && !o.refrt_vs_eager->passed);
}

// The failing outputs named for the headline, at most three: "mutated_buffer.child.buf (test_data_set_0):
// eager 13, refrt 11" (the worst element; the index where the output has several), or what made them
// incomparable.
std::string failing_outputs(const CaseRun& r) {
  std::vector<std::string> parts;
  size_t count = 0;
  for (const auto& set : r.entry.input_sets)
    for (const auto& o : set.outputs) {
      if (!output_failed(o)) continue;
      if (++count > 3) continue;
      const bool vs_eager = o.refrt_vs_eager && !o.refrt_vs_eager->passed;
      const Comparison& c = vs_eager ? *o.refrt_vs_eager : o.refrt_vs_libtorch;
      const std::string reference = vs_eager ? "eager" : "libtorch";
      std::string text = (o.name ? *o.name : "output " + std::to_string(o.index)) + " (" + set.name + "): ";
      if (!c.problem.empty()) {
        text += c.problem;
      } else if (c.detail && !c.detail->worst.empty()) {
        const WorstElement& w = c.detail->worst.front();
        std::string index;
        for (size_t k = 0; k < w.index.size(); ++k) index += (k ? "," : "") + std::to_string(w.index[k]);
        text += (index.empty() ? "" : "at [" + index + "] ") + reference + " " + w.expected + ", refrt " + w.actual;
      } else {
        text += "max abs error " + std::to_string(c.max_abs_error) + " against " + reference;
      }
      parts.push_back(text);
    }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  if (count > parts.size()) out += "; and " + std::to_string(count - parts.size()) + " more";
  return out;
}

// Every failing output is one that libtorch, running the same exported program, gets wrong the same way
// (refrt agrees with it): the captured program is what differs from eager, not our export. Also the
// first such output's shape or dtype problem, if any.
bool program_differs_from_eager(const CaseRun& r, std::string& problem) {
  bool any = false;
  for (const auto& set : r.entry.input_sets)
    for (const auto& o : set.outputs) {
      if (!output_failed(o)) continue;
      if (!o.refrt_vs_libtorch.passed || !o.libtorch_vs_eager || o.libtorch_vs_eager->passed) return false;
      if (!any && !o.libtorch_vs_eager->problem.empty())
        problem = set.name + " output " + std::to_string(o.index) + ": " + o.libtorch_vs_eager->problem;
      any = true;
    }
  return any;
}

// The case's error names where it went wrong, so that a one-line summary (the matrix's) says it too.
void add_divergence_to_error(CaseRun& r) {
  const auto& d = r.entry.first_divergence;
  if (!d || !r.entry.error) return;
  std::string where = "; first divergence: " + d->fx_node + " (" + d->op + " -> ONNX " + d->onnx_op + ")";
  if (!d->source.empty()) where += " at " + d->source;
  if (d->detail) where += "; " + mismatch_summary(d->detail->get<MismatchDetail>());
  *r.entry.error += where;
}

void localise_first_failing_set(CaseRun& r) {
  for (size_t k = 0; k < r.entry.input_sets.size() && k < r.captured_inputs.size(); ++k) {
    InputSetEntry& set = r.entry.input_sets[k];
    if (std::none_of(set.outputs.begin(), set.outputs.end(), output_failed)) continue;
    set.intermediates = localise(r, r.captured_inputs[k], set.name);
    return;
  }
}

bool compare_stage(CaseRun& r, SetRun& s) {
  // Our ONNX may carry the mutated state after the user's outputs; a given model (--onnx) may not.
  const size_t n_user = s.expected.size(), n_mutated = s.reference.mutations.size();
  const bool with_mutations = n_mutated > 0 && s.ours.outputs.size() == n_user + n_mutated;
  if ((s.ours.outputs.size() != n_user && !with_mutations) || s.reference.outputs.size() != n_user) {
    fail(r.entry, "fail", "verify",
         "output count differs: eager " + std::to_string(n_user) + ", refrt " + std::to_string(s.ours.outputs.size()) +
             ", libtorch " + std::to_string(s.reference.outputs.size()));
    r.entry.verify = "fail";
    return false;
  }
  compare_user_outputs(r, s);
  // A given model (--onnx) without state outputs is judged on its user outputs only.
  if (with_mutations || (n_mutated == 0 && r.options.onnx_path.empty())) compare_mutations(r, s);
  if (r.options.intermediates) compare_intermediate_values(r, s);
  return true;
}

// Every captured input set through run, reference and compare.
bool input_sets_stage(CaseRun& r) {
  const auto sets = list_test_data_sets(r.case_dir);
  if (sets.empty()) {
    fail(r.entry, "error", "verify", "no test_data_set_* directories in " + r.case_dir);
    return false;
  }
  for (const auto& set_dir : sets) {
    SetRun s;
    if (!read_set(r, set_dir, s) || !run_stage(r, s) || !reference_stage(r, s) || !compare_stage(r, s)) return false;
    r.entry.input_sets.push_back(std::move(s.entry));
  }
  r.entry.max_abs_error = number_or_string(r.max_abs);
  r.entry.max_rel_error = number_or_string(r.max_rel);
  if (r.fp64) r.entry.fp64_rule = *r.fp64;
  r.entry.verify = r.all_passed ? "pass" : "fail";
  if (!r.all_passed) {
    std::string problem;
    if (program_differs_from_eager(r, problem)) {
      fail(r.entry, "fail", "verify",
           "outputs differ from eager beyond tolerance, and so does the exported program run by libtorch (refrt "
           "matches it): the capture, not the export, differs from eager" +
               (problem.empty() ? std::string() : " (" + problem + ")") + ": " + failing_outputs(r));
      return true;
    }
    fail(r.entry, "fail", "verify", "outputs differ from eager beyond tolerance: " + failing_outputs(r));
    if (!r.options.intermediates) localise_first_failing_set(r);
    add_divergence_to_error(r);
  }
  return true;
}

// One fresh set: refrt against libtorch (with the mutated state when our model returns it).
FreshSetEntry compare_fresh_set(CaseRun& r, const FreshSet& fresh, bool& passed) {
  FreshSetEntry set{fresh.name, json::object(), {}};
  for (const auto& [sym, v] : fresh.dims)
    set.dims[r.program.dim_names.count(sym) ? r.program.dim_names.at(sym) : sym] = v;
  const auto ours = r.session->run(fresh.inputs).outputs;
  const ReferenceResult result = run_reference(r.program, fresh.inputs);
  std::vector<Tensor> reference = result.outputs;
  if (ours.size() == reference.size() + result.mutations.size())
    reference.insert(reference.end(), result.mutations.begin(), result.mutations.end());
  if (ours.size() != reference.size())
    throw Error({"fresh"}, "refrt returned " + std::to_string(ours.size()) + " outputs, libtorch " +
                               std::to_string(reference.size()));
  for (size_t i = 0; i < ours.size(); ++i) {
    const Comparison cmp = compare_tensors(reference[i], ours[i]);
    passed = passed && cmp.passed;
    set.outputs.push_back({i, {}, {}, dtype_name(reference[i].dtype()), reference[i].shape(), {}, {}, cmp});
  }
  return set;
}

// Fresh dynamic dims: libtorch and refrt must agree on shapes never seen at capture.
void fresh_stage(CaseRun& r) {
  r.entry.fresh_sets.emplace();
  try {
    const uint64_t seed = r.options.fresh_seed ? r.options.fresh_seed : name_seed(r.info.name + "/" + r.info.mode);
    bool passed = true;
    for (const auto& fresh : make_fresh_sets(r.program, r.captured_inputs, r.options.fresh, seed)) {
      const bool before = passed;
      r.entry.fresh_sets->push_back(compare_fresh_set(r, fresh, passed));
      if (before && !passed && r.entry.status == "pass") localise(r, fresh.inputs, fresh.name);
    }
    if (!passed && r.entry.status == "pass") {
      r.entry.verify = "fail";
      fail(r.entry, "fail", "fresh", "refrt differs from libtorch on fresh dynamic dims");
      add_divergence_to_error(r);
    }
  } catch (const Error& e) {
    if (r.entry.status == "pass") fail(r.entry, "error", "fresh", e.what());
  }
}

void verify_stages(CaseRun& r) {
  if (!load_stage(r) || !export_stage(r) || !load_session_stage(r) || !input_sets_stage(r)) return;
  if (r.options.fresh > 0) fresh_stage(r);
  if (r.options.peers)
    r.entry.peers = run_peers(r.case_dir, r.onnx_path, ours_refrt_verdict(r.entry), r.out_dir, r.options);
}

}  // namespace

std::vector<std::string> find_case_dirs(const std::string& dir) {
  if (fs::exists(fs::path(dir) / "case.json")) return {dir};
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && fs::exists(e.path() / "case.json")) out.push_back(e.path().string());
  if (ec) throw Error({"verify", dir}, "cannot read directory: " + ec.message());
  if (out.empty()) throw Error({"verify", dir}, "no case.json here or in its subdirectories; capture the case first");
  std::sort(out.begin(), out.end());
  return out;
}

CaseEntry verify_case_dir(const std::string& case_dir, const std::string& out_dir, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CaseRun run{case_dir, out_dir, options, load_case_info(case_dir)};
  verify_stages(run);
  run.entry.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(run.entry);
}

}  // namespace parity::verify

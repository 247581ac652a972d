#include "parity/refrt/profile.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "parity/refrt/cpu_isa.h"

namespace parity::refrt {
namespace {

using Json = nlohmann::json;

// ORT's element-type spelling in input_type_shape ("float", "double", "int64", ...).
std::string ort_type_name(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    default:
      return dtype_name(t);
  }
}

Json type_shapes(const std::vector<TypedShape>& values) {
  Json out = Json::array();
  for (const auto& v : values) out.push_back({{ort_type_name(v.dtype), v.shape}});
  return out;
}

Json event(const std::string& cat, const std::string& name, double ts_us, double dur_us, Json args) {
  return {{"cat", cat},
          {"pid", static_cast<int>(getpid())},
          {"tid", 0},
          {"dur", static_cast<int64_t>(dur_us + 0.5)},
          {"ts", static_cast<int64_t>(ts_us + 0.5)},
          {"ph", "X"},
          {"name", name},
          {"args", std::move(args)}};
}

struct Totals {
  std::string op_type;
  int64_t calls = 0;
  double ms = 0, flops = 0, bytes = 0;
  std::map<std::string, double> impl_ms;  // what ran the calls, and for how long
};

// "onednn brg:avx512_core" (one implementation), or each with its share of the time, largest first.
std::string impl_text(const std::map<std::string, double>& impl_ms) {
  if (impl_ms.size() == 1) return impl_ms.begin()->first;
  std::vector<std::pair<double, std::string>> sorted;
  double all = 0;
  for (const auto& [name, ms] : impl_ms) {
    sorted.emplace_back(ms, name);
    all += ms;
  }
  std::sort(sorted.rbegin(), sorted.rend());
  std::string out;
  for (const auto& [ms, name] : sorted) {
    char share[32];
    std::snprintf(share, sizeof share, " %.0f%%", all > 0 ? 100.0 * ms / all : 0.0);
    out += (out.empty() ? "" : ", ") + name + share;
  }
  return out;
}

Json rows(const std::map<std::string, Totals>& totals, double all_ms, bool with_op_type, const char* key) {
  std::vector<std::pair<std::string, Totals>> sorted(totals.begin(), totals.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  Json out = Json::array();
  for (const auto& [name, t] : sorted) {
    Json row = {{key, name},
                {"calls", t.calls},
                {"total_ms", t.ms},
                {"share", all_ms > 0 ? 100.0 * t.ms / all_ms : 0.0},
                {"mean_us", t.calls ? 1000.0 * t.ms / static_cast<double>(t.calls) : 0.0},
                {"gflops_per_s", t.flops > 0 && t.ms > 0 ? Json(t.flops / (t.ms * 1e6)) : Json(nullptr)},
                {"gb_per_s", t.ms > 0 ? Json(t.bytes / (t.ms * 1e6)) : Json(nullptr)},
                {"impl", impl_text(t.impl_ms)}};
    if (with_op_type) row["op_type"] = t.op_type;
    out.push_back(std::move(row));
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string opt(const Json& v, int digits) { return v.is_number() ? fixed(v.get<double>(), digits) : "-"; }

}  // namespace

Json machine_json() {
  const CpuFacts& f = cpu_facts();
  return {{"cpu", f.model_name},
          {"family", f.family},
          {"model", f.model},
          {"refrt_isa", f.refrt_isa},
          {"onednn", f.onednn},
          {"onednn_isa", f.onednn_isa},
          {"openblas", f.openblas},
          {"openblas_core", f.openblas_core},
          {"openblas_generic", f.openblas_generic}};
}

std::string machine_line(const Json& m) {
  std::string line = m.value("cpu", std::string("unknown CPU")) + " (family " + std::to_string(m.value("family", 0)) +
                     " model " + std::to_string(m.value("model", 0)) + "); refrt " +
                     m.value("refrt_isa", std::string()) + "; " + m.value("onednn", std::string()) + " at " +
                     m.value("onednn_isa", std::string());
  const std::string core = m.value("openblas_core", std::string());
  if (!core.empty())
    line += "; OpenBLAS core " + core + (m.value("openblas_generic", false) ? " (generic SSE3 fallback)" : "");
  return line;
}

Profile profile_session(const Session& session, const std::vector<Tensor>& inputs, const ProfileOptions& options,
                        const std::string& model, double load_ms) {
  using Clock = std::chrono::steady_clock;
  Profile p;
  p.model = model;
  p.warmup = options.warmup;
  p.load_ms = load_ms;
  for (int i = 0; i < options.warmup; ++i) session.run(inputs);
  RunOptions run_options;
  run_options.profile = true;
  const Clock::time_point first = Clock::now();
  for (int i = 0; i < options.runs; ++i) {
    const Clock::time_point start = Clock::now();
    RunResult r = session.run(inputs, run_options);
    const Clock::time_point end = Clock::now();
    p.run_start_ms.push_back(std::chrono::duration<double, std::milli>(start - first).count());
    p.run_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count() - r.profiler_ms);
    p.nodes.push_back(std::move(r.timings));
  }
  return p;
}

Json chrome_trace(const Profile& p) {
  Json events = Json::array();
  // Loading happened before the runs: placed first on the time line, then the measured runs.
  events.push_back(event("Session", "session_initialization", 0, p.load_ms * 1000, Json::object()));
  const double offset_us = p.load_ms * 1000;
  for (size_t r = 0; r < p.nodes.size(); ++r) {
    const double run_ts = offset_us + p.run_start_ms[r] * 1000;
    events.push_back(event("Session", "model_run", run_ts, p.run_ms[r] * 1000, Json::object()));
    for (const auto& t : p.nodes[r]) {
      Json args = {{"op_name", t.op_type},
                   {"provider", "refrt"},
                   {"node_index", std::to_string(t.node_index)},
                   {"input_type_shape", type_shapes(t.inputs)},
                   {"output_type_shape", type_shapes(t.outputs)},
                   {"impl", t.impl}};
      if (t.flops > 0) args["flops"] = t.flops;
      events.push_back(
          event("Node", t.node + "_kernel_time", run_ts + t.start_ms * 1000, t.ms * 1000, std::move(args)));
    }
  }
  return events;
}

Json summarize_profile(const Profile& p) {
  std::map<std::string, Totals> by_op, by_node;
  double all_ms = 0;
  for (const auto& run : p.nodes)
    for (const auto& t : run) {
      for (Totals* totals : {&by_op[t.op_type], &by_node[t.node]}) {
        totals->op_type = t.op_type;
        totals->calls += 1;
        totals->ms += t.ms;
        totals->flops += t.flops;
        totals->bytes += t.bytes;
        totals->impl_ms[t.impl] += t.ms;
      }
      all_ms += t.ms;
    }
  double run_sum = 0;
  for (double ms : p.run_ms) run_sum += ms;
  const double runs = static_cast<double>(std::max<size_t>(p.run_ms.size(), 1));
  return {{"model", p.model},
          {"runs", p.run_ms.size()},
          {"warmup", p.warmup},
          {"load_ms", p.load_ms},
          {"mean_run_ms", run_sum / runs},
          {"kernel_ms_per_run", all_ms / runs},
          {"machine", machine_json()},
          {"by_op_type", rows(by_op, all_ms, false, "op_type")},
          {"by_node", rows(by_node, all_ms, true, "node")}};
}

void add_ort_comparison(Json& summary, const Json& ort) {
  const double runs = std::max(1.0, summary["runs"].get<double>());
  const Json& per_op = ort.at("op_type_ms_per_run");
  for (auto& row : summary["by_op_type"]) {
    const std::string op = row["op_type"];
    if (!per_op.contains(op)) {
      row["ort_ms_per_run"] = nullptr;
      row["ratio"] = nullptr;
      continue;
    }
    const double ours = row["total_ms"].get<double>() / runs, theirs = per_op[op].get<double>();
    row["ort_ms_per_run"] = theirs;
    row["ratio"] = theirs > 0 ? Json(ours / theirs) : Json(nullptr);
  }
  summary["ort_mean_run_ms"] = ort.at("mean_run_ms");
  summary["ort_version"] = ort.value("version", "");
}

std::string profile_markdown(const Json& s, size_t top_nodes) {
  const bool ort = s.contains("ort_mean_run_ms");
  std::ostringstream md;
  md << "# refrt profile: " << s["model"].get<std::string>() << "\n\n";
  md << s["runs"].get<int>() << " runs after " << s["warmup"].get<int>() << " warm-up; mean run "
     << fixed(s["mean_run_ms"], 3) << " ms (kernels " << fixed(s["kernel_ms_per_run"], 3) << " ms); load "
     << fixed(s["load_ms"], 1) << " ms";
  if (ort)
    md << "; onnxruntime " << s.value("ort_version", "") << " mean run " << fixed(s["ort_mean_run_ms"], 3) << " ms";
  md << "\n\nMachine: " << machine_line(s.value("machine", Json::object()));
  md << "\n\n## By op type\n\n| op | calls | total ms | share % | mean µs | GFLOP/s | GB/s |"
     << (ort ? " ORT ms/run | refrt/ORT |" : "") << " implementation |\n|---|---:|---:|---:|---:|---:|---:|"
     << (ort ? "---:|---:|" : "") << "---|\n";
  for (const auto& r : s["by_op_type"]) {
    md << "| " << r["op_type"].get<std::string>() << " | " << r["calls"].get<int64_t>() << " | "
       << fixed(r["total_ms"], 3) << " | " << fixed(r["share"], 1) << " | " << fixed(r["mean_us"], 1) << " | "
       << opt(r["gflops_per_s"], 2) << " | " << opt(r["gb_per_s"], 2) << " |";
    if (ort) md << " " << opt(r["ort_ms_per_run"], 3) << " | " << opt(r["ratio"], 2) << " |";
    md << " " << r.value("impl", std::string()) << " |\n";
  }
  md << "\n## Top nodes\n\n| node | op | calls | total ms | share % | mean µs | GFLOP/s | GB/s | implementation "
        "|\n|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  size_t n = 0;
  for (const auto& r : s["by_node"]) {
    if (n++ == top_nodes) break;
    md << "| " << r["node"].get<std::string>() << " | " << r["op_type"].get<std::string>() << " | "
       << r["calls"].get<int64_t>() << " | " << fixed(r["total_ms"], 3) << " | " << fixed(r["share"], 1) << " | "
       << fixed(r["mean_us"], 1) << " | " << opt(r["gflops_per_s"], 2) << " | " << opt(r["gb_per_s"], 2) << " | "
       << r.value("impl", std::string()) << " |\n";
  }
  return md.str();
}

std::string profile_text(const Json& s, size_t top_nodes) {
  const bool ort = s.contains("ort_mean_run_ms");
  std::ostringstream out;
  char line[256];
  out << "machine: " << machine_line(s.value("machine", Json::object())) << "\n";
  out << "mean run " << fixed(s["mean_run_ms"], 3) << " ms over " << s["runs"].get<int>() << " runs";
  if (ort) out << " (onnxruntime " << fixed(s["ort_mean_run_ms"], 3) << " ms)";
  out << "\n";
  std::snprintf(line, sizeof line, "%-22s %6s %10s %7s %10s %9s %8s", "op type", "calls", "total ms", "share%",
                "mean us", "GFLOP/s", "GB/s");
  out << line << (ort ? "  ORT ms/run  refrt/ORT" : "") << "\n";
  for (const auto& r : s["by_op_type"]) {
    std::snprintf(line, sizeof line, "%-22s %6lld %10.3f %7.1f %10.1f %9s %8s", r["op_type"].get<std::string>().c_str(),
                  static_cast<long long>(r["calls"].get<int64_t>()), r["total_ms"].get<double>(),
                  r["share"].get<double>(), r["mean_us"].get<double>(), opt(r["gflops_per_s"], 2).c_str(),
                  opt(r["gb_per_s"], 2).c_str());
    out << line;
    if (ort) {
      std::snprintf(line, sizeof line, "  %11s  %9s", opt(r["ort_ms_per_run"], 3).c_str(), opt(r["ratio"], 2).c_str());
      out << line;
    }
    out << "\n";
  }
  out << "top nodes:\n";
  size_t n = 0;
  for (const auto& r : s["by_node"]) {
    if (n++ == top_nodes) break;
    std::snprintf(line, sizeof line, "  %-40s %-16s %10.3f ms %6.1f%%  ", r["node"].get<std::string>().c_str(),
                  r["op_type"].get<std::string>().c_str(), r["total_ms"].get<double>(), r["share"].get<double>());
    out << line << r.value("impl", std::string()) << "\n";
  }
  return out.str();
}

}  // namespace parity::refrt

// report.json as JUnit XML, the format every CI reads (GitHub Actions reporters, GitLab, Jenkins, Buildkite):
// one <testcase> per (case, mode), classname = case, name = mode. A failure or an error element stands exactly
// where report_passed() sees an unexpected result, so a CI that fails on JUnit failures agrees with the exit code.
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "parity/fs.h"
#include "parity/verify/report.h"
#include "report_text.h"

namespace parity::verify {

using json = nlohmann::json;

namespace {

// Valid UTF-8 stays as is; a byte that starts no valid sequence becomes U+FFFD (an error text may carry a
// truncated multi-byte character, and XML parsers refuse a file with broken UTF-8).
std::string valid_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (ok) {
      out.append(s, i, n);
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// Text for an attribute value or element content: markup characters escaped, and control characters XML 1.0
// does not allow at all replaced (tab, newline and carriage return kept; in attributes as references, which
// a parser keeps instead of normalising them to spaces).
std::string xml(const std::string& raw, bool attribute) {
  std::string out;
  for (const char ch : valid_utf8(raw)) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += "&#13;";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20)
          out += '?';
        else
          out += ch;
    }
  }
  return out;
}

std::string seconds(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << s;
  return out.str();
}

// The time of a (case, mode): the matrix's child wall time, else the verify time, else 0.
double case_seconds(const json& c) {
  for (const char* key : {"wall_seconds", "seconds"})
    if (c.contains(key) && c[key].is_number()) return c[key].get<double>();
  return 0;
}

// report.md's "Problems" line of a case: status, stage, error.
std::string problem_line(const json& c) {
  std::string line = text_of(c, "status");
  if (!text_of(c, "stage").empty()) line += ", stage " + text_of(c, "stage");
  const std::string error = text_of(c, "error");
  if (!error.empty()) line += ": " + error;
  return line;
}

// What a failure element holds besides its message: where the first divergence is, where the report is.
std::string failure_body(const json& c, const std::string& report_path) {
  std::string body = problem_line(c);
  if (c.contains("first_divergence") && c["first_divergence"].is_object()) {
    const json& d = c["first_divergence"];
    body += "\nfirst divergence: FX node " + text_of(d, "fx_node") + " (" + text_of(d, "op") + "), ONNX node " +
            text_of(d, "onnx_node") + " (" + text_of(d, "onnx_op") + "), max abs error " +
            scientific(d.value("max_abs_error", json())) + "; source: " + text_of(d, "source");
  }
  return body + "\nreport: " + report_path;
}

}  // namespace

std::string render_junit(const json& report, const std::string& report_path) {
  // The regressions against a baseline of each (case, mode): they fail its test case even when it passed.
  std::map<std::pair<std::string, std::string>, std::string> regressed;
  for (const auto& r : report.value("regressions", json::array())) {
    std::string& what = regressed[{text_of(r, "case"), text_of(r, "mode")}];
    what += (what.empty() ? "" : "; ") + std::string("regression: ") + text_of(r, "what");
  }
  std::ostringstream cases;
  int failures = 0, errors = 0, skipped = 0;
  double total = 0;
  for (const auto& c : report.at("cases")) {
    const std::string status = text_of(c, "status");
    const double t = case_seconds(c);
    total += t;
    cases << "    <testcase classname=\"" << xml(text_of(c, "case"), true) << "\" name=\""
          << xml(text_of(c, "mode"), true) << "\" time=\"" << seconds(t) << "\">\n"
          << "      <properties>\n        <property name=\"attachment\" value=\"" << xml(report_path, true)
          << "\"/>\n        <property name=\"status\" value=\"" << xml(status, true) << "\"/>\n      </properties>\n";
    const auto reg = regressed.find({text_of(c, "case"), text_of(c, "mode")});
    const std::string expected =
        c.contains("expected_failure") ? text_of(c["expected_failure"], "reason") : std::string();
    if (status == "fail" || status == "error" || status == "crashed" || status == "timeout") {
      // fail: Parity's numbers differ; the rest: no verdict at all (an exception, a crash, a hang).
      const bool failure = status == "fail";
      (failure ? failures : errors) += 1;
      std::string message = problem_line(c);
      if (reg != regressed.end()) message += "; " + reg->second;
      cases << "      <" << (failure ? "failure" : "error") << " type=\"" << xml(status, true) << "\" message=\""
            << xml(message, true) << "\">" << xml(failure_body(c, report_path), false) << "</"
            << (failure ? "failure" : "error") << ">\n";
    } else if (reg != regressed.end()) {  // passed, but worse than the baseline (the error grew)
      ++failures;
      cases << "      <failure type=\"regression\" message=\"" << xml(reg->second, true) << "\">"
            << xml(reg->second + "\nreport: " + report_path, false) << "</failure>\n";
    } else if (status == "xfail" || status == "capture_failed") {
      // Neither fails the run: a listed expected failure, or torch.export's own refusal to capture.
      ++skipped;
      const std::string message =
          status == "xfail" ? "expected failure (" + text_of(c, "result") + "): " + expected
                            : "torch.export could not capture this mode" + (expected.empty() ? "" : ": " + expected) +
                                  (text_of(c, "error").empty() ? "" : " (" + text_of(c, "error") + ")");
      cases << "      <skipped message=\"" << xml(message, true) << "\"/>\n";
    }
    // A CI that shows attachments (Jenkins, GitLab, Azure) finds the report this way.
    cases << "      <system-out>";
    if (status == "xpass")
      cases << xml("passes although listed as a known failure (" + expected + "): remove it from the list\n", false);
    cases << "[[ATTACHMENT|" << xml(report_path, false) << "]]</system-out>\n    </testcase>\n";
  }
  const size_t tests = report.at("cases").size();
  const std::string name = text_of(report, "command").empty() ? "parity" : text_of(report, "command");
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"parity\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\"" << errors
      << "\" skipped=\"" << skipped << "\" time=\"" << seconds(total) << "\">\n"
      << "  <testsuite name=\"" << xml(name, true) << "\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << seconds(total) << "\" timestamp=\""
      << xml(text_of(report, "created"), true) << "\">\n"
      << "    <properties>\n      <property name=\"report\" value=\"" << xml(report_path, true)
      << "\"/>\n      <property name=\"torch_version\" value=\"" << xml(text_of(report, "torch_version"), true)
      << "\"/>\n    </properties>\n"
      << cases.str() << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

void write_junit(const std::string& path, const json& report, const std::string& report_path) {
  const std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  write_file_atomic(path, render_junit(report, std::filesystem::absolute(report_path).lexically_normal().string()),
                    "junit");
}

}  // namespace parity::verify

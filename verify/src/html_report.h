// Internal: the pieces of report.html (html_report.cc: the page; html_case_data.cc: each case's data,
// drawn by the page's script when the case is opened; html_assets.cc: style and script).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace parity::verify {

// What a case's section shows, compact: error, stage, expected-failure reason, first divergence,
// output rows, the summed error histogram, the divergence path, fresh sets, profile bars.
nlohmann::json html_case_data(const nlohmann::json& c);
// The labels of the histogram's bins ("0", "<=1e-09", ..., ">1/NaN").
nlohmann::json histogram_bin_labels();

extern const char* const kHtmlStyle;
extern const char* const kHtmlScript;

}  // namespace parity::verify

#include "verify_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

extern char** environ;

namespace parity::verify {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKeyFile = ".verify-key";

// FNV-1a, 64 bits: a change detector over file stamps, not a content hash.
std::string digest(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  std::ostringstream s;
  s << std::hex << h;
  return s.str();
}

void stamp(std::ostringstream& s, const fs::path& p) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  const auto time = fs::last_write_time(p, ec).time_since_epoch().count();
  s << p.string() << ' ' << (ec ? 0 : size) << ' ' << (ec ? 0 : time) << '\n';
}

// Every file of the libraries this process has mapped (/proc/self/maps), sorted.
std::set<std::string> mapped_files() {
  std::set<std::string> files;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash != std::string::npos && line.find(".so", slash) != std::string::npos) files.insert(line.substr(slash));
  }
  return files;
}

// The environment variables that change what `parity verify` computes or how it picks its kernels.
bool steers_verify(const std::string& name) {
  for (const char* prefix : {"PARITY_", "ONEDNN_", "DNNL_", "OPENBLAS_", "OMP_", "MKL_", "GOTO"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

std::string shared_verify_key(const MatrixOptions& o) {
  std::ostringstream s;
  s << "parity-verify-cache 1\n";
  for (const auto& a : verify_arguments(o, "", "")) s << a << '\n';
  stamp(s, o.self_exe);
  const fs::path build = fs::path(o.self_exe).parent_path();
  std::vector<fs::path> libraries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(build, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".so") libraries.push_back(it->path());
  std::sort(libraries.begin(), libraries.end());
  for (const auto& p : libraries) stamp(s, p);
  for (const auto& f : mapped_files()) stamp(s, f);
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (const std::string kv = *e; steers_verify(kv.substr(0, kv.find('=')))) env.push_back(kv);
  std::sort(env.begin(), env.end());
  for (const auto& kv : env) s << kv << '\n';
  return digest(s.str());
}

std::string unit_verify_key(const std::string& shared_key, const Unit& u) {
  std::ostringstream s;
  s << shared_key << '\n' << u.name << '/' << u.mode << '\n';
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(u.case_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file()) files.push_back(it->path());
  if (ec) return "";  // an unreadable case folder is never a cache hit
  std::sort(files.begin(), files.end());
  for (const auto& p : files) stamp(s, p);
  return digest(s.str());
}

bool verify_result_cached(const Unit& u, const std::string& key) {
  if (key.empty() || !fs::exists(fs::path(u.out_dir) / "report.json")) return false;
  std::ifstream in(fs::path(u.out_dir) / kKeyFile);
  std::string stored;
  return std::getline(in, stored) && stored == key;
}

void store_verify_key(const Unit& u, const std::string& key, const std::string& status) {
  forget_verify_key(u);
  if (key.empty() || status == "error" || status == "crashed" || status == "timeout") return;
  std::ofstream(fs::path(u.out_dir) / kKeyFile) << key << '\n';
}

void forget_verify_key(const Unit& u) {
  std::error_code ec;
  fs::remove(fs::path(u.out_dir) / kKeyFile, ec);
}

}  // namespace parity::verify

// `hotline model pull NAME|URL [--dir DIR] [--sha256 HEX]` and `hotline model list [--dir DIR]`:
// instruction-tuned GGUF models one command away (engine/model_presets.h, net/download.h).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "app/cli.h"
#include "engine/gguf.h"
#include "engine/model_presets.h"
#include "net/download.h"

namespace hotline::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultDir = "models";

constexpr const char* kPullUsage =
    "usage: hotline model pull NAME|URL [--dir DIR] [--sha256 HEX] [--ca-file PEM] [--quiet]\n"
    "  Downloads a GGUF model into DIR (default ./models): a preset NAME (see `hotline model\n"
    "  list`) or an http:// or https:// URL. An interrupted download resumes where it stopped\n"
    "  when run again (HTTP Range); the free disk space is checked first; the file is checked\n"
    "  against its SHA-256 (the preset's, or --sha256) and parsed as GGUF before it is kept, and\n"
    "  deleted when a check fails. Prints the file's SHA-256. https:// servers must show a\n"
    "  certificate for their host signed by an authority of the system's store (package\n"
    "  ca-certificates), or of --ca-file (a private mirror's authority).\n";

constexpr const char* kListUsage =
    "usage: hotline model list [--dir DIR]\n"
    "  The GGUF models in DIR (default ./models): file, size, architecture, parameters, weight\n"
    "  type, preset; then the presets `hotline model pull` knows, with their recommended\n"
    "  quantization, chat format, prompt budget and ready configuration.\n";

std::string Mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1 << 20));
  return buf;
}

// "[##########          ]  50%  12.3/24.6 MiB  8.1 MiB/s", redrawn on one line of stderr.
class ProgressBar {
 public:
  explicit ProgressBar(bool quiet) : quiet_(quiet), start_(std::chrono::steady_clock::now()) {}
  void Update(int64_t done, int64_t total) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done != total && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - start_).count();
    if (first_ < 0) first_ = done;  // bytes already there when resuming are not speed
    const double rate = secs > 0 ? static_cast<double>(done - first_) / secs : 0;
    std::string line;
    if (total > 0) {
      const int width = 30;
      const int filled =
          static_cast<int>(width * static_cast<double>(done) / static_cast<double>(total));
      line = "[" + std::string(filled, '#') + std::string(width - filled, ' ') + "] ";
      char pct[16];
      std::snprintf(pct, sizeof pct, "%3d%%  ", static_cast<int>(100.0 * done / total));
      line += pct + Mib(static_cast<double>(done)) + " of " + Mib(static_cast<double>(total));
    } else {
      line = Mib(static_cast<double>(done));
    }
    if (rate > 0) line += "  " + Mib(rate) + "/s";
    std::cerr << "\r" << line << "   " << std::flush;
    drawn_ = true;
  }
  void Done() {
    if (drawn_) std::cerr << "\n";
  }

 private:
  bool quiet_;
  bool drawn_ = false;
  int64_t first_ = -1;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_{};
};

// A downloaded file is kept only when it parses as GGUF (magic, version, every key and tensor
// record) and, for a preset, has the preset's architecture.
Status VerifyGguf(const std::string& path, const engine::ModelPreset* preset) {
  auto f = engine::GgufFile::Open(path);
  if (!f.ok()) return DataLossError("not a GGUF model file: " + f.status().message());
  if ((*f)->tensors().empty()) return DataLossError("a GGUF file with no tensors is no model");
  if (preset) {
    auto arch = (*f)->GetString("general.architecture");
    if (!arch.ok() || *arch != preset->architecture) {
      return DataLossError("general.architecture is '" + std::string(arch.ok() ? *arch : "?") +
                           "', the preset " + std::string(preset->name) + " is '" +
                           std::string(preset->architecture) + "'");
    }
  }
  return Status::Ok();
}

int RunModelPull(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--dir", "--sha256", "--ca-file"});
  if (!args.ok()) return UsageError(args.status().message(), kPullUsage);
  if (args->Has("--help")) {
    std::cout << kPullUsage;
    return 0;
  }
  const std::string dir = args->GetOr("--dir", kDefaultDir);
  const auto sha = args->Get("--sha256");
  const std::string ca_file = args->GetOr("--ca-file", "");
  const bool quiet = args->Has("--quiet");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kPullUsage);
  if (args->positional().size() != 1) return UsageError("expected one NAME or URL", kPullUsage);
  const std::string& what = args->positional()[0];
  const engine::ModelPreset* preset = engine::FindModelPreset(what);
  std::string url, file_name, expected_sha;
  if (preset) {
    url = std::string(preset->url);
    file_name = std::string(preset->file_name);
    expected_sha = std::string(preset->sha256);
  } else if (what.find("://") != std::string::npos) {
    url = what;
    std::string path = url.substr(url.find("://") + 3);
    path = path.substr(0, path.find_first_of("?#"));
    const size_t slash = path.rfind('/');
    file_name = slash == std::string::npos ? "" : path.substr(slash + 1);
    if (file_name.empty() || file_name == "." || file_name == "..") {
      return Fail(InvalidArgumentError(url + ": the URL names no file"));
    }
    for (char c : file_name) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')) {
        return Fail(InvalidArgumentError(url + ": the file name '" + file_name +
                                         "' has a character other than letters, digits, . - _"));
      }
    }
  } else {
    std::string names;
    for (const auto& p : engine::ModelPresets())
      names += (names.empty() ? "" : ", ") + std::string(p.name);
    return Fail(NotFoundError("no preset named '" + what + "' (presets: " + names +
                              "); or give an http:// or https:// URL"));
  }
  if (sha) expected_sha = *sha;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Fail(UnavailableError("cannot create " + dir + ": " + ec.message()));
  const std::string path = (fs::path(dir) / file_name).string();
  ProgressBar bar(quiet);
  net::DownloadOptions o;
  o.expected_sha256 = expected_sha;
  o.http.ca_file = ca_file;
  o.on_progress = [&](int64_t done, int64_t total) { bar.Update(done, total); };
  o.verify = [&](const std::string& part) { return VerifyGguf(part, preset); };
  std::cerr << "downloading " << url << "\n  to " << path << "\n";
  auto r = net::DownloadFile(url, path, o);
  bar.Done();
  if (!r.ok()) return Fail(r.status());
  if (r->already_present) {
    std::cout << path << " is already here (" << Mib(static_cast<double>(r->bytes))
              << ", SHA-256 checked)\n";
    return 0;
  }
  std::cout << "saved " << path << " (" << Mib(static_cast<double>(r->bytes)) << ")"
            << (r->resumed_from > 0 ? ", resumed from " + Mib(static_cast<double>(r->resumed_from))
                                    : "")
            << "\nSHA-256 " << r->sha256
            << (expected_sha.empty() ? " (no checksum to check against)" : " (checked)") << "\n";
  if (preset) {
    std::cout << "use it: hotline serve --config " << preset->config_file
              << " --set llm.engine.model_path=" << path << "\n";
  }
  return 0;
}

int RunModelList(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--dir"});
  if (!args.ok()) return UsageError(args.status().message(), kListUsage);
  if (args->Has("--help")) {
    std::cout << kListUsage;
    return 0;
  }
  const std::string dir = args->GetOr("--dir", kDefaultDir);
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kListUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kListUsage);
  std::cout << "installed in " << dir << ":\n";
  int installed = 0;
  std::error_code ec;
  std::vector<fs::path> files, parts;
  if (fs::is_directory(dir, ec)) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (!e.is_regular_file()) continue;
      const std::string n = e.path().filename().string();
      if (e.path().extension() == ".gguf") files.push_back(e.path());
      if (n.size() > 10 && n.compare(n.size() - 10, 10, ".gguf.part") == 0)
        parts.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::sort(parts.begin(), parts.end());
  for (const fs::path& p : files) {
    ++installed;
    std::string line =
        "  " + p.filename().string() + "  " + Mib(static_cast<double>(fs::file_size(p, ec)));
    auto f = engine::GgufFile::Open(p.string());
    if (!f.ok()) {
      line += "  NOT A VALID GGUF FILE: " + f.status().message();
    } else {
      auto arch = (*f)->GetString("general.architecture");
      line += "  " + std::string(arch.ok() ? *arch : "?");
      int64_t params = 0;
      for (const auto& t : (*f)->tensors()) params += t.num_elements();
      char buf[32];
      std::snprintf(buf, sizeof buf, "  %.2f B parameters", static_cast<double>(params) / 1e9);
      line += buf;
      auto ftype = (*f)->GetIntOr("general.file_type", -1);
      if (ftype.ok() && *ftype >= 0) line += "  file_type " + std::to_string(*ftype);
    }
    for (const auto& preset : engine::ModelPresets()) {
      if (preset.file_name == p.filename().string())
        line += "  (preset " + std::string(preset.name) + ")";
    }
    std::cout << line << "\n";
  }
  for (const fs::path& p : parts) {
    std::cout << "  " << p.filename().string() << "  "
              << Mib(static_cast<double>(fs::file_size(p, ec)))
              << "  unfinished: `hotline model pull` again resumes it\n";
  }
  if (installed == 0) std::cout << "  (none)\n";
  std::cout << "\npresets (hotline model pull NAME):\n";
  for (const auto& p : engine::ModelPresets()) {
    char buf[256];
    std::snprintf(
        buf, sizeof buf, "  %-13s %-22s %-6s %5.2f GiB  %-7s prompt %d, answer %d tokens  %s\n",
        std::string(p.name).c_str(), std::string(p.display_name).c_str(),
        std::string(p.quantization).c_str(), p.file_gib, std::string(p.chat_format).c_str(),
        p.prompt_tokens, p.answer_tokens, std::string(p.config_file).c_str());
    std::cout << buf;
  }
  return 0;
}

const CommandRegistrar kModelPull({"model pull", "download a GGUF model (preset or URL)",
                                   kPullUsage, RunModelPull});
const CommandRegistrar kModelList({"model list", "installed GGUF models and the presets",
                                   kListUsage, RunModelList});

}  // namespace
}  // namespace hotline::cli

// The YAML configuration (common/config.h, app/hotline_config.h): LoadHotlineConfig reads a file
// as `hotline serve|call|config --config FILE` do (YAML parse, moved keys, every section's reader
// and Validate). Input: the file's text, handed over as a real file (a memfd).
// Property: a configuration that loads dumps to YAML that loads back to the same configuration.
// The dump read back is the changed-keys one (`config show --changed`): every value the input
// set goes through the same writer as in the full dump, and reading back a few keys instead of
// all ~380 keeps the target fast. The two configurations are compared through their changed-keys
// dumps: a key is written there exactly when its written value differs from the default's, so two
// configurations have the same changed-keys dump exactly when their full dumps are equal, and the
// comparison skips writing all ~380 keys twice. Every key is written once, by the redacted dump
// (the admin API's): the full dump's writer with secrets and URL passwords hidden.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "app/hotline_config.h"
#include "common/config.h"
#include "fuzz/fuzz_input.h"

namespace {

// An in-memory file reached through /proc/self/fd/N, rewritten for each input.
class MemFile {
 public:
  MemFile() {
    fd_ = memfd_create("hotline-fuzz-config", 0);
    HOTLINE_FUZZ_CHECK(fd_ >= 0);
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& Write(const void* data, size_t size) {
    HOTLINE_FUZZ_CHECK(ftruncate(fd_, 0) == 0);
    size_t done = 0;
    while (done < size) {
      const ssize_t n =
          pwrite(fd_, static_cast<const char*>(data) + done, size - done, static_cast<off_t>(done));
      HOTLINE_FUZZ_CHECK(n > 0);
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotline::fuzz::DiscardLogs();
  static MemFile file;
  auto cfg = hotline::LoadHotlineConfig(file.Write(data, size), {});
  if (!cfg.ok()) return 0;
  (void)hotline::RedactedConfigYaml(*cfg);
  const std::string changed = hotline::DumpConfigYaml(*cfg, {.only_changed = true});
  auto again = hotline::LoadHotlineConfig(file.Write(changed.data(), changed.size()), {});
  HOTLINE_FUZZ_CHECK(again.ok());
  HOTLINE_FUZZ_CHECK(hotline::DumpConfigYaml(*again, {.only_changed = true}) == changed);
  return 0;
}

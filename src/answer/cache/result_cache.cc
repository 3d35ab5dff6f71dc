#include "answer/cache/result_cache.h"

#include <cstring>

#include "common/log.h"

namespace hotline::answer {

namespace {

constexpr std::string_view kMagic = "HL3\x01";
// Bounds on decoded entries: a corrupt or hostile value cannot make us allocate much.
constexpr uint32_t kMaxFieldBytes = 64u << 20;
constexpr uint32_t kMaxDeps = 256;

void PutU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutBytes(std::string& out, std::string_view s) {
  PutU32(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U32(uint32_t& v) {
    if (in_.size() < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    in_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t& v) {
    if (in_.size() < 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[i])) << (8 * i);
    in_.remove_prefix(8);
    return true;
  }
  bool Bytes(std::string& s) {
    uint32_t n = 0;
    if (!U32(n) || n > kMaxFieldBytes || n > in_.size()) return false;
    s.assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  bool Magic() {
    if (in_.substr(0, kMagic.size()) != kMagic) return false;
    in_.remove_prefix(kMagic.size());
    return true;
  }
  bool done() const { return in_.empty(); }

 private:
  std::string_view in_;
};

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

Status ResultCacheConfig::Validate() const {
  if (ttl_ms < 1) return InvalidArgumentError("ttl_ms must be positive, got " + std::to_string(ttl_ms));
  if (max_question_bytes < 1 || max_question_bytes > 4000) {
    return InvalidArgumentError("max_question_bytes must be in [1, 4000], got " +
                                std::to_string(max_question_bytes));
  }
  if (max_text_bytes < 1 || max_audio_bytes < 0) {
    return InvalidArgumentError("max_text_bytes must be positive and max_audio_bytes not negative");
  }
  if (key_prefix.size() > 64) return InvalidArgumentError("key_prefix is longer than 64 bytes");
  return Status::Ok();
}

ResultCache::ResultCache(Store& store, ResultCacheConfig config)
    : store_(store), config_(std::move(config)) {}

std::string ResultCache::KeyFor(std::string_view question) const {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(Fnv1a64(question)));
  return config_.key_prefix + hex;
}

std::string ResultCache::Encode(std::string_view question, const CachedAnswer& a,
                                const std::vector<uint64_t>& versions) {
  std::string out(kMagic);
  PutBytes(out, question);
  PutBytes(out, a.text);
  PutBytes(out, a.audio);
  PutBytes(out, a.audio_format);
  PutBytes(out, a.source);
  PutU32(out, static_cast<uint32_t>(a.depends_on.size()));
  for (size_t i = 0; i < a.depends_on.size(); ++i) {
    PutBytes(out, a.depends_on[i]);
    PutU64(out, i < versions.size() ? versions[i] : 0);
  }
  return out;
}

std::optional<ResultCache::Decoded> ResultCache::Decode(std::string_view bytes) {
  Reader r(bytes);
  Decoded d;
  uint32_t deps = 0;
  if (!r.Magic() || !r.Bytes(d.question) || !r.Bytes(d.answer.text) || !r.Bytes(d.answer.audio) ||
      !r.Bytes(d.answer.audio_format) || !r.Bytes(d.answer.source) || !r.U32(deps) ||
      deps > kMaxDeps) {
    return std::nullopt;
  }
  for (uint32_t i = 0; i < deps; ++i) {
    std::string name;
    uint64_t v = 0;
    if (!r.Bytes(name) || !r.U64(v)) return std::nullopt;
    d.answer.depends_on.push_back(std::move(name));
    d.versions.push_back(v);
  }
  if (!r.done()) return std::nullopt;
  return d;
}

Result<std::optional<CachedAnswer>> ResultCache::Lookup(std::string_view question) {
  if (question.empty() || question.size() > static_cast<size_t>(config_.max_question_bytes)) {
    return std::optional<CachedAnswer>();
  }
  const std::string key = KeyFor(question);
  ASSIGN_OR_RETURN(std::optional<std::string> raw, store_.Get(key));
  if (!raw) return std::optional<CachedAnswer>();
  std::optional<Decoded> d = Decode(*raw);
  if (!d) {
    HLOG_WARN("L3 entry {} is malformed; dropping it", key);
    (void)store_.Delete(key);
    return std::optional<CachedAnswer>();
  }
  if (d->question != question) return std::optional<CachedAnswer>();  // hash collision
  if (!d->answer.depends_on.empty()) {
    ASSIGN_OR_RETURN(std::vector<uint64_t> now, store_.Versions(d->answer.depends_on));
    if (now != d->versions) {
      (void)store_.Delete(key);
      return std::optional<CachedAnswer>();
    }
  }
  return std::optional<CachedAnswer>(std::move(d->answer));
}

Result<std::vector<uint64_t>> ResultCache::Snapshot(const std::vector<std::string>& stamps) {
  if (stamps.empty()) return std::vector<uint64_t>();
  return store_.Versions(stamps);
}

Status ResultCache::Insert(std::string_view question, const CachedAnswer& answer,
                           const std::vector<uint64_t>* snapshot) {
  if (answer.personal) {
    return FailedPreconditionError(
        "personal answers are never stored in the shared result cache");
  }
  if (question.empty() || question.size() > static_cast<size_t>(config_.max_question_bytes)) {
    return ResourceExhaustedError("question of " + std::to_string(question.size()) +
                                  " bytes is outside the L3 limit of " +
                                  std::to_string(config_.max_question_bytes));
  }
  if (answer.text.size() > static_cast<size_t>(config_.max_text_bytes) ||
      answer.audio.size() > static_cast<size_t>(config_.max_audio_bytes)) {
    return ResourceExhaustedError("answer too large for L3 (text " +
                                  std::to_string(answer.text.size()) + " bytes, audio " +
                                  std::to_string(answer.audio.size()) + " bytes)");
  }
  if (answer.depends_on.size() > kMaxDeps) {
    return ResourceExhaustedError("answer depends on more than " + std::to_string(kMaxDeps) +
                                  " version stamps");
  }
  std::vector<uint64_t> versions;
  if (snapshot) {
    if (snapshot->size() != answer.depends_on.size()) {
      return InvalidArgumentError("stamp snapshot has " + std::to_string(snapshot->size()) +
                                  " values for " + std::to_string(answer.depends_on.size()) +
                                  " stamps");
    }
    versions = *snapshot;
  } else if (!answer.depends_on.empty()) {
    ASSIGN_OR_RETURN(versions, store_.Versions(answer.depends_on));
  }
  return store_.Set(KeyFor(question), Encode(question, answer, versions),
                    std::chrono::milliseconds(config_.ttl_ms));
}

Status ResultCache::Invalidate(std::string_view stamp) { return store_.BumpVersion(stamp).status(); }

Status ResultCache::Erase(std::string_view question) { return store_.Delete(KeyFor(question)); }

}  // namespace hotline::answer

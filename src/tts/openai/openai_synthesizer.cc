#include "tts/openai/openai_synthesizer.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>

#include "audio/codec.h"
#include "net/url.h"
#include "tts/chunk_emitter.h"

namespace hotline::tts {
namespace {

constexpr size_t kMaxWavHeaderBytes = 64 << 10;
constexpr size_t kMaxErrorBodyBytes = 2048;

uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// Turns a stream of body bytes into PCM16 samples: skips and checks a WAV header when asked,
// carries an odd byte across pieces.
class PcmStreamDecoder {
 public:
  PcmStreamDecoder(bool wav, int expected_rate_hz) : wav_(wav), expected_rate_hz_(expected_rate_hz) {}

  Status Feed(std::string_view bytes, ChunkEmitter& emitter) {
    if (wav_ && !in_data_) {
      if (header_.size() + bytes.size() > kMaxWavHeaderBytes) {
        return DataLossError("speech server's WAV header is larger than 64 KiB or has no data chunk");
      }
      header_.append(bytes);
      ASSIGN_OR_RETURN(size_t data_at, ParseHeader());
      if (data_at == 0) return Status::Ok();  // need more header bytes
      in_data_ = true;
      std::string rest = header_.substr(data_at);
      header_.clear();
      return FeedPcm(rest, emitter);
    }
    return FeedPcm(bytes, emitter);
  }

  Status Finish() const {
    if (wav_ && !in_data_) return DataLossError("speech server's WAV response has no data chunk");
    return Status::Ok();
  }

 private:
  Status FeedPcm(std::string_view bytes, ChunkEmitter& emitter) {
    samples_.clear();
    size_t i = 0;
    if (has_odd_ && !bytes.empty()) {
      uint8_t hi = static_cast<uint8_t>(bytes[0]);
      samples_.push_back(static_cast<int16_t>(odd_ | (hi << 8)));
      has_odd_ = false;
      i = 1;
    }
    const size_t whole = (bytes.size() - i) / 2;
    const size_t at = samples_.size();
    samples_.resize(at + whole);
    audio::DecodePcm16Le({reinterpret_cast<const uint8_t*>(bytes.data()) + i, whole * 2},
                         std::span<int16_t>(samples_).subspan(at));
    i += whole * 2;
    if (i < bytes.size()) {
      odd_ = static_cast<uint8_t>(bytes[i]);
      has_odd_ = true;
    }
    return emitter.Add(samples_);
  }

  // Returns the offset of the first data byte, 0 when more bytes are needed.
  Result<size_t> ParseHeader() {
    const auto* p = reinterpret_cast<const uint8_t*>(header_.data());
    size_t n = header_.size();
    if (n < 12) return size_t{0};
    if (std::memcmp(p, "RIFF", 4) != 0 || std::memcmp(p + 8, "WAVE", 4) != 0) {
      return DataLossError("speech server's response is not a RIFF/WAVE file");
    }
    size_t pos = 12;
    bool have_fmt = false;
    while (pos + 8 <= n) {
      uint32_t size = Le32(p + pos + 4);
      if (std::memcmp(p + pos, "data", 4) == 0) {
        if (!have_fmt) return DataLossError("speech server's WAV has data before its fmt chunk");
        return pos + 8;
      }
      if (size > kMaxWavHeaderBytes) return DataLossError("speech server's WAV has an oversized chunk");
      size_t next = pos + 8 + size + (size & 1);
      if (next > n) return size_t{0};
      if (std::memcmp(p + pos, "fmt ", 4) == 0) {
        if (size < 16) return DataLossError("speech server's WAV fmt chunk is too short");
        uint16_t format = Le16(p + pos + 8);
        uint16_t channels = Le16(p + pos + 10);
        uint32_t rate = Le32(p + pos + 12);
        uint16_t bits = Le16(p + pos + 22);
        if ((format != 1 && format != 0xFFFE) || bits != 16 || channels != 1) {
          return UnimplementedError("speech server's WAV is not 16-bit PCM mono (format " +
                                    std::to_string(format) + ", " + std::to_string(bits) +
                                    " bits, " + std::to_string(channels) +
                                    " channels): use response_format pcm");
        }
        if (static_cast<int>(rate) != expected_rate_hz_) {
          return InvalidArgumentError("speech server's WAV is at " + std::to_string(rate) +
                                      " Hz; set tts.openai.pcm_sample_rate_hz=" +
                                      std::to_string(rate));
        }
        have_fmt = true;
      }
      pos = next;
    }
    return size_t{0};
  }

  bool wav_;
  int expected_rate_hz_;
  bool in_data_ = false;
  std::string header_;
  std::vector<int16_t> samples_;
  uint8_t odd_ = 0;
  bool has_odd_ = false;
};

class OpenAiSynthesizer : public Synthesizer {
 public:
  OpenAiSynthesizer(const OpenAiTtsConfig& config, int max_text_bytes)
      : config_(config),
        max_text_bytes_(max_text_bytes),
        voice_id_("openai/" + config.model + "/" + config.voice),
        client_([&] {
          net::HttpClientConfig http = config.http;
          http.max_response_bytes = std::min(http.max_response_bytes, config.max_audio_bytes);
          return http;
        }()) {}

  std::string_view backend() const override { return "openai"; }
  const std::string& voice_id() const override { return voice_id_; }
  int sample_rate_hz() const override { return config_.pcm_sample_rate_hz; }

  Status Synthesize(std::string_view text, const AudioChunkCallback& on_chunk,
                    const CancelToken* cancel) override {
    RETURN_IF_ERROR(CheckSynthesisText(text, max_text_bytes_));
    if (IsCancelled(cancel)) return CancelledError("speech synthesis cancelled");
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return Status::Ok();

    nlohmann::json body = {{"model", config_.model},
                           {"input", std::string(text)},
                           {"voice", config_.voice},
                           {"response_format", config_.response_format}};
    std::string payload;
    try {
      payload = body.dump();
    } catch (const nlohmann::json::exception&) {
      return InvalidArgumentError("text to synthesize is not valid UTF-8");
    }
    net::HttpRequest req =
        net::HttpRequest::Post(net::JoinUrl(config_.url, "audio/speech"), payload, "application/json");
    if (!config_.api_key_env.empty()) {
      if (const char* key = std::getenv(config_.api_key_env.c_str()); key != nullptr && *key) {
        req.headers.push_back({"Authorization", std::string("Bearer ") + key});
      }
    }

    ChunkEmitter emitter(audio::SamplesForMs(config_.pcm_sample_rate_hz, config_.chunk_ms),
                         on_chunk, cancel);
    PcmStreamDecoder decoder(config_.response_format == "wav", config_.pcm_sample_rate_hz);
    int status = 0;
    std::string error_body;
    net::HttpStreamCallbacks cb;
    cb.on_head = [&](const net::HttpResponseHead& head) {
      status = head.status;
      return Status::Ok();
    };
    cb.on_body = [&](std::string_view bytes) -> Status {
      if (status != 200) {
        error_body.append(bytes.substr(0, kMaxErrorBodyBytes - std::min(kMaxErrorBodyBytes, error_body.size())));
        return Status::Ok();
      }
      return decoder.Feed(bytes, emitter);
    };
    Status s = client_.Stream(req, cb, cancel);
    if (!emitter.status().ok()) return emitter.status();
    if (!s.ok()) return s.WithContext("speech server");
    if (status != 200) {
      std::string msg = "speech server answered HTTP " + std::to_string(status) + " to POST " +
                        req.url + ": " + error_body;
      if (status >= 500 || status == 429) return UnavailableError(msg);
      if (status == 401 || status == 403) {
        return PermissionDeniedError(msg + " (set $" + config_.api_key_env + ")");
      }
      return InvalidArgumentError(msg);
    }
    RETURN_IF_ERROR(decoder.Finish());
    return emitter.Finish();
  }

 private:
  OpenAiTtsConfig config_;
  int max_text_bytes_;
  std::string voice_id_;
  net::HttpClient client_;
};

}  // namespace

Result<std::unique_ptr<Synthesizer>> CreateOpenAiSynthesizer(const OpenAiTtsConfig& config,
                                                             int max_text_bytes) {
  ASSIGN_OR_RETURN(net::HttpUrl url, net::ParseHttpUrl(config.url));
  (void)url;
  return std::unique_ptr<Synthesizer>(new OpenAiSynthesizer(config, max_text_bytes));
}

}  // namespace hotline::tts

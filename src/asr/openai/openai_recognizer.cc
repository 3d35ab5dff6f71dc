#include "asr/openai/openai_recognizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <random>
#include <vector>

#include "audio/wav.h"
#include "net/http_client.h"
#include "net/url.h"

namespace hotline::asr {

struct OpenAiRecognizer::Shared {
  OpenAiAsrConfig config;
  std::string endpoint;
  std::string auth_header;  // "Bearer ..." or empty
  std::atomic<int> open_streams{0};
};

std::string BuildTranscriptionBody(const std::string& boundary, const std::string& wav_bytes,
                                   const std::string& model, const std::string& language) {
  std::string body;
  body.reserve(wav_bytes.size() + 512);
  auto field = [&](const char* name, const std::string& value) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n";
    body += value;
    body += "\r\n";
  };
  body += "--" + boundary +
          "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"utterance.wav\"\r\n"
          "Content-Type: audio/wav\r\n\r\n";
  body += wav_bytes;
  body += "\r\n";
  field("model", model);
  if (!language.empty()) field("language", language);
  field("response_format", "json");
  body += "--" + boundary + "--\r\n";
  return body;
}

namespace {

constexpr size_t kMaxReplyBytes = 1 << 20;

// Whisper-class servers answer with cased, punctuated text; the rest of Hotline expects what the
// embedded backend gives: lower-case words separated by single spaces (apostrophes kept).
std::string NormalizeTranscript(const std::string& text) {
  std::string out;
  bool space = false;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '\'' || c >= 0x80) {
      if (space && !out.empty()) out += ' ';
      space = false;
      out += static_cast<char>(c < 0x80 ? std::tolower(c) : c);
    } else {
      space = true;
    }
  }
  return out;
}

class OpenAiStream : public RecognizerStream {
 public:
  OpenAiStream(std::shared_ptr<OpenAiRecognizer::Shared> shared, int rate_hz)
      : shared_(std::move(shared)), rate_hz_(rate_hz) {
    max_samples_ = static_cast<size_t>(shared_->config.max_utterance_s) * rate_hz;
  }
  ~OpenAiStream() override { shared_->open_streams.fetch_sub(1); }

  Status AcceptFrames(audio::AudioView pcm) override {
    if (finished_) return FailedPreconditionError("stream already finished; create a new one");
    if (pcm.sample_rate_hz != rate_hz_) {
      return InvalidArgumentError("stream was created for " + std::to_string(rate_hz_) +
                                  " Hz audio, got " + std::to_string(pcm.sample_rate_hz) + " Hz");
    }
    if (samples_.size() + pcm.samples.size() > max_samples_) {
      return ResourceExhaustedError("utterance longer than asr.openai.max_utterance_s = " +
                                    std::to_string(shared_->config.max_utterance_s) + " s");
    }
    samples_.insert(samples_.end(), pcm.samples.begin(), pcm.samples.end());
    return Status::Ok();
  }

  const AsrPartial& partial() const override { return partial_; }

  Result<AsrResult> Finish() override {
    if (finished_) return FailedPreconditionError("stream already finished; create a new one");
    finished_ = true;
    AsrResult result;
    result.audio_ms = static_cast<int64_t>(samples_.size()) * 1000 / rate_hz_;
    if (samples_.empty()) return result;

    ASSIGN_OR_RETURN(std::vector<uint8_t> wav,
                     audio::EncodeWav(audio::AudioView(samples_, rate_hz_), audio::Codec::kPcm16));
    std::mt19937_64 rng(std::random_device{}());
    std::string boundary = "hotline-" + std::to_string(rng());
    const auto& cfg = shared_->config;
    net::HttpRequest request = net::HttpRequest::Post(
        shared_->endpoint,
        BuildTranscriptionBody(boundary, std::string(wav.begin(), wav.end()), cfg.model,
                               cfg.language),
        "multipart/form-data; boundary=" + boundary);
    if (!shared_->auth_header.empty()) {
      request.headers.push_back({"Authorization", shared_->auth_header});
    }
    net::HttpClientConfig http;
    http.connect_timeout_ms = std::min(cfg.timeout_ms, 3000);
    http.idle_timeout_ms = cfg.timeout_ms;
    http.total_timeout_ms = cfg.timeout_ms;
    http.max_response_bytes = kMaxReplyBytes;
    http.ca_file = cfg.ca_file;
    Result<net::HttpResponse> sent = net::HttpClient(http).Send(request);
    if (!sent.ok()) {
      return sent.status().WithContext("transcription request to " + shared_->endpoint);
    }
    const net::HttpResponse& response = *sent;
    if (response.status != 200) {
      return UnavailableError("transcription server " + shared_->endpoint + " answered HTTP " +
                              std::to_string(response.status) + ": " +
                              response.body.substr(0, 200));
    }
    nlohmann::json reply = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
    if (reply.is_discarded() || !reply.is_object() || !reply.contains("text") ||
        !reply["text"].is_string()) {
      return DataLossError("transcription server " + shared_->endpoint +
                           " did not answer JSON with a string \"text\" (is it OpenAI-compatible?)");
    }
    result.text = NormalizeTranscript(reply["text"].get<std::string>());
    result.confidence = result.text.empty() ? 0.0f : 1.0f;
    return result;
  }

 private:
  std::shared_ptr<OpenAiRecognizer::Shared> shared_;
  int rate_hz_;
  size_t max_samples_ = 0;
  std::vector<int16_t> samples_;
  bool finished_ = false;
  AsrPartial partial_;
};

}  // namespace
}  // namespace hotline::asr

namespace hotline::asr {

Result<std::unique_ptr<OpenAiRecognizer>> OpenAiRecognizer::Create(const OpenAiAsrConfig& config) {
  RETURN_IF_ERROR(config.Validate().WithContext("asr.openai"));
  std::string endpoint = net::JoinUrl(config.url, "/audio/transcriptions");
  RETURN_IF_ERROR(net::ParseHttpUrl(endpoint).status().WithContext("asr.openai.url"));
  auto shared = std::make_shared<Shared>();
  shared->config = config;
  shared->endpoint = std::move(endpoint);
  if (!config.api_key_env.empty()) {
    const char* key = std::getenv(config.api_key_env.c_str());
    if (key == nullptr || *key == '\0') {
      return InvalidArgumentError("asr.openai.api_key_env names " + config.api_key_env +
                                  ", which is not set in the environment");
    }
    shared->auth_header = std::string("Bearer ") + key;
  }
  return std::unique_ptr<OpenAiRecognizer>(new OpenAiRecognizer(std::move(shared)));
}

Result<std::unique_ptr<RecognizerStream>> OpenAiRecognizer::CreateStream(int input_rate_hz) {
  if (input_rate_hz != 8000 && input_rate_hz != 16000) {
    return InvalidArgumentError("openai streams take 8000 or 16000 Hz audio, got " +
                                std::to_string(input_rate_hz) + " Hz");
  }
  if (shared_->open_streams.fetch_add(1) >= shared_->config.max_streams) {
    shared_->open_streams.fetch_sub(1);
    return ResourceExhaustedError("all " + std::to_string(shared_->config.max_streams) +
                                  " openai ASR streams are open (raise asr.openai.max_streams)");
  }
  return std::unique_ptr<RecognizerStream>(new OpenAiStream(shared_, input_rate_hz));
}

}  // namespace hotline::asr

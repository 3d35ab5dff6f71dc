#include "transport/softphone/protocol.h"

#include <nlohmann/json.hpp>

namespace hotline::transport::softphone {

namespace {

using json = nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

bool PrintableAscii(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

// The string field `key` of `obj`: absent → nullopt-like empty with found=false.
Status StringField(const json& obj, const char* key, bool required, size_t max_bytes,
                   std::string& out) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return InvalidArgumentError(std::string("field '") + key + "' is required");
    return Status::Ok();
  }
  if (!it->is_string()) {
    return InvalidArgumentError(std::string("field '") + key + "' must be a string, got " +
                                it->type_name());
  }
  const auto& s = it->get_ref<const std::string&>();
  if (s.size() > max_bytes) {
    return InvalidArgumentError(std::string("field '") + key + "' exceeds " +
                                std::to_string(max_bytes) + " bytes");
  }
  if (!PrintableAscii(s)) {
    return InvalidArgumentError(std::string("field '") + key +
                                "' must be printable ASCII characters");
  }
  out = s;
  return Status::Ok();
}

}  // namespace

size_t ClientDecoder::min_audio_bytes() const {
  return static_cast<size_t>(sample_rate_hz_ / 1000 * kMinFrameMs) * 2;
}

size_t ClientDecoder::max_audio_bytes() const {
  return static_cast<size_t>(sample_rate_hz_ / 1000 * kMaxFrameMs) * 2;
}

Status ClientDecoder::Decode(std::string_view data, bool binary, ClientMessage& out) {
  if (hung_up_) return InvalidArgumentError("message after hangup");
  return binary ? DecodeAudio(data, out) : DecodeText(data, out);
}

Status ClientDecoder::DecodeAudio(std::string_view data, ClientMessage& out) {
  if (!started()) {
    return InvalidArgumentError(
        "audio before the start message: send {\"type\":\"start\",...} first");
  }
  if (data.size() % 2 != 0) {
    return InvalidArgumentError("audio message of " + std::to_string(data.size()) +
                                " bytes is not a whole number of 16-bit samples");
  }
  if (data.size() < min_audio_bytes() || data.size() > max_audio_bytes()) {
    return InvalidArgumentError("audio message of " + std::to_string(data.size()) +
                                " bytes is outside " + std::to_string(min_audio_bytes()) + ".." +
                                std::to_string(max_audio_bytes()) + " bytes (" +
                                std::to_string(kMinFrameMs) + ".." + std::to_string(kMaxFrameMs) +
                                " ms at " + std::to_string(sample_rate_hz_) + " Hz)");
  }
  out.type = ClientMessageType::kAudio;
  out.audio = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  return Status::Ok();
}

Status ClientDecoder::DecodeText(std::string_view data, ClientMessage& out) {
  if (data.size() > kMaxTextBytes) {
    return ResourceExhaustedError("text message of " + std::to_string(data.size()) +
                                  " bytes exceeds " + std::to_string(kMaxTextBytes));
  }
  json j = json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("text message is not valid JSON");
  if (!j.is_object()) {
    return InvalidArgumentError(std::string("text message must be a JSON object, got ") +
                                j.type_name());
  }
  std::string type;
  RETURN_IF_ERROR(StringField(j, "type", /*required=*/true, 32, type));

  if (type == "start") {
    if (started()) return InvalidArgumentError("a second start message");
    if (auto v = j.find("version"); v != j.end()) {
      if (!v->is_number_integer() || v->get<int64_t>() != kProtocolVersion) {
        return InvalidArgumentError("field 'version' must be " + std::to_string(kProtocolVersion));
      }
    }
    auto rate = j.find("sample_rate");
    if (rate == j.end()) return InvalidArgumentError("field 'sample_rate' is required");
    if (!rate->is_number_integer()) {
      return InvalidArgumentError(std::string("field 'sample_rate' must be an integer, got ") +
                                  rate->type_name());
    }
    const int64_t hz = rate->get<int64_t>();
    if (hz != 8000 && hz != 16000) {
      return InvalidArgumentError("field 'sample_rate' must be 8000 or 16000, got " +
                                  std::to_string(hz));
    }
    std::string caller;
    RETURN_IF_ERROR(StringField(j, "caller_id", false, kMaxCallerIdBytes, caller));
    sample_rate_hz_ = static_cast<int>(hz);
    out.type = ClientMessageType::kStart;
    out.sample_rate_hz = sample_rate_hz_;
    out.caller_id = std::move(caller);
    return Status::Ok();
  }
  if (!started()) {
    return InvalidArgumentError("'" + type + "' before the start message");
  }
  if (type == "mark") {
    std::string name;
    RETURN_IF_ERROR(StringField(j, "name", true, kMaxMarkNameBytes, name));
    out.type = ClientMessageType::kMark;
    out.mark_name = std::move(name);
    return Status::Ok();
  }
  if (type == "dtmf") {
    std::string digit;
    RETURN_IF_ERROR(StringField(j, "digit", true, 8, digit));
    if (digit.size() != 1 || std::string_view("0123456789*#").find(digit[0]) == std::string::npos) {
      return InvalidArgumentError("field 'digit' must be one of 0-9, * or #");
    }
    out.type = ClientMessageType::kDtmf;
    out.digit = digit[0];
    return Status::Ok();
  }
  if (type == "hangup") {
    hung_up_ = true;
    out.type = ClientMessageType::kHangup;
    return Status::Ok();
  }
  return InvalidArgumentError("unknown message type '" + type +
                              "' (known: start, mark, dtmf, hangup; audio is binary)");
}

std::string EncodeStarted(std::string_view call_id, int sample_rate_hz) {
  return Dump({{"type", "started"},
               {"version", kProtocolVersion},
               {"call_id", call_id},
               {"sample_rate", sample_rate_hz}});
}

std::string EncodeSessionEvent(std::string_view type, std::string_view event_json) {
  std::string out = "{\"type\":";
  out += Dump(json(type));
  out += ",\"data\":";
  out += event_json.empty() ? std::string_view("null") : event_json;
  out += '}';
  return out;
}

std::string EncodeMark(std::string_view name) { return Dump({{"type", "mark"}, {"name", name}}); }

std::string EncodeClear() { return R"({"type":"clear"})"; }

std::string EncodeEnd(std::string_view kind, std::string_view reason) {
  return Dump({{"type", kind}, {"reason", reason}});
}

std::string EncodeError(std::string_view message) {
  return Dump({{"type", "error"}, {"message", message}});
}

}  // namespace hotline::transport::softphone

#include "transport/twilio/media_streams.h"

#include <nlohmann/json.hpp>

#include "transport/base64.h"

namespace hotline::transport::twilio {
namespace {

using json = nlohmann::json;

std::string TypeOf(const json& j) { return j.type_name(); }

class Fields {
 public:
  Fields(const json& obj, std::string path, const MediaStreamLimits& limits)
      : obj_(obj), path_(std::move(path)), limits_(limits) {}

  std::string Where(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  // A nested object; error when missing (if required) or not an object.
  Result<const json*> Object(std::string_view key, bool required) const {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) return InvalidArgumentError("missing field '" + Where(key) + "'");
      return static_cast<const json*>(nullptr);
    }
    if (!it->is_object()) {
      return InvalidArgumentError("field '" + Where(key) + "' must be an object, got " +
                                  TypeOf(*it));
    }
    return &*it;
  }

  Status String(std::string_view key, bool required, std::string& out,
                size_t max_bytes = 0) const {
    out.clear();
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) return InvalidArgumentError("missing field '" + Where(key) + "'");
      return Status::Ok();
    }
    if (!it->is_string()) {
      return InvalidArgumentError("field '" + Where(key) + "' must be a string, got " +
                                  TypeOf(*it));
    }
    const std::string& s = it->get_ref<const std::string&>();
    size_t limit = max_bytes ? max_bytes : limits_.max_string_bytes;
    if (s.size() > limit) {
      return ResourceExhaustedError("field '" + Where(key) + "' is " + std::to_string(s.size()) +
                                    " bytes, more than the limit of " + std::to_string(limit));
    }
    out = s;
    return Status::Ok();
  }

  // A non-negative integer sent as a JSON number or as a string of digits ("42": Twilio sends
  // sequence numbers, chunks and timestamps as strings). -1 when absent and not required.
  Status Count(std::string_view key, bool required, int64_t& out) const {
    out = -1;
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
      if (required) return InvalidArgumentError("missing field '" + Where(key) + "'");
      return Status::Ok();
    }
    if (it->is_number_unsigned() ||
        (it->is_number_integer() && it->get<int64_t>() >= 0)) {
      uint64_t v = it->get<uint64_t>();
      if (v > static_cast<uint64_t>(INT64_MAX)) {
        return InvalidArgumentError("field '" + Where(key) + "' is out of range");
      }
      out = static_cast<int64_t>(v);
      return Status::Ok();
    }
    if (it->is_string()) {
      const std::string& s = it->get_ref<const std::string&>();
      if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) {
        return InvalidArgumentError("field '" + Where(key) +
                                    "' must be a non-negative integer (digits), got \"" +
                                    s.substr(0, 32) + "\"");
      }
      out = std::stoll(s);
      return Status::Ok();
    }
    return InvalidArgumentError("field '" + Where(key) +
                                "' must be a non-negative integer or a string of digits, got " +
                                TypeOf(*it));
  }

  Status Int(std::string_view key, bool required, int& out) const {
    int64_t v = -1;
    RETURN_IF_ERROR(Count(key, required, v));
    if (v > INT32_MAX) return InvalidArgumentError("field '" + Where(key) + "' is out of range");
    out = static_cast<int>(v);
    return Status::Ok();
  }

 private:
  const json& obj_;
  std::string path_;
  const MediaStreamLimits& limits_;
};

EventType ParseEventType(std::string_view name) {
  if (name == "connected") return EventType::kConnected;
  if (name == "start") return EventType::kStart;
  if (name == "media") return EventType::kMedia;
  if (name == "dtmf") return EventType::kDtmf;
  if (name == "mark") return EventType::kMark;
  if (name == "stop") return EventType::kStop;
  return EventType::kUnknown;
}

bool ValidDigit(char c) {
  return (c >= '0' && c <= '9') || c == '*' || c == '#' || (c >= 'A' && c <= 'D');
}

// start.tracks (at most 4 short strings) and start.customParameters (string values), both
// optional.
Status DecodeStartLists(const json& start, const Fields& f, const MediaStreamLimits& limits,
                        InboundMessage& out) {
  auto tracks = start.find("tracks");
  if (tracks != start.end() && !tracks->is_null()) {
    if (!tracks->is_array() || tracks->size() > 4) {
      return InvalidArgumentError("field 'start.tracks' must be an array of at most 4 strings");
    }
    for (const json& t : *tracks) {
      if (!t.is_string() || t.get_ref<const std::string&>().size() > 64) {
        return InvalidArgumentError("field 'start.tracks' must hold short strings, got " +
                                    TypeOf(t));
      }
      out.tracks.push_back(t.get<std::string>());
    }
  }
  ASSIGN_OR_RETURN(const json* params, f.Object("customParameters", false));
  if (!params) return Status::Ok();
  if (params->size() > limits.max_custom_parameters) {
    return ResourceExhaustedError("start.customParameters has " + std::to_string(params->size()) +
                                  " entries, more than the limit of " +
                                  std::to_string(limits.max_custom_parameters));
  }
  for (auto it = params->begin(); it != params->end(); ++it) {
    if (!it->is_string()) {
      return InvalidArgumentError("start.customParameters." + it.key() + " must be a string, got " +
                                  TypeOf(*it));
    }
    if (it.key().size() > limits.max_string_bytes ||
        it->get_ref<const std::string&>().size() > limits.max_string_bytes) {
      return ResourceExhaustedError("a start.customParameters entry exceeds " +
                                    std::to_string(limits.max_string_bytes) + " bytes");
    }
    out.custom_parameters.emplace_back(it.key(), it->get<std::string>());
  }
  return Status::Ok();
}

// The 'start' event's body: stream and call identifiers, tracks, parameters, media format.
Status DecodeStart(const Fields& top, const MediaStreamLimits& limits, InboundMessage& out) {
  ASSIGN_OR_RETURN(const json* start, top.Object("start", true));
  Fields f(*start, "start", limits);
  std::string inner_sid;
  RETURN_IF_ERROR(f.String("streamSid", out.stream_sid.empty(), inner_sid));
  if (out.stream_sid.empty()) out.stream_sid = inner_sid;
  if (!inner_sid.empty() && inner_sid != out.stream_sid) {
    return InvalidArgumentError("start.streamSid '" + inner_sid + "' differs from streamSid '" +
                                out.stream_sid + "'");
  }
  if (out.stream_sid.empty()) return InvalidArgumentError("empty streamSid in 'start'");
  RETURN_IF_ERROR(f.String("accountSid", true, out.account_sid));
  RETURN_IF_ERROR(f.String("callSid", true, out.call_sid));
  RETURN_IF_ERROR(DecodeStartLists(*start, f, limits, out));
  ASSIGN_OR_RETURN(const json* format, f.Object("mediaFormat", true));
  Fields mf(*format, "start.mediaFormat", limits);
  RETURN_IF_ERROR(mf.String("encoding", true, out.media_format.encoding, 64));
  RETURN_IF_ERROR(mf.Int("sampleRate", true, out.media_format.sample_rate_hz));
  RETURN_IF_ERROR(mf.Int("channels", true, out.media_format.channels));
  if (out.media_format.encoding != "audio/x-mulaw" || out.media_format.sample_rate_hz != 8000 ||
      out.media_format.channels != 1) {
    return InvalidArgumentError(
        "unsupported media format " + out.media_format.encoding + " " +
        std::to_string(out.media_format.sample_rate_hz) + " Hz " +
        std::to_string(out.media_format.channels) +
        " channel(s): Twilio Media Streams carry audio/x-mulaw 8000 Hz mono");
  }
  return Status::Ok();
}

Status DecodeMedia(const Fields& top, const MediaStreamLimits& limits, InboundMessage& out) {
  ASSIGN_OR_RETURN(const json* media, top.Object("media", true));
  Fields f(*media, "media", limits);
  RETURN_IF_ERROR(f.String("track", false, out.track, 64));
  RETURN_IF_ERROR(f.Count("chunk", false, out.chunk));
  RETURN_IF_ERROR(f.Count("timestamp", true, out.timestamp_ms));
  auto p = media->find("payload");
  if (p == media->end() || p->is_null()) {
    return InvalidArgumentError("missing field 'media.payload'");
  }
  if (!p->is_string()) {
    return InvalidArgumentError("field 'media.payload' must be a base64 string, got " +
                                TypeOf(*p));
  }
  Status s =
      Base64DecodeInto(p->get_ref<const std::string&>(), out.payload, limits.max_payload_bytes);
  if (!s.ok()) return s.WithContext("media.payload");
  return Status::Ok();
}

Status DecodeDtmf(const Fields& top, const MediaStreamLimits& limits, InboundMessage& out) {
  ASSIGN_OR_RETURN(const json* dtmf, top.Object("dtmf", true));
  Fields f(*dtmf, "dtmf", limits);
  RETURN_IF_ERROR(f.String("track", false, out.track, 64));
  std::string digit;
  RETURN_IF_ERROR(f.String("digit", true, digit, 8));
  if (digit.size() != 1 || !ValidDigit(digit[0])) {
    return InvalidArgumentError("field 'dtmf.digit' must be one of 0-9 * # A-D, got \"" + digit +
                                "\"");
  }
  out.digit = digit[0];
  return Status::Ok();
}

Status DecodeStop(const Fields& top, const MediaStreamLimits& limits, InboundMessage& out) {
  ASSIGN_OR_RETURN(const json* stop, top.Object("stop", false));
  if (!stop) return Status::Ok();
  Fields f(*stop, "stop", limits);
  RETURN_IF_ERROR(f.String("accountSid", false, out.account_sid));
  RETURN_IF_ERROR(f.String("callSid", false, out.call_sid));
  return Status::Ok();
}

}  // namespace

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kConnected: return "connected";
    case EventType::kStart: return "start";
    case EventType::kMedia: return "media";
    case EventType::kDtmf: return "dtmf";
    case EventType::kMark: return "mark";
    case EventType::kStop: return "stop";
    case EventType::kUnknown: return "unknown";
  }
  return "unknown";
}

Status MediaStreamDecoder::Decode(std::string_view text, InboundMessage& out) {
  if (text.size() > limits_.max_message_bytes) {
    return ResourceExhaustedError("Twilio message of " + std::to_string(text.size()) +
                                  " bytes exceeds the limit of " +
                                  std::to_string(limits_.max_message_bytes));
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgumentError("Twilio message is not valid JSON: \"" +
                                std::string(text.substr(0, 64)) + (text.size() > 64 ? "…\"" : "\""));
  }
  if (!j.is_object()) {
    return InvalidArgumentError("Twilio message must be a JSON object, got " + TypeOf(j));
  }
  Fields top(j, "", limits_);
  std::string payload = std::move(out.payload);  // keep its capacity
  out = InboundMessage();
  out.payload = std::move(payload);
  out.payload.clear();

  RETURN_IF_ERROR(top.String("event", true, out.event_name, 64));
  out.event = ParseEventType(out.event_name);
  RETURN_IF_ERROR(top.Count("sequenceNumber", false, out.sequence_number));
  if (out.event == EventType::kUnknown) {
    ++stats_.unknown_events;
    return Status::Ok();
  }
  if (out.event != EventType::kConnected) {
    RETURN_IF_ERROR(top.String("streamSid", out.event != EventType::kStart, out.stream_sid));
  }

  switch (out.event) {
    case EventType::kConnected:
      RETURN_IF_ERROR(top.String("protocol", false, out.protocol));
      RETURN_IF_ERROR(top.String("version", false, out.version));
      break;
    case EventType::kStart:
      if (started_) return InvalidArgumentError("a second 'start' on stream " + stream_sid_);
      RETURN_IF_ERROR(DecodeStart(top, limits_, out));
      stream_sid_ = out.stream_sid;
      started_ = true;
      break;
    case EventType::kMedia:
      RETURN_IF_ERROR(DecodeMedia(top, limits_, out));
      break;
    case EventType::kDtmf:
      RETURN_IF_ERROR(DecodeDtmf(top, limits_, out));
      break;
    case EventType::kMark: {
      ASSIGN_OR_RETURN(const json* mark, top.Object("mark", true));
      RETURN_IF_ERROR(Fields(*mark, "mark", limits_).String("name", true, out.mark_name));
      break;
    }
    case EventType::kStop:
      RETURN_IF_ERROR(DecodeStop(top, limits_, out));
      break;
    case EventType::kUnknown:
      break;
  }
  RETURN_IF_ERROR(CheckStream(out));
  CountMessage(out);
  return Status::Ok();
}

Status MediaStreamDecoder::CheckStream(const InboundMessage& out) {
  if (out.event != EventType::kConnected && out.event != EventType::kStart) {
    if (!started_) {
      return InvalidArgumentError("'" + out.event_name + "' before 'start'");
    }
    if (out.stream_sid != stream_sid_) {
      return InvalidArgumentError("'" + out.event_name + "' for stream '" + out.stream_sid +
                                  "' on stream '" + stream_sid_ + "'");
    }
    if (stopped_) return InvalidArgumentError("'" + out.event_name + "' after 'stop'");
  }
  if (out.event == EventType::kStop) stopped_ = true;
  return Status::Ok();
}

void MediaStreamDecoder::CountMessage(const InboundMessage& out) {
  if (out.sequence_number >= 0) {
    if (last_sequence_ >= 0) {
      if (out.sequence_number > last_sequence_ + 1) ++stats_.sequence_gaps;
      if (out.sequence_number <= last_sequence_) ++stats_.out_of_order;
    }
    if (out.sequence_number > last_sequence_) last_sequence_ = out.sequence_number;
  }
  ++stats_.messages;
  if (out.event == EventType::kMedia) {
    ++stats_.media_messages;
    stats_.payload_bytes += out.payload.size();
  }
}

Result<InboundMessage> MediaStreamDecoder::Decode(std::string_view text) {
  InboundMessage m;
  RETURN_IF_ERROR(Decode(text, m));
  return m;
}

std::string EncodeMedia(std::string_view stream_sid, std::string_view mulaw) {
  // Built by hand: this runs every 20 ms per call, and the payload dominates.
  std::string out;
  const std::string sid = json(std::string(stream_sid)).dump();
  out.reserve(64 + sid.size() + (mulaw.size() + 2) / 3 * 4);
  out += "{\"event\":\"media\",\"streamSid\":";
  out += sid;
  out += ",\"media\":{\"payload\":\"";
  Base64EncodeAppend(mulaw, out);
  out += "\"}}";
  return out;
}

std::string EncodeMark(std::string_view stream_sid, std::string_view name) {
  json j = {{"event", "mark"},
            {"streamSid", std::string(stream_sid)},
            {"mark", {{"name", std::string(name)}}}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string EncodeClear(std::string_view stream_sid) {
  json j = {{"event", "clear"}, {"streamSid", std::string(stream_sid)}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace hotline::transport::twilio

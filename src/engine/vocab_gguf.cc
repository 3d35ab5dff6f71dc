// Vocabulary::FromGguf: the tokenizer.ggml.* metadata of a GGUF file -> VocabData -> Vocabulary.
#include <cstdint>

#include "engine/gguf.h"
#include "engine/vocab.h"

namespace hotline::engine {
namespace {

Status KeyError(const GgufFile& file, std::string_view key, const Status& s) {
  return s.WithContext(file.name() + ": " + std::string(key));
}

Result<TokenId> OptionalId(const GgufFile& file, std::string_view key) {
  if (!file.Has(key)) return kNoToken;
  auto v = file.GetInt(key);
  if (!v.ok()) return KeyError(file, key, v.status());
  if (*v < 0 || *v > INT32_MAX) {
    // Some converters write -1 (or UINT32_MAX) for "no such token".
    return kNoToken;
  }
  return static_cast<TokenId>(*v);
}

Result<std::optional<bool>> OptionalBool(const GgufFile& file, std::string_view key) {
  if (!file.Has(key)) return std::optional<bool>();
  auto v = file.GetBool(key);
  if (!v.ok()) return KeyError(file, key, v.status());
  return std::optional<bool>(*v);
}

}  // namespace

Result<VocabData> Vocabulary::ReadGgufMetadata(const GgufFile& file) {
  VocabData d;
  {
    auto model = file.GetString("tokenizer.ggml.model");
    if (!model.ok()) {
      return InvalidArgumentError(file.name() +
                                  " has no tokenizer (tokenizer.ggml.model is missing); use a "
                                  "GGUF file converted with its vocabulary");
    }
    d.model = std::string(*model);
  }
  if (file.Has("tokenizer.ggml.pre")) {
    ASSIGN_OR_RETURN(auto pre, file.GetString("tokenizer.ggml.pre"));
    d.pre = std::string(pre);
  }
  {
    auto tokens = file.GetStringArray("tokenizer.ggml.tokens");
    if (!tokens.ok()) return KeyError(file, "tokenizer.ggml.tokens", tokens.status());
    if (tokens->size() > kMaxTokens) {
      return InvalidArgumentError(file.name() + ": tokenizer.ggml.tokens has " +
                                  std::to_string(tokens->size()) + " entries; at most " +
                                  std::to_string(kMaxTokens) + " are accepted");
    }
    d.tokens.reserve(tokens->size());
    for (std::string_view t : *tokens) d.tokens.emplace_back(t);
  }
  if (file.Has("tokenizer.ggml.scores")) {
    auto scores = file.GetArray<float>("tokenizer.ggml.scores");
    if (!scores.ok()) return KeyError(file, "tokenizer.ggml.scores", scores.status());
    d.scores.assign(scores->begin(), scores->end());
  }
  if (file.Has("tokenizer.ggml.token_type")) {
    auto types = file.GetArray<int32_t>("tokenizer.ggml.token_type");
    if (!types.ok()) return KeyError(file, "tokenizer.ggml.token_type", types.status());
    d.token_types.assign(types->begin(), types->end());
  }
  if (file.Has("tokenizer.ggml.merges")) {
    auto merges = file.GetStringArray("tokenizer.ggml.merges");
    if (!merges.ok()) return KeyError(file, "tokenizer.ggml.merges", merges.status());
    d.merges.reserve(merges->size());
    for (std::string_view m : *merges) d.merges.emplace_back(m);
  }
  ASSIGN_OR_RETURN(d.bos_id, OptionalId(file, "tokenizer.ggml.bos_token_id"));
  ASSIGN_OR_RETURN(d.eos_id, OptionalId(file, "tokenizer.ggml.eos_token_id"));
  ASSIGN_OR_RETURN(d.unk_id, OptionalId(file, "tokenizer.ggml.unknown_token_id"));
  ASSIGN_OR_RETURN(d.pad_id, OptionalId(file, "tokenizer.ggml.padding_token_id"));
  ASSIGN_OR_RETURN(d.eot_id, OptionalId(file, "tokenizer.ggml.eot_token_id"));
  ASSIGN_OR_RETURN(d.add_bos, OptionalBool(file, "tokenizer.ggml.add_bos_token"));
  ASSIGN_OR_RETURN(d.add_eos, OptionalBool(file, "tokenizer.ggml.add_eos_token"));
  ASSIGN_OR_RETURN(d.add_space_prefix, OptionalBool(file, "tokenizer.ggml.add_space_prefix"));
  if (file.Has("tokenizer.chat_template")) {
    ASSIGN_OR_RETURN(auto tmpl, file.GetString("tokenizer.chat_template"));
    d.chat_template = std::string(tmpl);
  }
  return d;
}

Result<std::shared_ptr<const Vocabulary>> Vocabulary::FromGguf(const GgufFile& file) {
  ASSIGN_OR_RETURN(VocabData data, ReadGgufMetadata(file));
  auto v = Create(std::move(data));
  if (!v.ok()) return v.status().WithContext(file.name());
  return v;
}

}  // namespace hotline::engine

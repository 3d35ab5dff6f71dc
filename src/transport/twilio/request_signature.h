// Twilio request signatures: the X-Twilio-Signature header Twilio sends with every request it
// makes, the WebSocket upgrade of a Media Stream included, so that a server can tell Twilio's
// requests from anyone else's.
//
// The signature is base64(HMAC-SHA1(auth_token, data)), where data is the full URL Twilio
// requested (scheme, host, path and query, exactly as configured) followed, for a form POST, by
// each parameter's name and value, sorted by name. A Media Stream's upgrade is a GET: the URL only.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hotline::transport::twilio {

// The signature Twilio computes for `url` (+ `post_params`, any order) with `auth_token`.
std::string RequestSignature(std::string_view auth_token, std::string_view url,
                             std::vector<std::pair<std::string, std::string>> post_params = {});

// True when `signature` (the header's value) is the one for `url` and `post_params`; compared in
// constant time. False for an empty token or signature.
bool VerifyRequestSignature(std::string_view auth_token, std::string_view url,
                            std::string_view signature,
                            std::vector<std::pair<std::string, std::string>> post_params = {});

}  // namespace hotline::transport::twilio

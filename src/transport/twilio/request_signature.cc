#include "transport/twilio/request_signature.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>

#include "transport/base64.h"

namespace hotline::transport::twilio {

std::string RequestSignature(std::string_view auth_token, std::string_view url,
                             std::vector<std::pair<std::string, std::string>> post_params) {
  std::string data(url);
  std::sort(post_params.begin(), post_params.end());
  for (const auto& [name, value] : post_params) {
    data += name;
    data += value;
  }
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (HMAC(EVP_sha1(), auth_token.data(), static_cast<int>(auth_token.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac,
           &len) == nullptr) {
    return std::string();
  }
  return Base64Encode(std::string_view(reinterpret_cast<const char*>(mac), len));
}

bool VerifyRequestSignature(std::string_view auth_token, std::string_view url,
                            std::string_view signature,
                            std::vector<std::pair<std::string, std::string>> post_params) {
  if (auth_token.empty() || signature.empty()) return false;
  const std::string want = RequestSignature(auth_token, url, std::move(post_params));
  return !want.empty() && want.size() == signature.size() &&
         CRYPTO_memcmp(want.data(), signature.data(), want.size()) == 0;
}

}  // namespace hotline::transport::twilio

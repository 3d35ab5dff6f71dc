#include "transport/twilio/request_signature.h"

#include <gtest/gtest.h>

namespace hotline::transport::twilio {
namespace {

// The example of Twilio's webhook-security documentation (a form POST).
TEST(RequestSignature, MatchesTwilioDocumentedExample) {
  const std::vector<std::pair<std::string, std::string>> params = {{"To", "+18005551212"},
                                                                   {"From", "+12349013030"},
                                                                   {"Digits", "1234"},
                                                                   {"CallSid", "CA1234567890ABCDE"},
                                                                   {"Caller", "+12349013030"}};
  EXPECT_EQ(RequestSignature("12345", "https://mycompany.com/myapp.php?foo=1&bar=2", params),
            "0/KCTR6DLpKmkAf8muzZqo1nDgQ=");
}

TEST(RequestSignature, AWebSocketUpgradeSignsTheUrlOnly) {
  const std::string url = "wss://hotline.example.com/twilio";
  EXPECT_EQ(RequestSignature("secret-token", url), "QAFa+9MJIJA5aYekPO3viOsoqHo=");
  EXPECT_TRUE(VerifyRequestSignature("secret-token", url, "QAFa+9MJIJA5aYekPO3viOsoqHo="));
  EXPECT_FALSE(VerifyRequestSignature("other-token", url, "QAFa+9MJIJA5aYekPO3viOsoqHo="));
  EXPECT_FALSE(
      VerifyRequestSignature("secret-token", url + "?x=1", "QAFa+9MJIJA5aYekPO3viOsoqHo="));
  EXPECT_FALSE(VerifyRequestSignature("secret-token", url, "QAFa+9MJIJA5aYekPO3viOsoqHo"));
  EXPECT_FALSE(VerifyRequestSignature("secret-token", url, ""));
  EXPECT_FALSE(VerifyRequestSignature("", url, RequestSignature("", url)));
}

}  // namespace
}  // namespace hotline::transport::twilio

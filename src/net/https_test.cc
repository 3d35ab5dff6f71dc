// HttpClient over https:// against a TLS server on 127.0.0.1 with a certificate made here (no
// network, no files from elsewhere): a trusted certificate for the right host works, an
// untrusted one or one for another host is refused, and downloads work over TLS.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "net/download.h"
#include "net/http_client.h"

namespace hotline::net {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

struct TestCert {
  std::string cert_pem, key_pem;
};

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, size_t(n));
}

// A self-signed P-256 certificate (its own authority) for the given subjectAltName list
// ("IP:127.0.0.1,DNS:localhost"), valid for an hour.
TestCert MakeCert(const std::string& san) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> x(X509_new(), X509_free);
  EXPECT_TRUE(key && x);
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
  X509_set_pubkey(x.get(), key.get());
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("hotline test"), -1, -1, 0);
  X509_set_issuer_name(x.get(), name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x.get(), x.get(), nullptr, nullptr, 0);
  for (auto [nid, value] : {std::pair{NID_subject_alt_name, san.c_str()},
                            std::pair{NID_basic_constraints, "critical,CA:TRUE"}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
    EXPECT_NE(ext, nullptr);
    X509_add_ext(x.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  EXPECT_GT(X509_sign(x.get(), key.get(), EVP_sha256()), 0);
  TestCert out;
  std::unique_ptr<BIO, decltype(&BIO_free)> c(BIO_new(BIO_s_mem()), BIO_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> k(BIO_new(BIO_s_mem()), BIO_free);
  PEM_write_bio_X509(c.get(), x.get());
  PEM_write_bio_PrivateKey(k.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  out.cert_pem = BioText(c.get());
  out.key_pem = BioText(k.get());
  return out;
}

// One connection at a time: TLS handshake, the request head read, `response` written. With
// `close_notify` false the connection is dropped without TLS's closing message (as some servers
// do after a body that ends with the connection).
class TlsServer {
 public:
  TlsServer(const TestCert& cert, std::string response, bool close_notify = true)
      : ctx_(ssl::context::tls_server),
        acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
        response_(std::move(response)),
        close_notify_(close_notify) {
    ctx_.use_certificate_chain(asio::buffer(cert.cert_pem));
    ctx_.use_private_key(asio::buffer(cert.key_pem), ssl::context::pem);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TlsServer() {
    stop_ = true;
    boost::system::error_code ec;
    tcp::socket wake(ioc_);
    wake.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  int port() const { return acceptor_.local_endpoint().port(); }
  std::string Url(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(port()) + path;
  }
  int handshake_failures() const { return handshake_failures_; }
  std::string last_request() const {
    std::lock_guard<std::mutex> lock(mu_);
    return last_request_;
  }

 private:
  void Serve() {
    for (;;) {
      tcp::socket sock(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(sock, ec);
      if (stop_ || ec) return;
      ssl::stream<tcp::socket&> tls(sock, ctx_);
      tls.handshake(ssl::stream_base::server, ec);
      if (ec) {
        ++handshake_failures_;
        continue;
      }
      asio::streambuf buf;
      asio::read_until(tls, buf, "\r\n\r\n", ec);
      if (ec) continue;
      {
        std::lock_guard<std::mutex> lock(mu_);
        last_request_.assign(asio::buffers_begin(buf.data()), asio::buffers_end(buf.data()));
      }
      asio::write(tls, asio::buffer(response_), ec);
      if (close_notify_) tls.shutdown(ec);
      sock.close(ec);
    }
  }

  asio::io_context ioc_;
  ssl::context ctx_;
  tcp::acceptor acceptor_;
  std::string response_;
  bool close_notify_;
  std::atomic<bool> stop_{false};
  std::atomic<int> handshake_failures_{0};
  mutable std::mutex mu_;
  std::string last_request_;
  std::thread thread_;
};

std::string Ok(const std::string& body) {
  return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

class HttpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hotline_https_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string WritePem(const std::string& name, const std::string& pem) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << pem;
    return path;
  }
  HttpClientConfig Trusting(const TestCert& cert) {
    HttpClientConfig c;
    c.connect_timeout_ms = 5000;
    c.ca_file = WritePem("ca.pem", cert.cert_pem);
    return c;
  }
  std::filesystem::path dir_;
};

TEST_F(HttpsTest, ATrustedCertificateForTheHostServesTheRequest) {
  const TestCert cert = MakeCert("IP:127.0.0.1,DNS:localhost");
  TlsServer server(cert, Ok("hello over tls"));
  const HttpClient client(Trusting(cert));
  auto r = client.Send(HttpRequest::Get(server.Url("/v1/models?x=1")));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "hello over tls");
  const std::string req = server.last_request();
  EXPECT_EQ(req.rfind("GET /v1/models?x=1 HTTP/1.1\r\n", 0), 0u) << req;
  EXPECT_NE(req.find("Host: 127.0.0.1:" + std::to_string(server.port())), std::string::npos);
  // By name too (the certificate names localhost; SNI carries it).
  auto by_name =
      client.Send(HttpRequest::Get("https://localhost:" + std::to_string(server.port()) + "/"));
  ASSERT_TRUE(by_name.ok()) << by_name.status();
  EXPECT_EQ(by_name->body, "hello over tls");
}

TEST_F(HttpsTest, ABodyEndingWithTheConnectionArrivesWhole) {
  const TestCert cert = MakeCert("IP:127.0.0.1");
  TlsServer server(cert, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nno length given",
                   /*close_notify=*/false);
  auto r = HttpClient(Trusting(cert)).Send(HttpRequest::Get(server.Url("/")));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "no length given");
}

TEST_F(HttpsTest, AnUntrustedCertificateIsRefused) {
  const TestCert cert = MakeCert("IP:127.0.0.1");
  TlsServer server(cert, Ok("secret"));
  HttpClientConfig system_store;  // the system's authorities never signed this certificate
  system_store.connect_timeout_ms = 5000;
  auto r = HttpClient(system_store).Send(HttpRequest::Get(server.Url("/")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
  EXPECT_NE(r.status().message().find("TLS handshake"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("certificate"), std::string::npos) << r.status();
  // Another authority's certificate in ca_file does not help either.
  const TestCert other = MakeCert("IP:127.0.0.1");
  auto r2 = HttpClient(Trusting(other)).Send(HttpRequest::Get(server.Url("/")));
  EXPECT_EQ(r2.status().code(), StatusCode::kUnavailable) << r2.status();
}

TEST_F(HttpsTest, ACertificateForAnotherHostIsRefused) {
  const TestCert cert = MakeCert("DNS:models.example.com");
  TlsServer server(cert, Ok("secret"));
  auto r = HttpClient(Trusting(cert)).Send(HttpRequest::Get(server.Url("/")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status();
  EXPECT_NE(r.status().message().find("TLS handshake with 127.0.0.1"), std::string::npos)
      << r.status();
}

TEST_F(HttpsTest, AMissingCaFileIsNamed) {
  HttpClientConfig c;
  c.ca_file = (dir_ / "nope.pem").string();
  const TestCert cert = MakeCert("IP:127.0.0.1");
  TlsServer server(cert, Ok("x"));
  auto r = HttpClient(c).Send(HttpRequest::Get(server.Url("/")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("nope.pem"), std::string::npos) << r.status();
  EXPECT_EQ(server.handshake_failures(), 0);  // refused before connecting out
  // Validation (what configurations run at start-up) says the same.
  Status v = c.Validate();
  EXPECT_EQ(v.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(v.message().find("ca_file"), std::string::npos) << v;
  EXPECT_NE(v.message().find("nope.pem"), std::string::npos) << v;
}

TEST_F(HttpsTest, ACaFileThatHoldsNoCertificateIsRefusedWhenValidated) {
  for (const std::string& text : {std::string(), std::string("not a certificate\n"),
                                  std::string("-----BEGIN CERTIFICATE-----\nAAAA\n")}) {
    HttpClientConfig c;
    c.ca_file = WritePem("bad.pem", text);
    Status v = c.Validate();
    EXPECT_EQ(v.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(v.message().find("bad.pem"), std::string::npos) << v;
    EXPECT_NE(v.message().find("PEM"), std::string::npos) << v;
  }
  EXPECT_FALSE(CheckTrustedAuthorities(dir_.string()).ok());  // a folder is not a file
  EXPECT_FALSE(CheckTrustedAuthorities("/dev/zero").ok());    // nor a device that never ends
  EXPECT_TRUE(CheckTrustedAuthorities("").ok());              // the system's store
}

TEST_F(HttpsTest, ACaFileRewrittenInPlaceIsReadAgain) {
  const TestCert cert = MakeCert("IP:127.0.0.1");
  const TestCert other = MakeCert("IP:127.0.0.1");
  TlsServer server(cert, Ok("rotated"));
  HttpClientConfig c;
  c.connect_timeout_ms = 5000;
  c.ca_file = WritePem("rotating.pem", other.cert_pem);
  auto before = HttpClient(c).Send(HttpRequest::Get(server.Url("/")));
  EXPECT_EQ(before.status().code(), StatusCode::kUnavailable) << before.status();
  // The same name, rewritten at once (same size too: both are P-256 certificates from here).
  WritePem("rotating.pem", cert.cert_pem);
  for (int i = 0; i < 2; ++i) {  // the second request reuses the loaded authorities
    auto after = HttpClient(c).Send(HttpRequest::Get(server.Url("/")));
    ASSERT_TRUE(after.ok()) << after.status();
    EXPECT_EQ(after->body, "rotated");
  }
}

TEST_F(HttpsTest, AModelDownloadsOverTls) {
  const TestCert cert = MakeCert("IP:127.0.0.1");
  std::string file(100000, '\0');
  for (size_t i = 0; i < file.size(); ++i) file[i] = char(i * 31 % 251);
  TlsServer server(cert, "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(file.size()) +
                             "\r\nConnection: close\r\n\r\n" + file);
  DownloadOptions o;
  o.http.ca_file = WritePem("ca.pem", cert.cert_pem);
  o.free_space_margin_bytes = 0;
  const std::string path = (dir_ / "m.bin").string();
  auto r = DownloadFile(server.Url("/m.bin"), path, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bytes, int64_t(file.size()));
  std::ifstream in(path, std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(got, file);
}

}  // namespace
}  // namespace hotline::net

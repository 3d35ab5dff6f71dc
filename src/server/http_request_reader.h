// Reading HTTP/1.1 requests off a connection: the Beast parser every request is read with, held to
// the server's limits, and the conversion of a parsed message into the Request handlers see.
//
// HttpSession reads each request from its socket through these two functions; the HTTP fuzz target
// (fuzz/http_request_fuzz.cc) reads requests from arbitrary bytes through the same ones, so what
// it exercises is what a client on the network reaches.
//
// Thread-safety: pure functions over their arguments.
#pragma once

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>

#include "server/http_types.h"
#include "server/server_config.h"

namespace hotline::server {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;
using ParsedRequest = boost::beast::http::request<boost::beast::http::string_body>;

// Sets a fresh parser's limits (one parser per request): the request line and headers at most
// config.max_header_bytes (the read then fails with http::error::header_limit, answered 431), the
// body at most config.max_request_body_bytes (http::error::body_limit, answered 413).
void LimitRequestParser(RequestParser& parser, const ServerConfig& config);

// The request as handlers see it: method, target (split at the first '?' into path and query),
// headers in the order sent, the body (moved out of `parsed`; its head stays usable) and `remote`.
Request ToRequest(ParsedRequest& parsed, std::string remote);

}  // namespace hotline::server

// Boost.Beast HTTP/1.1 server: one io_context run by `workers` threads, a
// coroutine per connection that reads a request, writes its response and
// loops (keep-alive as the request asks, HTTP/1.0 included; pipelined
// requests wait in the read buffer and are answered in order).
#include "../common/server.hpp"
#include "ping.hpp"

#include <boost/beast/core/file.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

// Formatted at most once a second per thread.
std::string_view http_date() {
  thread_local std::time_t formatted_at = 0;
  thread_local char date[32];
  std::time_t now = std::time(nullptr);
  if (now != formatted_at) {
    std::tm tm;
    gmtime_r(&now, &tm);
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    formatted_at = now;
  }
  return date;
}

using request = http::request<http::string_body>;
using response = http::response<http::string_body>;

// One route per scenario: each fills the response and returns true when the
// request is its own, false for a 404. Only plaintext and json carry a Date:
// a hello response is the status line, Content-Length and the body.
bool hello(const request& req, response& res) {
  if (req.method() != http::verb::get || req.target() != "/") return false;
  res.body() = "Hello world!";
  return true;
}

bool plaintext(const request& req, response& res) {
  if (req.method() != http::verb::get || req.target() != "/plaintext") return false;
  res.set(http::field::date, http_date());
  res.set(http::field::content_type, "text/plain");
  res.body() = "Hello, World!";
  return true;
}

bool json(const request& req, response& res) {
  if (req.method() != http::verb::post || req.target() != "/ping") return false;
  res.set(http::field::date, http_date());
  if (auto reply = ping_reply(req.body())) {
    res.set(http::field::content_type, "application/json");
    res.body() = std::move(*reply);
  } else {
    res.result(http::status::bad_request);
  }
  return true;
}

// The started scenario's route, set once in main before serving.
bool (*route)(const request&, response&) = nullptr;

// keep_alive follows the request: HTTP/1.1 unless `Connection: close`,
// HTTP/1.0 only with `Connection: keep-alive`, which the response then repeats.
response handle(const request& req) {
  response res{http::status::ok, req.version()};
  res.keep_alive(req.keep_alive());
  if (!route(req, res)) res.result(http::status::not_found);
  res.prepare_payload();
  return res;
}

// file: $SB_FILES, set once in main when the scenario is file.
std::string files_dir;

// file: Beast's file_body opens $SB_FILES/4k at every request and its
// serializer streams it from the file as it writes; any other name is a 404.
http::response<http::file_body> handle_file(const request& req) {
  http::response<http::file_body> res{http::status::ok, req.version()};
  res.keep_alive(req.keep_alive());
  beast::error_code ec;
  if (req.method() == http::verb::get && req.target() == "/file/4k")
    res.body().open((files_dir + "/4k").c_str(), beast::file_mode::scan, ec);
  if (!res.body().is_open()) res.result(http::status::not_found);
  res.prepare_payload();
  return res;
}

// Writes the response; true when the connection stays open.
template <typename Body>
asio::awaitable<bool> send(tcp::socket& sock, http::response<Body> res) {
  auto [ec, n] = co_await http::async_write(sock, res, sb::use_nothrow);
  co_return !ec && res.keep_alive();
}

asio::awaitable<void> session(tcp::socket sock) {
  beast::flat_buffer buffer;
  for (;;) {
    request req;
    auto [ec, n] = co_await http::async_read(sock, buffer, req, sb::use_nothrow);
    if (ec) break;
    bool keep_open = files_dir.empty() ? co_await send(sock, handle(req)) : co_await send(sock, handle_file(req));
    if (!keep_open) break;
  }
  boost::system::error_code ec;
  sock.shutdown(tcp::socket::shutdown_send, ec);
}

int main(int argc, char** argv) {
  auto opt = sb::parse_args(argc, argv, {"hello", "plaintext", "json", "file"});
  route = opt.scenario == "hello" ? hello : opt.scenario == "plaintext" ? plaintext : json;
  if (opt.scenario == "file") {  // served by handle_file instead of a route
    const char* dir = std::getenv("SB_FILES");
    if (!dir || !*dir) {
      std::fprintf(stderr, "the file scenario needs SB_FILES\n");
      return 2;
    }
    files_dir = dir;
  }
  asio::io_context ctx(opt.workers);
  asio::co_spawn(ctx, sb::listen(sb::make_acceptor(ctx, opt.endpoint, false), session, false), asio::detached);

  std::vector<std::jthread> threads;
  for (int i = 1; i < opt.workers; ++i) threads.emplace_back([&ctx] { ctx.run(); });
  ctx.run();
}

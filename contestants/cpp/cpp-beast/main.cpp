// Boost.Beast HTTP/1.1 server: one io_context run by `workers` threads, a
// coroutine per connection that reads a request, writes its response and
// loops (keep-alive; pipelined requests wait in the read buffer and are
// answered in order).
#include "../common/server.hpp"
#include "ping.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

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
// request is its own, false for a 404.
bool hello(const request& req, response& res) {
  if (req.method() != http::verb::get || req.target() != "/") return false;
  res.body() = "Hello world!";
  return true;
}

bool plaintext(const request& req, response& res) {
  if (req.method() != http::verb::get || req.target() != "/plaintext") return false;
  res.set(http::field::content_type, "text/plain");
  res.body() = "Hello, World!";
  return true;
}

bool json(const request& req, response& res) {
  if (req.method() != http::verb::post || req.target() != "/ping") return false;
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

response handle(const request& req) {
  response res{http::status::ok, req.version()};
  res.set(http::field::date, http_date());
  res.keep_alive(req.keep_alive());
  if (!route(req, res)) res.result(http::status::not_found);
  res.prepare_payload();
  return res;
}

asio::awaitable<void> session(tcp::socket sock) {
  beast::flat_buffer buffer;
  for (;;) {
    request req;
    auto [ec, n] = co_await http::async_read(sock, buffer, req, sb::use_nothrow);
    if (ec) break;
    auto res = handle(req);
    auto [wec, wn] = co_await http::async_write(sock, res, sb::use_nothrow);
    if (wec || !res.keep_alive()) break;
  }
  boost::system::error_code ec;
  sock.shutdown(tcp::socket::shutdown_send, ec);
}

int main(int argc, char** argv) {
  auto opt = sb::parse_args(argc, argv, {"hello", "plaintext", "json"});
  route = opt.scenario == "hello" ? hello : opt.scenario == "plaintext" ? plaintext : json;
  asio::io_context ctx(opt.workers);
  asio::co_spawn(ctx, sb::listen(sb::make_acceptor(ctx, opt.endpoint, false), session, false), asio::detached);

  std::vector<std::jthread> threads;
  for (int i = 1; i < opt.workers; ++i) threads.emplace_back([&ctx] { ctx.run(); });
  ctx.run();
}

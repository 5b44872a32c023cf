// Shared by cpp-asio and cpp-asio-reuseport: one C++20 coroutine per
// connection for each raw scenario. The two servers differ only in how
// io_contexts, threads and acceptors are arranged.
#pragma once

#include "server.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <array>
#include <chrono>

namespace sb {

using std::chrono::steady_clock;

constexpr std::string_view HELLO_RESPONSE =
    "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";
constexpr std::size_t HELLO_READ_BYTES = 1024;
constexpr std::size_t ECHO_BUFFER_BYTES = 16 * 1024;

inline steady_clock::duration timeout() {
  static const auto timeout_ms = [] {
    const char* env = std::getenv("SB_TIMEOUT_MS");
    return std::chrono::milliseconds(env ? std::atol(env) : 5000);
  }();
  return timeout_ms;
}

inline awaitable<void> hello(tcp::socket sock) {
  std::array<char, HELLO_READ_BYTES> buf;
  for (;;) {
    auto [ec, n] = co_await sock.async_read_some(asio::buffer(buf), use_nothrow);
    if (ec) co_return;
    auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(HELLO_RESPONSE), use_nothrow);
    if (wec) co_return;
  }
}

// hello-timeout follows Asio's cpp20 timeout example: the session moves a
// deadline forward before each read and each write, and a watchdog coroutine
// sleeps until the deadline; whichever of the two finishes first cancels the
// other, and the socket closes when the session frame goes away. The two
// coroutines share the deadline, hence the strand on a shared io_context.
inline awaitable<void> hello_until(tcp::socket& sock, steady_clock::time_point& deadline) {
  std::array<char, HELLO_READ_BYTES> buf;
  for (;;) {
    deadline = steady_clock::now() + timeout();
    auto [ec, n] = co_await sock.async_read_some(asio::buffer(buf), use_nothrow);
    if (ec) co_return;
    deadline = steady_clock::now() + timeout();
    auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(HELLO_RESPONSE), use_nothrow);
    if (wec) co_return;
  }
}

inline awaitable<void> watchdog(steady_clock::time_point& deadline) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (auto now = steady_clock::now(); deadline > now; now = steady_clock::now()) {
    timer.expires_at(deadline);
    auto [ec] = co_await timer.async_wait(use_nothrow);
    if (ec) co_return;  // cancelled: the session ended first
  }
}

inline awaitable<void> hello_timeout(tcp::socket sock) {
  using namespace asio::experimental::awaitable_operators;
  auto deadline = steady_clock::now() + timeout();
  co_await (hello_until(sock, deadline) || watchdog(deadline));
}

inline awaitable<void> echo(tcp::socket sock) {
  std::array<char, ECHO_BUFFER_BYTES> buf;
  for (;;) {
    auto [ec, n] = co_await sock.async_read_some(asio::buffer(buf), use_nothrow);
    if (ec) co_return;
    auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(buf, n), use_nothrow);
    if (wec) co_return;
  }
}

inline options parse_raw_args(int argc, char** argv) {
  return parse_args(argc, argv, {"hello", "hello-timeout", "echo"});
}

inline session_fn session_for(std::string_view scenario) {
  if (scenario == "hello-timeout") return hello_timeout;
  if (scenario == "echo") return echo;
  return hello;
}

}  // namespace sb

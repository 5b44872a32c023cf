// Shared by cpp-asio and cpp-asio-reuseport: one C++20 coroutine per
// connection for each raw scenario. The two servers differ only in how
// io_contexts, threads and acceptors are arranged.
#pragma once

#include "scenarios.hpp"
#include "server.hpp"
#include "timed.hpp"

namespace sb {

inline awaitable<void> hello(tcp::socket sock) {
  std::array<char, HELLO_READ_BYTES> buf;
  for (;;) {
    auto [ec, n] = co_await sock.async_read_some(asio::buffer(buf), use_nothrow);
    if (ec) co_return;
    auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(HELLO_RESPONSE), use_nothrow);
    if (wec) co_return;
  }
}

// hello-timeout: each read and each write is timed (timed.hpp); a timer that
// expires ends the session and the socket closes with its frame. Completions
// come back on the coroutine's executor, hence a strand when threads share an
// io_context.
inline awaitable<void> hello_timeout(tcp::socket sock) {
  asio::steady_timer timer(sock.get_executor());
  std::array<char, HELLO_READ_BYTES> buf;
  for (;;) {
    auto read = co_await timed(sock.async_read_some(asio::buffer(buf), asio::deferred), timer, asio::use_awaitable);
    if (!completed_in_time(read)) co_return;
    auto write = co_await timed(asio::async_write(sock, asio::buffer(HELLO_RESPONSE), asio::deferred), timer,
                                asio::use_awaitable);
    if (!completed_in_time(write)) co_return;
  }
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

// work, counter and file: after each read every complete request head in the
// buffer is answered in order, the answers going out in one write.
inline awaitable<void> serve_http(tcp::socket sock, http_route route) {
  request_buffer in;
  std::size_t len = 0;
  std::string out;
  for (;;) {
    auto [ec, n] = co_await sock.async_read_some(asio::buffer(in.data() + len, in.size() - len), use_nothrow);
    if (ec) co_return;
    len += n;
    bool keep_open = answer_all(in, len, route.prefix, route.route, out);
    if (!out.empty()) {
      auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(out), use_nothrow);
      if (wec) co_return;
      out.clear();
    }
    if (!keep_open) co_return;  // the socket closes with the frame
  }
}

inline awaitable<void> work(tcp::socket sock) { return serve_http(std::move(sock), http_route_for("work")); }

inline awaitable<void> counter(tcp::socket sock) { return serve_http(std::move(sock), http_route_for("counter")); }

inline awaitable<void> file(tcp::socket sock) { return serve_http(std::move(sock), http_route_for("file")); }

inline options parse_raw_args(int argc, char** argv) { return parse_args(argc, argv, RAW_SCENARIOS); }

inline session_fn session_for(std::string_view scenario) {
  if (scenario == "hello-timeout") return hello_timeout;
  if (scenario == "echo") return echo;
  if (scenario == "work") return work;
  if (scenario == "counter") return counter;
  if (scenario == "file") {
    files_dir();  // exits 2 before listening when SB_FILES is not set
    return file;
  }
  return hello;
}

}  // namespace sb

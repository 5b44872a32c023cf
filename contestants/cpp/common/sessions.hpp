// Shared by cpp-asio and cpp-asio-reuseport: one C++20 coroutine per
// connection for each raw scenario. The two servers differ only in how
// io_contexts, threads and acceptors are arranged.
#pragma once

#include "server.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>

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

// work and counter: HTTP/1.1 GET requests, keep-alive and pipelined. After
// each read every complete request head in the buffer is answered in order,
// the answers going out in one write. A route gets what follows its prefix in
// the request target and gives the decimal body of a 200, or nothing for a 400
// (after which the connection closes).
using route_fn = std::optional<std::uint64_t> (*)(std::string_view arg);

constexpr std::size_t REQUEST_BUFFER_BYTES = 8 * 1024;  // a longer request head is a 400
constexpr std::string_view BAD_REQUEST = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
constexpr std::string_view NOT_FOUND = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";

// All digits, at least one, at most `max` (leading zeros allowed).
inline std::optional<std::uint64_t> parse_decimal(std::string_view digits, std::uint64_t max) {
  if (digits.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + std::uint64_t(c - '0');
    if (value > max) return std::nullopt;
  }
  return value;
}

// Appends the answer to one request head; false when the connection is to close.
inline bool answer(std::string_view head, std::string_view prefix, route_fn route, std::string& out) {
  std::string_view line = head.substr(0, head.find("\r\n"));  // GET <target> HTTP/1.1
  if (!line.starts_with("GET ")) {
    out += BAD_REQUEST;
    return false;
  }
  line.remove_prefix(4);
  std::string_view target = line.substr(0, line.find(' '));
  if (!target.starts_with(prefix)) {
    out += NOT_FOUND;
    return true;
  }
  std::optional<std::uint64_t> value = route(target.substr(prefix.size()));
  if (!value) {
    out += BAD_REQUEST;
    return false;
  }
  char body[20];
  char* end = std::to_chars(body, body + sizeof body, *value).ptr;
  out += "HTTP/1.1 200 OK\r\nContent-Length: ";
  out += std::to_string(end - body);
  out += "\r\n\r\n";
  out.append(body, end);
  return true;
}

inline awaitable<void> serve_http(tcp::socket sock, std::string_view prefix, route_fn route) {
  std::array<char, REQUEST_BUFFER_BYTES> in;
  std::size_t len = 0;
  std::string out;
  for (;;) {
    auto [ec, n] = co_await sock.async_read_some(asio::buffer(in.data() + len, in.size() - len), use_nothrow);
    if (ec) co_return;
    std::string_view pending(in.data(), len + n);
    bool keep_open = true;
    for (std::size_t end; keep_open && (end = pending.find("\r\n\r\n")) != pending.npos;) {
      keep_open = answer(pending.substr(0, end), prefix, route, out);
      pending.remove_prefix(end + 4);
    }
    if (keep_open && pending.size() == in.size()) {
      out += BAD_REQUEST;
      keep_open = false;
    }
    len = pending.size();
    std::memmove(in.data(), pending.data(), len);
    if (!out.empty()) {
      auto [wec, wn] = co_await asio::async_write(sock, asio::buffer(out), use_nothrow);
      if (wec) co_return;
      out.clear();
    }
    if (!keep_open) co_return;  // the socket closes with the frame
  }
}

// A step of the spin longer than this means the thread was not running
// (descheduled, preempted): that time was not spent on the request.
inline constexpr std::chrono::nanoseconds work_gap{50'000};  // SB_WORK_GAP_NS

// work: busy-waits N microseconds of RUNNING time on steady_clock
// (CLOCK_MONOTONIC) in the thread that runs the coroutine, blocking that thread
// as CPU work would. Each step's delta counts only when it is below work_gap,
// so a preempted thread still spends N µs of CPU on the request.
inline std::optional<std::uint64_t> busy_work(std::string_view arg) {
  std::optional<std::uint64_t> us = parse_decimal(arg, 1'000'000);
  if (us) {
    const steady_clock::duration goal = std::chrono::microseconds(*us);
    steady_clock::duration total{0};
    for (auto last = steady_clock::now(); total < goal;) {
      auto now = steady_clock::now();
      if (now - last < work_gap) total += now - last;  // longer: the thread was not running
      last = now;
    }
  }
  return us;
}

// counter: 65,536 std::atomic counters shared by every thread; fetch_add
// returns the old value, so each caller gets a value no other caller gets.
inline std::array<std::atomic<std::uint64_t>, 65536> counters{};

inline std::optional<std::uint64_t> count(std::string_view arg) {
  std::optional<std::uint64_t> key = parse_decimal(arg, counters.size() - 1);
  if (!key) return std::nullopt;
  return counters[*key].fetch_add(1, std::memory_order_relaxed) + 1;
}

inline awaitable<void> work(tcp::socket sock) { return serve_http(std::move(sock), "/work/", busy_work); }

inline awaitable<void> counter(tcp::socket sock) { return serve_http(std::move(sock), "/counter/", count); }

inline options parse_raw_args(int argc, char** argv) {
  return parse_args(argc, argv, {"hello", "hello-timeout", "echo", "work", "counter"});
}

inline session_fn session_for(std::string_view scenario) {
  if (scenario == "hello-timeout") return hello_timeout;
  if (scenario == "echo") return echo;
  if (scenario == "work") return work;
  if (scenario == "counter") return counter;
  return hello;
}

}  // namespace sb

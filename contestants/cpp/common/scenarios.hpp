// Shared by the raw C++ contestants whatever their coroutines: the bytes of
// each scenario, SB_TIMEOUT_MS, and the request handling of work, counter and
// file, which touches no socket (the callers read and write).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace sb {

using std::chrono::steady_clock;

constexpr std::string_view HELLO_RESPONSE =
    "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello world!";
constexpr std::size_t HELLO_READ_BYTES = 1024;
constexpr std::size_t ECHO_BUFFER_BYTES = 512;

inline const std::initializer_list<std::string_view> RAW_SCENARIOS = {
    "hello", "hello-timeout", "echo", "work", "counter", "file"};

inline steady_clock::duration timeout() {
  static const auto timeout_ms = [] {
    const char* env = std::getenv("SB_TIMEOUT_MS");
    return std::chrono::milliseconds(env ? std::atol(env) : 5000);
  }();
  return timeout_ms;
}

// work, counter and file: HTTP/1.1 GET requests, keep-alive and pipelined.
// A route gets what follows its prefix in the request target and appends the
// whole answer; it returns false when the connection is to close.
using route_fn = bool (*)(std::string_view arg, std::string& out);

constexpr std::size_t REQUEST_BUFFER_BYTES = 8 * 1024;  // a longer request head is a 400
using request_buffer = std::array<char, REQUEST_BUFFER_BYTES>;
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

// A 200 whose body is the value in decimal, or a 400 (and close) for none.
inline bool decimal_answer(std::optional<std::uint64_t> value, std::string& out) {
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
  return route(target.substr(prefix.size()), out);
}

// Answers, in order, every complete request head among the `len` bytes read
// into `in`, then moves the incomplete rest to its front and sets `len` to it.
// False when the connection is to close after `out` is written.
inline bool answer_all(request_buffer& in, std::size_t& len, std::string_view prefix, route_fn route,
                       std::string& out) {
  std::string_view pending(in.data(), len);
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
  return keep_open;
}

// A step of the spin longer than this means the thread was not running
// (descheduled, preempted): that time was not spent on the request.
inline constexpr std::chrono::nanoseconds work_gap{50'000};  // SB_WORK_GAP_NS

// work: busy-waits N microseconds of RUNNING time on steady_clock
// (CLOCK_MONOTONIC) in the thread that runs the connection, blocking that
// thread as CPU work would. Each step's delta counts only when it is below
// work_gap, so a preempted thread still spends N µs of CPU on the request.
inline bool busy_work(std::string_view arg, std::string& out) {
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
  return decimal_answer(us, out);
}

// counter: 65,536 std::atomic counters shared by every thread; fetch_add
// returns the old value, so each caller gets a value no other caller gets.
inline std::array<std::atomic<std::uint64_t>, 65536> counters{};

inline bool count(std::string_view arg, std::string& out) {
  std::optional<std::uint64_t> key = parse_decimal(arg, counters.size() - 1);
  if (!key) return decimal_answer(std::nullopt, out);
  return decimal_answer(counters[*key].fetch_add(1, std::memory_order_relaxed) + 1, out);
}

// file: $SB_FILES, read once at the start; exits 2 when it is not set.
inline const std::string& files_dir() {
  static const std::string dir = [] {
    const char* env = std::getenv("SB_FILES");
    if (!env || !*env) {
      std::fprintf(stderr, "the file scenario needs SB_FILES\n");
      std::exit(2);
    }
    return std::string(env);
  }();
  return dir;
}

// file: only "4k" is served. The file is opened and read at every request
// (the page cache serves it) and its bytes go out with the other answers of
// the batch: epoll cannot wait on a regular file, so Asio on epoll reads files
// synchronously.
inline bool send_file(std::string_view name, std::string& out) {
  int fd = name == "4k" ? ::open((files_dir() + "/4k").c_str(), O_RDONLY | O_CLOEXEC) : -1;
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) < 0) {
    if (fd >= 0) ::close(fd);
    out += NOT_FOUND;
    return true;
  }
  out += "HTTP/1.1 200 OK\r\nContent-Length: ";
  out += std::to_string(st.st_size);
  out += "\r\n\r\n";
  std::size_t at = out.size();
  out.resize(at + std::size_t(st.st_size));
  while (at < out.size()) {
    ssize_t n = ::read(fd, out.data() + at, out.size() - at);
    if (n <= 0) break;
    at += std::size_t(n);
  }
  ::close(fd);
  return at == out.size();  // a file cut short breaks the framing: close after it
}

struct http_route {
  std::string_view prefix;
  route_fn route;
};

inline http_route http_route_for(std::string_view scenario) {
  if (scenario == "work") return {"/work/", busy_work};
  if (scenario == "counter") return {"/counter/", count};
  files_dir();  // file: fail at the start, not at the first request
  return {"/file/", send_file};
}

}  // namespace sb

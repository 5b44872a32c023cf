// Shared by cpp-asio and cpp-asio-reuseport: command line, listening socket,
// and one C++20 coroutine per connection for each scenario. The two servers
// differ only in how io_contexts, threads and acceptors are arranged.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace sb {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using std::chrono::steady_clock;

// Errors come back as values: a closed connection is the normal end of a
// session, not an exceptional one.
constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

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
// other, and the socket closes when the session frame goes away.
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

using session_fn = awaitable<void> (*)(tcp::socket);

struct options {
  std::string scenario;
  tcp::endpoint endpoint;
  int workers;
  session_fn session;
};

// <scenario> <host> <port> <workers>; exits 2 on anything it cannot serve.
inline options parse_args(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s hello|hello-timeout|echo <host> <port> <workers>\n", argv[0]);
    std::exit(2);
  }
  options opt{argv[1], {}, std::max(1, std::atoi(argv[4])), nullptr};
  if (opt.scenario == "hello") opt.session = hello;
  else if (opt.scenario == "hello-timeout") opt.session = hello_timeout;
  else if (opt.scenario == "echo") opt.session = echo;
  else {
    std::fprintf(stderr, "unsupported scenario '%s' (hello, hello-timeout, echo)\n", argv[1]);
    std::exit(2);
  }
  asio::io_context resolve_ctx;
  boost::system::error_code ec;
  auto results = tcp::resolver(resolve_ctx).resolve(argv[2], argv[3], tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    std::fprintf(stderr, "cannot resolve %s:%s: %s\n", argv[2], argv[3], ec.message().c_str());
    std::exit(2);
  }
  opt.endpoint = results.begin()->endpoint();
  return opt;
}

inline tcp::acceptor make_acceptor(asio::io_context& ctx, const tcp::endpoint& endpoint, bool reuse_port) {
  tcp::acceptor acceptor(ctx);
  try {
    acceptor.open(endpoint.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    if (reuse_port)
      acceptor.set_option(asio::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>(true));
    acceptor.bind(endpoint);
    acceptor.listen();
  } catch (const boost::system::system_error& e) {
    std::fprintf(stderr, "cannot listen on %s:%u: %s\n", endpoint.address().to_string().c_str(),
                 unsigned(endpoint.port()), e.what());
    std::exit(1);
  }
  return acceptor;
}

// strand_per_connection: hello-timeout runs two coroutines per connection
// that share one deadline; when several threads run the io_context they must
// not run at the same time, so that connection gets its own strand.
inline awaitable<void> listen(tcp::acceptor acceptor, session_fn session, bool strand_per_connection) {
  for (;;) {
    auto [ec, sock] = co_await acceptor.async_accept(use_nothrow);
    if (ec) continue;  // e.g. the peer reset before accept: keep serving
    sock.set_option(tcp::no_delay(true));
    asio::any_io_executor ex = acceptor.get_executor();
    if (strand_per_connection) ex = asio::make_strand(ex);
    asio::co_spawn(ex, session(std::move(sock)), asio::detached);
  }
}

}  // namespace sb

// Shared by the C++ contestants: the command line, the listening socket and
// the accept loop that starts one coroutine per connection.
#pragma once

#include <boost/asio.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>

namespace sb {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

// Errors come back as values: a closed connection is the normal end of a
// session, not an exceptional one.
constexpr auto use_nothrow = asio::as_tuple(asio::use_awaitable);

struct options {
  std::string scenario;
  tcp::endpoint endpoint;
  int workers;
};

// <scenario> <host> <port> <workers>; exits 2 on anything it cannot serve.
inline options parse_args(int argc, char** argv, std::initializer_list<std::string_view> scenarios) {
  std::string known;
  for (auto s : scenarios) known += (known.empty() ? "" : "|") + std::string(s);
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s %s <host> <port> <workers>\n", argv[0], known.c_str());
    std::exit(2);
  }
  if (std::find(scenarios.begin(), scenarios.end(), argv[1]) == scenarios.end()) {
    std::fprintf(stderr, "unsupported scenario '%s' (supported: %s)\n", argv[1], known.c_str());
    std::exit(2);
  }
  asio::io_context ctx;
  boost::system::error_code ec;
  auto results = tcp::resolver(ctx).resolve(argv[2], argv[3], tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    std::fprintf(stderr, "cannot resolve %s:%s: %s\n", argv[2], argv[3], ec.message().c_str());
    std::exit(2);
  }
  return {argv[1], results.begin()->endpoint(), std::max(1, std::atoi(argv[4]))};
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

using session_fn = awaitable<void> (*)(tcp::socket);

// strand_per_connection: for sessions that run more than one coroutine on a
// connection; with several threads on one io_context they must take turns.
inline awaitable<void> listen(tcp::acceptor acceptor, session_fn session, bool strand_per_connection) {
  for (;;) {
    auto [ec, sock] = co_await acceptor.async_accept(use_nothrow);
    if (ec) {
      // Out of descriptors or memory (Asio already retries connections reset
      // before accept): retrying at once would spin, so pause and go on.
      asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(10));
      co_await pause.async_wait(use_nothrow);
      continue;
    }
    sock.set_option(tcp::no_delay(true));
    asio::any_io_executor ex = acceptor.get_executor();
    if (strand_per_connection) ex = asio::make_strand(ex);
    asio::co_spawn(ex, session(std::move(sock)), asio::detached);
  }
}

}  // namespace sb

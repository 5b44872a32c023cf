// Boost.Asio stackful coroutines (asio::spawn on Boost.Context), per-core:
// `workers` threads, each running its own io_context with its own
// SO_REUSEPORT acceptor. Every connection is a coroutine with its own stack,
// written straight-line: a read or write through its yield_context suspends
// the coroutine until the operation completes, and a connection stays on the
// thread that accepted it.
#include "../common/scenarios.hpp"
#include "../common/server.hpp"
#include "../common/timed.hpp"

#include <boost/asio/spawn.hpp>

#include <memory>
#include <thread>
#include <vector>

namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

using session_fn = void (*)(tcp::socket&, asio::yield_context);

void hello(tcp::socket& sock, asio::yield_context yield) {
  std::array<char, sb::HELLO_READ_BYTES> buf;
  error_code ec;
  for (;;) {
    sock.async_read_some(asio::buffer(buf), yield[ec]);
    if (ec) return;
    asio::async_write(sock, asio::buffer(sb::HELLO_RESPONSE), yield[ec]);
    if (ec) return;
  }
}

// hello-timeout: each read and each write is timed (common/timed.hpp); a
// timer that expires ends the session and the socket closes with it.
void hello_timeout(tcp::socket& sock, asio::yield_context yield) {
  asio::steady_timer timer(sock.get_executor());
  std::array<char, sb::HELLO_READ_BYTES> buf;
  for (;;) {
    auto read = sb::timed(sock.async_read_some(asio::buffer(buf), asio::deferred), timer, yield);
    if (!sb::completed_in_time(read)) return;
    auto write = sb::timed(asio::async_write(sock, asio::buffer(sb::HELLO_RESPONSE), asio::deferred), timer, yield);
    if (!sb::completed_in_time(write)) return;
  }
}

void echo(tcp::socket& sock, asio::yield_context yield) {
  std::array<char, sb::ECHO_BUFFER_BYTES> buf;
  error_code ec;
  for (;;) {
    std::size_t n = sock.async_read_some(asio::buffer(buf), yield[ec]);
    if (ec) return;
    asio::async_write(sock, asio::buffer(buf, n), yield[ec]);
    if (ec) return;
  }
}

sb::http_route http_route;  // work, counter or file: set once in main

// work, counter and file: after each read every complete request head in the
// buffer is answered in order, the answers going out in one write.
void serve_http(tcp::socket& sock, asio::yield_context yield) {
  sb::request_buffer in;
  std::size_t len = 0;
  std::string out;
  error_code ec;
  for (;;) {
    len += sock.async_read_some(asio::buffer(in.data() + len, in.size() - len), yield[ec]);
    if (ec) return;
    bool keep_open = sb::answer_all(in, len, http_route.prefix, http_route.route, out);
    if (!out.empty()) {
      asio::async_write(sock, asio::buffer(out), yield[ec]);
      if (ec) return;
      out.clear();
    }
    if (!keep_open) return;
  }
}

session_fn session_for(std::string_view scenario) {
  if (scenario == "hello") return hello;
  if (scenario == "hello-timeout") return hello_timeout;
  if (scenario == "echo") return echo;
  http_route = sb::http_route_for(scenario);
  return serve_http;
}

void accept_loop(tcp::acceptor& acceptor, session_fn session, asio::yield_context yield) {
  for (;;) {
    error_code ec;
    tcp::socket sock = acceptor.async_accept(yield[ec]);
    if (ec) {
      // Out of descriptors or memory: retrying at once would spin.
      asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(10));
      pause.async_wait(yield[ec]);
      continue;
    }
    sock.set_option(tcp::no_delay(true));
    asio::spawn(
        acceptor.get_executor(),
        [session, sock = std::move(sock)](asio::yield_context yield) mutable { session(sock, yield); },
        asio::detached);
  }
}

int main(int argc, char** argv) {
  auto opt = sb::parse_args(argc, argv, sb::RAW_SCENARIOS);
  session_fn session = session_for(opt.scenario);
  // All acceptors are bound before any thread starts, so that a bind error
  // ends the process with a message.
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (int i = 0; i < opt.workers; ++i) {
    auto& ctx = *contexts.emplace_back(std::make_unique<asio::io_context>(1));
    asio::spawn(
        ctx,
        [acceptor = sb::make_acceptor(ctx, opt.endpoint, true), session](asio::yield_context yield) mutable {
          accept_loop(acceptor, session, yield);
        },
        asio::detached);
  }

  std::vector<std::jthread> threads;
  for (auto& ctx : contexts) threads.emplace_back([&ctx] { ctx->run(); });
}

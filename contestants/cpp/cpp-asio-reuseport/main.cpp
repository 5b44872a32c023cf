// Boost.Asio, per-core: `workers` threads, each running its own io_context
// with its own SO_REUSEPORT acceptor on the same port; the kernel spreads new
// connections over the acceptors and a connection stays on its thread, so no
// strand is ever needed.
#include "../common/sessions.hpp"

#include <memory>
#include <thread>
#include <vector>

namespace asio = boost::asio;

int main(int argc, char** argv) {
  auto opt = sb::parse_raw_args(argc, argv);
  auto session = sb::session_for(opt.scenario);
  // All acceptors are bound before any thread starts, so that a bind error
  // ends the process with a message.
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (int i = 0; i < opt.workers; ++i) {
    auto& ctx = *contexts.emplace_back(std::make_unique<asio::io_context>(1));
    asio::co_spawn(ctx, sb::listen(sb::make_acceptor(ctx, opt.endpoint, true), session, false), asio::detached);
  }

  std::vector<std::jthread> threads;
  for (auto& ctx : contexts) threads.emplace_back([&ctx] { ctx->run(); });
}

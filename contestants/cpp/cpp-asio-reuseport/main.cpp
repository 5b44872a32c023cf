// Boost.Asio, per-core: `workers` threads, each running its own io_context
// with its own SO_REUSEPORT acceptor on the same port; the kernel spreads new
// connections over the acceptors and a connection stays on its thread.
#include "../common/sessions.hpp"

#include <memory>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  auto opt = sb::parse_args(argc, argv);
  // All acceptors are bound before any thread starts so that a bind error
  // ends the process with a message instead of std::terminate in a thread.
  std::vector<std::unique_ptr<sb::asio::io_context>> contexts;
  for (int i = 0; i < opt.workers; ++i) {
    auto& ctx = *contexts.emplace_back(std::make_unique<sb::asio::io_context>(1));
    auto acceptor = sb::make_acceptor(ctx, opt.endpoint, true);
    sb::asio::co_spawn(ctx, sb::listen(std::move(acceptor), opt.session, false), sb::asio::detached);
  }

  std::vector<std::jthread> threads;
  for (auto& ctx : contexts) threads.emplace_back([&ctx] { ctx->run(); });
}

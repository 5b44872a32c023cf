// Boost.Asio, work-sharing: one io_context (one epoll instance and one shared
// handler queue) run by `workers` threads, one acceptor, a coroutine per
// connection that may resume on any of the threads.
#include "../common/sessions.hpp"

#include <thread>
#include <vector>

int main(int argc, char** argv) {
  auto opt = sb::parse_args(argc, argv);
  sb::asio::io_context ctx(opt.workers);
  auto acceptor = sb::make_acceptor(ctx, opt.endpoint, false);
  bool strand = opt.scenario == "hello-timeout";
  sb::asio::co_spawn(ctx, sb::listen(std::move(acceptor), opt.session, strand), sb::asio::detached);

  std::vector<std::jthread> threads;
  for (int i = 1; i < opt.workers; ++i) threads.emplace_back([&ctx] { ctx.run(); });
  ctx.run();
}

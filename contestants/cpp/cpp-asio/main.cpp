// Boost.Asio, work-sharing: one io_context (one epoll instance and one shared
// handler queue) run by `workers` threads, one acceptor, a coroutine per
// connection that may resume on any of the threads.
#include "../common/sessions.hpp"

#include <thread>
#include <vector>

namespace asio = boost::asio;

int main(int argc, char** argv) {
  auto opt = sb::parse_raw_args(argc, argv);
  auto session = sb::session_for(opt.scenario);
  asio::io_context ctx(opt.workers);
  // hello-timeout waits on a read or write and its timer at once: their
  // completions must take turns.
  bool strand_per_connection = session == sb::hello_timeout;
  asio::co_spawn(ctx, sb::listen(sb::make_acceptor(ctx, opt.endpoint, false), session, strand_per_connection),
                 asio::detached);

  std::vector<std::jthread> threads;
  for (int i = 1; i < opt.workers; ++i) threads.emplace_back([&ctx] { ctx.run(); });
  ctx.run();
}

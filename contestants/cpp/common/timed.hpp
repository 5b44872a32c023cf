// hello-timeout's per-operation timer, shared by the C++20 coroutines and the
// stackful ones: a steady_timer is armed when a read or write starts and
// both run as one Asio parallel group, the first to complete cancelling the
// other. A read or write that completes cancels its timer; a timer that
// expires cancels the operation.
#pragma once

#include "scenarios.hpp"

#include <boost/asio.hpp>
#include <boost/asio/experimental/parallel_group.hpp>

namespace sb {

// `op` is a deferred read or write (completing with error_code, bytes);
// `token` is how the caller waits: use_awaitable, a yield_context. The result
// is (completion order, the operation's error, its bytes, the timer's error).
template <typename Op, typename Token>
auto timed(Op op, boost::asio::steady_timer& timer, Token&& token) {
  namespace experimental = boost::asio::experimental;
  timer.expires_after(timeout());
  return experimental::make_parallel_group(std::move(op), timer.async_wait(boost::asio::deferred))
      .async_wait(experimental::wait_for_one(), std::forward<Token>(token));
}

// Whether a timed operation completed, without error, before its timer.
template <typename Result>
bool completed_in_time(const Result& result) {
  auto& [order, ec, bytes, timer_ec] = result;
  return order[0] == 0 && !ec;
}

}  // namespace sb

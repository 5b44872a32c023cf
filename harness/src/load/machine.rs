//! The state machine that moves a connection: connecting -> open -> (response complete -> next request)
//! ..., reopened after any error, done when its `-n` budget is spent. Errors are counted by class, never
//! thrown.

use std::io;

use super::backend::{Backend, Event};
use super::conn::State;
use super::engine::Engine;
use super::sys::now_ns;

const RECONNECT_BACKOFF_NS: u64 = 10_000_000;

impl Engine<'_> {
    /// The whole state machine: what each event means in each state.
    #[inline(always)]
    pub fn on_event<B: Backend>(&mut self, io: &mut B, i: usize, event: Event, now: u64) {
        match (self.conns[i].state, event) {
            (State::Connecting, Event::Connected) => {
                if self.recording {
                    self.r.connections_opened += 1;
                }
                self.set_open(io, i);
                self.start_traffic(io, i, now);
            }
            (State::Connecting, Event::ConnectFailed) => self.connect_failed(io, i, now),
            (State::Open, Event::Received(bytes)) => self.on_bytes(io, i, bytes, now),
            (State::Open, Event::Closed) => self.on_closed(io, i, now),
            (State::Open, Event::ReadFailed) => {
                let outstanding = self.conns[i].inflight.len() as u64;
                self.r.errors.read += outstanding.max(1);
                self.count_server_end(outstanding, false);
                self.reconnect(io, i, now);
            }
            (State::Open, Event::Sent(n)) => {
                self.on_written(i, n);
                self.resume_sending(io, i);
            }
            (State::Open, Event::WriteFailed) => self.write_failed(io, i, now),
            (State::Open, Event::Writable) => self.resume_sending(io, i),
            (State::Open, Event::Hangup) => self.write_out(io, i),
            // Reported for a socket after the connection left the state it was reported for.
            _ => {}
        }
    }

    pub fn start_connect<B: Backend>(&mut self, io: &mut B, i: usize) -> io::Result<()> {
        let c = &mut self.conns[i];
        c.since_ns = now_ns();
        io.connect(i, c.generation)?;
        c.state = State::Connecting;
        Ok(())
    }

    pub fn set_open<B: Backend>(&mut self, io: &mut B, i: usize) {
        self.conns[i].state = State::Open;
        io.opened(i, self.is_stream());
    }

    /// The connection is open and the clock runs: start receiving and start its traffic.
    pub fn start_traffic<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        io.start_receiving(i);
        self.on_open(io, i, now);
    }

    /// Closes the socket and opens a new one (or finishes the connection when its budget is spent). With a
    /// connection per request the new one waits for the slot's next request to be due.
    pub fn reconnect<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        self.drop_socket(io, i);
        if self.budget.limit().is_some() && !self.has_budget(i) {
            self.finish(io, i);
            return;
        }
        if self.recording {
            self.r.reconnects += 1;
        }
        if self.per_request {
            self.connect_when_due(io, i, now, false);
        } else {
            self.connect_again(io, i, now);
        }
    }

    /// Closes the socket and forgets what was in flight on it: the connection waits, without a socket,
    /// for a new one.
    pub fn drop_socket<B: Backend>(&mut self, io: &mut B, i: usize) {
        io.close(i);
        let c = &mut self.conns[i];
        c.generation = c.generation.wrapping_add(1);
        c.parser.reset();
        c.inflight.clear();
        // A send still in flight keeps the backend holding `out`, so it is not rendered into until it completes.
        c.out.clear();
        c.out_off = 0;
        c.queued = 0;
        c.pingpong_received_bytes = 0;
        c.stream_written_bytes = 0;
        c.timer_at = 0;
        c.state = State::Backoff;
    }

    pub fn connect_again<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        if self.start_connect(io, i).is_err() {
            self.connect_failed(io, i, now);
        }
    }

    /// A connect failed: count it, spend one unit of the `-n` budget (so a dead server cannot keep
    /// the run going), and retry after a pause.
    fn connect_failed<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        self.r.errors.connect += 1;
        io.close(i);
        let c = &mut self.conns[i];
        c.generation = c.generation.wrapping_add(1);
        c.state = State::Backoff;
        if let Some(limit) = self.budget.limit() {
            c.spent += 1;
            if c.spent >= limit {
                self.finish(io, i);
                return;
            }
        }
        let c = &self.conns[i];
        self.timers.push(std::cmp::Reverse((now + RECONNECT_BACKOFF_NS, i as u32, c.generation)));
    }

    /// The connection has spent its `-n` budget. Its socket is closed so that a server closing idle
    /// connections cannot wake this thread again.
    pub fn finish<B: Backend>(&mut self, io: &mut B, i: usize) {
        io.close(i);
        self.conns[i].state = State::Done;
        self.done += 1;
    }

    pub fn write_failed<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        let outstanding = self.conns[i].inflight.len() as u64;
        self.r.errors.write += outstanding.max(1);
        self.count_server_end(outstanding, false);
        self.reconnect(io, i, now);
    }

    /// How the server ended a keep-alive connection with `outstanding` requests unanswered, by a close
    /// (`closed`: the end of the stream, after `Connection: close` or not) or a reset. Requests lost lose the
    /// keep-alive with them (`keepalive_lost`), however it ended; a close with none is the server's choice
    /// (`server_closes`: a keep-alive limit, an idle timeout) and no error; a reset with none is an error
    /// alone. The requests lost are errors of their class besides, as wrk counts them. With a connection
    /// per request the client ends each connection itself, and none of this is counted.
    pub fn count_server_end(&mut self, outstanding: u64, closed: bool) {
        if !self.recording || self.per_request {
            return;
        }
        if outstanding > 0 {
            self.r.keepalive_lost += 1;
        } else if closed {
            self.r.server_closes += 1;
        }
    }

    /// A connection whose oldest request has been outstanding longer than the timeout is reopened, and each
    /// of its outstanding requests is a `timeout` error; so is a connect that hangs.
    pub fn scan_timeouts<B: Backend>(&mut self, io: &mut B, now: u64, timeout_ns: u64) {
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            let stuck = match c.state {
                State::Open => c.inflight.front().is_some_and(|s| now.saturating_sub(s.sent_ns) > timeout_ns),
                State::Connecting => now.saturating_sub(c.since_ns) > timeout_ns,
                _ => false,
            };
            if stuck {
                self.r.errors.timeout += c.inflight.len().max(1) as u64;
                // A request given up on is not dropped from the latency record: it waited at least until
                // now (the oldest, at least the timeout).
                if self.recording {
                    for s in &c.inflight {
                        self.r.record_latency(now, s.intended_ns, s.sent_ns);
                    }
                }
                self.reconnect(io, i, now);
            }
        }
    }
}

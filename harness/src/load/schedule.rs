//! The workload schedules: when a connection sends its next request. Throughput sends one per
//! response; latency waits the think time first; rate follows a fixed per-connection timetable
//! (wrk2's model), sending late requests at once and never dropping one. All within the `-n` budget.

use std::cmp::Reverse;

use super::backend::Backend;
use super::config::Mode;
use super::conn::{Budget, State};
use super::engine::Engine;

impl Engine<'_> {
    #[inline]
    pub fn has_budget(&self, i: usize) -> bool {
        self.budget.limit().is_none_or(|r| self.conns[i].spent < r)
    }

    #[inline]
    fn budget_left(&self, i: usize) -> usize {
        match self.budget.limit() {
            Some(r) => r.saturating_sub(self.conns[i].spent).min(usize::MAX as u64) as usize,
            None => usize::MAX,
        }
    }

    /// A connection has just opened (at the start, or after a reconnect): start its traffic.
    pub fn on_open<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        match (self.is_stream(), &self.shared.config.mode) {
            (true, _) => self.resume_sending(io, i),
            (false, Mode::Rate { .. }) => self.send_due(io, i, now),
            (false, _) => {
                let n = self.pipeline.min(self.budget_left(i));
                self.send(io, i, n, now, now);
            }
        }
        self.check_done(io, i);
    }

    /// `completed` responses arrived on connection `i`: send what the mode says comes next (with a
    /// connection per request, on a new connection).
    #[inline]
    pub fn after_responses<B: Backend>(&mut self, io: &mut B, i: usize, completed: usize, now: u64) {
        if completed > 0 && self.per_request {
            self.next_connection(io, i, now);
            return;
        }
        if completed > 0 {
            match self.shared.config.mode {
                Mode::Throughput => {
                    let n = completed.min(self.budget_left(i));
                    self.send(io, i, n, now, now);
                }
                Mode::Latency { think_time } => {
                    let at = now + think_time.as_nanos() as u64;
                    let generation = self.conns[i].generation;
                    for _ in 0..completed.min(self.budget_left(i)) {
                        self.timers.push(Reverse((at, i as u32, generation)));
                    }
                }
                Mode::Rate { .. } => self.send_due(io, i, now),
            }
        }
        self.check_done(io, i);
    }

    /// Connection per request: the exchange is complete, so the client closes first, at once (whether or
    /// not the server is closing too), and the slot connects again when its next request is due.
    fn next_connection<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        self.drop_socket(io, i);
        if !self.has_budget(i) {
            self.finish(io, i);
            return;
        }
        self.connect_when_due(io, i, now, true);
    }

    /// Connection per request: connects slot `i` (which has no socket) now, or arms a timer for when its
    /// next request is due: after the think time (when `answered`, that is after a response), at the rate
    /// schedule's next time. Its latency starts with the connect.
    pub fn connect_when_due<B: Backend>(&mut self, io: &mut B, i: usize, now: u64, answered: bool) {
        let at = match self.shared.config.mode {
            Mode::Throughput => now,
            Mode::Latency { think_time } if answered => now + think_time.as_nanos() as u64,
            Mode::Latency { .. } => now,
            Mode::Rate { .. } => self.conns[i].next_intended_ns,
        };
        if at <= now {
            self.connect_again(io, i, now);
        } else {
            self.timers.push(Reverse((at, i as u32, self.conns[i].generation)));
        }
    }

    /// Rate mode: sends every request whose intended time has come (late ones included, never
    /// dropped), then arms a timer for the next one.
    fn send_due<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        while self.conns[i].inflight.len() < self.pipeline && self.has_budget(i) && self.conns[i].next_intended_ns <= now {
            let intended = self.conns[i].next_intended_ns;
            self.conns[i].next_intended_ns += self.interval_ns;
            self.send(io, i, 1, intended, now);
            if self.conns[i].state != State::Open {
                return;
            }
        }
        let budget = self.has_budget(i);
        let c = &mut self.conns[i];
        if c.inflight.len() < self.pipeline && budget && c.timer_at != c.next_intended_ns {
            c.timer_at = c.next_intended_ns;
            self.timers.push(Reverse((c.next_intended_ns, i as u32, c.generation)));
        }
    }

    #[inline]
    fn check_done<B: Backend>(&mut self, io: &mut B, i: usize) {
        let c = &self.conns[i];
        if let Budget::Requests(r) = self.budget {
            if c.state == State::Open && c.spent >= r && c.inflight.is_empty() {
                self.finish(io, i);
            }
        }
    }

    /// Timers due by `now`: think times and rate schedules send, backoffs reconnect. A timer of an
    /// earlier socket of the connection is ignored.
    pub fn fire_timers<B: Backend>(&mut self, io: &mut B, now: u64) {
        while let Some(&Reverse((at, i, generation))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let i = i as usize;
            if self.conns[i].generation != generation {
                continue;
            }
            match self.conns[i].state {
                State::Backoff => self.connect_again(io, i, now),
                State::Open => match self.shared.config.mode {
                    Mode::Rate { .. } => {
                        self.conns[i].timer_at = 0;
                        self.send_due(io, i, now);
                    }
                    _ => {
                        let n = 1.min(self.budget_left(i));
                        self.send(io, i, n, now, now);
                    }
                },
                _ => {}
            }
        }
    }
}

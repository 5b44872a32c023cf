//! The receiving side of a connection: bytes framed into HTTP responses or echo exchanges, checked,
//! timed and counted; a close by the server; and what a broken frame costs.

use super::backend::Backend;
use super::config::{EchoKind, Workload};
use super::conn::State;
use super::http::Complete;
use super::engine::Engine;

impl Engine<'_> {
    /// Bytes received on connection `i`, from either backend.
    pub fn on_bytes<B: Backend>(&mut self, io: &mut B, i: usize, data: &[u8], now: u64) {
        let n = data.len();
        if self.recording {
            self.r.bytes_read += n as u64;
        }
        match self.shared.config.workload {
            Workload::Http { .. } => self.on_http_bytes(io, i, data, now),
            Workload::Echo { kind: EchoKind::PingPong, size_bytes } => self.on_pingpong_bytes(io, i, data, size_bytes as u64, now),
            Workload::Echo { kind: EchoKind::Stream, .. } => {
                if self.recording {
                    self.r.bump_timeline(now, self.measure_start_ns, n as u64);
                }
                let c = &mut self.conns[i];
                if let Some(limit_bytes) = self.budget.limit() {
                    c.spent += n as u64;
                    if c.spent >= limit_bytes && c.state != State::Done {
                        self.r.last_response_ns = now;
                        self.finish(io, i);
                    }
                }
            }
        }
    }

    /// The server closed. With nothing outstanding that is an ordinary end of keep-alive.
    pub fn on_closed<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        let c = &self.conns[i];
        let lost = c.inflight.len() as u64 + u64::from(c.inflight.is_empty() && !c.parser.idle());
        self.r.errors.read += lost;
        self.reconnect(io, i, now);
    }

    fn on_http_bytes<B: Backend>(&mut self, io: &mut B, i: usize, data: &[u8], now: u64) {
        let expect = self.shared.expect.as_deref();
        let recording = self.recording;
        let measure_start_ns = self.measure_start_ns;
        let c = &mut self.conns[i];
        let r = &mut self.r;
        let mut completed = 0usize;
        let mut close = false;
        let mut orphan = false;
        let fed = c.parser.feed(data, expect, |done: Complete| {
            let Some(sent) = c.inflight.pop_front() else {
                orphan = true; // a response to no request
                return;
            };
            completed += 1;
            close |= done.close;
            r.last_response_ns = now;
            if r.response_bytes == 0 {
                r.response_bytes = done.bytes;
            }
            if recording {
                r.requests += 1;
                r.status.count(done.status);
                if done.status / 100 != 2 {
                    r.errors.status += 1;
                }
                if done.mismatch {
                    r.errors.mismatch += 1;
                }
                r.record_latency(now, sent.intended_ns, sent.sent_ns);
                r.bump_timeline(now, measure_start_ns, 1);
            }
        });
        if fed.is_err() || orphan {
            self.r.errors.framing += self.conns[i].inflight.len().max(1) as u64;
            self.reconnect(io, i, now);
            return;
        }
        if close {
            self.r.errors.read += self.conns[i].inflight.len() as u64;
            self.reconnect(io, i, now);
            return;
        }
        self.after_responses(io, i, completed, now);
    }

    fn on_pingpong_bytes<B: Backend>(&mut self, io: &mut B, i: usize, got: &[u8], size_bytes: u64, now: u64) {
        let n = got.len();
        let c = &mut self.conns[i];
        let at = c.pingpong_received_bytes as usize;
        if at + n > size_bytes as usize || c.inflight.is_empty() {
            self.r.errors.framing += 1; // more bytes than were sent
            self.reconnect(io, i, now);
            return;
        }
        let wrong = got != &self.pattern[at..at + n];
        c.pingpong_received_bytes += n as u64;
        if wrong && self.recording {
            self.r.errors.mismatch += 1;
        }
        if c.pingpong_received_bytes < size_bytes {
            return;
        }
        c.pingpong_received_bytes = 0;
        let sent = c.inflight.pop_front().expect("checked above");
        self.r.last_response_ns = now;
        if self.r.response_bytes == 0 {
            self.r.response_bytes = size_bytes;
        }
        if self.recording {
            self.r.requests += 1;
            self.r.record_latency(now, sent.intended_ns, sent.sent_ns);
            self.r.bump_timeline(now, self.measure_start_ns, 1);
        }
        self.after_responses(io, i, 1, now);
    }
}

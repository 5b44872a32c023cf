//! The receiving side of a connection: bytes framed into HTTP responses or echo exchanges, checked,
//! timed and counted; a close by the server; and what a broken frame costs.

use std::sync::atomic::Ordering;

use super::backend::Backend;
use super::config::{EchoKind, Workload};
use super::conn::State;
use super::http::{Complete, Expect};
use crate::wire::parse_decimal;
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
                    self.conns[i].window_units += n as u64;
                }
                self.mark_served(i, now);
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

    /// The server closed without `Connection: close`. With nothing outstanding that is no error (a clean
    /// close, as at an idle timeout); with requests outstanding they are lost, each a `read` error.
    pub fn on_closed<B: Backend>(&mut self, io: &mut B, i: usize, now: u64) {
        let c = &self.conns[i];
        let lost = c.inflight.len() as u64 + u64::from(c.inflight.is_empty() && !c.parser.idle());
        self.r.errors.read += lost;
        self.count_server_end(lost, true);
        self.reconnect(io, i, now);
    }

    fn on_http_bytes<B: Backend>(&mut self, io: &mut B, i: usize, data: &[u8], now: u64) {
        let expect = &self.shared.expect;
        let paths = self.shared.paths.as_ref();
        let counting = paths.is_some_and(|p| p.counts());
        let recording = self.recording;
        let c = &mut self.conns[i];
        let r = &mut self.r;
        let mut completed = 0usize;
        let mut close = false;
        let mut orphan = false;
        let fed = c.parser.feed(data, expect, |done: Complete, body: &[u8]| {
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
            // `counter`'s values are kept from every answer, in the window or not: a lost update is one anywhere.
            let mut repeat = false;
            let decimal_ok = *expect != Expect::Decimal
                || match (parse_decimal(body), paths) {
                    (Some(value), Some(p)) if counting => {
                        repeat = !r.counter.record(p.values[sent.variant as usize] as usize, value);
                        !repeat
                    }
                    (Some(value), Some(p)) => value == p.values[sent.variant as usize],
                    _ => false,
                };
            if recording {
                r.status.count(done.status);
                // Only a valid response is a request served: it alone counts and is timed.
                if done.status / 100 != 2 {
                    r.errors.status += 1;
                } else if done.mismatch || !decimal_ok || (*expect == Expect::JsonSequence && !json_echoes(body, sent.sequence)) {
                    r.errors.mismatch += 1;
                    r.repeats_counted += u64::from(repeat && !done.mismatch);
                } else {
                    r.requests += 1;
                    c.window_units += 1;
                    r.record_latency(now, sent.intended_ns, sent.sent_ns);
                }
            }
        });
        if completed > 0 {
            self.mark_served(i, now);
        }
        if fed.is_err() || orphan {
            self.r.errors.framing += self.conns[i].inflight.len().max(1) as u64;
            self.reconnect(io, i, now);
            return;
        }
        if close && !self.per_request {
            // `Connection: close`: whatever is still outstanding is lost; with nothing outstanding it is a
            // clean close by the server. (With a connection per request the client asked for it, and
            // closes after this answer itself.)
            let outstanding = self.conns[i].inflight.len() as u64;
            self.r.errors.read += outstanding;
            self.count_server_end(outstanding, true);
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
            self.conns[i].window_units += 1;
            self.r.record_latency(now, sent.intended_ns, sent.sent_ns);
        }
        self.mark_served(i, now);
        self.after_responses(io, i, 1, now);
    }
}

impl Engine<'_> {
    /// Connection `i` completed an exchange: the first time, one fewer connection is waiting to be served,
    /// and the ramp made progress at `now`.
    #[inline]
    fn mark_served(&mut self, i: usize, now: u64) {
        if !self.conns[i].served {
            self.conns[i].served = true;
            self.shared.unserved.fetch_sub(1, Ordering::SeqCst);
            self.shared.last_served_ns.fetch_max(now, Ordering::SeqCst);
        }
    }
}

/// One `json` response in this many (by sequence number) is parsed in full; the others are held to the
/// shape of a JSON object. Parsing every one would add about 0.15 µs to a client that spends 4-8 µs per
/// response.
pub const JSON_PARSE_EVERY: u64 = 16;

/// Whether a `json` body echoes `sequence`: every body must be a `{...}` object, and every
/// JSON_PARSE_EVERY-th is parsed and must hold `"sequence": sequence`.
fn json_echoes(body: &[u8], sequence: u64) -> bool {
    let trimmed = body.trim_ascii();
    if !(trimmed.first() == Some(&b'{') && trimmed.last() == Some(&b'}')) {
        return false;
    }
    if !sequence.is_multiple_of(JSON_PARSE_EVERY) {
        return true;
    }
    serde_json::from_slice::<serde_json::Value>(trimmed).ok().and_then(|v| v.get("sequence")?.as_u64()) == Some(sequence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_body_must_echo_its_sequence() {
        assert!(json_echoes(b"{\"sequence\":32}", 32));
        assert!(json_echoes(b" { \"sequence\" : 0 }\n", 0));
        assert!(!json_echoes(b"{\"sequence\":31}", 32), "a sampled body is parsed");
        assert!(!json_echoes(b"{\"sequence\":\"32\"}", 32));
        assert!(!json_echoes(b"{\"message\":\"Hello\"}", 16));
        assert!(json_echoes(b"{\"sequence\":31}", 33), "an unsampled body is held to its shape only");
        assert!(!json_echoes(b"sequence=33", 33));
        assert!(!json_echoes(b"", 33));
    }
}

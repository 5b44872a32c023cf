//! The sending side of a connection: requests counted as outstanding, rendered from the template
//! into the connection's buffer, and handed to the backend; and the echo stream's endless writes.

use super::backend::{Backend, Write};
use super::conn::{Sent, State};
use super::config::Workload;
use super::sys::now_ns;
use super::engine::Engine;

impl Engine<'_> {
    /// Sends `n` requests: counts them as outstanding from `now`, then renders and writes them (once
    /// the backend no longer holds the connection's earlier bytes).
    #[inline]
    pub fn send<B: Backend>(&mut self, io: &mut B, i: usize, n: usize, intended_ns: u64, now: u64) {
        if n == 0 || self.conns[i].state != State::Open {
            return;
        }
        let c = &mut self.conns[i];
        // With a connection per request the request's latency runs from the start of its connect.
        let (intended_ns, sent_ns) = if self.per_request { (intended_ns.min(c.since_ns), c.since_ns) } else { (intended_ns, now) };
        let paths = self.shared.paths.as_ref();
        self.r.sent += n as u64;
        for k in 0..n {
            c.spent += 1;
            // Rendered in this order after the ones already queued (render_queued), numbered from `sequence`.
            let sequence = c.sequence + (c.queued + k) as u64;
            let variant = paths.map_or(0, |p| p.choose(c.heavy, &mut c.rng));
            c.inflight.push_back(Sent { intended_ns, sent_ns, sequence, variant });
        }
        c.queued += n;
        self.r.first_send_ns = self.r.first_send_ns.min(sent_ns);
        if io.holds_bytes(i) {
            return;
        }
        self.render_queued(i);
        if io.may_write(i) {
            self.write_out(io, i);
        }
    }

    /// The socket may take bytes again (or a send completed): keep the connection's traffic going.
    #[inline(always)]
    pub fn resume_sending<B: Backend>(&mut self, io: &mut B, i: usize) {
        if self.conns[i].state != State::Open {
            return;
        }
        if self.is_stream() {
            self.stream_write(io, i);
        } else if !io.holds_bytes(i) {
            self.render_queued(i);
            self.write_out(io, i);
        }
    }

    /// Renders the queued requests after the bytes not yet written.
    #[inline(always)]
    fn render_queued(&mut self, i: usize) {
        let c = &mut self.conns[i];
        if c.out_off > 0 {
            c.out.drain(..c.out_off);
            c.out_off = 0;
        }
        // The queued requests are the last ones counted as in flight.
        let first = c.inflight.len() - c.queued.min(c.inflight.len());
        for k in 0..c.queued {
            match (&self.shared.config.workload, &self.shared.paths) {
                (Workload::Http { .. }, Some(p)) => {
                    let variant = c.inflight.get(first + k).map_or(0, |s| s.variant);
                    p.templates[variant as usize].render(&mut c.out, c.sequence)
                }
                _ => c.out.extend_from_slice(&self.pattern),
            }
            c.sequence += 1;
        }
        c.queued = 0;
    }

    /// Offers the connection's unwritten bytes until all are written or the backend takes no more.
    #[inline(always)]
    pub fn write_out<B: Backend>(&mut self, io: &mut B, i: usize) {
        loop {
            let c = &self.conns[i];
            if c.out_off == c.out.len() {
                let c = &mut self.conns[i];
                c.out.clear();
                c.out_off = 0;
                io.drained(i);
                return;
            }
            // SAFETY: `out` is not changed while the backend holds it (`holds_bytes`), and lives as long as the
            // worker.
            match unsafe { io.write(i, &c.out[c.out_off..]) } {
                Write::Accepted(n) => self.on_written(i, n),
                Write::Pending => return,
                Write::Failed => {
                    self.write_failed(io, i, now_ns());
                    return;
                }
            }
        }
    }

    /// Echo stream: keep the send side busy until the socket buffer is full (or the budget is spent).
    #[inline]
    fn stream_write<B: Backend>(&mut self, io: &mut B, i: usize) {
        loop {
            let c = &self.conns[i];
            if c.state != State::Open {
                return;
            }
            let room_bytes = match self.budget.limit() {
                Some(cap) => cap.saturating_sub(c.stream_written_bytes).min(self.pattern.len() as u64) as usize,
                None => self.pattern.len(),
            };
            if room_bytes == 0 {
                io.drained(i);
                return;
            }
            // SAFETY: the pattern is never changed and lives as long as the worker.
            match unsafe { io.write(i, &self.pattern[..room_bytes]) } {
                Write::Accepted(n) => self.on_written(i, n),
                Write::Pending => return,
                Write::Failed => {
                    self.write_failed(io, i, now_ns());
                    return;
                }
            }
        }
    }

    /// The kernel took `n` bytes of the connection's.
    #[inline(always)]
    pub fn on_written(&mut self, i: usize, n: usize) {
        if self.recording {
            self.r.bytes_written += n as u64;
        }
        let stream = self.is_stream();
        let c = &mut self.conns[i];
        if stream {
            c.stream_written_bytes += n as u64;
            self.r.first_send_ns = self.r.first_send_ns.min(self.measure_start_ns);
        } else {
            c.out_off += n;
            // Emptied here, so the next render has nothing to move.
            if c.out_off == c.out.len() {
                c.out.clear();
                c.out_off = 0;
            }
        }
    }
}

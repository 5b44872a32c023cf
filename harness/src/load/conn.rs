//! One connection's state, as data: where it is in its life, what it has in flight and what it has spent.
//! machine.rs moves it from state to state.

use std::collections::VecDeque;

use super::http::ResponseParser;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum State {
    Connecting,
    Open,
    /// Without a socket, waiting for a timer to connect: after a failed connect, or with a connection per
    /// request until the slot's next request is due (think time, rate schedule).
    Backoff,
    /// Sent its last request and received its last response (`-n`).
    Done,
}

/// The `-n` budget of every connection, in the unit its workload counts.
#[derive(Clone, Copy)]
pub(super) enum Budget {
    Unlimited,
    /// Requests sent or lost to a failed connect.
    Requests(u64),
    /// Echo stream: bytes received (a failed connect spends one).
    StreamBytes(u64),
}

impl Budget {
    #[inline]
    pub fn limit(self) -> Option<u64> {
        match self {
            Budget::Unlimited => None,
            Budget::Requests(n) | Budget::StreamBytes(n) => Some(n),
        }
    }
}

#[derive(Clone, Copy)]
pub(super) struct Sent {
    pub intended_ns: u64,
    pub sent_ns: u64,
    /// The `json` scenario's sequence number this request carries.
    pub sequence: u64,
    /// Which of the mix's paths it asked (`mix::Paths`).
    pub variant: u32,
}

/// One connection, or with a connection per request one slot: the sockets it opens one after another
/// share its counts (`spent`, `served`, `window_units`), so fairness and the ramp are judged per slot.
pub(super) struct Conn {
    pub state: State,
    /// Bumped whenever the socket is replaced, so timers and completions of an old socket are ignored.
    pub generation: u32,
    /// When the current connect started (with a connection per request, where its request's latency starts).
    pub since_ns: u64,
    /// Rendered request bytes not yet accepted by the kernel (from `out_off`).
    pub out: Vec<u8>,
    pub out_off: usize,
    /// Requests counted as sent but not yet rendered into `out` (while the backend holds `out`).
    pub queued: usize,
    /// Requests sent and not yet answered, oldest first.
    pub inflight: VecDeque<Sent>,
    /// What this connection has spent of its `Budget`, in the budget's unit.
    pub spent: u64,
    /// The json scenario's sequence number of the next request rendered.
    pub sequence: u64,
    /// Rate mode: when the next request is due.
    pub next_intended_ns: u64,
    /// Rate mode: the due time a timer is armed for (0: none).
    pub timer_at: u64,
    pub parser: ResponseParser,
    /// Echo ping-pong: bytes of the current exchange received so far.
    pub pingpong_received_bytes: u64,
    /// Echo stream: bytes written on the current socket.
    pub stream_written_bytes: u64,
    /// Its choices of path (`mix::Paths::choose`), from the run's seed.
    pub rng: fastrand::Rng,
    /// One of the mix's heavy connections.
    pub heavy: bool,
    /// Whether the connection has completed an exchange since the run began (the ramp waits for all).
    pub served: bool,
    /// What it received inside the measured window: valid responses, exchanges, or (echo stream) bytes.
    pub window_units: u64,
}

impl Conn {
    pub fn new(out_capacity_bytes: usize, pipeline: usize) -> Conn {
        Conn {
            state: State::Backoff,
            generation: 0,
            since_ns: 0,
            out: Vec::with_capacity(out_capacity_bytes),
            out_off: 0,
            queued: 0,
            inflight: VecDeque::with_capacity(pipeline),
            spent: 0,
            sequence: 0,
            next_intended_ns: 0,
            timer_at: 0,
            parser: ResponseParser::new(),
            pingpong_received_bytes: 0,
            stream_written_bytes: 0,
            rng: fastrand::Rng::with_seed(0),
            heavy: false,
            served: false,
            window_units: 0,
        }
    }
}

//! How a worker moves bytes, behind one small trait: the backends own the sockets and turn what the
//! kernel reports into one `Event` type; what the bytes mean is the connection state machine's business.

pub mod epoll;
pub mod ring;
pub mod uring;

use std::io;

/// What happened on one connection, as the state machine sees it, whichever backend reported it.
#[derive(Debug)]
pub enum Event<'a> {
    /// The connect finished and the connection is open.
    Connected,
    ConnectFailed,
    Received(&'a [u8]),
    /// The peer closed its side (a read returned 0).
    Closed,
    ReadFailed,
    /// A send handed to the kernel earlier completed with this many bytes (io_uring).
    Sent(usize),
    /// A send handed to the kernel earlier failed (io_uring).
    WriteFailed,
    /// More bytes may be handed over: the socket buffer has room again (epoll), or a send of an
    /// earlier socket of the connection completed (io_uring).
    Writable,
    /// An error or hang-up while waiting to write (epoll): the failure belongs to the write.
    Hangup,
}

/// What became of bytes offered to `Backend::write`.
pub enum Write {
    /// Written now; the rest, if any, may be offered again at once.
    Accepted(usize),
    /// Nothing more now: the socket buffer is full (a `Writable` follows), or a send is in flight
    /// (its `Sent` or `WriteFailed` follows).
    Pending,
    Failed,
}

/// One backend per worker thread. Connections are named by their index in the worker; `generation`
/// tells sockets of the same connection apart across reconnects.
pub trait Backend {
    /// Opens a non-blocking socket and starts connecting it; `Connected` or `ConnectFailed` follows.
    fn connect(&mut self, conn: usize, generation: u32) -> io::Result<()>;
    /// The connect finished; `notify_writable` asks for `Writable` whenever the socket buffer has room.
    fn opened(&mut self, conn: usize, notify_writable: bool);
    /// The clock runs: start receiving.
    fn start_receiving(&mut self, conn: usize);
    fn close(&mut self, conn: usize);
    /// Whether the kernel may still read bytes offered earlier, which must therefore not change.
    fn holds_bytes(&self, conn: usize) -> bool;
    /// Whether offering bytes now could write any (not while waiting for `Writable`).
    fn may_write(&self, conn: usize) -> bool;
    /// Offers bytes to the connection's socket.
    ///
    /// # Safety
    /// The bytes must stay valid and unchanged until the connection's next `Sent`, `WriteFailed` or
    /// `Writable` (a backend may hand their address to the kernel).
    unsafe fn write(&mut self, conn: usize, bytes: &[u8]) -> Write;
    /// Everything offered has been written: stop asking for `Writable`.
    fn drained(&mut self, conn: usize);
    /// Submits what is queued and waits up to `timeout_ns` for the kernel to report; returns how
    /// much it reported (0: the wait timed out).
    fn wait(&mut self, timeout_ns: u64) -> usize;
    /// Before the clock starts: the connects the last `wait` finished, with 0 or the error number.
    /// Everything else it reported is left for later.
    fn finished_connects(&mut self, out: &mut Vec<(usize, i32)>);
    /// Hands what the last `wait` reported to `on_event`, one event at a time.
    fn dispatch(&mut self, on_event: &mut impl FnMut(&mut Self, usize, Event));
    /// System calls this backend has made so far (counted where they are made, not traced).
    fn system_calls(&self) -> u64;
    /// CPU a kernel thread has spent so far doing this backend's work on the worker's behalf (io_uring's
    /// SQPOLL thread), and of it the time it found work, in nanoseconds; None when there is no such thread.
    fn kernel_thread_ns(&self) -> Option<(u64, u64)> {
        None
    }
}

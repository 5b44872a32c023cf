//! The io_uring backend: the ring's completions turned into events. Completions of an earlier
//! socket of a connection (an older generation) only release what they held; at most one send per
//! connection is in flight, across reconnects, so bytes the kernel may still read are never touched.

use std::io;
use std::net::SocketAddr;

use super::ring::{self, Completion, Op, RingSetup, Uring};
use super::{Backend, Event, Write};
use crate::os::socket::SourceSpread;

#[derive(Clone, Copy)]
struct Slot {
    generation: u32,
    /// A send of this connection is in flight.
    send_busy: bool,
}

pub struct UringBackend {
    ring: Box<Uring>,
    slots: Vec<Slot>,
    completions: Vec<Completion>,
    /// Connections whose receive must be armed again after the batch.
    rearm: Vec<(usize, u32)>,
    spread: Option<SourceSpread>,
}

impl UringBackend {
    pub fn new(target: &SocketAddr, setup: &RingSetup, spread: Option<SourceSpread>) -> io::Result<Self> {
        Ok(UringBackend {
            ring: Box::new(Uring::new(target, setup)?),
            slots: vec![Slot { generation: 0, send_busy: false }; setup.conn_count],
            completions: Vec::with_capacity(1024),
            rearm: Vec::new(),
            spread,
        })
    }

    /// Whether a completion belongs to the connection's open socket.
    #[inline(always)]
    fn current(&self, done: &Completion) -> bool {
        self.ring.is_open(done.conn) && ring::same_generation(done.generation, self.slots[done.conn].generation)
    }
}

impl Backend for UringBackend {
    fn connect(&mut self, conn: usize, generation: u32) -> io::Result<()> {
        self.ring.connect(conn, generation, self.spread.as_mut())?;
        self.slots[conn].generation = generation;
        Ok(())
    }

    fn opened(&mut self, _conn: usize, _notify_writable: bool) {}

    fn start_receiving(&mut self, conn: usize) {
        self.ring.recv(conn, self.slots[conn].generation);
    }

    fn close(&mut self, conn: usize) {
        self.ring.close(conn, self.slots[conn].generation);
    }

    #[inline(always)]
    fn holds_bytes(&self, conn: usize) -> bool {
        self.slots[conn].send_busy
    }

    #[inline(always)]
    fn may_write(&self, conn: usize) -> bool {
        !self.slots[conn].send_busy
    }

    #[inline(always)]
    unsafe fn write(&mut self, conn: usize, bytes: &[u8]) -> Write {
        let s = &mut self.slots[conn];
        if !s.send_busy {
            s.send_busy = true;
            // SAFETY: the caller keeps the bytes unchanged until this send's completion (`write`'s contract),
            // and `send_busy` makes it the only send of the connection in flight.
            unsafe { self.ring.send(conn, s.generation, bytes.as_ptr(), bytes.len()) };
        }
        Write::Pending
    }

    #[inline(always)]
    fn drained(&mut self, _conn: usize) {}

    fn wait(&mut self, timeout_ns: u64) -> usize {
        self.ring.wait(timeout_ns, &mut self.completions);
        self.completions.len()
    }

    fn finished_connects(&mut self, out: &mut Vec<(usize, i32)>) {
        // Nothing but connects (and their sockets' fixed-file updates, which report only a failure) is
        // submitted before the clock starts.
        for c in &self.completions {
            if c.op == Op::Connect || c.op == Op::Register {
                out.push((c.conn, -c.result));
            }
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(&mut Self, usize, Event)) {
        let completions = std::mem::take(&mut self.completions);
        for done in &completions {
            let i = done.conn;
            let current = self.current(done);
            match done.op {
                Op::Connect if current => on_event(self, i, if done.result == 0 { Event::Connected } else { Event::ConnectFailed }),
                Op::Connect => {}
                // The socket could not be put into the fixed file table: nothing can be sent or received on it.
                Op::Register if current => on_event(self, i, Event::ConnectFailed),
                Op::Register => {}
                Op::Recv => {
                    if let Some(bid) = done.buffer() {
                        if current && done.result > 0 {
                            // SAFETY: the buffer is the kernel's again only after `give_back` below and the next
                            // publish, and `data` is not kept past `on_event`.
                            let data = unsafe { self.ring.data(bid, done.result as usize) };
                            on_event(self, i, Event::Received(data));
                        }
                        self.ring.give_back(bid);
                    }
                    if !current {
                        continue;
                    }
                    match done.result {
                        0 => on_event(self, i, Event::Closed),
                        r if r == -libc::ENOBUFS => self.rearm.push((i, self.slots[i].generation)),
                        r if r < 0 => on_event(self, i, Event::ReadFailed),
                        _ => {
                            if !done.more() && self.current(done) {
                                self.rearm.push((i, self.slots[i].generation));
                            }
                        }
                    }
                }
                Op::Send => {
                    self.slots[i].send_busy = false;
                    match done.result {
                        // The bytes went to an earlier socket; a newer one may be waiting to send.
                        _ if !current => on_event(self, i, Event::Writable),
                        r if r < 0 => on_event(self, i, Event::WriteFailed),
                        r => on_event(self, i, Event::Sent(r as usize)),
                    }
                }
            }
        }
        self.completions = completions;
        // Hand the receive buffers back and re-arm the receives that ended.
        self.ring.publish();
        for (i, generation) in self.rearm.drain(..) {
            if self.ring.is_open(i) && self.slots[i].generation == generation {
                self.ring.recv(i, generation);
            }
        }
    }

    fn system_calls(&self) -> u64 {
        self.ring.calls
    }

    fn kernel_thread_ns(&self) -> Option<(u64, u64)> {
        self.ring.sq_thread_ns()
    }
}

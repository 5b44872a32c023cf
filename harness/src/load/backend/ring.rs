//! The io_uring ring of one worker thread, set up for a single issuer with
//! deferred task work (completions are processed only when the thread asks for them, so a response
//! arriving while the thread is busy costs no wake-up), a multishot receive per connection reading
//! into a ring of provided buffers, and sends and connects as submissions. Many sends and receives
//! then cost one `io_uring_enter` instead of one system call each.
//!
//! This module only moves bytes; what they mean is the engine's business.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::load::sys::SourceSpread;
use crate::load::SetupError;

/// Receive buffers per thread and their size: 512 x 16 KiB = 8 MiB. A receive that finds none free
/// ends with ENOBUFS and is armed again once buffers have been handed back; nothing is lost.
const BUF_COUNT: u16 = 512;
const BUF_BYTES: usize = 16 * 1024;
const BUF_GROUP: u16 = 0;
const RING_ENTRIES: u32 = 4096;

/// What a completion belongs to, packed into its user data with the connection and its generation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Connect,
    Recv,
    Send,
}

/// One completion, copied out of the completion queue.
#[derive(Clone, Copy, Debug)]
pub struct Completion {
    pub op: Op,
    pub conn: usize,
    pub generation: u32,
    pub result: i32,
    flags: u32,
}

impl Completion {
    /// The provided buffer a receive filled, if any.
    pub fn buffer(&self) -> Option<u16> {
        cqueue::buffer_select(self.flags)
    }
    /// Whether the multishot receive stays armed after this completion.
    pub fn more(&self) -> bool {
        cqueue::more(self.flags)
    }
}

const GEN_BITS: u32 = 30;
const GEN_MASK: u64 = (1 << GEN_BITS) - 1;

fn pack(op: Op, conn: usize, generation: u32) -> u64 {
    let kind = match op {
        Op::Connect => 0u64,
        Op::Recv => 1,
        Op::Send => 2,
    };
    kind << 62 | (u64::from(generation) & GEN_MASK) << 32 | conn as u64
}

fn unpack(data: u64) -> (Op, usize, u32) {
    let op = match data >> 62 {
        0 => Op::Connect,
        1 => Op::Recv,
        _ => Op::Send,
    };
    (op, (data & 0xFFFF_FFFF) as usize, ((data >> 32) & GEN_MASK) as u32)
}

/// Whether a completion's generation is the connection's current one (generations are compared in
/// the bits the user data has room for).
pub fn same_generation(completion: u32, current: u32) -> bool {
    u64::from(completion) == u64::from(current) & GEN_MASK
}

/// Page-aligned memory shared with the kernel: the provided-buffer ring and the buffers.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(len: usize) -> io::Result<Mapping> {
        let ptr = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping { ptr: ptr as *mut u8, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

pub struct Uring {
    // Declared first so that it is dropped first: the kernel lets go of the buffers before they are unmapped.
    ring: IoUring,
    ring_entries: Mapping,
    buffers: Mapping,
    /// Local copy of the provided-buffer ring's tail, published after each batch.
    tail: u16,
    /// The target address, kept in one place for connect submissions to point at.
    addr: Box<(libc::sockaddr_storage, libc::socklen_t)>,
    family: libc::c_int,
    /// System calls made: `io_uring_enter`s, and the sockets made for connects.
    pub calls: u64,
}

impl Uring {
    pub fn new(target: &SocketAddr) -> io::Result<Uring> {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_coop_taskrun()
            .setup_cqsize(RING_ENTRIES * 4)
            .build(RING_ENTRIES)?;
        let ring_entries = Mapping::new(usize::from(BUF_COUNT) * std::mem::size_of::<types::BufRingEntry>())?;
        let buffers = Mapping::new(usize::from(BUF_COUNT) * BUF_BYTES)?;
        unsafe { ring.submitter().register_buf_ring_with_flags(ring_entries.ptr as u64, BUF_COUNT, BUF_GROUP, 0)? };
        let (family, storage, len) = crate::load::sys::sockaddr(target);
        let mut u = Uring { ring, ring_entries, buffers, tail: 0, addr: Box::new((storage, len)), family, calls: 0 };
        for bid in 0..BUF_COUNT {
            u.give_back(bid);
        }
        u.publish();
        Ok(u)
    }

    /// Checks that this kernel has everything the backend uses (a ring with deferred task work, a
    /// provided-buffer ring, multishot receive); the error says what is missing.
    pub fn probe() -> Result<(), SetupError> {
        let u = Uring::new(&SocketAddr::from(([127, 0, 0, 1], 9))).map_err(|e| SetupError(format!("cannot set up an io_uring ring with a provided-buffer ring: {e}")))?;
        let mut p = io_uring::Probe::new();
        u.ring.submitter().register_probe(&mut p).map_err(|e| SetupError(format!("cannot probe io_uring opcodes: {e}")))?;
        for (code, name) in [(opcode::Connect::CODE, "connect"), (opcode::Send::CODE, "send"), (opcode::RecvMulti::CODE, "recv")] {
            if !p.is_supported(code) {
                return Err(SetupError(format!("io_uring has no {name} operation here")));
            }
        }
        Ok(())
    }

    fn entries(&self) -> *mut types::BufRingEntry {
        self.ring_entries.ptr as *mut types::BufRingEntry
    }

    /// Hands buffer `bid` back to the kernel (seen after the next `publish`).
    pub fn give_back(&mut self, bid: u16) {
        let slot = self.tail & (BUF_COUNT - 1);
        unsafe {
            let e = &mut *self.entries().add(usize::from(slot));
            e.set_addr(self.buffers.ptr.add(usize::from(bid) * BUF_BYTES) as u64);
            e.set_len(BUF_BYTES as u32);
            e.set_bid(bid);
        }
        self.tail = self.tail.wrapping_add(1);
    }

    /// Publishes the buffers handed back since the last call.
    pub fn publish(&mut self) {
        let tail = unsafe { types::BufRingEntry::tail(self.entries()) } as *const std::sync::atomic::AtomicU16;
        unsafe { (*tail).store(self.tail, std::sync::atomic::Ordering::Release) };
    }

    /// The first `len` bytes of provided buffer `bid`, as filled by a receive.
    ///
    /// # Safety
    /// The slice is not tied to `self`: it must not be used after the buffer is handed back with
    /// `give_back` (the kernel may then write into it) or after `self` is dropped (it is unmapped).
    pub unsafe fn data<'b>(&self, bid: u16, len: usize) -> &'b [u8] {
        assert!(bid < BUF_COUNT && len <= BUF_BYTES);
        unsafe { std::slice::from_raw_parts(self.buffers.ptr.add(usize::from(bid) * BUF_BYTES), len) }
    }

    fn push(&mut self, entry: squeue::Entry) {
        loop {
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            // The submission queue is full: hand it to the kernel and try again.
            self.calls += 1;
            let _ = self.ring.submit();
        }
    }

    /// A socket from `sys::tcp_socket` and a connect submitted for it.
    pub fn connect(&mut self, conn: usize, generation: u32, spread: Option<&mut SourceSpread>) -> io::Result<RawFd> {
        // socket and TCP_NODELAY; with a spread of source addresses, two more to bind.
        self.calls += if spread.is_some() { 4 } else { 2 };
        let fd = crate::load::sys::tcp_socket(self.family, spread)?;
        let e = opcode::Connect::new(types::Fd(fd), &self.addr.0 as *const _ as *const libc::sockaddr, self.addr.1)
            .build()
            .user_data(pack(Op::Connect, conn, generation));
        self.push(e);
        Ok(fd)
    }

    /// Arms a multishot receive into the provided buffers.
    pub fn recv(&mut self, fd: RawFd, conn: usize, generation: u32) {
        let e = opcode::RecvMulti::new(types::Fd(fd), BUF_GROUP).build().user_data(pack(Op::Recv, conn, generation));
        self.push(e);
    }

    /// Submits a send of `len` bytes at `ptr`.
    ///
    /// # Safety
    /// The bytes must stay valid and unchanged until the send's completion has been seen.
    pub unsafe fn send(&mut self, fd: RawFd, ptr: *const u8, len: usize, conn: usize, generation: u32) {
        let e = opcode::Send::new(types::Fd(fd), ptr, len as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(pack(Op::Send, conn, generation));
        self.push(e);
    }

    /// Submits what is queued and waits up to `timeout_ns` for at least one completion; then copies
    /// every completion there is into `out` (cleared first).
    pub fn wait(&mut self, timeout_ns: u64, out: &mut Vec<Completion>) {
        let ts = types::Timespec::new().sec(timeout_ns / 1_000_000_000).nsec((timeout_ns % 1_000_000_000) as u32);
        let args = types::SubmitArgs::new().timespec(&ts);
        // ETIME (the timeout passed), EINTR, EBUSY (completions to reap first): the queue is read all the same.
        self.calls += 1;
        let _ = self.ring.submitter().submit_with_args(1, &args);
        out.clear();
        for cqe in self.ring.completion() {
            let (op, conn, generation) = unpack(cqe.user_data());
            out.push(Completion { op, conn, generation, result: cqe.result(), flags: cqe.flags() });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_round_trips() {
        for (op, conn, generation) in [(Op::Connect, 0, 0), (Op::Recv, 19_999, 7), (Op::Send, u32::MAX as usize, (1 << GEN_BITS) - 1)] {
            assert_eq!(unpack(pack(op, conn, generation)), (op, conn, generation));
        }
        assert!(same_generation(unpack(pack(Op::Recv, 3, 1 << GEN_BITS | 5)).2, 1 << GEN_BITS | 5));
        assert!(!same_generation(unpack(pack(Op::Recv, 3, 5)).2, 6));
    }
}

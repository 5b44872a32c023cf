//! The io_uring ring of one worker thread, set up for a single issuer with
//! deferred task work (completions are processed only when the thread asks for them, so a response
//! arriving while the thread is busy costs no wake-up), a multishot receive per connection reading
//! into a ring of provided buffers, and sends and connects as submissions. Many sends and receives
//! then cost one `io_uring_enter` instead of one system call each. Each connection's socket sits in
//! the ring's fixed file table at the connection's index, so no operation looks its descriptor up.
//!
//! This module only moves bytes; what they mean is the engine's business.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd as _, RawFd};

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::os::socket::{self, SourceSpread};
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
    /// Putting the connection's socket into the fixed file table (or taking it out) failed; a success
    /// posts nothing.
    Register,
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
        Op::Register => 3,
    };
    kind << 62 | (u64::from(generation) & GEN_MASK) << 32 | conn as u64
}

fn unpack(data: u64) -> (Op, usize, u32) {
    let op = match data >> 62 {
        0 => Op::Connect,
        1 => Op::Recv,
        2 => Op::Send,
        _ => Op::Register,
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
        // SAFETY: a new private anonymous mapping at an address the kernel picks overlaps no memory in use;
        // the result is checked for MAP_FAILED before it is used.
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
        // SAFETY: `ptr` and `len` are those of the mapping `new` made, unmapped here once; the ring that
        // used it is dropped before (`Uring`'s field order) and no slice into it outlives the owner.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// How one worker's ring is set up.
pub struct RingSetup {
    /// The worker's connections: the fixed file table has a slot for each, at its index.
    pub conn_count: usize,
    /// Bytes of each connection's send slot in the registered send buffer; 0: no registered buffer,
    /// sends read the caller's bytes. A send longer than its slot reads the caller's bytes too.
    pub send_slot_bytes: usize,
    /// A CPU for an SQPOLL kernel thread, which then takes the submissions from the queue by itself
    /// (None: the worker hands them over in `io_uring_enter`).
    pub sqpoll_cpu: Option<usize>,
}

/// How long an SQPOLL thread keeps polling an empty submission queue before it sleeps: long enough
/// never to sleep between two batches under load, short enough to stop soon after a run. It polls at
/// the lowest priority, so its worker is not kept waiting meanwhile.
const SQ_IDLE_MS: u32 = 10;

pub struct Uring {
    // Declared first so that it is dropped first: the kernel lets go of the buffers before they are unmapped.
    ring: IoUring,
    ring_entries: Mapping,
    buffers: Mapping,
    /// Local copy of the provided-buffer ring's tail, published after each batch.
    tail: u16,
    /// Each connection's socket (-1: none): what its slot of the fixed file table is updated from.
    fds: Box<[RawFd]>,
    /// The registered send buffer, `send_slot_bytes` per connection (None: not registered).
    send_slots: Option<Mapping>,
    send_slot_bytes: usize,
    sqpoll: bool,
    /// The target address, kept in one place for connect submissions to point at.
    addr: Box<(libc::sockaddr_storage, libc::socklen_t)>,
    family: libc::c_int,
    /// System calls made: `io_uring_enter`s, and the sockets made for connects and closed.
    pub calls: u64,
}

impl Uring {
    pub fn new(target: &SocketAddr, setup: &RingSetup) -> io::Result<Uring> {
        let mut builder = IoUring::builder();
        builder.setup_single_issuer().setup_cqsize(RING_ENTRIES * 4);
        match setup.sqpoll_cpu {
            Some(cpu) => builder.setup_sqpoll(SQ_IDLE_MS).setup_sqpoll_cpu(cpu as u32),
            // Deferred task work needs the worker to be the issuer, which with SQPOLL it is not.
            None => builder.setup_defer_taskrun().setup_coop_taskrun(),
        };
        let ring = builder.build(RING_ENTRIES)?;
        ring.submitter().register_files_sparse(setup.conn_count.max(1) as u32)?;
        let ring_entries = Mapping::new(usize::from(BUF_COUNT) * std::mem::size_of::<types::BufRingEntry>())?;
        let buffers = Mapping::new(usize::from(BUF_COUNT) * BUF_BYTES)?;
        // SAFETY: `ring_entries` is page-aligned memory of BUF_COUNT entries that lives in the same `Uring` as
        // the ring, and is unmapped only after the ring is dropped.
        unsafe { ring.submitter().register_buf_ring_with_flags(ring_entries.ptr as u64, BUF_COUNT, BUF_GROUP, 0)? };
        // Registering pins the pages, which may exceed RLIMIT_MEMLOCK: then sends read the caller's bytes.
        let send_slots = (setup.send_slot_bytes > 0)
            .then(|| Mapping::new(setup.conn_count * setup.send_slot_bytes).ok())
            .flatten()
            .filter(|m| {
                let iov = libc::iovec { iov_base: m.ptr as *mut libc::c_void, iov_len: m.len };
                // SAFETY: the iovec is the whole mapping `m`, which is kept in the `Uring` with the ring
                // and unmapped only after the ring is dropped.
                unsafe { ring.submitter().register_buffers(&[iov]) }.is_ok()
            });
        let (family, storage, len) = socket::sockaddr(target);
        let mut u = Uring {
            ring,
            ring_entries,
            buffers,
            tail: 0,
            fds: vec![-1; setup.conn_count].into_boxed_slice(),
            send_slots,
            send_slot_bytes: setup.send_slot_bytes,
            sqpoll: setup.sqpoll_cpu.is_some(),
            addr: Box::new((storage, len)),
            family,
            calls: 0,
        };
        for bid in 0..BUF_COUNT {
            u.give_back(bid);
        }
        u.publish();
        // The SQPOLL thread shares its worker's CPU. At the default priority a worker woken by a completion
        // waits for the polling thread's time slice to end (a server that answers in 2 ms was measured at
        // 3.9 ms); at the lowest one the worker runs at once, and the thread takes the CPU the worker leaves.
        if let Some(tid) = u.sq_thread_id() {
            // SAFETY: setpriority takes integers only; a thread that is gone is an error, ignored here.
            unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, 19) };
        }
        Ok(u)
    }

    /// Checks that this kernel has everything the backend uses (a ring with deferred task work, a
    /// fixed file table, a provided-buffer ring, multishot receive); the error says what is missing.
    pub fn probe() -> Result<(), SetupError> {
        let setup = RingSetup { conn_count: 1, send_slot_bytes: 0, sqpoll_cpu: None };
        let u = Uring::new(&SocketAddr::from(([127, 0, 0, 1], 9)), &setup)
            .map_err(|e| SetupError(format!("cannot set up an io_uring ring with a fixed file table and a provided-buffer ring: {e}")))?;
        let mut p = io_uring::Probe::new();
        u.ring.submitter().register_probe(&mut p).map_err(|e| SetupError(format!("cannot probe io_uring opcodes: {e}")))?;
        for (code, name) in [
            (opcode::Connect::CODE, "connect"),
            (opcode::Send::CODE, "send"),
            (opcode::RecvMulti::CODE, "recv"),
            (opcode::FilesUpdate::CODE, "files update"),
        ] {
            if !p.is_supported(code) {
                return Err(SetupError(format!("io_uring has no {name} operation here")));
            }
        }
        Ok(())
    }

    /// Checks that the kernel gives this process a ring with an SQPOLL thread pinned to a CPU it may use
    /// (a worker's ring may still be refused its own CPU; that run then fails with the kernel's reason).
    pub fn probe_sqpoll() -> Result<(), SetupError> {
        let cpu = crate::os::cpus::CpuSet::allowed().cpus().first().copied().unwrap_or(0);
        let setup = RingSetup { conn_count: 1, send_slot_bytes: 0, sqpoll_cpu: Some(cpu) };
        Uring::new(&SocketAddr::from(([127, 0, 0, 1], 9)), &setup)
            .map(drop)
            .map_err(|e| SetupError(format!("the kernel refused an io_uring ring with an SQPOLL thread on CPU {cpu}: {e}")))
    }

    /// Whether this kernel writes to a socket from a registered buffer: one byte sent over a socket pair
    /// through the paths the backend uses, once per process.
    pub fn writes_from_registered_buffers() -> bool {
        static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *WORKS.get_or_init(|| {
            let Ok((ours, _peer)) = std::os::unix::net::UnixStream::pair() else { return false };
            let setup = RingSetup { conn_count: 1, send_slot_bytes: 64, sqpoll_cpu: None };
            // The ring is dropped at the end of the closure, before the pair is closed.
            Uring::new(&SocketAddr::from(([127, 0, 0, 1], 9)), &setup).is_ok_and(|mut u| {
                u.fds[0] = ours.as_raw_fd();
                u.update_file(0, 0);
                // SAFETY: the byte is a static, and no other send of connection 0 is in flight.
                unsafe { u.send(0, 0, b"x".as_ptr(), 1) };
                let mut out = Vec::new();
                u.wait(1_000_000_000, &mut out);
                u.send_slots.is_some() && out.iter().any(|c| c.op == Op::Send && c.result == 1)
            })
        })
    }

    fn entries(&self) -> *mut types::BufRingEntry {
        self.ring_entries.ptr as *mut types::BufRingEntry
    }

    /// Hands buffer `bid` back to the kernel (seen after the next `publish`).
    pub fn give_back(&mut self, bid: u16) {
        let slot = self.tail & (BUF_COUNT - 1);
        assert!(bid < BUF_COUNT);
        // SAFETY: `slot` < BUF_COUNT indexes the mapped ring of BUF_COUNT entries, which only this thread
        // writes (the kernel reads entries below the published tail, and this one is past it); the address
        // is that of buffer `bid` < BUF_COUNT inside the `buffers` mapping.
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
        // SAFETY: `entries` points at the mapped ring's first entry, whose tail field `tail` addresses.
        let tail = unsafe { types::BufRingEntry::tail(self.entries()) } as *const std::sync::atomic::AtomicU16;
        // SAFETY: the tail is a u16 in the live mapping, aligned for AtomicU16; the kernel reads it
        // concurrently, which is why it is stored atomically, with release so that the entries written
        // before it are seen first.
        unsafe { (*tail).store(self.tail, std::sync::atomic::Ordering::Release) };
    }

    /// The first `len` bytes of provided buffer `bid`, as filled by a receive.
    ///
    /// # Safety
    /// The slice is not tied to `self`: it must not be used after the buffer is handed back with
    /// `give_back` (the kernel may then write into it) or after `self` is dropped (it is unmapped).
    pub unsafe fn data<'b>(&self, bid: u16, len: usize) -> &'b [u8] {
        assert!(bid < BUF_COUNT && len <= BUF_BYTES);
        // SAFETY: buffer `bid` (checked above) starts BUF_BYTES * bid into the live `buffers` mapping and
        // holds `len` <= BUF_BYTES bytes that the kernel wrote before posting the completion; the caller
        // keeps the slice no longer than the buffer is lent to it.
        unsafe { std::slice::from_raw_parts(self.buffers.ptr.add(usize::from(bid) * BUF_BYTES), len) }
    }

    fn push(&mut self, entry: squeue::Entry) {
        loop {
            // SAFETY: every entry built here points only at memory that outlives its operation: the target
            // address and the `fds` slots (boxed in `self`, dropped after the ring), the mapped buffers,
            // and a send's bytes, which `send`'s caller keeps until its completion.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return;
            }
            // The submission queue is full: hand it to the kernel (or wait for the SQPOLL thread) and try again.
            self.calls += 1;
            let _ = if self.sqpoll { self.ring.submitter().squeue_wait() } else { self.ring.submit() };
        }
    }

    /// Whether the connection has a socket.
    #[inline(always)]
    pub fn is_open(&self, conn: usize) -> bool {
        self.fds[conn] >= 0
    }

    /// Puts the connection's socket (or none, -1) into its slot of the fixed file table. The kernel
    /// reads the descriptor from `fds` when it takes the submission, which by then holds the
    /// connection's latest socket: a late update installs that one again, never an older one.
    fn update_file(&mut self, conn: usize, generation: u32) {
        let e = opcode::FilesUpdate::new(&self.fds[conn], 1)
            .offset(conn as i32)
            .build()
            .flags(squeue::Flags::SKIP_SUCCESS)
            .user_data(pack(Op::Register, conn, generation));
        self.push(e);
    }

    /// A socket from `socket::tcp_socket`, put into the fixed file table, and a connect submitted for it.
    pub fn connect(&mut self, conn: usize, generation: u32, spread: Option<&mut SourceSpread>) -> io::Result<()> {
        // socket and TCP_NODELAY; with a spread of source addresses, two more to bind.
        self.calls += if spread.is_some() { 4 } else { 2 };
        let fd = socket::tcp_socket(self.family, spread)?;
        self.fds[conn] = fd;
        self.update_file(conn, generation);
        let e = opcode::Connect::new(types::Fd(fd), &self.addr.0 as *const _ as *const libc::sockaddr, self.addr.1)
            .build()
            .user_data(pack(Op::Connect, conn, generation));
        self.push(e);
        Ok(())
    }

    /// Shuts the connection's socket down and closes it, and takes it out of the fixed file table.
    /// It is shut down first: its armed receive holds a reference that would otherwise keep it open.
    pub fn close(&mut self, conn: usize, generation: u32) {
        let fd = self.fds[conn];
        if fd < 0 {
            return;
        }
        // SAFETY: shutdown(2) takes integers only; `fd` is this connection's socket, still open here.
        unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        socket::close(fd);
        self.fds[conn] = -1;
        self.calls += 2;
        self.update_file(conn, generation);
    }

    /// Arms a multishot receive into the provided buffers.
    pub fn recv(&mut self, conn: usize, generation: u32) {
        let e = opcode::RecvMulti::new(types::Fixed(conn as u32), BUF_GROUP).build().user_data(pack(Op::Recv, conn, generation));
        self.push(e);
    }

    /// Submits a send of `len` bytes at `ptr`. Bytes that fit the connection's send slot are copied
    /// there and written from the registered buffer (index 0, the only one). That is a `write` to the
    /// socket, not a `send`: Linux 6.18 takes a registered buffer for a send only with zero copy, which
    /// loopback copies anyway and which reports every send twice. A write cannot say MSG_NOSIGNAL; a
    /// write to a reset connection raises SIGPIPE, which Rust programs ignore from the start.
    ///
    /// # Safety
    /// The bytes must stay valid and unchanged until the send's completion has been seen, and no other
    /// send of the connection may be in flight (it may be reading the connection's send slot).
    pub unsafe fn send(&mut self, conn: usize, generation: u32, ptr: *const u8, len: usize) {
        let file = types::Fixed(conn as u32);
        let e = match &self.send_slots {
            Some(slots) if len <= self.send_slot_bytes => {
                // SAFETY: `conn` < `conn_count`, so its slot lies inside the mapping of `conn_count` slots.
                let slot = unsafe { slots.ptr.add(conn * self.send_slot_bytes) };
                // SAFETY: `len` fits the slot (the match guard); the caller's bytes are valid for `len`
                // (this fn's contract) and cannot overlap the mapping, which nothing outside the ring sees;
                // no other send of the connection reads the slot now.
                unsafe { std::ptr::copy_nonoverlapping(ptr, slot, len) };
                opcode::WriteFixed::new(file, slot, len as u32, 0).build()
            }
            _ => opcode::Send::new(file, ptr, len as u32).flags(libc::MSG_NOSIGNAL).build(),
        };
        self.push(e.user_data(pack(Op::Send, conn, generation)));
    }

    /// Submits what is queued and waits up to `timeout_ns` for at least one completion; then copies
    /// every completion there is into `out` (cleared first). With SQPOLL the kernel thread takes the
    /// submissions by itself: the thread enters the kernel only to wait, or to wake that thread.
    pub fn wait(&mut self, timeout_ns: u64, out: &mut Vec<Completion>) {
        let ts = types::Timespec::new().sec(timeout_ns / 1_000_000_000).nsec((timeout_ns % 1_000_000_000) as u32);
        let args = types::SubmitArgs::new().timespec(&ts);
        let want = if self.sqpoll && (timeout_ns == 0 || !self.ring.completion().is_empty()) { 0 } else { 1 };
        if want == 1 || self.ring.submission().need_wakeup() {
            self.calls += 1;
        }
        // ETIME (the timeout passed), EINTR, EBUSY (completions to reap first): the queue is read all the same.
        let _ = self.ring.submitter().submit_with_args(want, &args);
        out.clear();
        for cqe in self.ring.completion() {
            let (op, conn, generation) = unpack(cqe.user_data());
            out.push(Completion { op, conn, generation, result: cqe.result(), flags: cqe.flags() });
        }
    }

    /// A figure of the ring's /proc fdinfo.
    fn fdinfo(&self, name: &str) -> Option<u64> {
        use std::os::fd::AsRawFd;
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", self.ring.as_raw_fd())).ok()?;
        info.lines().find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
    }

    /// The SQPOLL thread's id.
    fn sq_thread_id(&self) -> Option<u32> {
        self.fdinfo("SqThread:").filter(|_| self.sqpoll).map(|t| t as u32)
    }

    /// The SQPOLL thread's CPU time so far and, of it, the time it had work to do, in nanoseconds (None
    /// without SQPOLL, or where the kernel does not say). It is a thread of this process (`iou-sqp-PID`),
    /// but the worker's own `RUSAGE_THREAD` leaves it out.
    pub fn sq_thread_ns(&self) -> Option<(u64, u64)> {
        if !self.sqpoll {
            return None;
        }
        let tid = self.sq_thread_id()?;
        let work_us = self.fdinfo("SqWorkTime:")?;
        // The thread's time on a CPU in nanoseconds (schedstat), finer than the clock ticks of its stat.
        let schedstat = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
        let total_ns = schedstat.split_whitespace().next()?.parse::<u64>().ok()?;
        Some((total_ns, (work_us * 1000).min(total_ns)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_data_round_trips() {
        for (op, conn, generation) in [(Op::Connect, 0, 0), (Op::Recv, 19_999, 7), (Op::Send, u32::MAX as usize, (1 << GEN_BITS) - 1), (Op::Register, 5, 9)] {
            assert_eq!(unpack(pack(op, conn, generation)), (op, conn, generation));
        }
        assert!(same_generation(unpack(pack(Op::Recv, 3, 1 << GEN_BITS | 5)).2, 1 << GEN_BITS | 5));
        assert!(!same_generation(unpack(pack(Op::Recv, 3, 5)).2, 6));
    }

    use std::io::Read as _;
    use std::os::fd::IntoRawFd as _;
    use std::os::unix::net::UnixStream;

    /// Sends through the fixed file table, from the registered send slot where the kernel allows it and
    /// from the caller's bytes when they are longer than the slot, arrive whole and in order: a long
    /// message, a short one in the same slot (no stale tail), one longer than the slot.
    #[test]
    fn sends_through_registered_files_and_buffers_carry_the_bytes() {
        let registered = Uring::writes_from_registered_buffers();
        let setup = RingSetup { conn_count: 2, send_slot_bytes: 64, sqpoll_cpu: None };
        let mut u = Uring::new(&SocketAddr::from(([127, 0, 0, 1], 9)), &setup).expect("a ring (Uring::probe passed)");
        assert!(registered, "this kernel does not write from a registered buffer");
        let (ours, mut peer) = UnixStream::pair().unwrap();
        // The second connection's slot, so that an offset error in the slot arithmetic shows.
        u.fds[1] = ours.as_raw_fd();
        u.update_file(1, 3);
        let messages: [&[u8]; 3] = [&[b'a'; 60], b"GET / HTTP/1.1\r\n\r\n", &[b'z'; 200]];
        let mut received = Vec::new();
        let mut out = Vec::new();
        for m in messages {
            // SAFETY: `m` is static, and the send's completion is waited for before the next one.
            unsafe { u.send(1, 3, m.as_ptr(), m.len()) };
            u.wait(1_000_000_000, &mut out);
            let sent: Vec<_> = out.iter().filter(|c| c.op == Op::Send).map(|c| (c.conn, c.generation, c.result)).collect();
            assert_eq!(sent, [(1, 3, m.len() as i32)], "{out:?}");
            assert!(out.iter().all(|c| c.op != Op::Register), "the socket was put into the table: {out:?}");
            let mut buf = vec![0u8; m.len()];
            peer.read_exact(&mut buf).unwrap();
            received.extend_from_slice(&buf);
        }
        assert_eq!(received, messages.concat());
        drop(u);
    }

    /// A socket taken out of the fixed file table can no longer be used through it: the table slot, not
    /// the descriptor, is what the operations name.
    #[test]
    fn a_closed_connection_leaves_the_fixed_file_table() {
        let setup = RingSetup { conn_count: 1, send_slot_bytes: 0, sqpoll_cpu: None };
        let mut u = Uring::new(&SocketAddr::from(([127, 0, 0, 1], 9)), &setup).expect("a ring (Uring::probe passed)");
        let (ours, _peer) = UnixStream::pair().unwrap();
        // A second descriptor of the socket keeps it open once the ring has closed its own.
        let _kept = ours.try_clone().unwrap();
        u.fds[0] = ours.into_raw_fd();
        u.update_file(0, 1);
        u.close(0, 1);
        assert!(!u.is_open(0));
        // SAFETY: the byte is a static, and no other send of connection 0 is in flight.
        unsafe { u.send(0, 1, b"x".as_ptr(), 1) };
        let mut out = Vec::new();
        u.wait(1_000_000_000, &mut out);
        let sent: Vec<_> = out.iter().filter(|c| c.op == Op::Send).map(|c| c.result).collect();
        assert_eq!(sent, [-libc::EBADF], "{out:?}");
    }

    /// The kernel refuses an SQPOLL thread on a CPU that does not exist, and the ring says so.
    #[test]
    fn an_sqpoll_thread_on_a_cpu_that_does_not_exist_is_refused() {
        let setup = RingSetup { conn_count: 1, send_slot_bytes: 0, sqpoll_cpu: Some(libc::CPU_SETSIZE as usize - 1) };
        assert!(Uring::new(&SocketAddr::from(([127, 0, 0, 1], 9)), &setup).is_err());
    }
}

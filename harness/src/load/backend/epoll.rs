//! The epoll backend: each socket registered once, level-triggered on EPOLLIN; EPOLLOUT is asked for
//! only after a write returned EAGAIN (or while an echo stream keeps the socket full) and dropped when
//! the buffer is drained. One `read` and one `send` per response, plus a share of one `epoll_wait`.

use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;

use super::{Backend, Event, Write};
use crate::load::sys::Epoll;
use crate::os::socket::{self, SourceSpread};

const READ_BUF_BYTES: usize = 64 * 1024;
const MAX_EVENTS: usize = 1024;

const EV_IN: u32 = libc::EPOLLIN as u32;
const EV_OUT: u32 = libc::EPOLLOUT as u32;
const EV_ERR_HUP: u32 = libc::EPOLLERR as u32 | libc::EPOLLHUP as u32;

#[derive(Clone, Copy)]
struct Slot {
    fd: RawFd,
    /// A connect was started and its result not yet reported.
    connecting: bool,
    /// EPOLLOUT is in the interest set.
    out_interest: bool,
}

pub struct EpollBackend {
    epoll: Epoll,
    target: SocketAddr,
    slots: Vec<Slot>,
    events: Vec<libc::epoll_event>,
    ready: usize,
    buf: Vec<u8>,
    spread: Option<SourceSpread>,
    /// System calls made: reads, writes, waits, interest changes, sockets, connects and closes.
    calls: u64,
}

impl EpollBackend {
    pub fn new(target: SocketAddr, conn_count: usize, spread: Option<SourceSpread>) -> io::Result<Self> {
        Ok(EpollBackend {
            epoll: Epoll::new()?,
            target,
            slots: vec![Slot { fd: -1, connecting: false, out_interest: false }; conn_count],
            events: vec![libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS],
            ready: 0,
            buf: vec![0; READ_BUF_BYTES],
            spread,
            calls: 0,
        })
    }

    fn set_out_interest(&mut self, conn: usize, on: bool) {
        self.calls += 1;
        let s = &mut self.slots[conn];
        s.out_interest = on;
        let _ = self.epoll.modify(s.fd, if on { EV_IN | EV_OUT } else { EV_IN }, conn as u64);
    }
}

impl Backend for EpollBackend {
    fn connect(&mut self, conn: usize, _generation: u32) -> io::Result<()> {
        // socket, TCP_NODELAY, connect and epoll_ctl; with a spread of source addresses, two more to bind.
        self.calls += if self.spread.is_some() { 6 } else { 4 };
        let (fd, _) = socket::connect_nonblocking(&self.target, self.spread.as_mut())?;
        self.slots[conn] = Slot { fd, connecting: true, out_interest: true };
        // Registered once per socket; EPOLLOUT reports when the connect finished.
        self.epoll.add(fd, EV_IN | EV_OUT, conn as u64)
    }

    fn opened(&mut self, conn: usize, notify_writable: bool) {
        self.set_out_interest(conn, notify_writable);
    }

    fn start_receiving(&mut self, _conn: usize) {}

    fn close(&mut self, conn: usize) {
        let s = &mut self.slots[conn];
        if s.fd >= 0 {
            socket::close(s.fd);
            self.calls += 1;
        }
        *s = Slot { fd: -1, connecting: false, out_interest: false };
    }

    #[inline(always)]
    fn holds_bytes(&self, _conn: usize) -> bool {
        false
    }

    #[inline(always)]
    fn may_write(&self, conn: usize) -> bool {
        !self.slots[conn].out_interest
    }

    #[inline]
    unsafe fn write(&mut self, conn: usize, bytes: &[u8]) -> Write {
        loop {
            self.calls += 1;
            match socket::write(self.slots[conn].fd, bytes) {
                Ok(n) => return Write::Accepted(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !self.slots[conn].out_interest {
                        self.set_out_interest(conn, true);
                    }
                    return Write::Pending;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return Write::Failed,
            }
        }
    }

    #[inline(always)]
    fn drained(&mut self, conn: usize) {
        if self.slots[conn].out_interest {
            self.set_out_interest(conn, false);
        }
    }

    fn wait(&mut self, timeout_ns: u64) -> usize {
        self.calls += 1;
        self.ready = self.epoll.wait(&mut self.events, Some(timeout_ns));
        self.ready
    }

    fn finished_connects(&mut self, out: &mut Vec<(usize, i32)>) {
        for ev in &self.events[..self.ready] {
            let s = &mut self.slots[ev.u64 as usize];
            if s.connecting {
                s.connecting = false;
                out.push((ev.u64 as usize, socket::socket_error(s.fd)));
            }
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(&mut Self, usize, Event)) {
        let mut buf = std::mem::take(&mut self.buf);
        for k in 0..self.ready {
            let ev = self.events[k];
            let (conn, events) = (ev.u64 as usize, ev.events);
            let s = &mut self.slots[conn];
            if s.fd < 0 {
                continue;
            }
            if s.connecting {
                s.connecting = false;
                self.calls += 1;
                let ok = socket::socket_error(s.fd) == 0;
                on_event(self, conn, if ok { Event::Connected } else { Event::ConnectFailed });
                continue;
            }
            if s.out_interest && events & EV_ERR_HUP != 0 {
                on_event(self, conn, Event::Hangup);
                continue;
            }
            if events & (EV_IN | EV_ERR_HUP) != 0 {
                self.calls += 1;
                match socket::read(s.fd, &mut buf) {
                    Ok(0) => on_event(self, conn, Event::Closed),
                    Ok(n) => on_event(self, conn, Event::Received(&buf[..n])),
                    Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                    Err(_) => on_event(self, conn, Event::ReadFailed),
                }
            }
            if events & EV_OUT != 0 {
                on_event(self, conn, Event::Writable);
            }
        }
        self.buf = buf;
    }

    fn system_calls(&self) -> u64 {
        self.calls
    }
}

//! `tcp-nodelay`: the server's side of an accepted connection has Nagle's algorithm off. With it on, a
//! small answer written while an earlier one is unacknowledged waits for the client's delayed ACK (up to
//! 40 ms on Linux), so a server that forgets TCP_NODELAY is measured with pauses that are not its own.
//! The option is read from the server's own descriptor (`os::peer_socket`): the kernel's TCP table gives
//! the socket of the connection's addresses, the server's process tree the descriptor that holds it. It
//! is read after one exchange (some servers set it only once serving).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::os::{peer_socket, proc};
use crate::wire::client::Conn;

use super::case::{Failed, Options, Target, Verdict};

pub fn tcp_nodelay(t: &Target, o: &Options) -> Verdict {
    match read_option(t, o) {
        Ok(Ok((true, pid))) => Verdict::pass(format!("TCP_NODELAY is set on the accepted connection (read from process {pid})")),
        Ok(Ok((false, pid))) => Verdict::fail(format!(
            "TCP_NODELAY is not set on the accepted connection (process {pid}): Nagle's algorithm holds small writes behind the client's delayed ACK"
        )),
        Ok(Err(NotReadableHere(refused))) => Verdict::skip(refused),
        Err(Failed(reason)) => Verdict::fail(reason),
    }
}

/// One exchange on the connection: the scenario's ordinary request and its answer, or 8 echoed bytes.
fn exchange(c: &mut Conn, t: &Target) -> Result<(), Failed> {
    match t.scenario.request() {
        Some(request) => {
            c.send(&request.render(0))?;
            c.read_response()?;
        }
        None => {
            c.send(b"nodelay?")?;
            c.read_exact(8)?;
        }
    }
    Ok(())
}

/// How often the connection is used while its socket is looked up, so that a server with a short idle
/// timeout (`hello-timeout` is checked with 300 ms) does not close it under a slow lookup.
const KEEP_BUSY: Duration = Duration::from_millis(50);

/// Why the option cannot be read from here, which is no fault of the server: the check is skipped.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct NotReadableHere(String);

/// The option and the process holding the socket; the inner error is why it could not be read here.
fn read_option(t: &Target, o: &Options) -> Result<Result<(bool, i32), NotReadableHere>, Failed> {
    let mut c = Conn::open(t.addr, o.answer_timeout)?;
    exchange(&mut c, t)?;
    let local = c.stream.local_addr().map_err(|e| Failed(format!("the client's address: {e}")))?;
    let done = Arc::new(AtomicBool::new(false));
    let keeper = {
        let (done, t) = (done.clone(), *t);
        std::thread::spawn(move || -> Result<(), Failed> {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(KEEP_BUSY);
                exchange(&mut c, &t)?;
            }
            Ok(())
        })
    };
    let found = look_up(t, local);
    done.store(true, Ordering::Relaxed);
    let kept = keeper.join().unwrap_or_else(|_| Err("the exchanges during the lookup panicked".into()));
    match (found, kept) {
        (Err(e), Err(lost)) => Err(format!("{}; the connection was lost meanwhile: {}", e.0, lost.0).into()),
        (found, _) => found,
    }
}

/// Finds the server's side of the connection from `local` and reads its option.
fn look_up(t: &Target, local: SocketAddr) -> Result<Result<(bool, i32), NotReadableHere>, Failed> {
    let Some(socket) = proc::tcp_socket(t.addr, local) else {
        return Err(format!("the kernel's TCP table shows no connection {} <- {local}", t.addr).into());
    };
    let Some(root) = t.pid else {
        return Ok(Err(NotReadableHere("the server's process is not known here".into())));
    };
    let all = proc::all_processes();
    // A server that is gone has no group: its tree is then empty.
    let pgid = all.iter().find(|p| p.pid == root).map_or(-1, |p| p.pgrp);
    let tree: Vec<i32> = proc::tree(root, pgid, &all).iter().map(|p| p.pid).collect();
    let Some((pid, fd)) = proc::socket_holder(&tree, socket.inode) else {
        return Err(format!("no process of the server's tree ({} processes under {root}) holds its side of the connection (inode {})", tree.len(), socket.inode).into());
    };
    match peer_socket::tcp_nodelay(pid, fd) {
        Ok(on) => Ok(Ok((on, pid))),
        Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::ENOSYS)) => {
            Ok(Err(NotReadableHere(format!("the server's descriptor cannot be copied here (pidfd_getfd: {e}); run as root"))))
        }
        Err(e) => Err(format!("reading TCP_NODELAY from process {pid} descriptor {fd}: {e}").into()),
    }
}

//! `hello-timeout`'s per-operation timer: a stream wrapper that arms a timer (actix-rt's, tokio's
//! sleep) when a read or a write has to wait, and drops it when that operation completes. Expiry is
//! an error for the dispatcher, which drops the connection. actix-http's own client_request_timeout
//! and keep_alive cannot serve here: they bound phases (the first head, the idle gap after an answer)
//! rather than each read and write, and take their deadlines from its date service's clock, which
//! ticks every 500 ms, so a limit of a few hundred milliseconds expires at once.
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use actix_codec::{AsyncRead, AsyncWrite, ReadBuf};
use actix_rt::net::TcpStream;
use actix_rt::time::{sleep, Sleep};

pub struct Timed {
    io: TcpStream,
    limit: Duration,
    read_timer: Option<Pin<Box<Sleep>>>,
    write_timer: Option<Pin<Box<Sleep>>>,
}

impl Timed {
    pub fn new(io: TcpStream, limit: Duration) -> Timed {
        Timed { io, limit, read_timer: None, write_timer: None }
    }
}

/// The outcome of one poll of an operation bounded by `timer`: armed on the first Pending, dropped
/// on completion, an error once it has elapsed.
fn bounded<T>(
    result: Poll<io::Result<T>>,
    timer: &mut Option<Pin<Box<Sleep>>>,
    limit: Duration,
    cx: &mut Context<'_>,
) -> Poll<io::Result<T>> {
    if result.is_ready() {
        *timer = None;
        return result;
    }
    let timer = timer.get_or_insert_with(|| Box::pin(sleep(limit)));
    match timer.as_mut().poll(cx) {
        Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
        Poll::Pending => Poll::Pending,
    }
}

impl AsyncRead for Timed {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        bounded(Pin::new(&mut this.io).poll_read(cx, buf), &mut this.read_timer, this.limit, cx)
    }
}

impl AsyncWrite for Timed {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        bounded(Pin::new(&mut this.io).poll_write(cx, buf), &mut this.write_timer, this.limit, cx)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

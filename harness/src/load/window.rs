//! The edges of the measured window, for a caller that reads something else over exactly that window (the
//! server's CPU time, the CPUs' counters): the first worker thread to begin recording opens it, the last
//! one to stop driving load closes it. Each thread's own figures (its CPU time, its requests) are taken over
//! its own part of the window; the edges span all of them.

use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edge {
    Open,
    Close,
}

/// Called on a worker thread at each edge: it must return within microseconds. Signal another thread or
/// read a counter (one perf counter group of a CPU reads in about 3 µs here); never read /proc there (the
/// server's sampler reads three files a thread, milliseconds for a server of 65 threads).
pub type WindowWatch = Arc<dyn Fn(Edge) + Send + Sync>;

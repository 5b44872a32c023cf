//! The client's system calls in a round, counted as the server's are (`os::syscalls`: the kernel's
//! tracepoints, every call and the counted ones by name) on the client's CPUs, over the built-in
//! generator's measured window or an external tool's whole run, in the rounds that count the server's.
//! Everything that runs on those CPUs is counted: the harness's own threads too, whose sampler reads /proc
//! a few hundred times a second, against a round's hundreds of thousands of calls for its requests.

use std::sync::{Arc, Mutex};

use crate::load::{Edge, WindowWatch};
use crate::os::syscalls::{SyscallCounters, SyscallCounts, COUNTED};

/// Counters on the client's CPUs and their readings at the window's two edges.
#[derive(Clone)]
pub struct ClientCount {
    counters: Arc<SyscallCounters>,
    edges: Arc<Mutex<[Option<SyscallCounts>; 2]>>,
}

impl ClientCount {
    /// Counters on `cpus`; absent where the tracepoints cannot be opened (the server's counts say why).
    pub fn open(cpus: &[usize]) -> Option<ClientCount> {
        let counters = SyscallCounters::open(cpus, COUNTED).ok()?;
        Some(ClientCount { counters: Arc::new(counters), edges: Arc::new(Mutex::new([None, None])) })
    }

    /// Reads the counters as the window's `edge`.
    pub fn mark(&self, edge: Edge) {
        let slot = match edge {
            Edge::Open => 0,
            Edge::Close => 1,
        };
        self.edges.lock().expect("no reader panics holding it")[slot] = self.counters.read().ok();
    }

    /// `watch`, which reads the server at the window's edges, with the client's counters read there too:
    /// after the server's opening mark and before its closing one (which waits for the server's sampler,
    /// sleeping on the client's CPU). A read is one `read` of a CPU's counter group, about 3 µs (median
    /// of 2,000 on this VM's CPU 0; 39 µs the slowest), within what `WindowWatch` allows. It is done
    /// here, on the worker thread at the edge, on purpose: a thread woken to read it would run on the
    /// client's CPUs too, read later than the edge, and add its own wake-up calls to the count.
    pub fn around(&self, watch: WindowWatch) -> WindowWatch {
        let me = self.clone();
        Arc::new(move |edge| match edge {
            Edge::Open => {
                watch(edge);
                me.mark(edge);
            }
            Edge::Close => {
                me.mark(edge);
                watch(edge);
            }
        })
    }

    /// What was counted between the edges; absent if either was not read.
    pub fn counted(&self) -> Option<SyscallCounts> {
        let edges = self.edges.lock().expect("no reader panics holding it");
        let [Some(open), Some(close)] = &*edges else { return None };
        Some(close.since(open))
    }
}

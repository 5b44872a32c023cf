//! B's profile against A's, per request (an A/B run's `--profile`, docs/profile.md): each function's
//! samples of its own (as the innermost frame) per 1,000 requests on either side, and how far their change
//! stands beyond the sampling noise. Samples are counts: a function's count is read as Poisson, so the
//! change of its rate per request has a standard error of √(a/ra² + b/rb²) for a samples in ra requests
//! and b in rb. A change of at least `BEYOND_NOISE` standard errors is one the profile shows; the rest is
//! within what two samplings of one unchanged server differ by.

use std::collections::BTreeMap;

use super::folded::Folded;

/// Standard errors beyond which a change is more than the sampling noise (about one in 370 unchanged
/// functions reach it by chance).
pub const BEYOND_NOISE: f64 = 3.0;

/// One function's samples of its own per 1,000 requests in A and in B, and where the most of its change
/// came from. run.json keeps these (`ab.profile_change.frames`, through `model::profile`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrameChange {
    pub frame: String,
    pub a_per_1000_requests: f64,
    pub b_per_1000_requests: f64,
    /// The change in standard errors of the sampling noise (positive where B has more).
    pub z: f64,
    /// The callers of the stack whose change was the largest, outermost first, without the task:
    /// `main;sched_yield;entry_SYSCALL_64_after_hwframe_[k]`.
    pub via: String,
}

impl FrameChange {
    pub fn per_1000_requests(&self) -> f64 {
        self.b_per_1000_requests - self.a_per_1000_requests
    }
}

/// One side: its stacks and the requests they served.
#[derive(Clone, Copy)]
pub struct Side<'f> {
    pub folded: &'f Folded,
    pub requests: u64,
}

impl Side<'_> {
    fn per_1000(&self, samples: u64) -> f64 {
        samples as f64 * 1000.0 / self.requests.max(1) as f64
    }

    /// Each stack's own samples by its innermost frame: frame → (stack without the task → samples).
    fn by_leaf(&self) -> BTreeMap<&str, BTreeMap<&str, u64>> {
        let mut leaves: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
        for (stack, &n) in &self.folded.stacks {
            let callers = stack.split_once(';').map_or("", |(_, rest)| rest);
            let leaf = stack.rsplit(';').next().unwrap_or(stack);
            *leaves.entry(leaf).or_default().entry(callers).or_default() += n;
        }
        leaves
    }
}

/// Every function with samples of its own on either side, the largest change beyond the noise first,
/// then the rest by the size of their change.
pub fn changes(a: Side, b: Side) -> Vec<FrameChange> {
    let (la, lb) = (a.by_leaf(), b.by_leaf());
    let frames: std::collections::BTreeSet<&str> = la.keys().chain(lb.keys()).copied().collect();
    let empty = BTreeMap::new();
    let mut changes: Vec<FrameChange> = frames
        .into_iter()
        .map(|frame| {
            let (sa, sb) = (la.get(frame).unwrap_or(&empty), lb.get(frame).unwrap_or(&empty));
            let (na, nb) = (sa.values().sum::<u64>(), sb.values().sum::<u64>());
            let (ra, rb) = (a.requests.max(1) as f64, b.requests.max(1) as f64);
            let se = (na as f64 / (ra * ra) + nb as f64 / (rb * rb)).sqrt() * 1000.0;
            let (pa, pb) = (a.per_1000(na), b.per_1000(nb));
            let z = if se > 0.0 { (pb - pa) / se } else { 0.0 };
            FrameChange { frame: frame.to_string(), a_per_1000_requests: pa, b_per_1000_requests: pb, z, via: largest_path(a, sa, b, sb, frame) }
        })
        .collect();
    changes.sort_by(|x, y| {
        let beyond = |c: &FrameChange| c.z.abs() >= BEYOND_NOISE;
        beyond(y).cmp(&beyond(x)).then(y.per_1000_requests().abs().total_cmp(&x.per_1000_requests().abs())).then_with(|| x.frame.cmp(&y.frame))
    });
    changes
}

/// Of the stacks ending in `frame`, the callers (without the task and the frame) of the one whose rate
/// changed the most.
fn largest_path(a: Side, sa: &BTreeMap<&str, u64>, b: Side, sb: &BTreeMap<&str, u64>, frame: &str) -> String {
    let paths: std::collections::BTreeSet<&str> = sa.keys().chain(sb.keys()).copied().collect();
    let change = |p: &str| (b.per_1000(*sb.get(p).unwrap_or(&0)) - a.per_1000(*sa.get(p).unwrap_or(&0))).abs();
    let best = paths.into_iter().max_by(|x, y| change(x).total_cmp(&change(y)).then_with(|| y.cmp(x))).unwrap_or("");
    best.strip_suffix(frame).unwrap_or(best).trim_end_matches(';').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folded(lines: &str) -> Folded {
        Folded::parse(lines)
    }

    #[test]
    fn a_new_function_is_the_largest_change_with_the_path_that_grew_it() {
        // A: 1,000 requests, write and epoll_wait. B: 1,000 requests, the same plus a yield per request.
        let a = folded("srv;main;write;tcp_sendmsg_[k] 400\nsrv;main;epoll_wait;ep_poll_[k] 300\nsrv;main;parse 100\n");
        let b = folded("srv;main;write;tcp_sendmsg_[k] 410\nsrv;main;epoll_wait;ep_poll_[k] 290\nsrv;main;parse 100\nsrv;main;sched_yield;do_sched_yield_[k] 250\nsrv;main;sched_yield 20\n");
        let c = changes(Side { folded: &a, requests: 1000 }, Side { folded: &b, requests: 1000 });
        assert_eq!(c[0].frame, "do_sched_yield_[k]");
        assert_eq!((c[0].a_per_1000_requests, c[0].b_per_1000_requests), (0.0, 250.0));
        assert_eq!(c[0].via, "main;sched_yield");
        assert!(c[0].z > 15.0, "{:?}", c[0]);
        assert_eq!((c[1].frame.as_str(), c[1].via.as_str()), ("sched_yield", "main"));
        // 410 against 400 samples is within the noise, and so is 290 against 300: after the changes beyond.
        let write = c.iter().find(|x| x.frame == "tcp_sendmsg_[k]").unwrap();
        assert!(write.z.abs() < BEYOND_NOISE && write.z > 0.0, "{write:?}");
        assert!(c.iter().position(|x| x.frame == "tcp_sendmsg_[k]").unwrap() >= 2);
        assert_eq!(c.iter().find(|x| x.frame == "parse").unwrap().z, 0.0);
    }

    #[test]
    fn rates_are_per_request_so_more_requests_alone_change_nothing() {
        let a = folded("srv;main;write 100\n");
        let b = folded("srv;main;write 300\n");
        let c = changes(Side { folded: &a, requests: 1000 }, Side { folded: &b, requests: 3000 });
        assert_eq!((c[0].a_per_1000_requests, c[0].b_per_1000_requests, c[0].z), (100.0, 100.0, 0.0));
        // A function gone in B shrinks: negative change and z.
        let gone = changes(Side { folded: &b, requests: 1000 }, Side { folded: &folded("srv;main;read 300\n"), requests: 1000 });
        let write = gone.iter().find(|x| x.frame == "write").unwrap();
        assert!(write.per_1000_requests() == -300.0 && write.z < -BEYOND_NOISE, "{write:?}");
    }
}

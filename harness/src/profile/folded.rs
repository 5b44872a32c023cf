//! `perf script`'s samples folded into stacks, as Brendan Gregg's stackcollapse-perf.pl folds them: one
//! line per distinct stack, its frames from the outermost (the task's name) to the innermost, joined by
//! `;`, and the number of samples that had it. Kernel frames end in `_[k]`; a frame perf could not name is
//! `[unknown]` with the object it was in (`[unknown in libc.so.6]`), and counts towards the share of frames
//! left unknown. The idle task (`swapper`, pid 0) is left out: on a server's own CPUs it is the time the
//! server did not use.

use std::collections::BTreeMap;

/// Stacks and their samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Folded {
    /// Folded stack → samples.
    pub stacks: BTreeMap<String, u64>,
    /// Samples kept (the idle task's left out).
    pub samples: u64,
    /// Frames of the kept samples, and how many of them perf could not name.
    pub frames: u64,
    pub unknown_frames: u64,
}

/// The suffix of a kernel frame.
pub const KERNEL: &str = "_[k]";
/// The scheduler's own frames, which every switch ends in.
const SCHEDULER: &[&str] = &["__schedule", "schedule", "preempt_schedule", "io_schedule", "__traceiter_sched", "__perf"];

impl Folded {
    /// Folds `perf script -F comm,pid,ip,sym,dso` output, leaving out the samples of process `leave_out`
    /// (the harness's own threads, which probe the server's CPUs between rounds).
    pub fn of_perf_script(text: &str, leave_out: Option<u32>) -> Folded {
        let mut folded = Folded::default();
        let mut task: Option<String> = None;
        let mut frames: Vec<String> = Vec::new();
        for line in text.lines().chain(std::iter::once("")) {
            if line.trim().is_empty() {
                if let Some(task) = task.take() {
                    folded.add(&task, &frames);
                }
                frames.clear();
            } else if line.starts_with(char::is_whitespace) {
                if task.is_some() {
                    frames.push(frame(line.trim()));
                }
            } else {
                task = sample_task(line).filter(|(_, pid)| Some(*pid) != leave_out).map(|(name, _)| name);
            }
        }
        folded
    }

    /// Adds one sample of `task` with `frames`, innermost first.
    fn add(&mut self, task: &str, frames: &[String]) {
        let mut stack = task.to_string();
        for f in frames.iter().rev() {
            stack.push(';');
            stack.push_str(f);
        }
        *self.stacks.entry(stack).or_default() += 1;
        self.samples += 1;
        self.frames += frames.len() as u64;
        self.unknown_frames += frames.iter().filter(|f| unknown(f)).count() as u64;
    }

    /// Adds another sampling's stacks (a second profiled round of the same server).
    pub fn merge(&mut self, other: &Folded) {
        for (stack, n) in &other.stacks {
            *self.stacks.entry(stack.clone()).or_default() += n;
        }
        self.samples += other.samples;
        self.frames += other.frames;
        self.unknown_frames += other.unknown_frames;
    }

    /// The share of frames perf could not name, 0 to 1; None without frames.
    pub fn unknown_share(&self) -> Option<f64> {
        (self.frames > 0).then(|| self.unknown_frames as f64 / self.frames as f64)
    }

    /// Each function's samples of its own (as the innermost frame), most first, then by name.
    pub fn own_samples(&self) -> Vec<(String, u64)> {
        let mut own: BTreeMap<&str, u64> = BTreeMap::new();
        for (stack, n) in &self.stacks {
            let leaf = stack.rsplit(';').next().unwrap_or(stack);
            *own.entry(leaf).or_default() += n;
        }
        let mut own: Vec<(String, u64)> = own.into_iter().map(|(f, n)| (f.to_string(), n)).collect();
        own.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        own
    }

    /// Where the samples of switches blocked, most first, then by name: the system call by its name
    /// (`read`, from the kernel's frame under `do_syscall_64`: `ksys_read`, `__x64_sys_read`), or else the
    /// innermost frame outside the scheduler (a kernel thread's `worker_thread_[k]`).
    pub fn blocked_in(&self) -> Vec<(String, u64)> {
        let mut by: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, n) in &self.stacks {
            let frames: Vec<&str> = stack.split(';').collect();
            let call = frames.iter().position(|f| *f == "do_syscall_64_[k]").and_then(|i| frames[i + 1..].iter().find(|f| **f != "x64_sys_call_[k]"));
            let place = match call {
                Some(f) => system_call(f),
                None => frames.iter().skip(1).rev().find(|f| !SCHEDULER.iter().any(|s| f.starts_with(s))).map_or(stack.to_string(), |f| f.to_string()),
            };
            *by.entry(place).or_default() += n;
        }
        let mut by: Vec<(String, u64)> = by.into_iter().collect();
        by.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        by
    }

    /// The folded text: a line per stack, `stack samples`, in the stacks' order.
    pub fn text(&self) -> String {
        self.stacks.iter().map(|(stack, n)| format!("{stack} {n}\n")).collect()
    }

    /// Reads folded text back (a line per stack, its count after the last space); lines that do not end in a
    /// count are left out.
    pub fn parse(text: &str) -> Folded {
        let mut folded = Folded::default();
        for line in text.lines() {
            let Some((stack, n)) = line.rsplit_once(' ') else { continue };
            let Ok(n) = n.parse::<u64>() else { continue };
            let frames: Vec<&str> = stack.split(';').skip(1).collect();
            *folded.stacks.entry(stack.to_string()).or_default() += n;
            folded.samples += n;
            folded.frames += n * frames.len() as u64;
            folded.unknown_frames += n * frames.iter().filter(|f| unknown(f)).count() as u64;
        }
        folded
    }
}

/// A system call's name from the kernel frame that carries it out (`ksys_read_[k]`, `__x64_sys_futex_[k]`,
/// `__do_sys_accept4_[k]` → `read`, `futex`, `accept4`).
fn system_call(frame: &str) -> String {
    let name = frame.strip_suffix(KERNEL).unwrap_or(frame);
    let name = ["__x64_sys_", "__ia32_sys_", "__se_sys_", "__do_sys_", "__sys_", "ksys_", "do_sys_"].iter().find_map(|p| name.strip_prefix(p)).unwrap_or(name);
    name.to_string()
}

/// Whether a folded frame is one perf could not name.
fn unknown(frame: &str) -> bool {
    frame.starts_with("[unknown")
}

/// The task and process of a sample's first line, `comm pid` (the name may hold spaces), and a switch's
/// fields after it; None for the idle task, and for a switch of a task that was preempted (`prev_state=R`)
/// rather than one that blocked.
fn sample_task(line: &str) -> Option<(String, u32)> {
    let (line, switch) = match line.find(" prev_comm=") {
        Some(i) => (&line[..i], Some(&line[i..])),
        None => (line, None),
    };
    if switch.and_then(|f| f.split_once("prev_state=")).is_some_and(|(_, state)| state.starts_with('R')) {
        return None;
    }
    let line = line.trim_end().trim_end_matches(':');
    let (name, pid) = line.rsplit_once(char::is_whitespace)?;
    let pid = pid.split('/').next()?.parse::<u32>().ok()?;
    (pid != 0).then(|| (name.trim().replace([';', ' '], "_"), pid))
}

/// One frame line, `address symbol (object)`, as a folded frame.
fn frame(line: &str) -> String {
    let rest = line.split_once(char::is_whitespace).map_or("", |(_, r)| r.trim());
    let (symbol, object) = match rest.rfind(" (") {
        Some(i) if rest.ends_with(')') => (rest[..i].trim(), &rest[i + 2..rest.len() - 1]),
        _ => (rest, ""),
    };
    // Offsets (`+0x1f`) where perf printed them; the function is the same at any offset.
    let symbol = match symbol.rfind("+0x") {
        Some(i) => &symbol[..i],
        None => symbol,
    };
    let kernel = object.starts_with("[kernel") || object.ends_with(".ko") || object.starts_with("[bpf");
    let name = if symbol.is_empty() || symbol == "[unknown]" {
        let file = object.rsplit('/').next().unwrap_or(object);
        if file.is_empty() || file == "[unknown]" {
            "[unknown]".to_string()
        } else {
            format!("[unknown in {file}]")
        }
    } else {
        symbol.replace(';', ":")
    };
    if kernel {
        format!("{name}{KERNEL}")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "\
c-epoll  4242 
\tffffffff81c7a0e1 tcp_sendmsg_locked+0x51 ([kernel.kallsyms])
\tffffffff81c7b2c9 tcp_sendmsg+0x29 ([kernel.kallsyms])
\tffffffff81000130 entry_SYSCALL_64_after_hwframe+0x76 ([kernel.kallsyms])
\t          11f2a3 __GI___libc_write+0x13 (/usr/lib/x86_64-linux-gnu/libc.so.6)
\t            1a2b answer+0x2b (/srv/c-epoll/build/c-epoll)
\t            1c3d main+0x9d (/srv/c-epoll/build/c-epoll)

swapper     0 
\tffffffff821f3a10 default_idle+0x10 ([kernel.kallsyms])

c-epoll  4242 
\t            1a2b answer (/srv/c-epoll/build/c-epoll)
\t            1c3d main (/srv/c-epoll/build/c-epoll)

worker one  4243/4244:
\t            3032 [unknown] (/usr/bin/env)
\t            35e0 [unknown] ([unknown])
";

    #[test]
    fn samples_fold_outermost_first_without_the_idle_task() {
        let f = Folded::of_perf_script(SCRIPT, None);
        assert_eq!(f.samples, 3, "{f:?}");
        let without = Folded::of_perf_script(SCRIPT, Some(4243));
        assert_eq!((without.samples, without.unknown_frames), (2, 0), "the process left out: {without:?}");
        assert_eq!(f.stacks.get("c-epoll;main;answer"), Some(&1));
        assert_eq!(
            f.stacks.get("c-epoll;main;answer;__GI___libc_write;entry_SYSCALL_64_after_hwframe_[k];tcp_sendmsg_[k];tcp_sendmsg_locked_[k]"),
            Some(&1),
            "{f:?}"
        );
        assert_eq!(f.stacks.get("worker_one;[unknown];[unknown in env]"), Some(&1), "{f:?}");
        assert_eq!((f.frames, f.unknown_frames), (10, 2));
        assert_eq!(f.unknown_share(), Some(0.2));
        assert_eq!(f.own_samples(), vec![("[unknown in env]".to_string(), 1), ("answer".to_string(), 1), ("tcp_sendmsg_locked_[k]".to_string(), 1)]);
    }

    const SWITCHES: &str = "\
c-threads 5151  prev_comm=c-threads prev_pid=5151 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
\tffffffff821f8298 __schedule ([kernel.kallsyms])
\tffffffff821f8c03 schedule ([kernel.kallsyms])
\tffffffff81b1a2c3 sk_wait_data ([kernel.kallsyms])
\tffffffff81c1d2e4 tcp_recvmsg ([kernel.kallsyms])
\tffffffff8142b9de ksys_read ([kernel.kallsyms])
\tffffffff8142b9d0 x64_sys_call ([kernel.kallsyms])
\tffffffff821ecc51 do_syscall_64 ([kernel.kallsyms])
\tffffffff81000130 entry_SYSCALL_64_after_hwframe ([kernel.kallsyms])
\t           11f2a3 __GI___libc_read (/usr/lib/x86_64-linux-gnu/libc.so.6)

c-threads 5152  prev_comm=c-threads prev_pid=5152 prev_prio=120 prev_state=R+ ==> next_comm=c-threads next_pid=5151 next_prio=120
\tffffffff821f8298 __schedule ([kernel.kallsyms])
\tffffffff821f8c03 preempt_schedule_irq ([kernel.kallsyms])

kworker/1:1 77  prev_comm=kworker/1:1 prev_pid=77 prev_prio=120 prev_state=I ==> next_comm=swapper/1 next_pid=0 next_prio=120
\tffffffff821f8298 __schedule ([kernel.kallsyms])
\tffffffff821f8c03 schedule ([kernel.kallsyms])
\tffffffff81123456 worker_thread ([kernel.kallsyms])
";

    #[test]
    fn switches_fold_where_tasks_blocked_and_leave_out_preemption() {
        let f = Folded::of_perf_script(SWITCHES, None);
        assert_eq!(f.samples, 2, "the preempted switch is left out: {f:?}");
        assert_eq!(f.blocked_in(), vec![("read".to_string(), 1), ("worker_thread_[k]".to_string(), 1)]);
        assert_eq!(["ksys_read_[k]", "__x64_sys_futex_[k]", "__do_sys_accept4_[k]", "do_epoll_wait_[k]"].map(system_call), ["read", "futex", "accept4", "do_epoll_wait"]);
    }

    #[test]
    fn folded_text_reads_back_as_it_was() {
        let f = Folded::of_perf_script(SCRIPT, None);
        assert_eq!(Folded::parse(&f.text()), f);
        assert_eq!(Folded::parse("not a stack\n"), Folded::default());
        let mut twice = Folded::default();
        twice.merge(&f);
        twice.merge(&f);
        assert_eq!(Folded::parse(&format!("{}{}", f.text(), f.text())), twice, "a merge is the sum of both");
    }
}

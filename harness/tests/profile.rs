//! `bench --profile` (docs/profile.md): a C server's profiled round holds its own functions and the
//! kernel's TCP send path; the profiled round is in no other figure; a perf that cannot sample leaves the
//! run whole, with the reason in place of the profile; an A/B run names the function that grew per
//! request; a server whose threads block says where they waited. On a machine whose kernel refuses
//! sampling the tests that need samples are counted as skipped, and fail under CI=true.

mod common;

use std::path::Path;

use common::reference_repo::{control_source, repo_at};
use common::{serverbench, text};
use serverbench::model::RunResult;

/// The run's control as `reference`, built without inlining (so that its `now_ns` is a frame of its own)
/// and spinning 2 µs a request in it.
fn manifest() -> String {
    manifest_spinning("2000")
}

/// The control as `manifest` builds it, spinning `ns` a request.
fn manifest_spinning(ns: &str) -> String {
    "name = \"reference\"\nlanguage = \"c\"\nframework = \"epoll\"\ncategory = \"micro\"\nmodel = \"single-loop\"\nio = \"epoll\"\n\
     scenarios = [\"hello\"]\nrequires = [\"cc\"]\nbuild = \"mkdir -p {dir}/build && cc -O1 -fno-inline -g -o {dir}/build/control {dir}/control.c\"\n\
     run = \"{dir}/build/control {scenario} {host} {port} {workers}\"\nenv = { SB_CONTROL_SPIN_NS = \"{spin}\" }\n"
        .replace("{spin}", ns)
}

/// `bench reference --profile` on the catalog at `repo`, two measured rounds of 1 s and no more (none taken
/// again for the VM's steal); its run.json and folder. `path` replaces PATH when given.
fn profiled_run(repo: &Path, out: &Path, path: Option<&str>) -> (RunResult, std::path::PathBuf) {
    profiled(&["reference", "--contestants", repo.to_str().unwrap()], out, path)
}

/// `bench ARGS --profile` with two measured rounds of 1 s and no more; its run.json and folder.
fn profiled(args: &[&str], out: &Path, path: Option<&str>) -> (RunResult, std::path::PathBuf) {
    let mut cmd = serverbench();
    cmd.arg("bench")
        .args(args)
        .args(["--profile", "-o", out.to_str().unwrap()])
        .args(["-d", "1s", "--warmup", "0", "--rounds", "2", "--max-rounds", "2", "--syscall-counts", "off", "--no-install", "--no-control"]);
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "stdout:\n{}\nstderr:\n{}", text(&o.stdout), text(&o.stderr));
    let dir = std::fs::read_dir(out).unwrap().flatten().map(|e| e.path()).find(|p| p.join("run.json").is_file()).expect("a run folder");
    let run: RunResult = serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
    (run, dir)
}

#[test]
fn a_c_servers_profile_holds_its_own_functions_and_the_kernels_tcp_send_path() {
    let _alone = common::one_bench_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = repo_at(tmp.path(), &control_source(), &manifest());
    // Samples are taken only while the server runs: a stretch of the VM's steal would thin them.
    common::steal::wait_for_quiet(std::time::Duration::from_secs(120));
    let (run, dir) = profiled_run(&repo, &tmp.path().join("results"), None);
    let m = &run.measurements[0];
    let p = m.profile.as_ref().expect("a profile, or why there is none");
    if let Some(why) = &p.unavailable {
        common::skip("a_c_servers_profile_holds_its_own_functions_and_the_kernels_tcp_send_path", why);
        return;
    }
    let folded = std::fs::read_to_string(dir.join(p.folded.as_ref().expect("the stacks' file"))).unwrap();
    let stacks: Vec<(&str, u64)> = folded.lines().filter_map(|l| l.rsplit_once(' ')).map(|(s, n)| (s, n.parse().unwrap())).collect();
    assert_eq!(stacks.iter().map(|(_, n)| n).sum::<u64>(), p.samples);
    assert!(p.samples >= 200, "a second of a busy server at 999 Hz: {} samples", p.samples);
    // Its own functions, under main, as DWARF unwinding recovers them.
    let own = stacks.iter().filter(|(s, _)| s.contains(";main;now_ns")).map(|(_, n)| n).sum::<u64>();
    assert!(own * 10 >= p.samples, "now_ns, where it spins 2 µs a request, in {own} of {} samples:\n{folded}", p.samples);
    // The kernel's TCP send path, under the write of its answer.
    assert!(stacks.iter().any(|(s, _)| s.contains(";main;") && s.contains("tcp_sendmsg") && s.ends_with("_[k]")), "{folded}");
    assert!(p.unknown_frames.is_some_and(|u| u < 0.2), "{:?}", p.unknown_frames);
    assert!(p.top_frames.first().is_some_and(|f| f.samples_per_1000_requests > 0.0), "{:?}", p.top_frames);
    // The profiled round is in no other figure: the two measured rounds (counted, or left out for the VM's
    // steal) are the measurement's rounds, and its requests are theirs alone.
    assert_eq!(m.rounds.iter().filter(|r| !r.warmup).count(), 2, "the rounds asked, which the profiled round is not among");
    assert!(m.counting_rounds.is_empty());
    assert_eq!(m.summary().requests, m.measured_rounds().map(|r| r.load.requests).sum::<u64>());
    assert!(p.requests > 0 && p.requests_per_s.is_some());
    // The pages say so.
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("## Where the time went") && summary.contains(&p.top_frames[0].frame), "{summary}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains(r#"<svg class="flame""#) && html.contains(r#"data-name="now_ns""#) && html.contains("flame-search"));
}

/// A perf that cannot sample (here one that exits at once, as perf does where the kernel refuses): the run
/// finishes with its figures, and the profile says why there is none.
#[test]
fn a_perf_that_cannot_sample_leaves_the_run_whole_and_says_why() {
    let _alone = common::one_bench_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let perf = bin.join("perf");
    std::fs::write(&perf, "#!/bin/sh\necho 'Error: Access to performance monitoring and observability operations is limited.' >&2\nexit 255\n").unwrap();
    std::fs::set_permissions(&perf, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let (repo, _) = repo_at(tmp.path(), &control_source(), &manifest());
    let (run, dir) = profiled_run(&repo, &tmp.path().join("results"), Some(&path));
    let m = &run.measurements[0];
    let why = m.profile.as_ref().and_then(|p| p.unavailable.clone()).expect("the reason there is no profile");
    assert!(why.contains("could not sample") && why.contains("limited"), "{why}");
    assert_eq!(m.rounds.iter().filter(|r| !r.warmup).count(), 2, "the measured rounds stand");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("no profile: perf could not sample"), "{summary}");
    assert!(!dir.join("profiles").read_dir().unwrap().flatten().any(|e| e.path().extension().is_some_and(|x| x == "data")), "no perf data left");
}

/// An A/B run's profile: B spins 2 µs a request in `now_ns` where A, the committed version, does not. The
/// function that grew the most per request is now_ns or one it calls, beyond the sampling noise; summary.md
/// lists it and report.html draws the differential graph.
#[test]
fn an_ab_runs_profile_names_the_function_that_grew_per_request() {
    let _alone = common::one_bench_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    let (repo, _) = repo_at(tmp.path(), &control_source(), &manifest_spinning("0"));
    std::fs::write(repo.join("c/reference/contestant.toml"), manifest_spinning("2000")).unwrap();
    // The VM's steal thins the samples (cpu-clock counts only while the server runs): a run whose profiles
    // did not show the change is taken again after waiting for quiet (`common::steal`).
    let mut attempt = 0;
    common::steal::tries_past_steal(|last| {
        attempt += 1;
        let (run, dir) = profiled(&["reference", "--baseline", "HEAD", "--contestants", repo.to_str().unwrap()], &tmp.path().join(format!("results-{attempt}")), None);
        let ab = run.ab.as_ref().expect("an A/B run");
        let sides: Vec<_> = run.measurements.iter().map(|m| m.profile.as_ref().expect("each side profiled")).collect();
        if let Some(why) = sides.iter().find_map(|p| p.unavailable.as_ref()) {
            common::skip("an_ab_runs_profile_names_the_function_that_grew_per_request", why);
            return true;
        }
        let change = ab.profile_change.as_ref().expect("B against A");
        let grew = |top: &serverbench::model::profile::FrameChange| (top.frame == "now_ns" || top.via.split(';').any(|f| f == "now_ns")) && top.per_1000_requests() > 0.0 && top.z >= 3.0;
        let shown = change.a_samples >= 200 && change.b_samples >= 200 && change.frames.first().is_some_and(grew);
        if !shown && !last {
            let top: Vec<_> = change.frames.iter().take(3).map(|f| (&f.frame, f.z, &f.via)).collect();
            eprintln!("the profiles did not show the spin ({} and {} samples, first grown {top:?}); again after waiting for quiet", change.a_samples, change.b_samples);
            return false;
        }
        assert!(change.a_samples >= 200 && change.b_samples >= 200, "12 s of profiled load a side: {change:?}");
        let top = change.frames.first().expect("a function that grew");
        assert!(top.frame == "now_ns" || top.via.split(';').any(|f| f == "now_ns"), "{change:#?}");
        assert!(top.per_1000_requests() > 0.0 && top.z >= 3.0, "{top:?}");
        let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
        assert!(summary.contains(&format!("### {} against {}", ab.b.name, ab.a.name)) && summary.contains(&top.frame), "{summary}");
        let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
        assert!(html.contains("profile-change-table") && html.contains("red grew, blue shrank"), "the differential graph and its table");
        assert!(html.matches(r#"<svg class="flame""#).count() >= 3, "a graph a side and B against A");
        true
    });
}

/// A server whose threads block (c-threads, a thread per connection): a second profiled round records
/// where they waited, in a system call, per request, and the pages show it.
#[test]
fn a_blocking_servers_profile_says_where_its_threads_waited() {
    let _alone = common::one_bench_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    common::steal::wait_for_quiet(std::time::Duration::from_secs(120));
    let (run, dir) = profiled(&["c-threads"], &tmp.path().join("results"), None);
    let p = run.measurements[0].profile.as_ref().expect("a profile, or why there is none");
    if let Some(why) = p.unavailable.as_ref().or(p.off_cpu.as_ref().and_then(|o| o.unavailable.as_ref())) {
        common::skip("a_blocking_servers_profile_says_where_its_threads_waited", why);
        return;
    }
    let off = p.off_cpu.as_ref().expect("where a blocking server waited");
    assert!(off.switches > 0 && off.requests > 0, "{off:?}");
    let folded = std::fs::read_to_string(dir.join(off.folded.as_ref().expect("the switches' file"))).unwrap();
    let own: Vec<&str> = folded.lines().filter(|l| l.starts_with("server;")).collect();
    assert!(!own.is_empty() && own.iter().all(|l| l.contains("__schedule_[k]")), "the server's stacks end in the scheduler:\n{folded}");
    // A thread per connection waits for the next request in read(2), about once a request.
    let top = off.blocked_in.first().expect("where it blocked");
    assert!(top.frame == "read" && top.samples_per_1000_requests > 100.0, "in read: {:?}", off.blocked_in);
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("### Where the blocking servers waited") && summary.contains(&top.frame), "{summary}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("-off-table") && html.contains("where it waited"), "the graph of its switches and where they blocked");
}

//! Conformance: whether a server keeps its scenario's wire contract and timeouts, survives bad input,
//! holds many connections, and is accepted by real clients (curl, wrk, h2load). Every check takes a
//! plain address; `suite` runs them against servers started fresh through `launch`.

pub mod bad_input;
mod case;
pub mod file;
pub mod nodelay;
pub mod scale;
pub mod suite;
pub mod timeout;
pub mod tools;
pub mod values;
pub mod wire;
pub mod work;

pub use crate::model::checks::{CheckResult, ContestantChecks, RssPoint, Status};
pub use crate::wire::Scenario;
pub use case::{Failed, Options, Target, Verdict, CHECK_TIMEOUT_MS};
use std::fmt;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Which part of the contract a check covers; a failed check of any group gets the next one a fresh server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Group {
    Wire,
    Timeout,
    BadInput,
    Client,
    Scale,
}

/// One check: a name that is stable (docs/conformance.md and run.json use it), the scenarios it applies
/// to, and the function that runs it against an address.
pub struct Check {
    pub name: &'static str,
    pub group: Group,
    pub applies: fn(&Target) -> bool,
    pub run: fn(&Target, &Options) -> Verdict,
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Check").field("name", &self.name).field("group", &self.group).finish()
    }
}

fn hello(t: &Target) -> bool {
    t.scenario.is_hello()
}
fn http(t: &Target) -> bool {
    t.scenario.is_http()
}
/// HTTP with the same body for every request, which is what the real clients' checks compare.
fn same_body(t: &Target) -> bool {
    t.scenario.is_http() && t.scenario != Scenario::Counter
}
fn any(_: &Target) -> bool {
    true
}

/// Every check against one address, in the order they run. The scale check is apart (`scale::run`): it
/// needs the server's process for its memory and a server of its own.
pub const CHECKS: &[Check] = &[
    Check { name: "hello-response", group: Group::Wire, applies: hello, run: |t, o| wire::hello_response(t, o).into() },
    Check { name: "plaintext-response", group: Group::Wire, applies: |t| t.scenario == Scenario::Plaintext, run: |t, o| wire::plaintext_response(t, o).into() },
    Check { name: "plaintext-date", group: Group::Wire, applies: |t| t.scenario == Scenario::Plaintext, run: |t, o| wire::plaintext_date(t, o).into() },
    Check { name: "plaintext-404", group: Group::Wire, applies: |t| t.scenario == Scenario::Plaintext, run: |t, o| wire::plaintext_404(t, o).into() },
    Check { name: "plaintext-pipeline", group: Group::Wire, applies: |t| t.scenario == Scenario::Plaintext, run: |t, o| wire::plaintext_pipeline(t, o).into() },
    Check { name: "json-sequence", group: Group::Wire, applies: |t| t.scenario == Scenario::Json, run: |t, o| wire::json_sequence(t, o).into() },
    Check { name: "work-response", group: Group::Wire, applies: |t| t.scenario == Scenario::Work, run: |t, o| work::work_response(t, o).into() },
    Check { name: "work-busy", group: Group::Wire, applies: |t| t.scenario == Scenario::Work, run: |t, o| work::work_busy(t, o).into() },
    Check { name: "counter-response", group: Group::Wire, applies: |t| t.scenario == Scenario::Counter, run: |t, o| work::counter_response(t, o).into() },
    Check { name: "counter-concurrent", group: Group::Wire, applies: |t| t.scenario == Scenario::Counter, run: |t, o| work::counter_concurrent(t, o).into() },
    Check { name: "file-response", group: Group::Wire, applies: |t| t.scenario == Scenario::File, run: |t, o| file::file_response_check(t, o).into() },
    Check { name: "file-404", group: Group::Wire, applies: |t| t.scenario == Scenario::File, run: |t, o| file::file_not_found(t, o).into() },
    Check { name: "tcp-nodelay", group: Group::Wire, applies: any, run: nodelay::tcp_nodelay },
    Check { name: "echo-1mib", group: Group::Wire, applies: |t| t.scenario == Scenario::Echo, run: |t, o| wire::echo_1mib(t, o).into() },
    Check { name: "idle-open", group: Group::Timeout, applies: |t| t.scenario == Scenario::Hello, run: |t, o| timeout::idle_open(t, o).into() },
    Check { name: "timeout-active", group: Group::Timeout, applies: |t| t.scenario == Scenario::HelloTimeout, run: |t, o| timeout::active(t, o).into() },
    Check { name: "timeout-idle", group: Group::Timeout, applies: |t| t.scenario == Scenario::HelloTimeout, run: |t, o| timeout::idle_close(t, o).into() },
    Check { name: "timeout-silent", group: Group::Timeout, applies: |t| t.scenario == Scenario::HelloTimeout, run: |t, o| timeout::silent_close(t, o).into() },
    Check { name: "timeout-no-reader", group: Group::Timeout, applies: |t| t.scenario == Scenario::HelloTimeout, run: |t, o| timeout::no_reader(t, o).into() },
    Check { name: "bad-random-64k", group: Group::BadInput, applies: any, run: |t, o| bad_input::random_bytes(t, o).into() },
    Check { name: "bad-cut-request", group: Group::BadInput, applies: any, run: |t, o| bad_input::cut_request(t, o).into() },
    Check { name: "bad-reset", group: Group::BadInput, applies: any, run: |t, o| bad_input::reset(t, o).into() },
    Check { name: "bad-half-close", group: Group::BadInput, applies: any, run: |t, o| bad_input::half_close(t, o).into() },
    Check { name: "bad-huge-headers", group: Group::BadInput, applies: http, run: |t, o| bad_input::huge_headers(t, o).into() },
    Check { name: "bad-drop-5000", group: Group::BadInput, applies: any, run: |t, o| bad_input::drop_many(t, o).into() },
    Check { name: "client-curl", group: Group::Client, applies: same_body, run: tools::curl },
    Check { name: "client-wrk", group: Group::Client, applies: same_body, run: tools::wrk },
    Check { name: "client-h2load", group: Group::Client, applies: same_body, run: tools::h2load },
    Check { name: "client-ab", group: Group::Client, applies: |t| t.scenario == Scenario::Plaintext, run: tools::ab },
];

/// The checks that apply to a target, in order.
pub fn checks_for(t: &Target) -> Vec<&'static Check> {
    CHECKS.iter().filter(|c| (c.applies)(t)).collect()
}

pub fn find_check(name: &str) -> Option<&'static Check> {
    CHECKS.iter().find(|c| c.name == name)
}


/// Runs one check and times it.
pub fn run_one(check: &Check, t: &Target, o: &Options) -> (Verdict, f64) {
    let start = Instant::now();
    let verdict = (check.run)(t, o);
    (verdict, start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_may_name_every_check_and_only_those() {
        let mut names: Vec<&str> = CHECKS.iter().map(|c| c.name).collect();
        names.push("scale");
        assert_eq!(names, crate::catalog::manifest::CHECKS, "catalog::manifest::CHECKS lists what unsupported_checks may name");
    }
}

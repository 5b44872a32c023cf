//! `file` and `tcp-nodelay` against fake servers: a correct one passes, each flaw fails with its reason.

mod check_support;
mod common;

use check_support::{assert_fails, options, start, Flaws};
use serverbench::check::{file, nodelay, Scenario, Status};

#[test]
fn a_correct_file_server_passes() {
    let o = options();
    let good = start(Scenario::File, Flaws::default());
    for micro in [true, false] {
        file::file_response_check(&good.target(micro), &o).unwrap();
        file::file_not_found(&good.target(micro), &o).unwrap();
    }
}

#[test]
fn a_wrong_byte_is_found_with_its_offset() {
    let o = options();
    let wrong = start(Scenario::File, Flaws { file_wrong_byte: true, ..Flaws::default() });
    assert_fails(file::file_response_check(&wrong.target(false), &o), "from byte 1000");
}

#[test]
fn a_path_out_of_the_folder_is_never_served() {
    let o = options();
    let any = start(Scenario::File, Flaws { file_any_name: true, ..Flaws::default() });
    file::file_response_check(&any.target(true), &o).unwrap();
    assert_fails(file::file_not_found(&any.target(true), &o), "/file/sb-no-such-file");
}

#[test]
fn nagle_left_on_is_found_on_the_servers_own_socket() {
    let o = options();
    for scenario in [Scenario::Hello, Scenario::Echo] {
        let good = start(scenario, Flaws::default());
        let v = nodelay::tcp_nodelay(&good.target(true), &o);
        if v.status == Status::Skip {
            return common::skip("nagle_left_on_is_found_on_the_servers_own_socket", &v.reason);
        }
        assert_eq!(v.status, Status::Pass, "{scenario}: {}", v.reason);
        let nagle = start(scenario, Flaws { no_nodelay: true, ..Flaws::default() });
        let v = nodelay::tcp_nodelay(&nagle.target(true), &o);
        assert_eq!(v.status, Status::Fail, "{scenario}: {}", v.reason);
        assert!(v.reason.contains("TCP_NODELAY is not set"), "{}", v.reason);
    }
}

//! What travels between the harness and a server, below every room that talks to one: the scenarios
//! (name, request, expected answer), the one request renderer and the one blocking HTTP client, used by
//! verification (`launch`), the conformance checks (`check`) and the load generator (`load`).

pub mod client;
pub mod files;
pub mod request;
pub mod scenario;

pub use client::{Closed, Conn, Response, WireError};
pub use files::{file_response, files_dir, FILES_ENV, FILE_4K, FILE_PATH};
pub use request::{HttpRequest, RequestTemplate};
pub use scenario::{
    counter_path, decimal_response, parse_decimal, work_path, Expected, Scenario, COUNTER_KEYS, DEFAULT_WORK_BODY, DEFAULT_WORK_US, HELLO_BODY, HELLO_RESPONSE, MAX_WORK_US,
    PLAINTEXT_BODY,
};

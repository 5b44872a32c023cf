//! Requests: what a client asks (`HttpRequest`) and the one renderer of its bytes (`RequestTemplate`),
//! which the load generator runs per request without allocating and every other client through `render`.

/// A request that is rendered to bytes once, before the run.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub method: String,
    pub path: String,
    pub host: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The body is `{"sequence": N}` with N counting up per connection (the `json` scenario).
    pub json_sequence: bool,
}

impl HttpRequest {
    pub fn get(path: &str) -> Self {
        HttpRequest {
            method: "GET".into(),
            path: path.into(),
            host: "bench".into(),
            headers: Vec::new(),
            body: Vec::new(),
            json_sequence: false,
        }
    }

    /// The `json` scenario's request: POST /ping with `{"sequence": N}`, N numbered per request.
    pub fn json_ping() -> Self {
        HttpRequest {
            method: "POST".into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
            json_sequence: true,
            ..HttpRequest::get("/ping")
        }
    }

    /// The body alone, as `render` sends it: for `json_sequence`, `{"sequence": N}` with N `sequence`.
    pub fn body_for(&self, sequence: u64) -> Vec<u8> {
        if self.json_sequence { format!("{{\"sequence\": {sequence}}}").into_bytes() } else { self.body.clone() }
    }

    /// This request with `Connection: close`: the server may close after answering, and the client sends
    /// nothing more on the connection (a connection per request). A `Connection` header already given is
    /// replaced.
    pub fn closing(&self) -> Self {
        let mut req = self.clone();
        req.headers.retain(|(k, _)| !k.eq_ignore_ascii_case("connection"));
        req.headers.push(("Connection".into(), "close".into()));
        req
    }

    /// The bytes of this request; for `json_sequence`, with `sequence` in the body.
    pub fn render(&self, sequence: u64) -> Vec<u8> {
        let template = RequestTemplate::new(self);
        let mut out = Vec::with_capacity(template.max_len());
        template.render(&mut out, sequence);
        out
    }
}

/// `GET path` as every client of the harness sends it.
pub fn get(path: &str) -> Vec<u8> {
    HttpRequest::get(path).render(0)
}

/// `POST /ping` with this JSON body, as the `json` scenario sends it.
pub fn post_json(body: &str) -> Vec<u8> {
    HttpRequest { body: body.as_bytes().to_vec(), json_sequence: false, ..HttpRequest::json_ping() }.render(0)
}

/// A request rendered once. For the `json` scenario the body's sequence number is written per request
/// into a buffer the caller owns, so no request allocates.
#[derive(Debug, Clone)]
pub struct RequestTemplate {
    /// The whole request, or for `json` the head up to and including `Content-Length: `.
    fixed: Vec<u8>,
    json_sequence: bool,
}

impl RequestTemplate {
    pub fn new(req: &HttpRequest) -> Self {
        let mut head = format!("{} {} HTTP/1.1\r\nHost: {}\r\n", req.method, req.path, req.host);
        for (k, v) in &req.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        let mut fixed = head.into_bytes();
        if req.json_sequence {
            fixed.extend_from_slice(b"Content-Length: ");
        } else {
            if !req.body.is_empty() || req.method == "POST" || req.method == "PUT" {
                fixed.extend_from_slice(format!("Content-Length: {}\r\n", req.body.len()).as_bytes());
            }
            fixed.extend_from_slice(b"\r\n");
            fixed.extend_from_slice(&req.body);
        }
        RequestTemplate { fixed, json_sequence: req.json_sequence }
    }

    /// The longest request this template renders.
    pub fn max_len(&self) -> usize {
        self.fixed.len() + if self.json_sequence { 64 } else { 0 }
    }

    /// Appends one request to `out` (which has room: see `max_len`).
    #[inline]
    pub fn render(&self, out: &mut Vec<u8>, sequence: u64) {
        out.extend_from_slice(&self.fixed);
        if self.json_sequence {
            let mut digits = [0u8; 20];
            let n = write_decimal(&mut digits, sequence);
            let body_len = b"{\"sequence\": }".len() + n;
            let mut len_digits = [0u8; 20];
            let m = write_decimal(&mut len_digits, body_len as u64);
            out.extend_from_slice(&len_digits[..m]);
            out.extend_from_slice(b"\r\n\r\n{\"sequence\": ");
            out.extend_from_slice(&digits[..n]);
            out.push(b'}');
        }
    }
}

fn write_decimal(buf: &mut [u8; 20], mut v: u64) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = 0;
    loop {
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        i += 1;
        if v == 0 {
            break;
        }
    }
    for j in 0..i {
        buf[j] = tmp[i - 1 - j];
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_requests_carry_the_sequence() {
        let t = RequestTemplate::new(&HttpRequest::for_scenario("json").unwrap());
        let mut out = Vec::with_capacity(t.max_len());
        t.render(&mut out, 1234);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("POST /ping HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 18\r\n\r\n"), "{text}");
        assert!(text.ends_with("\r\n\r\n{\"sequence\": 1234}"), "{text}");
    }

    #[test]
    fn the_body_alone_is_the_rendered_body() {
        let json = HttpRequest::for_scenario("json").unwrap();
        assert!(json.render(7).ends_with(&json.body_for(7)));
        assert_eq!(json.body_for(7), b"{\"sequence\": 7}");
        assert!(HttpRequest::for_scenario("hello").unwrap().body_for(7).is_empty());
    }

    #[test]
    fn hello_request_is_the_documented_one() {
        let t = RequestTemplate::new(&HttpRequest::for_scenario("hello").unwrap());
        let mut out = Vec::new();
        t.render(&mut out, 0);
        assert_eq!(out, b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n");
    }

    #[test]
    fn a_closing_request_says_so_once() {
        let mut req = HttpRequest::for_scenario("json").unwrap();
        req.headers.push(("connection".into(), "keep-alive".into()));
        let text = String::from_utf8(req.closing().render(7)).unwrap();
        assert!(text.starts_with("POST /ping HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 15\r\n\r\n"), "{text}");
        assert_eq!(text.matches("onnection").count(), 1, "{text}");
    }

    #[test]
    fn get_and_post_are_rendered_like_the_load_generator() {
        assert_eq!(get("/"), b"GET / HTTP/1.1\r\nHost: bench\r\n\r\n");
        assert_eq!(
            String::from_utf8(post_json("{}")).unwrap(),
            "POST /ping HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
        );
    }
}

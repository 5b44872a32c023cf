//! Debian's nginx started by a test, not a contestant: one process on a free loopback port with its default
//! keep-alive settings, answering `/` with `return 200 "Hello world!"`, `/plaintext` with `return 200
//! "Hello, World!"` and `/static/page.html` from a file.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Nginx {
    child: Child,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nginx_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("nginx")).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path.into_iter().chain([PathBuf::from("/usr/sbin/nginx")]).find(|p| p.is_file())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// nginx in one process with its default keep-alive settings.
fn start_nginx(binary: &Path) -> Nginx {
    let dir = tempfile::Builder::new().prefix("serverbench-nginx-").tempdir().unwrap();
    let root = dir.path().join("static");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("page.html"), "<p>".to_string() + &"x".repeat(4000) + "</p>\n").unwrap();
    let port = free_port();
    // As root the worker would switch to nobody, who cannot read a private temporary folder.
    let user = if is_root() { "user root;" } else { "" };
    let conf = format!(
        "{user}\ndaemon off;\nmaster_process off;\npid nginx.pid;\nerror_log error.log error;\n\
         events {{ }}\n\
         http {{\n  access_log off;\n  client_body_temp_path tmp_body;\n  proxy_temp_path tmp_proxy;\n  \
         fastcgi_temp_path tmp_fastcgi;\n  uwsgi_temp_path tmp_uwsgi;\n  scgi_temp_path tmp_scgi;\n  \
         server {{\n    listen 127.0.0.1:{port};\n    location = / {{ return 200 \"Hello world!\"; }}\n    \
         location = /plaintext {{ return 200 \"Hello, World!\"; }}\n    \
         location /static/ {{ root {}; }}\n  }}\n}}\n",
        dir.path().display()
    );
    std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
    let child = Command::new(binary)
        .arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(dir.path().join("nginx.conf"))
        .args(["-e", "stderr"])
        .stdin(Stdio::null())
        .spawn()
        .expect("nginx starts");
    let ready = super::eventually(Duration::from_secs(10), || TcpStream::connect(("127.0.0.1", port)).is_ok());
    assert!(ready, "nginx did not listen on 127.0.0.1:{port}");
    Nginx { child, port, _dir: dir }
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| super::text(&o.stdout).trim() == "0")
}

/// nginx started, or the test skipped (a failure under CI=true) where it is not installed.
pub fn nginx_or_skip(test: &str) -> Option<Nginx> {
    match nginx_binary() {
        Some(binary) => Some(start_nginx(&binary)),
        None => {
            super::skip(test, "nginx is not installed (apt-get install nginx)");
            None
        }
    }
}

//! Debian's PostgreSQL started by a test: a cluster made with `initdb` in a temporary folder and served by
//! `pg_ctl`, listening on no TCP address, only on a Unix socket in that folder, with trust authentication
//! for its one superuser. PostgreSQL refuses to run as root, so as root the cluster belongs to `nobody`
//! and its programs run through `runuser`. One server is shared by the tests of a binary that run at once,
//! each in a database of its own, and stopped (`pg_ctl stop -m immediate`) when the last of them drops its
//! `Database`, also when a test panics.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use anyhow::Context as _;

/// The superuser the cluster is made with; the tests connect as it.
pub const SUPERUSER: &str = "serverbench";
/// The unprivileged user that runs the cluster when the tests run as root.
const CLUSTER_USER: &str = "nobody";
/// The folder of Debian's PostgreSQL programs, one per installed version.
const DEBIAN_PROGRAMS: &str = "/usr/lib/postgresql";

/// A running cluster; stopped when dropped.
pub struct Server {
    programs: PathBuf,
    folder: tempfile::TempDir,
    /// Who runs the cluster's programs: None for the test's own user.
    run_as: Option<&'static str>,
}

impl Server {
    fn data(&self) -> PathBuf {
        self.folder.path().join("data")
    }

    /// The folder of the server's socket, the only place it listens.
    pub fn socket_folder(&self) -> &Path {
        self.folder.path()
    }

    fn command(&self, program: &str) -> Command {
        let path = self.programs.join(program);
        match self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    /// Runs one of the cluster's programs to its end; why it failed, if it did.
    fn run(&self, program: &str, args: &[&str]) -> anyhow::Result<()> {
        // In the cluster's folder: the user who runs it may not enter the test's own.
        let out = self.command(program).args(args).current_dir(self.folder.path()).stdin(Stdio::null()).output().with_context(|| format!("{program} cannot run"))?;
        if out.status.success() {
            return Ok(());
        }
        anyhow::bail!("{program} failed ({}): {}{}", out.status, super::text(&out.stdout), super::text(&out.stderr))
    }

    fn start() -> anyhow::Result<Server> {
        let programs = newest_programs().with_context(|| format!("PostgreSQL is not installed (no {DEBIAN_PROGRAMS}/<version>/bin/initdb; apt-get install postgresql)"))?;
        let folder = tempfile::Builder::new().prefix("serverbench-pg-").tempdir()?;
        let run_as = is_root().then_some(CLUSTER_USER);
        if let Some(user) = run_as {
            let chown = Command::new("chown").arg(user).arg(folder.path()).status().context("chown cannot run")?;
            anyhow::ensure!(chown.success(), "chown {user} {} failed", folder.path().display());
        }
        let server = Server { programs, folder, run_as };
        let data = server.data();
        let data = data.to_str().context("the temporary folder is not UTF-8")?;
        server.run("initdb", &["-D", data, "-U", SUPERUSER, "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync"])?;
        let log = server.folder.path().join("server.log");
        let options = format!("-c listen_addresses='' -k {} -c fsync=off", server.socket_folder().display());
        let started = server.run("pg_ctl", &["-D", data, "-l", log.to_str().unwrap_or_default(), "-o", &options, "-w", "-t", "30", "start"]);
        started.with_context(|| std::fs::read_to_string(&log).unwrap_or_default())?;
        Ok(server)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.run("pg_ctl", &["-D", data.to_str().unwrap_or_default(), "-m", "immediate", "-w", "stop"]);
    }
}

/// A database of its own on the shared server, for one test; the server stops after the last one.
pub struct Database {
    pub name: String,
    server: Arc<Server>,
}

impl Database {
    /// The setting that names it, as `SERVERBENCH_HISTORY` and `--db` take it.
    pub fn url(&self) -> String {
        let folder = self.server.socket_folder().to_string_lossy().replace('/', "%2F");
        format!("postgresql://{SUPERUSER}@{folder}/{}", self.name)
    }

    /// A client of it, for a test to look at what a history wrote.
    pub fn client(&self) -> postgres::Client {
        connect(&self.server, &self.name).unwrap()
    }
}

fn connect(server: &Server, database: &str) -> Result<postgres::Client, postgres::Error> {
    let mut config = postgres::Config::new();
    config.host_path(server.socket_folder()).user(SUPERUSER).dbname(database);
    config.connect(postgres::NoTls)
}

/// The shared server, started by the first test that asks while none runs.
fn shared_server() -> anyhow::Result<Arc<Server>> {
    static SHARED: Mutex<Weak<Server>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(server) = shared.upgrade() {
        return Ok(server);
    }
    let server = Arc::new(Server::start()?);
    *shared = Arc::downgrade(&server);
    Ok(server)
}

/// A fresh database for `test` on a server started for the tests, or the test skipped (a failure
/// under CI=true) with why PostgreSQL could not be started.
pub fn database_or_skip(test: &str) -> Option<Database> {
    let made = shared_server().and_then(|server| {
        // A number, not the test's name: PostgreSQL cuts names at 63 bytes.
        static DATABASES: AtomicU32 = AtomicU32::new(0);
        let name = format!("history_{}", DATABASES.fetch_add(1, Ordering::Relaxed));
        let mut admin = connect(&server, "postgres").context("cannot connect to the test's server")?;
        // One statement a call: CREATE DATABASE refuses the transaction that a batch of several runs in.
        for sql in [format!("DROP DATABASE IF EXISTS {name}"), format!("CREATE DATABASE {name}")] {
            admin.batch_execute(&sql).with_context(|| format!("cannot make database {name}"))?;
        }
        Ok(Database { name, server })
    });
    match made {
        Ok(database) => Some(database),
        Err(why) => {
            super::skip(test, &format!("PostgreSQL cannot be started: {why:#}"));
            None
        }
    }
}

/// The programs of the newest PostgreSQL installed the Debian way.
fn newest_programs() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(DEBIAN_PROGRAMS)
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, bin): &(u32, PathBuf)| bin.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

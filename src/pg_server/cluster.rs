//! A throwaway PostgreSQL cluster: PostgreSQL's own `initdb` and
//! `postgres` on a Unix socket in a temporary folder, listening on no
//! network address, run as the `postgres` user when the lab runs as root
//! (PostgreSQL refuses to run as root). It is stopped and its folder
//! removed when the [`Cluster`] is dropped, or, when the run is ended by
//! Ctrl-C or SIGTERM, by the lab's handler ([`crate::pg_server::leftovers`]); after a
//! SIGKILL of the lab itself, the server stays until it is stopped by hand.

use super::{ServerError, TRIES, TRY_EVERY};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// A throwaway cluster, running until dropped.
#[derive(Debug)]
pub struct Cluster {
    /// The server's process.
    server: Child,
    /// How to start it again after a crash: the program and its arguments,
    /// run as the server's user.
    start: Start,
    /// Its folder: the data directory and the socket's.
    folder: tempfile::TempDir,
    /// How to connect to it.
    dsn: String,
    /// The WAL writer's process, while it is paused
    /// ([`Cluster::pause_wal_writer`]).
    wal_writer_paused: Option<libc::pid_t>,
    /// The server's process id, as an interrupt's removal finds it (it
    /// changes with each restart).
    server_pid: Arc<AtomicI32>,
    /// The cluster's removal on an interrupt ([`crate::pg_server::leftovers`]).
    _leftover: crate::pg_server::leftovers::Registered,
}

/// How a cluster's server is started.
#[derive(Debug)]
struct Start {
    /// The `postgres` program.
    program: PathBuf,
    /// Its arguments: the data directory, the socket and the settings.
    args: Vec<std::ffi::OsString>,
    /// The user it runs as, when the lab runs as root.
    owner: Option<(u32, u32)>,
    /// The network namespace it runs in, when not the lab's.
    network: Option<PathBuf>,
}

impl Start {
    /// Starts the server.
    fn spawn(&self) -> std::io::Result<Child> {
        let mut run = Command::new(&self.program);
        run.args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let Some(network) = &self.network else {
            return as_server_user(&mut run, self.owner).spawn();
        };
        super::hosts::spawn_inside(&mut run, network, self.owner)
    }
}

impl Cluster {
    /// Makes a cluster in a new folder under `scratch` and starts it.
    ///
    /// Errors: PostgreSQL is not installed, or a step failed (its output
    /// said).
    pub fn start(scratch: &Path) -> Result<Cluster, ServerError> {
        Cluster::start_in(scratch, None)
    }

    /// [`Cluster::start`], the server in the server's namespace of `hosts`,
    /// listening there on TCP too, to the workers' links only (trusted, as
    /// the socket is), and quick to see a client whose link was cut (TCP
    /// keepalives every second), so that a cut client's transaction does
    /// not hold its row locks for long.
    ///
    /// Errors: as [`Cluster::start`].
    pub fn start_on(scratch: &Path, hosts: &super::Hosts) -> Result<Cluster, ServerError> {
        Cluster::start_in(scratch, Some(hosts))
    }

    fn start_in(scratch: &Path, hosts: Option<&super::Hosts>) -> Result<Cluster, ServerError> {
        let initdb = find("initdb")?;
        let postgres = find("postgres")?;
        let step = |step: &'static str| {
            move |error: std::io::Error| ServerError::Step {
                step,
                detail: error.to_string(),
            }
        };
        let folder = tempfile::Builder::new()
            .prefix("lease-lab-pg-")
            .tempdir_in(scratch)
            .map_err(step("making its folder"))?;
        // Removed on an interrupt from now on, and its server stopped once
        // there is one (no process id until then).
        let server_pid = Arc::new(AtomicI32::new(0));
        let leftover = {
            let (pid, folder) = (Arc::clone(&server_pid), folder.path().to_path_buf());
            crate::pg_server::leftovers::register(move || {
                stop_and_remove(pid.load(Ordering::SeqCst), &folder)
            })
        };
        let data = folder.path().join("data");
        let owner = server_user();
        if let Some((uid, gid)) = owner {
            // The server's user must own its folder, and reach it.
            chown(folder.path(), uid, gid).map_err(step("handing its folder to postgres"))?;
            std::fs::set_permissions(folder.path(), std::fs::Permissions::from_mode(0o700))
                .map_err(step("handing its folder to postgres"))?;
        }
        run_initdb(&initdb, &data, owner)?;
        let settings = settings(folder.path(), &data, hosts.is_some())?;
        let mut args: Vec<std::ffi::OsString> = vec!["-D".into(), data.into()];
        for setting in settings {
            args.extend(["-c".into(), setting.into()]);
        }
        let start = Start {
            program: postgres,
            args,
            owner,
            network: hosts.map(super::Hosts::server_namespace),
        };
        let server = start.spawn().map_err(step("starting postgres"))?;
        let dsn = format!("host={} user=lab dbname=postgres", folder.path().display());
        server_pid.store(pid_of(&server), Ordering::SeqCst);
        let mut cluster = Cluster {
            server,
            start,
            folder,
            dsn,
            wal_writer_paused: None,
            server_pid,
            _leftover: leftover,
        };
        cluster.wait_until_ready()?;
        Ok(cluster)
    }

    /// How to connect to it.
    pub fn dsn(&self) -> &str {
        &self.dsn
    }

    /// The folder that holds it.
    pub fn folder(&self) -> &Path {
        self.folder.path()
    }

    /// Pauses the server's WAL writer (SIGSTOP), the background process
    /// that writes out, every 200 ms or when woken, the write-ahead log
    /// that commits left in memory without waiting for it (an asynchronous
    /// commit, `synchronous_commit = off`). Paused, it cannot win the race
    /// with a crash that follows a commit by a few milliseconds: what a
    /// commit did not write itself is lost, every time, not by chance. A
    /// synchronous commit writes and flushes its log itself and does not
    /// depend on it. [`Cluster::crash_and_restart`] starts a new one.
    ///
    /// Errors: the server cannot be asked for the writer's process, or has
    /// none.
    pub fn pause_wal_writer(&mut self) -> Result<(), String> {
        let mut client = postgres::Client::connect(&self.dsn, postgres::NoTls)
            .map_err(|error| error.to_string())?;
        let row = client
            .query_opt(
                "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'",
                &[],
            )
            .map_err(|error| error.to_string())?
            .ok_or("the server has no WAL writer")?;
        let pid: i32 = row.get(0);
        if !signal(pid, libc::SIGSTOP) {
            return Err(format!(
                "cannot pause the WAL writer ({pid}): {}",
                std::io::Error::last_os_error()
            ));
        }
        self.wal_writer_paused = Some(pid);
        Ok(())
    }

    /// Crashes the server as a power cut or an out-of-memory kill would:
    /// SIGKILL to it and to every process it started, with no shutdown, so
    /// that only what its write-ahead log had written survives; then
    /// starts it again on the same folder (it recovers from that log) and
    /// waits until it accepts connections.
    ///
    /// Errors: a process would not die, or the server could not be started
    /// again, or accepted no connection.
    pub fn crash_and_restart(&mut self) -> Result<(), ServerError> {
        let failed = |detail: String| ServerError::Step {
            step: "crashing postgres",
            detail,
        };
        let pid = libc::pid_t::try_from(self.server.id())
            .map_err(|_| failed("the server's process id is out of range".into()))?;
        // Stopped first, so that it starts no process while its own are
        // listed, nor reacts to their deaths; each of them leads a process
        // group of its own (PostgreSQL's children call setsid), so that
        // they are found by their parent, not by a group.
        signal(pid, libc::SIGSTOP);
        // A signal is delivered after kill(2) returns: until the server has
        // stopped, it may still start a process for a connection, which a
        // list made too early would miss and leave running for ever.
        wait_until_stopped(pid);
        let children = children_of(pid);
        for child in &children {
            signal(*child, libc::SIGKILL);
        }
        signal(pid, libc::SIGKILL);
        let _ = self.server.wait();
        // Until the last of them is gone, a new server would refuse the
        // folder's shared memory as still in use.
        if let Some(alive) = wait_until_gone(&children) {
            return Err(failed(format!("process {alive} is still alive")));
        }
        self.server = self.start.spawn().map_err(|error| ServerError::Step {
            step: "starting postgres again",
            detail: error.to_string(),
        })?;
        self.server_pid
            .store(pid_of(&self.server), Ordering::SeqCst);
        self.wal_writer_paused = None;
        self.wait_until_ready()
    }

    /// Waits until the server accepts a connection: tries every
    /// [`TRY_EVERY`], [`TRIES`] times at most.
    fn wait_until_ready(&mut self) -> Result<(), ServerError> {
        for _ in 0..TRIES {
            if postgres::Client::connect(&self.dsn, postgres::NoTls).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.server.try_wait() {
                let mut said = String::new();
                if let Some(mut stderr) = self.server.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut stderr, &mut said);
                }
                return Err(ServerError::Step {
                    step: "starting postgres",
                    detail: format!("it ended ({status}): {}", said.trim()),
                });
            }
            std::thread::sleep(TRY_EVERY);
        }
        Err(ServerError::Step {
            step: "starting postgres",
            detail: format!(
                "it accepted no connection in {} s",
                (TRY_EVERY * TRIES).as_secs()
            ),
        })
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // A paused WAL writer could not take part in the shutdown, which
        // would wait for it for ever.
        if let Some(wal_writer) = self.wal_writer_paused.take() {
            signal(wal_writer, libc::SIGCONT);
        }
        // SIGINT: PostgreSQL's fast shutdown (the clients are cut off, the
        // server ends at once); then the folder goes with `folder`.
        if let Ok(pid) = libc::pid_t::try_from(self.server.id()) {
            signal(pid, libc::SIGINT);
        }
        let _ = self.server.wait();
    }
}

/// Runs `initdb` on `data`, as the server's user (`owner`) when there is
/// one: the lab's user `lab`, trusted, no sync (a throwaway cluster).
///
/// Errors: it could not start, or failed (its own words).
fn run_initdb(initdb: &Path, data: &Path, owner: Option<(u32, u32)>) -> Result<(), ServerError> {
    let mut init = Command::new(initdb);
    init.args([
        "--auth=trust",
        "--username=lab",
        "--encoding=UTF8",
        "--no-sync",
        "-D",
    ])
    .arg(data);
    let output = as_server_user(&mut init, owner)
        .output()
        .map_err(|error| ServerError::Step {
            step: "initdb",
            detail: error.to_string(),
        })?;
    if !output.status.success() {
        return Err(ServerError::Step {
            step: "initdb",
            detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(())
}

/// The server's settings: its socket in `folder`, every commit synced;
/// listening on no address, or, `on_hosts`, on every address of its
/// namespace with keepalives every second, the workers' links let in
/// (`pg_hba.conf` of `data`).
///
/// Errors: `pg_hba.conf` could not be written.
fn settings(folder: &Path, data: &Path, on_hosts: bool) -> Result<Vec<String>, ServerError> {
    let mut settings = vec![
        format!("unix_socket_directories={}", folder.display()),
        "fsync=on".to_string(),
        "synchronous_commit=on".to_string(),
    ];
    if !on_hosts {
        settings.push("listen_addresses=".to_string());
        return Ok(settings);
    }
    // (Every address of its namespace: its links' ends, and lo.)
    settings.extend(
        [
            "listen_addresses=*",
            "tcp_keepalives_idle=1",
            "tcp_keepalives_interval=1",
            "tcp_keepalives_count=2",
            "tcp_user_timeout=2000",
        ]
        .map(String::from),
    );
    let failed = |error: std::io::Error| ServerError::Step {
        step: "letting the workers' links in",
        detail: error.to_string(),
    };
    let mut hba = std::fs::OpenOptions::new()
        .append(true)
        .open(data.join("pg_hba.conf"))
        .map_err(failed)?;
    std::io::Write::write_all(
        &mut hba,
        format!("host all all {} trust\n", super::hosts::NETWORKS).as_bytes(),
    )
    .map_err(failed)?;
    Ok(settings)
}

/// The process id of `child` as kill(2) takes it (0, which signals no
/// one here, if out of range).
fn pid_of(child: &Child) -> libc::pid_t {
    libc::pid_t::try_from(child.id()).unwrap_or(0)
}

/// An interrupted run's removal of a cluster ([`crate::pg_server::leftovers`]): the
/// server's processes woken (a paused WAL writer would hold the shutdown
/// up), its fast shutdown asked for and waited for (10 s at most, then
/// SIGKILL), when it has a server (`pid` 0 before it started), and its
/// `folder` removed (an `initdb` still writing there then fails).
fn stop_and_remove(pid: libc::pid_t, folder: &Path) {
    if pid > 0 {
        for child in children_of(pid) {
            signal(child, libc::SIGCONT);
        }
        signal(pid, libc::SIGINT);
        if wait_until_gone(&[pid]).is_some() {
            signal(pid, libc::SIGKILL);
            wait_until_gone(&[pid]);
        }
    }
    let _ = std::fs::remove_dir_all(folder);
}

/// Sends `signal` to the process `pid`: whether it was sent.
fn signal(pid: libc::pid_t, signal: libc::c_int) -> bool {
    // SAFETY: kill(2) has no memory effects; a pid gone gives ESRCH.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// The processes whose parent is `parent`, from /proc.
fn children_of(parent: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            entry
                .ok()?
                .file_name()
                .to_str()?
                .parse::<libc::pid_t>()
                .ok()
        })
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// The parent of the process `pid`, from /proc/PID/stat: the field after
/// the state, which follows the parenthesized command name (which may hold
/// spaces and parentheses itself, hence the last `)`).
fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The state of the process `pid` (`R`, `S`, `T` for stopped, `Z`...), from
/// /proc/PID/stat; `None` once it is gone.
fn state_of(pid: libc::pid_t) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().next().map(str::to_string)
}

/// Waits, for 1 s at most, until the process `pid` has stopped (or gone).
fn wait_until_stopped(pid: libc::pid_t) {
    for _ in 0..1000 {
        match state_of(pid).as_deref() {
            Some("T" | "t") | None => return,
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
        }
    }
}

/// Waits, for 10 s at most, until none of `pids` is alive (a zombie, dead
/// but not yet reaped, counts as gone): `None`, or one still alive.
fn wait_until_gone(pids: &[libc::pid_t]) -> Option<libc::pid_t> {
    let alive =
        |pid: &libc::pid_t| state_of(*pid).is_some_and(|state| state != "Z" && state != "X");
    for _ in 0..200 {
        match pids.iter().find(|pid| alive(pid)) {
            None => return None,
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
    pids.iter().copied().find(|pid| alive(pid))
}

/// PostgreSQL's `program`, on the PATH or where Debian installs it.
fn find(program: &'static str) -> Result<PathBuf, ServerError> {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    let mut debian: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|versions| {
            versions
                .filter_map(|version| version.ok().map(|entry| entry.path().join("bin")))
                .collect()
        })
        .unwrap_or_default();
    // The newest version first.
    debian.sort();
    debian.reverse();
    on_path
        .into_iter()
        .chain(debian)
        .map(|folder| folder.join(program))
        .find(|candidate| candidate.is_file())
        .ok_or(ServerError::NotInstalled { program })
}

/// The `postgres` user's uid and gid when the lab runs as root (the server
/// refuses to run as root), else `None`: the server runs as the lab's user.
fn server_user() -> Option<(u32, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let name = std::ffi::CString::new("postgres").ok()?;
    // SAFETY: getpwnam takes a NUL-terminated name and answers a pointer to
    // static storage or null; it is read at once.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        return None;
    }
    // SAFETY: `entry` is a valid passwd record (checked non-null above).
    Some(unsafe { ((*entry).pw_uid, (*entry).pw_gid) })
}

/// `command` run as `owner` (uid, gid) when there is one.
fn as_server_user(command: &mut Command, owner: Option<(u32, u32)>) -> &mut Command {
    if let Some((uid, gid)) = owner {
        command.uid(uid).gid(gid).env("HOME", "/tmp");
    }
    command
}

/// Gives `path` to `uid` and `gid`.
fn chown(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::os::unix::fs::chown(path, Some(uid), Some(gid))
}

//! Hosts of their own on this machine: a network namespace for the server
//! and one for each worker, each worker's joined to the server's by a veth
//! pair of its own (`10.77.I.1` on the server's side, `10.77.I.2` on worker
//! I's), so that the workers reach the server over TCP, as machines of a
//! network do, and one worker's link can be cut while the others go on.
//!
//! Made with `ip` (iproute2), which needs root. The addresses exist only
//! inside these namespaces: nothing outside this machine, nor this
//! machine's own network, is ever addressed. Dropped, the namespaces go,
//! and their links with them; a run ended by Ctrl-C or SIGTERM removes
//! them too ([`crate::pg_server::leftovers`]), one ended by SIGKILL leaves them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The most workers a run on hosts has: one `/30` network each, under
/// `10.77.0.0/16`.
pub const MOST_WORKERS: usize = 64;

/// The networks of the links, as PostgreSQL's `pg_hba.conf` names them.
pub const NETWORKS: &str = "10.77.0.0/16";

/// Why the hosts could not be made, or a link cut or mended.
#[derive(Debug, thiserror::Error)]
pub enum HostsError {
    /// Namespaces need root.
    #[error(
        "hosts of their own (--hosts, --partition) are network namespaces, which need \
         root: run the lab as root, or leave the option out"
    )]
    NotRoot,
    /// `ip` is not installed.
    #[error(
        "hosts of their own (--hosts, --partition) are network namespaces, made with the \
         `ip` program: install it (on Debian or Ubuntu: `apt-get install iproute2`), or \
         leave the option out"
    )]
    NoIp,
    /// Too many workers for the links' addresses.
    #[error("--hosts gives each worker a network of its own, {MOST_WORKERS} at most (got {0})")]
    TooMany(usize),
    /// An `ip` command failed.
    #[error("`ip {args}` failed: {said}")]
    Ip {
        /// Its arguments.
        args: String,
        /// What it said.
        said: String,
    },
}

/// A server's namespace and its workers', linked, until dropped.
#[derive(Debug)]
pub struct Hosts {
    /// The `ip` program.
    ip: PathBuf,
    /// The server's namespace.
    server: String,
    /// Each worker's namespace and the name of its link's end on the
    /// server's side, which a cut takes down.
    workers: Vec<(String, String)>,
    /// Their removal on an interrupt ([`crate::pg_server::leftovers`]), once made.
    leftover: Option<crate::pg_server::leftovers::Registered>,
}

/// Runs made by this process so far: each names its namespaces anew.
static MADE: AtomicUsize = AtomicUsize::new(0);

impl Hosts {
    /// A namespace for the server and one for each of `workers` workers,
    /// each linked to the server's, every link up.
    ///
    /// Errors: not root, no `ip`, too many workers, or an `ip` command
    /// failed (what was made so far is removed).
    pub fn make(workers: usize) -> Result<Hosts, HostsError> {
        if workers > MOST_WORKERS {
            return Err(HostsError::TooMany(workers));
        }
        let ip = Hosts::can_be_made()?;
        // Interface names have 15 bytes at most: a short tag of the run.
        let tag = format!(
            "{:x}{:x}",
            std::process::id() % 0x10_0000,
            MADE.fetch_add(1, Ordering::SeqCst) % 0x100
        );
        let mut hosts = Hosts {
            ip,
            server: format!("lease-lab-{tag}-server"),
            workers: Vec::new(),
            leftover: None,
        };
        hosts.ip(&["netns", "add", &hosts.server.clone()])?;
        let server = hosts.server.clone();
        hosts.ip(&["-n", &server, "link", "set", "lo", "up"])?;
        for index in 0..workers {
            hosts.add_worker(&tag, index)?;
        }
        let (ip, namespaces) = (hosts.ip.clone(), hosts.namespaces());
        hosts.leftover = Some(crate::pg_server::leftovers::register(move || {
            for namespace in namespaces {
                let _ = Command::new(&ip)
                    .args(["netns", "delete", &namespace])
                    .output();
            }
        }));
        Ok(hosts)
    }

    /// Whether hosts can be made here: the lab runs as root, and `ip` is
    /// installed (its path, then), so that a command can say so before it
    /// says what it will make.
    ///
    /// Errors: not root, or no `ip`.
    pub fn can_be_made() -> Result<PathBuf, HostsError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(HostsError::NotRoot);
        }
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
            .iter()
            .map(PathBuf::from)
            .find(|path| path.is_file())
            .ok_or(HostsError::NoIp)
    }

    /// Worker `index`'s namespace (of the run tagged `tag`), linked to the
    /// server's by a veth pair of its own, each end with its address and
    /// the other's hardware address, every link up.
    ///
    /// Errors: an `ip` command failed.
    fn add_worker(&mut self, tag: &str, index: usize) -> Result<(), HostsError> {
        let server = self.server.clone();
        let namespace = format!("lease-lab-{tag}-w{index}");
        let (near, far) = (format!("ll{tag}s{index}"), format!("ll{tag}w{index}"));
        self.ip(&["netns", "add", &namespace])?;
        self.workers.push((namespace.clone(), near.clone()));
        let (server_address, worker_address) = addresses(index);
        let (server_mac, worker_mac) = macs(index);
        self.ip(&[
            "link",
            "add",
            &near,
            "address",
            &server_mac,
            "netns",
            &server,
            "type",
            "veth",
            "peer",
            "name",
            &far,
            "address",
            &worker_mac,
            "netns",
            &namespace,
        ])?;
        for (inside, address, device, neighbour, mac) in [
            (
                &server,
                &server_address,
                &near,
                &worker_address,
                &worker_mac,
            ),
            (
                &namespace,
                &worker_address,
                &far,
                &server_address,
                &server_mac,
            ),
        ] {
            self.ip(&[
                "-n",
                inside,
                "addr",
                "add",
                &format!("{address}/30"),
                "dev",
                device,
            ])?;
            // Each end knows the other's hardware address for good: no
            // ARP, whose failures while a link is cut would outlive
            // the cut ("no route to host").
            self.ip(&[
                "-n",
                inside,
                "neigh",
                "replace",
                neighbour,
                "lladdr",
                mac,
                "dev",
                device,
                "nud",
                "permanent",
            ])?;
        }
        self.ip(&["-n", &server, "link", "set", &near, "up"])?;
        self.ip(&["-n", &namespace, "link", "set", &far, "up"])?;
        self.ip(&["-n", &namespace, "link", "set", "lo", "up"])?;
        Ok(())
    }

    /// Runs `ip ARGS`.
    fn ip(&self, args: &[&str]) -> Result<(), HostsError> {
        let failed = |said: String| HostsError::Ip {
            args: args.join(" "),
            said,
        };
        let output = Command::new(&self.ip)
            .args(args)
            .output()
            .map_err(|error| failed(error.to_string()))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(failed(
                String::from_utf8_lossy(&output.stderr).trim().to_string(),
            ))
        }
    }

    /// The server's namespace, as a file a process can enter (`setns`).
    pub fn server_namespace(&self) -> PathBuf {
        Path::new("/run/netns").join(&self.server)
    }

    /// The server's address as worker `index` reaches it.
    pub fn server_address(&self, index: usize) -> String {
        addresses(index).0
    }

    /// The words that start a program in worker `index`'s namespace, before
    /// the program's own.
    pub fn worker_prefix(&self, index: usize) -> Vec<String> {
        vec![
            self.ip.to_string_lossy().into_owned(),
            "netns".into(),
            "exec".into(),
            self.workers[index].0.clone(),
        ]
    }

    /// Cuts worker `index`'s link: its end on the server's side goes down,
    /// and nothing passes either way until it is mended.
    ///
    /// Errors: `ip` failed.
    pub fn cut(&self, index: usize) -> Result<(), HostsError> {
        self.set_link(index, "down")
    }

    /// Mends worker `index`'s link.
    ///
    /// Errors: `ip` failed.
    pub fn mend(&self, index: usize) -> Result<(), HostsError> {
        self.set_link(index, "up")
    }

    fn set_link(&self, index: usize, state: &str) -> Result<(), HostsError> {
        let (_, near) = &self.workers[index];
        self.ip(&["-n", &self.server, "link", "set", near, state])
    }

    /// Every namespace these hosts made, the server's first.
    pub fn namespaces(&self) -> Vec<String> {
        std::iter::once(self.server.clone())
            .chain(self.workers.iter().map(|(namespace, _)| namespace.clone()))
            .collect()
    }
}

/// The hardware addresses of link `index`'s ends (locally administered):
/// the server's, the worker's.
fn macs(index: usize) -> (String, String) {
    (
        format!("02:77:00:{index:02x}:00:01"),
        format!("02:77:00:{index:02x}:00:02"),
    )
}

/// Starts `command` in the network namespace `network` (a file of
/// `/run/netns`), as `owner` (uid, gid) when there is one: the child enters
/// the namespace first, while it is still root, then becomes that user
/// itself (a command told to run as another user would become it before it
/// could enter).
///
/// Errors: the namespace cannot be opened, or the child could not start.
pub(super) fn spawn_inside(
    command: &mut Command,
    network: &Path,
    owner: Option<(u32, u32)>,
) -> std::io::Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    let namespace = std::fs::File::open(network)?;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&namespace);
    if owner.is_some() {
        command.env("HOME", "/tmp");
    }
    // SAFETY: between fork and exec the closure makes only system calls
    // (setns, setgroups, setgid, setuid), which are async-signal-safe, and
    // allocates nothing; `namespace` stays open until `spawn` returns.
    unsafe {
        command.pre_exec(move || {
            let check = |result: libc::c_int| {
                if result == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            };
            check(libc::setns(fd, libc::CLONE_NEWNET))?;
            if let Some((uid, gid)) = owner {
                check(libc::setgroups(0, std::ptr::null()))?;
                check(libc::setgid(gid))?;
                check(libc::setuid(uid))?;
            }
            Ok(())
        });
    }
    let child = command.spawn();
    drop(namespace);
    child
}

/// The addresses of link `index`: the server's end, the worker's end.
fn addresses(index: usize) -> (String, String) {
    (format!("10.77.{index}.1"), format!("10.77.{index}.2"))
}

impl Drop for Hosts {
    /// Removes every namespace; a veth pair goes with either of its ends'.
    fn drop(&mut self) {
        for namespace in self.namespaces() {
            let _ = self.ip(&["netns", "delete", &namespace]);
        }
    }
}

//! The sandbox for code the lab runs that is not its own: a student's
//! program and its build, when a class is graded (`lab grade --impl-dir`)
//! or a submission is checked for an autograder (`lab check --format
//! gradescope|prairielearn`). Only that code runs inside; the lab's check,
//! the judge, runs outside as the instructor, talks to the program over
//! pipes and reads the test databases itself.
//!
//! The sandbox is bubblewrap's (`bwrap`, the one Flatpak uses), which
//! others maintain and audit, with the lab's seccomp filters
//! ([`seccomp`]). What a sandboxed program gets, and nothing more:
//! - namespaces of its own (user, processes, network, IPC, host name,
//!   control groups): no network at all, not even a socket file of the
//!   machine's (abstract sockets are per network namespace), no process
//!   of the lab's to see, signal or trace; it may make no namespace more;
//! - a new session without a controlling terminal, and an environment
//!   emptied to what the program needs;
//! - an empty root with only the tools bound read-only (`/usr`, the
//!   loader's files, the tool folders on the `PATH`: never a home folder
//!   whole), a `/proc` and `/dev` of its own, a private `/tmp` and
//!   `/dev/shm` of a fixed size, and the folders it is given to write;
//! - the caps of [`Limits`]: memory (the temporary folders included, in a
//!   control group where one can be made, see [`cgroup`]), processes, CPU
//!   time, open files, file size; the judge caps its output.
//!
//! It runs as the user who runs the lab, root or not, wherever the kernel
//! lets users make namespaces; as root, its processes still have no
//! privilege outside their namespaces. [`probe`] says, in one line, when
//! none can be made and what to install.

pub mod cgroup;
pub mod room;
pub mod seccomp;

use cgroup::Cgroup;
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

/// What one submission may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The memory of all its processes together, its temporary folders'
    /// pages included, where a control group holds them; the address
    /// space of each process otherwise.
    pub memory: u64,
    /// The address space of each process (a process that asks for more
    /// gets an out-of-memory error it can report, before the group's
    /// cap would kill it).
    pub address_space: u64,
    /// Its private `/tmp`.
    pub tmp: u64,
    /// Its private `/dev/shm`.
    pub shm: u64,
    /// The folder of the tests' databases (and a build's), which the
    /// judge shares with it: its disk.
    pub disk: u64,
    /// Processes and threads at once.
    pub processes: u64,
    /// CPU seconds of each process.
    pub cpu_seconds: u64,
    /// Files open at once in each process.
    pub open_files: u64,
    /// The largest file it may write.
    pub file_size: u64,
    /// What the judge reads of its output: one line at most.
    pub line: usize,
    /// What the judge reads of its output: everything, over a check.
    pub output: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            memory: 2 << 30,
            address_space: 3 << 30,
            tmp: 256 << 20,
            shm: 64 << 20,
            disk: 512 << 20,
            processes: 256,
            cpu_seconds: 120,
            open_files: 1024,
            file_size: 256 << 20,
            line: 1 << 20,
            output: 64 << 20,
        }
    }
}

/// `bytes` as people read a size: whole GiB or MiB.
pub fn size(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else {
        format!("{} MiB", bytes >> 20)
    }
}

/// Why a sandbox cannot be made, or a program not started in one.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// bubblewrap is not installed.
    #[error("bubblewrap (bwrap) is not installed: install it (Debian and Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)")]
    NoBubblewrap,
    /// bubblewrap is there but made no sandbox: what it said.
    #[error("bubblewrap cannot make a sandbox here: {0}")]
    Refused(String),
    /// The seccomp filters could not be made.
    #[error(transparent)]
    Filter(#[from] seccomp::FilterError),
    /// Starting bubblewrap failed.
    #[error("cannot start {program}: {error}")]
    Start {
        /// bubblewrap's path.
        program: String,
        /// Why.
        error: std::io::Error,
    },
}

/// A sandbox: what its programs are shown and may write, their
/// environment, their limits and the control group they join.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// Files and folders shown read-only, each at its own path.
    pub shown: Vec<PathBuf>,
    /// Folders its programs may write, each at its own path.
    pub writable: Vec<PathBuf>,
    /// Its programs' whole environment (besides what a command adds).
    pub env: Vec<(String, String)>,
    /// Its limits.
    pub limits: Limits,
    /// The group its processes join, where one could be made.
    pub cgroup: Option<Arc<Cgroup>>,
    /// Programs named by the name a command gives them, started directly:
    /// `python3` as the interpreter it is, not through a launcher (pyenv's
    /// shim is a shell script, a tenth of a second at every start).
    pub programs: Vec<(String, PathBuf)>,
}

/// A program ready to start: the command, and, in a sandbox, the files
/// bubblewrap reads at its start (the seccomp filters), kept open until
/// it has started.
pub struct Prepared {
    /// The command: bubblewrap with its arguments and the program's, or
    /// the program itself.
    pub command: Command,
    _filters: Vec<OwnedFd>,
    /// Where bubblewrap says which process is the program: the pipe's
    /// reading end, and its writing end until the command has started.
    info: Option<(std::io::PipeReader, Option<std::io::PipeWriter>)>,
}

impl Prepared {
    /// `command` as it is, outside any sandbox.
    pub fn plain(command: Command) -> Prepared {
        Prepared {
            command,
            _filters: Vec::new(),
            info: None,
        }
    }

    /// Once the command has started: the process id of the program in
    /// its sandbox, as this system numbers it (bubblewrap's own is the
    /// command's); `None` outside a sandbox, or when bubblewrap made none.
    /// Signals for the program (a stack dump's) and a look at its threads
    /// go there.
    pub fn program_id(&mut self) -> Option<u32> {
        use std::io::Read;
        let (reader, writer) = self.info.as_mut()?;
        // Only bubblewrap's copy of the writing end is left: the read ends
        // when it has said what it says.
        drop(writer.take());
        let mut said = String::new();
        reader.read_to_string(&mut said).ok()?;
        let info: serde_json::Value = serde_json::from_str(&said).ok()?;
        info["child-pid"]
            .as_u64()
            .and_then(|pid| u32::try_from(pid).ok())
    }
}

impl Sandbox {
    /// The sandbox of a check's programs: [`Sandbox::plain`], with a
    /// control group of its own where one can be made (named for `cgroup`
    /// when given, see [`cgroup::remove_named`]) and `python3` started as
    /// the interpreter it is ([`Sandbox::programs`]).
    pub fn for_programs(writable: Vec<PathBuf>, limits: Limits, cgroup: Option<&str>) -> Sandbox {
        let plain = Sandbox::plain(writable, limits);
        Sandbox {
            cgroup: Cgroup::make(cgroup, limits.memory, limits.processes)
                .ok()
                .map(Arc::new),
            programs: interpreter("python3", &plain.shown)
                .map(|found| ("python3".to_string(), found))
                .into_iter()
                .collect(),
            ..plain
        }
    }

    /// A sandbox with the tools of this process's `PATH` shown (see
    /// [`tools_shown`]), `writable` to write, and the environment emptied
    /// to `PATH`, `HOME`, `TMPDIR` and the language; no control group, and
    /// programs started as named.
    pub fn plain(writable: Vec<PathBuf>, limits: Limits) -> Sandbox {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let homes: Vec<PathBuf> = std::env::var_os("HOME")
            .map(PathBuf::from)
            .into_iter()
            .chain(["/root".into(), "/home".into()])
            .filter_map(|home| home.canonicalize().ok())
            .collect();
        let mut shown = system_files();
        for tool in tools_shown(&path, &homes) {
            if !shown.iter().any(|seen| tool.starts_with(seen)) {
                shown.push(tool);
            }
        }
        let inside_path = std::env::split_paths(&path)
            .filter(|entry| shown.iter().any(|seen| entry.starts_with(seen)) || is_system(entry))
            .map(|entry| entry.display().to_string())
            .collect::<Vec<_>>()
            .join(":");
        Sandbox {
            programs: Vec::new(),
            shown,
            writable,
            env: vec![
                ("PATH".into(), inside_path),
                ("HOME".into(), "/tmp".into()),
                ("TMPDIR".into(), "/tmp".into()),
                ("LANG".into(), "C.UTF-8".into()),
            ],
            limits,
            cgroup: None,
        }
    }

    /// bubblewrap's arguments that run `argv` in this sandbox, in `dir`,
    /// with `env` added to its environment, and the seccomp filters read
    /// from `filters`.
    pub fn args(
        &self,
        argv: &[String],
        dir: &Path,
        env: &[(String, String)],
        filters: &[RawFd],
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        fn push<const N: usize>(args: &mut Vec<OsString>, words: [&dyn AsRef<OsStr>; N]) {
            args.extend(words.iter().map(|word| word.as_ref().to_os_string()));
        }
        for flag in [
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--die-with-parent",
            "--new-session",
            "--as-pid-1",
        ] {
            push(&mut args, [&flag]);
        }
        push(
            &mut args,
            [&"--cap-drop", &"ALL", &"--uid", &"1000", &"--gid", &"1000"],
        );
        push(&mut args, [&"--hostname", &"sandbox", &"--clearenv"]);
        for (name, value) in self.env.iter().chain(env) {
            push(&mut args, [&"--setenv", name, value]);
        }
        for (link, target) in merged_links() {
            push(&mut args, [&"--symlink", &target, &link]);
        }
        for shown in &self.shown {
            push(&mut args, [&"--ro-bind", shown, shown]);
        }
        push(&mut args, [&"--proc", &"/proc", &"--dev", &"/dev"]);
        let (tmp, shm) = (self.limits.tmp.to_string(), self.limits.shm.to_string());
        push(&mut args, [&"--size", &tmp, &"--tmpfs", &"/tmp"]);
        push(&mut args, [&"--size", &shm, &"--tmpfs", &"/dev/shm"]);
        // After /tmp, which would cover one inside it.
        for writable in &self.writable {
            push(&mut args, [&"--bind", writable, writable]);
        }
        // The root itself, where bubblewrap made the places of the mounts
        // above: read-only, so that no file can be made there (it is a
        // tmpfs of no fixed size).
        push(&mut args, [&"--remount-ro", &"/"]);
        push(&mut args, [&"--chdir", &dir]);
        for fd in filters {
            push(&mut args, [&"--add-seccomp-fd", &fd.to_string()]);
        }
        // The limits of each process, set inside: a limit on processes set
        // outside would count the lab's own processes against it.
        let limits = self.limits;
        push(
            &mut args,
            [
                &"--",
                &"prlimit",
                &format!("--as={}", limits.address_space),
                &format!("--nproc={}", limits.processes),
                &format!("--cpu={}", limits.cpu_seconds),
                &format!("--nofile={}", limits.open_files),
                &format!("--fsize={}", limits.file_size),
                &"--core=0",
                &"--",
            ],
        );
        args.extend(argv.iter().map(OsString::from));
        args
    }

    /// A command that runs `argv` in this sandbox, in `dir`, with `env`
    /// added to its environment: bubblewrap, given the seccomp filters on
    /// descriptors of their own and joining the control group as it
    /// starts, so that everything the program starts is in it.
    ///
    /// Errors: the filters cannot be made; bubblewrap is not installed.
    pub fn command(
        &self,
        argv: &[String],
        dir: &Path,
        env: &[(String, String)],
    ) -> Result<Prepared, SandboxError> {
        let bwrap = bubblewrap()?;
        let argv: Vec<String> = argv
            .iter()
            .enumerate()
            .map(
                |(at, word)| match self.programs.iter().find(|(name, _)| name == word) {
                    Some((_, program)) if at == 0 => program.display().to_string(),
                    _ => word.clone(),
                },
            )
            .collect();
        let filters: Vec<OwnedFd> = seccomp::programs()?
            .iter()
            .map(seccomp::memory_file)
            .collect::<Result<_, _>>()?;
        let raw: Vec<RawFd> = filters.iter().map(AsRawFd::as_raw_fd).collect();
        let (reader, writer) = std::io::pipe().map_err(|error| SandboxError::Start {
            program: "a pipe for bubblewrap's word on its program".into(),
            error,
        })?;
        let info = writer.as_raw_fd();
        let mut command = Command::new(bwrap);
        command
            .arg("--info-fd")
            .arg(info.to_string())
            .args(self.args(&argv, dir, env, &raw));
        let inherited: Vec<RawFd> = raw.iter().copied().chain([info]).collect();
        let joiners = self
            .cgroup
            .as_ref()
            .map(|group| group.joiners())
            .unwrap_or_default();
        // SAFETY: the closure only makes system calls on descriptors (fcntl(2),
        // close_range(2), and write(2) through join_raw, which allocates
        // nothing), those it passes on kept open by this process until the
        // child has started.
        unsafe {
            command.pre_exec(move || {
                // No descriptor of the lab's reaches the sandbox but the
                // ones bubblewrap is given (the lab itself may have
                // inherited some that are not closed on exec).
                close_on_exec_from(3);
                for &fd in &inherited {
                    if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                cgroup::join_raw(&joiners)
            });
        }
        Ok(Prepared {
            command,
            _filters: filters,
            info: Some((reader, Some(writer))),
        })
    }

    /// Whether the kernel killed one of its processes for the memory of
    /// its control group.
    pub fn memory_met(&self) -> bool {
        self.cgroup.as_ref().is_some_and(|group| group.memory_met())
    }
}

/// Starts `command` on a thread that lives as long as this process and
/// answers the child. bubblewrap ends its sandbox when its parent ends
/// (`--die-with-parent`, so that no sandbox outlives the lab), and Linux
/// takes the parent to be the thread that started it: a program started
/// by a test's thread would die with that thread, in the middle of the
/// check.
///
/// Errors: the command could not be started.
pub fn spawn_for_life(command: &mut Command) -> std::io::Result<std::process::Child> {
    type Work = (
        Command,
        std::sync::mpsc::Sender<(Command, std::io::Result<std::process::Child>)>,
    );
    static SPAWNER: OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<Work>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (sender, work) = std::sync::mpsc::channel::<Work>();
        std::thread::spawn(move || {
            for (mut command, answer) in work {
                let child = command.spawn();
                let _ = answer.send((command, child));
            }
        });
        std::sync::Mutex::new(sender)
    });
    let (answer, answered) = std::sync::mpsc::channel();
    let owned = std::mem::replace(command, Command::new("/"));
    spawner
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .send((owned, answer))
        .map_err(|_| std::io::Error::other("the thread that starts sandboxes has ended"))?;
    let (returned, child) = answered
        .recv()
        .map_err(|_| std::io::Error::other("the thread that starts sandboxes has ended"))?;
    *command = returned;
    child
}

/// Marks every descriptor from `first` on to be closed on exec: with
/// close_range(2) where the kernel has it (5.11), else one by one up to
/// the limit of open files. Safe between fork and exec: it allocates
/// nothing.
fn close_on_exec_from(first: libc::c_uint) {
    // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC changes only flags.
    let marked = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if marked == 0 {
        return;
    }
    // SAFETY: sysconf(3) reads a limit.
    let most = unsafe { libc::sysconf(libc::_SC_OPEN_MAX) }.clamp(0, 1 << 16);
    for fd in first as libc::c_long..most {
        // SAFETY: fcntl(2) on a descriptor that is not open fails with
        // EBADF and changes nothing.
        unsafe {
            libc::fcntl(fd as libc::c_int, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
}

/// The sandbox every program of this process runs in, once
/// [`confine`] has set it: a check's, in its room.
static CONFINED: OnceLock<Sandbox> = OnceLock::new();

/// From now on, every program this process starts for an implementation
/// (and a Rust project's build) runs in `sandbox`. Set once: a check
/// confines its programs before it starts any.
pub fn confine(sandbox: Sandbox) {
    let _ = CONFINED.set(sandbox);
}

/// The sandbox this process's programs run in, once [`confine`] set one.
pub fn confined() -> Option<&'static Sandbox> {
    CONFINED.get()
}

/// Ends every process of the sandbox's control group, and removes it, when
/// this process's programs are confined: the sandbox itself lives as long
/// as the process, which calls this as it ends.
pub fn release_confinement() {
    if let Some(group) = CONFINED.get().and_then(|sandbox| sandbox.cgroup.as_ref()) {
        group.remove();
    }
}

/// The interpreter `name` (from the `PATH`) runs as, asked of it outside
/// any sandbox (it is the instructor's own tool): the executable Python
/// names as its own, when that is in one of the `shown` folders.
fn interpreter(name: &str, shown: &[PathBuf]) -> Option<PathBuf> {
    let output = Command::new(name)
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let found = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    (output.status.success()
        && found.is_absolute()
        && shown.iter().any(|folder| found.starts_with(folder)))
    .then_some(found)
}

/// bubblewrap, as found on the `PATH`.
///
/// Errors: it is not installed (not on the `PATH`).
pub fn bubblewrap() -> Result<PathBuf, SandboxError> {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|folder| folder.join("bwrap"))
        .find(|path| path.is_file())
        .ok_or(SandboxError::NoBubblewrap)
}

/// Whether a sandbox can be made here: bubblewrap makes one and runs
/// `true` in it, with the filters and the limits.
///
/// Errors: what is missing, or what bubblewrap said, in one line.
pub fn probe() -> Result<(), SandboxError> {
    let sandbox = Sandbox::plain(Vec::new(), Limits::default());
    let mut prepared = sandbox.command(&["true".into()], Path::new("/"), &[])?;
    let program = prepared
        .command
        .get_program()
        .to_string_lossy()
        .into_owned();
    let output = prepared
        .command
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| SandboxError::Start { program, error })?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let line = said
        .lines()
        .map(|line| line.trim_start_matches("bwrap: ").trim())
        .find(|line| !line.is_empty())
        .unwrap_or("it ended without a word")
        .to_string();
    Err(SandboxError::Refused(line))
}

/// The system's own read-only files every program needs: `/usr` and the
/// loader's configuration, the alternatives (`cc` is one), the time zone.
fn system_files() -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("/usr")];
    // Where they are no links into /usr (see merged_links), the system's
    // own folders.
    for dir in ["/bin", "/sbin", "/lib", "/lib64", "/lib32"] {
        let path = Path::new(dir);
        if path.is_dir() && !path.is_symlink() {
            files.push(path.to_path_buf());
        }
    }
    files.extend(
        [
            "/etc/ld.so.cache",
            "/etc/ld.so.conf",
            "/etc/ld.so.conf.d",
            "/etc/alternatives",
            "/etc/localtime",
        ]
        .iter()
        .map(PathBuf::from)
        .filter(|path| path.exists()),
    );
    files
}

/// The top folders that are links into `/usr` on this system (a merged
/// `/usr`: `/bin -> usr/bin`), each with its target, made again inside.
fn merged_links() -> Vec<(PathBuf, PathBuf)> {
    ["/bin", "/sbin", "/lib", "/lib64", "/lib32"]
        .iter()
        .filter_map(|dir| {
            let target = std::fs::read_link(dir).ok()?;
            target
                .to_str()
                .is_some_and(|text| text.starts_with("usr/") || text.starts_with("/usr/"))
                .then(|| (PathBuf::from(dir), target))
        })
        .collect()
}

/// Whether a `PATH` entry is one of the system's folders, shown with
/// `/usr`.
fn is_system(entry: &Path) -> bool {
    entry.starts_with("/usr") || ["/bin", "/sbin"].iter().any(|dir| entry == Path::new(dir))
}

/// The folders to show read-only so that the tools on `path` run, where
/// they are not the system's: a `PATH` entry inside one of the `homes`
/// shows only what its tool needs (pyenv's whole folder for its shims;
/// for cargo's `bin`, cargo's `bin` and `registry` and rustup's
/// `toolchains` and `settings.toml`: never `~/.cargo/credentials.toml`),
/// or the entry alone for any other tool there; an entry elsewhere shows
/// itself. Entries that do not exist, and a home folder itself, are left
/// out.
pub fn tools_shown(path: &OsStr, homes: &[PathBuf]) -> Vec<PathBuf> {
    let mut tools: Vec<PathBuf> = Vec::new();
    for entry in std::env::split_paths(path) {
        let Ok(entry) = entry.canonicalize() else {
            continue;
        };
        // The system's folders are shown whole already; a home folder
        // itself is never shown.
        if is_system(&entry) || homes.contains(&entry) {
            continue;
        }
        let inside_home = homes
            .iter()
            .filter(|home| entry.starts_with(home))
            .max_by_key(|home| home.components().count());
        let shown = match inside_home.and_then(|home| {
            let first = entry.strip_prefix(home).ok()?.components().next()?;
            Some((home, first.as_os_str().to_os_string()))
        }) {
            Some((home, first)) if first == ".pyenv" => vec![home.join(".pyenv")],
            Some((home, first)) if first == ".cargo" => vec![
                home.join(".cargo/bin"),
                home.join(".cargo/registry"),
                home.join(".rustup/toolchains"),
                home.join(".rustup/settings.toml"),
            ],
            _ => vec![entry.clone()],
        };
        for tool in shown {
            if tool.exists() && !tools.contains(&tool) {
                tools.push(tool);
            }
        }
    }
    tools
}

/// The sandbox's limit that what a program said (its errors, standard
/// error) shows it met, named with its figure: the memory limit for an
/// out-of-memory error (Python's `MemoryError`, C's `ENOMEM`, Rust's
/// failed allocation), the process limit for a fork or thread refused
/// (`EAGAIN`), the file-size limit for a file too large (`EFBIG`), the
/// disk for a full one (`ENOSPC`), CPU time for `SIGXCPU`.
pub fn limit_met(said: &str, limits: &Limits) -> Option<String> {
    let found = [
        (
            &["killed a process of the program for its memory"][..],
            format!("memory ({} for all its processes)", size(limits.memory)),
        ),
        (
            &[
                "MemoryError",
                "Cannot allocate memory",
                "memory allocation of",
            ][..],
            format!(
                "memory ({} of address space a process)",
                size(limits.address_space)
            ),
        ),
        (
            &["Resource temporarily unavailable", "BlockingIOError"][..],
            format!("processes ({} processes and threads)", limits.processes),
        ),
        (
            &["File too large", "SIGXFSZ"][..],
            format!("file size ({})", size(limits.file_size)),
        ),
        (
            &["No space left on device"][..],
            format!(
                "disk ({} for its files, {} of /tmp)",
                size(limits.disk),
                size(limits.tmp)
            ),
        ),
        (
            &["SIGXCPU", "CPU time limit exceeded"][..],
            format!("CPU time ({} s a process)", limits.cpu_seconds),
        ),
    ];
    found
        .into_iter()
        .find(|(signs, _)| signs.iter().any(|sign| said.contains(sign)))
        .map(|(_, limit)| limit)
}

#[cfg(test)]
mod tests;

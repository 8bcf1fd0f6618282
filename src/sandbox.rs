//! A sandbox for code the lab runs that is not its own: each submission of
//! a class (`lab grade --impl-dir`) is checked inside one of its own.
//!
//! What a sandboxed program gets, and nothing more:
//! - no network: a network namespace of its own, whose only interface,
//!   loopback, is down, so a connection to any port of this machine is
//!   unreachable;
//! - a private, empty `/tmp` it may write (where its tests' databases
//!   are), and the folders it is given to write;
//! - the rest of the file system read-only, with the folders it must not
//!   see (the other submissions, the instructor's home) each covered by an
//!   empty folder, and the files it is shown (its own code, the lab, the
//!   tools on the `PATH`) bound back into place, read-only;
//! - a user of its own, neither root nor the instructor;
//! - limits on address space ([`MEMORY_LIMIT`]), processes and threads
//!   ([`PROCESS_LIMIT`]) and file size ([`FILE_SIZE_LIMIT`]);
//! - a process-id namespace whose first process is the program run: when
//!   it ends, however it ends, the kernel ends every process it left.
//!
//! It is built from Linux namespaces directly, as `bubblewrap` and IOI's
//! `isolate` do, by `lab __sandbox`, which needs root: the user switch
//! needs it, and an autograder's container runs as root. Where one cannot
//! be made, [`Sandbox::probe`] says why.

use serde::{Deserialize, Serialize};
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The most address space one process of a sandbox may map: a program
/// that allocates more gets an out-of-memory error.
pub const MEMORY_LIMIT: u64 = 3 << 30;

/// The most processes and threads a sandbox's user may run at once.
pub const PROCESS_LIMIT: u64 = 256;

/// The largest file a sandbox may write.
pub const FILE_SIZE_LIMIT: u64 = 1 << 30;

/// The largest the private `/tmp` may grow (a build of a Rust project's
/// dependencies fits).
const TMP_SIZE: &str = "size=4g,mode=1777";

/// The exit code of a sandbox that could not be made (the program never
/// ran): what went wrong is on standard error.
pub const NOT_MADE: i32 = 125;

/// What a sandbox shows, hides and lets be written, and as whom its
/// program runs. Paths are absolute.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sandbox {
    /// The user (and group) the program runs as.
    pub uid: u32,
    /// Folders covered by an empty, read-only folder.
    pub hidden: Vec<PathBuf>,
    /// Files or folders the program may write: each source at its place
    /// (the same path, or another).
    pub writable: Vec<(PathBuf, PathBuf)>,
    /// Files or folders shown read-only: each source at its place (the
    /// same path, or another, e.g. a copy shown where the original was).
    pub shown: Vec<(PathBuf, PathBuf)>,
}

/// Why a sandbox could not be made, or its program not run.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A step of making it failed.
    #[error("{step}: {source}")]
    Step {
        /// The step, e.g. "a network namespace of its own".
        step: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// This system has no such sandbox.
    #[error("the sandbox is made of Linux namespaces; this system is not Linux")]
    NotLinux,
    /// The lab does not run as root.
    #[error("it runs each submission as a user of its own, which needs root")]
    NotRoot,
}

impl Sandbox {
    /// The arguments of `lab __sandbox` that make this sandbox: one, its
    /// JSON.
    pub fn to_arg(&self) -> String {
        serde_json::to_string(self).expect("a sandbox is JSON")
    }

    /// The sandbox an argument of `lab __sandbox` describes.
    ///
    /// Errors: not the JSON [`Sandbox::to_arg`] writes.
    pub fn from_arg(arg: &str) -> Result<Sandbox, serde_json::Error> {
        serde_json::from_str(arg)
    }

    /// Whether a sandbox can be made here: Linux, as root. (Whether the
    /// kernel allows each step is found when one is made.)
    ///
    /// Errors: not Linux, or not root.
    pub fn probe() -> Result<(), SandboxError> {
        if !cfg!(target_os = "linux") {
            return Err(SandboxError::NotLinux);
        }
        // SAFETY: geteuid(2) cannot fail and touches no memory.
        if unsafe { libc::geteuid() } != 0 {
            return Err(SandboxError::NotRoot);
        }
        Ok(())
    }

    /// Makes the sandbox and runs `argv` in it (the first found on the
    /// `PATH`, in this process's environment with `TMPDIR` the private
    /// `/tmp`), waiting
    /// for it to end: answers its exit code (128 and the signal's number
    /// when a signal ended it, [`NOT_MADE`] when the sandbox could not be
    /// made, with why on standard error).
    ///
    /// Must be called while this process has one thread: it forks.
    ///
    /// Errors: the namespaces could not be made, or the program not
    /// waited for.
    pub fn run(&self, argv: &[OsString]) -> Result<i32, SandboxError> {
        Sandbox::probe()?;
        // The lab's own namespaces, which the sandbox's first process must
        // have left before it mounts anything: a mount in the lab's own
        // would change the machine.
        let outer = own_namespaces();
        let step = |step: &str| {
            let source = std::io::Error::last_os_error();
            SandboxError::Step {
                step: step.to_string(),
                source,
            }
        };
        // SAFETY: unshare(2) changes this process's namespaces only; a
        // new process-id namespace is the next child's.
        let flags = libc::CLONE_NEWNS
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS;
        if unsafe { libc::unshare(flags) } != 0 {
            return Err(step("namespaces of its own (mounts, network, processes)"));
        }
        // SAFETY: this process has one thread (the caller's promise), so
        // the child may allocate and run Rust code until it execs.
        let child = unsafe { libc::fork() };
        if child < 0 {
            return Err(step("its first process"));
        }
        if child == 0 {
            let error = self.enter(argv, &outer);
            eprintln!("lab: the sandbox could not be made: {error}");
            // SAFETY: ends the child without running this process's
            // exit handlers, which belong to the parent.
            unsafe { libc::_exit(NOT_MADE) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child, writing its status to `status`.
        if unsafe { libc::waitpid(child, &raw mut status, 0) } != child {
            return Err(step("waiting for its program"));
        }
        Ok(if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            libc::WEXITSTATUS(status)
        })
    }

    /// In the sandbox's first process: makes its file system, limits and
    /// user, then execs `argv`. Answers only when a step failed.
    fn enter(&self, argv: &[OsString], outer: &[Option<PathBuf>]) -> SandboxError {
        match self.try_enter(argv, outer) {
            Ok(never) => match never {},
            Err(error) => error,
        }
    }

    /// The steps of [`Sandbox::enter`], in their order: each needs the one
    /// before (the mounts are made where they stay private, the files to
    /// bind are opened before a folder holding them is hidden, and the
    /// user is switched last, since the steps before need root). Answers
    /// only when one failed: on success, `argv` runs in place of this
    /// process.
    fn try_enter(
        &self,
        argv: &[OsString],
        outer: &[Option<PathBuf>],
    ) -> Result<std::convert::Infallible, SandboxError> {
        namespaces_left(outer)?;
        private_mounts()?;
        let bound = self.open_bound()?;
        self.make_file_system(&bound)?;
        limit_resources()?;
        self.become_its_user()?;
        self.exec(argv)
    }

    /// What the program may write and is shown, each source opened (a path
    /// only, closed on exec) with where it goes, whether it is a folder and
    /// whether it is shown read-only. Opened before anything is covered,
    /// and bound from the open file later, since a hidden folder may hold
    /// it.
    fn open_bound(&self) -> Result<Vec<Bound<'_>>, SandboxError> {
        // A path only, closed on exec (as std opens every file): the
        // program must not inherit a handle on a folder outside its mounts.
        let open = |path: &Path| -> Result<std::fs::File, SandboxError> {
            std::os::unix::fs::OpenOptionsExt::custom_flags(
                std::fs::OpenOptions::new().read(true),
                libc::O_PATH,
            )
            .open(path)
            .map_err(|source| SandboxError::Step {
                step: format!("opening {}", path.display()),
                source,
            })
        };
        (self.writable.iter())
            .map(|binding| (binding, false))
            .chain(self.shown.iter().map(|binding| (binding, true)))
            .map(|((source, place), read_only)| {
                Ok((open(source)?, place.as_path(), source.is_dir(), read_only))
            })
            .collect()
    }

    /// The sandbox's file system, in this process's private mounts: all
    /// read-only, a private `/tmp`, the hidden folders covered, the `bound`
    /// files in their places, and a `/proc` of its own.
    fn make_file_system(&self, bound: &[Bound<'_>]) -> Result<(), SandboxError> {
        read_only_everywhere().map_err(|source| SandboxError::Step {
            step: "the file system read-only".into(),
            source,
        })?;
        mount_tmpfs(Path::new("/tmp"), TMP_SIZE).map_err(|source| SandboxError::Step {
            step: "a private /tmp".into(),
            source,
        })?;
        let covered = self.hide()?;
        for (file, place, is_dir, read_only) in bound {
            place_for(place, *is_dir)
                .and_then(|()| bind(file, place, *read_only))
                .map_err(|source| SandboxError::Step {
                    step: format!(
                        "{} {}",
                        if *read_only {
                            "showing"
                        } else {
                            "letting it write"
                        },
                        place.display()
                    ),
                    source,
                })?;
        }
        for dir in covered.iter().skip(1) {
            remount(dir, true).map_err(|source| SandboxError::Step {
                step: format!("hiding {} read-only", dir.display()),
                source,
            })?;
        }
        // SAFETY: mount(2) reads the static strings; it changes only this
        // process's mounts.
        check(
            unsafe {
                libc::mount(
                    c"proc".as_ptr(),
                    c"/proc".as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                )
            },
            &|| "its own /proc".into(),
        )
    }

    /// Covers each hidden folder with an empty tmpfs, outermost first (one
    /// inside a folder already covered is hidden with it). Answers the
    /// covered folders, `/tmp` first, to be made read-only once the bound
    /// files are in place.
    fn hide(&self) -> Result<Vec<&Path>, SandboxError> {
        let mut covered: Vec<&Path> = vec![Path::new("/tmp")];
        // (A file to hide cannot be covered by a folder; the lab hides
        // folders only.)
        let mut hidden: Vec<&Path> = (self.hidden.iter())
            .map(PathBuf::as_path)
            .filter(|path| path.is_dir())
            .collect();
        hidden.sort_by_key(|path| path.components().count());
        for dir in hidden {
            if covered.iter().any(|cover| dir.starts_with(cover)) {
                continue;
            }
            mount_tmpfs(dir, "size=1m,mode=0755").map_err(|source| SandboxError::Step {
                step: format!("hiding {}", dir.display()),
                source,
            })?;
            covered.push(dir);
        }
        Ok(covered)
    }

    /// This process as the sandbox's user and group, with no other groups
    /// and no way to gain privileges again.
    fn become_its_user(&self) -> Result<(), SandboxError> {
        // SAFETY (for each libc call below): each changes only this
        // process's user, groups or flags, and reads no memory.
        check(unsafe { libc::setgroups(0, std::ptr::null()) }, &|| {
            "leaving the lab's groups".into()
        })?;
        check(unsafe { libc::setgid(self.uid) }, &|| {
            format!("group {}", self.uid)
        })?;
        check(unsafe { libc::setuid(self.uid) }, &|| {
            format!("user {}", self.uid)
        })?;
        check(
            unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) },
            &|| "no new privileges".into(),
        )
    }

    /// Runs `argv` in place of this process, in the first folder it may
    /// write (or `/tmp`), with `TMPDIR` the private `/tmp`. Answers only
    /// when it could not.
    fn exec(&self, argv: &[OsString]) -> Result<std::convert::Infallible, SandboxError> {
        let home = (self.writable.iter())
            .map(|(_, place)| place.as_path())
            .find(|place| place.is_dir())
            .unwrap_or(Path::new("/tmp"));
        std::env::set_current_dir(home).map_err(|source| SandboxError::Step {
            step: format!("starting in {}", home.display()),
            source,
        })?;
        let mut command = std::process::Command::new(&argv[0]);
        command.args(&argv[1..]).env("TMPDIR", "/tmp");
        let error = std::os::unix::process::CommandExt::exec(&mut command);
        Err(SandboxError::Step {
            step: format!("running {}", Path::new(&argv[0]).display()),
            source: error,
        })
    }
}

/// A file or folder to bind into the sandbox: the open source, its place,
/// whether it is a folder, and whether it is shown read-only.
type Bound<'a> = (std::fs::File, &'a Path, bool, bool);

/// Fails unless this process has left the lab's own mount and network
/// namespaces (`outer`): a mount made in the lab's own would change the
/// machine.
fn namespaces_left(outer: &[Option<PathBuf>]) -> Result<(), SandboxError> {
    let inner = own_namespaces();
    if inner
        .iter()
        .zip(outer)
        // (Two that cannot be read are equal: not left either.)
        .any(|(inner, outer)| inner == outer)
    {
        return Err(SandboxError::Step {
            step: "namespaces of its own".into(),
            source: std::io::Error::other(
                "its first process is still in the lab's own mount or network namespace",
            ),
        });
    }
    Ok(())
}

/// This process ends with the lab, and its mounts are its own: whatever
/// is mounted from here on stays in this namespace.
fn private_mounts() -> Result<(), SandboxError> {
    // SAFETY (for each libc call below): each takes static C strings or
    // none, and changes only this process (its parent-death signal and its
    // mounts), never this memory.
    check(
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) },
        &|| "ending with the lab".into(),
    )?;
    check(
        unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        },
        &|| "mounts of its own".into(),
    )
}

/// The sandbox's limits: address space, processes and threads, file size,
/// and no core dumps.
fn limit_resources() -> Result<(), SandboxError> {
    for (resource, limit, name) in [
        (libc::RLIMIT_AS, MEMORY_LIMIT, "memory"),
        (libc::RLIMIT_NPROC, PROCESS_LIMIT, "processes"),
        (libc::RLIMIT_FSIZE, FILE_SIZE_LIMIT, "file size"),
        (libc::RLIMIT_CORE, 0, "core dumps"),
    ] {
        let limit = libc::rlimit {
            rlim_cur: limit,
            rlim_max: limit,
        };
        // SAFETY: setrlimit(2) reads `limit`, which lives for the call.
        check(
            unsafe { libc::setrlimit(resource, &raw const limit) },
            &|| format!("the limit on {name}"),
        )?;
    }
    Ok(())
}

/// A step of making the sandbox whose system call answered `result`: an
/// error naming the step, with the system's error, unless it is 0.
fn check(result: libc::c_int, step: &dyn Fn() -> String) -> Result<(), SandboxError> {
    if result == 0 {
        return Ok(());
    }
    let source = std::io::Error::last_os_error();
    Err(SandboxError::Step {
        step: step(),
        source,
    })
}

/// This process's mount and network namespaces, as Linux names them
/// (`mnt:[4026531841]`); `None` for one that cannot be read.
fn own_namespaces() -> [Option<PathBuf>; 2] {
    ["mnt", "net"].map(|kind| std::fs::read_link(format!("/proc/self/ns/{kind}")).ok())
}

/// A path as a C string (a path holds no NUL byte).
fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).unwrap_or_default()
}

/// The last system error, when `result` says there was one.
fn io(result: libc::c_int) -> std::io::Result<()> {
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Every mount of this namespace read-only, at once and recursively.
fn read_only_everywhere() -> std::io::Result<()> {
    /// The kernel's `struct mount_attr`.
    #[repr(C)]
    struct MountAttr {
        attr_set: u64,
        attr_clr: u64,
        propagation: u64,
        userns_fd: u64,
    }
    const MOUNT_ATTR_RDONLY: u64 = 1;
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr(2) reads `attr`, which lives for the call.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            libc::AT_RECURSIVE,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// An empty tmpfs with `options` mounted on `dir`.
fn mount_tmpfs(dir: &Path, options: &str) -> std::io::Result<()> {
    let (dir, options) = (c_path(dir), CString::new(options).unwrap_or_default());
    // SAFETY: mount(2) reads the strings, which live for the call.
    io(unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            dir.as_ptr(),
            c"tmpfs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV,
            options.as_ptr().cast(),
        )
    })
}

/// Makes a place for a bind mount at `place`: a folder, or an empty file.
/// (One that exists is left as it is.)
fn place_for(place: &Path, is_dir: bool) -> std::io::Result<()> {
    if place.exists() {
        return Ok(());
    }
    if is_dir {
        return std::fs::create_dir_all(place);
    }
    if let Some(parent) = place.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::File::create(place).map(drop)
}

/// Binds the open `file` (a folder or a file) at `place`, read-only when
/// `read_only`.
fn bind(file: &std::fs::File, place: &Path, read_only: bool) -> std::io::Result<()> {
    let source = CString::new(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(file)
    ))
    .unwrap_or_default();
    let target = c_path(place);
    // SAFETY: mount(2) reads the strings, which live for the call.
    io(unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })?;
    // A bind mount keeps its source's flags, read-only by now: each is
    // set again.
    remount(place, read_only)
}

/// The mount at `place` made read-only, or writable (never with set-user
/// programs or devices).
fn remount(place: &Path, read_only: bool) -> std::io::Result<()> {
    let target = c_path(place);
    let read_only = if read_only { libc::MS_RDONLY } else { 0 };
    // SAFETY: mount(2) reads the string, which lives for the call.
    io(unsafe {
        libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REMOUNT | read_only | libc::MS_NOSUID | libc::MS_NODEV,
            std::ptr::null(),
        )
    })
}

/// The sandbox's limit that what a program said (its errors, standard
/// error) shows it met, named with its figure: the memory limit for an
/// out-of-memory error (Python's `MemoryError`, C's `ENOMEM`, Rust's
/// failed allocation), the process limit for a fork or thread refused
/// (`EAGAIN`), the file-size limit for a file too large (`EFBIG`).
pub fn limit_met(said: &str) -> Option<String> {
    let limits = [
        (
            &[
                "MemoryError",
                "Cannot allocate memory",
                "memory allocation of",
            ][..],
            format!("memory ({} GiB of address space)", MEMORY_LIMIT >> 30),
        ),
        (
            &["Resource temporarily unavailable", "BlockingIOError"][..],
            format!("processes ({PROCESS_LIMIT} processes and threads)"),
        ),
        (
            &["File too large", "SIGXFSZ"][..],
            format!("file size ({} GiB)", FILE_SIZE_LIMIT >> 30),
        ),
    ];
    limits
        .into_iter()
        .find(|(signs, _)| signs.iter().any(|sign| said.contains(sign)))
        .map(|(_, limit)| limit)
}

/// The folders to show read-only so that the tools on `path` run while the
/// folders `homes` and `covered` are hidden, and /tmp, which every sandbox
/// replaces. Each entry of `path` is judged by the innermost hidden folder
/// that holds it: inside a home folder (one of `homes`), the tool's own
/// folder there is shown (`~/.pyenv` for `~/.pyenv/shims`: a shim needs its
/// whole tool; with `~/.rustup` beside `~/.cargo`, which cargo's proxies
/// need); inside any other, the entry alone. A hidden folder that is itself
/// on the path is not shown.
pub fn tools_on_the_path(path: &OsStr, homes: &[PathBuf], covered: &[PathBuf]) -> Vec<PathBuf> {
    let tmp = PathBuf::from("/tmp");
    let mut tools: Vec<PathBuf> = Vec::new();
    for entry in std::env::split_paths(path) {
        let entry = entry.canonicalize().unwrap_or(entry);
        let Some(cover) = (homes.iter())
            .chain(covered)
            .chain([&tmp])
            .filter(|cover| entry.starts_with(cover))
            .max_by_key(|cover| cover.components().count())
        else {
            continue;
        };
        let Some(first) = entry
            .strip_prefix(cover)
            .ok()
            .and_then(|inside| inside.components().next())
        else {
            continue;
        };
        let shown = if homes.contains(cover) {
            vec![cover.join(first), cover.join(".rustup")]
                .into_iter()
                .take(if first.as_os_str() == ".cargo" { 2 } else { 1 })
                .collect()
        } else {
            vec![entry.clone()]
        };
        for tool in shown {
            if tool.is_dir() && !tools.contains(&tool) {
                tools.push(tool);
            }
        }
    }
    tools
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step whose system call failed is an error that names the step and
    /// the system's error; one that answered 0 is not.
    #[test]
    fn a_failed_step_is_named_with_the_system_s_error() {
        assert!(check(0, &|| "mounting /proc".into()).is_ok());
        // SAFETY: close(2) of a descriptor that is not open fails with
        // EBADF and changes nothing.
        let result = unsafe { libc::close(-1) };
        let error = check(result, &|| "mounting /proc".into()).expect_err("it failed");
        let text = error.to_string();
        assert!(text.contains("mounting /proc"), "{text}");
        assert!(text.contains("Bad file descriptor"), "{text}");
    }

    /// The check that a sandbox's first process left the lab's own mount
    /// and network namespaces refuses one that did not (this test's), and
    /// lets one that did through.
    #[test]
    fn a_process_still_in_the_lab_s_namespaces_is_refused() {
        let error = namespaces_left(&own_namespaces()).expect_err("still in them");
        assert!(
            error
                .to_string()
                .contains("still in the lab's own mount or network namespace"),
            "{error}"
        );
        let elsewhere = [
            Some(PathBuf::from("mnt:[1]")),
            Some(PathBuf::from("net:[1]")),
        ];
        assert!(namespaces_left(&elsewhere).is_ok());
    }

    #[test]
    fn a_sandbox_crosses_to_lab_sandbox_and_back_unchanged() {
        let sandbox = Sandbox {
            uid: 1_000_007,
            hidden: vec!["/home/teacher".into()],
            writable: vec![("/tmp/x/0/work".into(), "/tmp/x/0/work".into())],
            shown: vec![("/usr/local/bin/lab".into(), "/usr/local/bin/lab".into())],
        };
        assert_eq!(Sandbox::from_arg(&sandbox.to_arg()).unwrap(), sandbox);
        assert!(Sandbox::from_arg("{\"uid\": -1}").is_err());
    }

    #[test]
    fn a_limit_is_named_from_the_error_that_met_it() {
        assert_eq!(
            limit_met("Traceback ...\nMemoryError\n").as_deref(),
            Some("memory (3 GiB of address space)")
        );
        assert_eq!(
            limit_met("BlockingIOError: [Errno 11] Resource temporarily unavailable").as_deref(),
            Some("processes (256 processes and threads)")
        );
        assert_eq!(
            limit_met("OSError: [Errno 27] File too large").as_deref(),
            Some("file size (1 GiB)")
        );
        assert_eq!(limit_met("NameError: name 'resutl' is not defined"), None);
    }

    #[test]
    fn the_tools_on_the_path_are_shown_by_their_innermost_hidden_folder() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        let (home, others, class) = (root.join("home/ada"), root.join("home"), root.join("class"));
        for dir in [
            ".pyenv/shims",
            ".pyenv/bin",
            ".cargo/bin",
            ".rustup",
            "notes",
        ] {
            std::fs::create_dir_all(home.join(dir)).unwrap();
        }
        std::fs::create_dir_all(others.join("bob/bin")).unwrap();
        std::fs::create_dir_all(class.join("tools")).unwrap();
        let path = std::env::join_paths([
            home.join(".pyenv/shims"),
            PathBuf::from("/usr/bin"),
            home.join(".cargo/bin"),
            home.join(".pyenv/bin"),
            home.join(".missing/bin"),
            others.join("bob/bin"),
            class.join("tools"),
            home.clone(),
        ])
        .unwrap();
        let homes = [home.clone()];
        let covered = [others.clone(), class.clone()];
        assert_eq!(
            tools_on_the_path(&path, &homes, &covered),
            vec![
                home.join(".pyenv"),
                home.join(".cargo"),
                home.join(".rustup"),
                // Inside hidden folders that are not the home: the entry
                // alone, never bob's whole home.
                others.join("bob/bin"),
                class.join("tools"),
            ]
        );
        let without_cargo = std::env::join_paths([home.join(".pyenv/shims")]).unwrap();
        assert_eq!(
            tools_on_the_path(&without_cargo, &homes, &covered),
            vec![home.join(".pyenv")]
        );
    }
}

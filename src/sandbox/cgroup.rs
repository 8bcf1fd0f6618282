//! A control group of a submission's own, where this machine lets the lab
//! make one: every process of the submission in it, their memory counted
//! together (the pages of its temporary folders included, since the kernel
//! charges a tmpfs page to the group that wrote it) and their number
//! capped. Made under the lab's own group, on cgroup v2 where that group
//! delegates the memory and pids controllers, or on cgroup v1 where the
//! lab may write those controllers' folders (as root, as an autograder's
//! container runs). Where neither holds, there is none, and the sandbox's
//! limits per process stand alone ([`super::Limits`]).

use std::fs;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A control group the lab made, removed (with any process left in it)
/// when it goes.
#[derive(Debug)]
pub struct Cgroup {
    /// Its folders: one on cgroup v2; the memory and the pids
    /// controller's on v1.
    dirs: Vec<PathBuf>,
    /// Whether it is a cgroup v2 group.
    unified: bool,
    /// The file each new process writes its id into to join, opened when
    /// the group was made, one per folder.
    joiners: Vec<fs::File>,
}

/// Groups made by this process so far, for unique names.
static MADE: AtomicUsize = AtomicUsize::new(0);

/// The beginning of the name of every group the lab makes.
const PREFIX: &str = "lease-lab-";

impl Cgroup {
    /// A new group under the lab's own, holding at most `memory` bytes and
    /// `processes` processes and threads, named `lease-lab-` and `name`
    /// (by default, this process's id) and a number.
    ///
    /// Errors: why none can be made here, in words.
    pub fn make(name: Option<&str>, memory: u64, processes: u64) -> Result<Cgroup, String> {
        let mounts = fs::read_to_string("/proc/self/mountinfo")
            .map_err(|error| format!("cannot read this process's mounts: {error}"))?;
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|error| format!("cannot read this process's control groups: {error}"))?;
        let placement =
            placement(&mounts, &own).ok_or("this system has no memory and pids control groups")?;
        let stem = name.map_or_else(|| std::process::id().to_string(), String::from);
        // A group of that name may be there already: another process's
        // (named alike), or one a stopped process left. Either is left
        // alone, and the next number taken.
        let mut group = loop {
            let name = format!("{PREFIX}{stem}-{}", MADE.fetch_add(1, Ordering::Relaxed));
            let (dirs, unified) = match &placement {
                Placement::Unified(parent) => (vec![parent.join(&name)], true),
                Placement::Split { memory, pids } => {
                    (vec![memory.join(&name), pids.join(&name)], false)
                }
            };
            let mut group = Cgroup {
                dirs: Vec::new(),
                unified,
                joiners: Vec::new(),
            };
            match group.make_dirs(&dirs) {
                Ok(()) => break group,
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(format!("cannot make the control group {name}: {error}")),
            }
        };
        group.limit(memory, processes)?;
        for dir in &group.dirs {
            let joiner = fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .map_err(|error| format!("cannot join {}: {error}", dir.display()))?;
            group.joiners.push(joiner);
        }
        Ok(group)
    }

    /// Makes each of `dirs`, recording it as the group's: those made
    /// before one that cannot be are removed with the group.
    fn make_dirs(&mut self, dirs: &[PathBuf]) -> io::Result<()> {
        for dir in dirs {
            fs::create_dir(dir)?;
            self.dirs.push(dir.clone());
        }
        Ok(())
    }

    /// Sets the caps: memory (and on v1 memory with swap, where the
    /// kernel counts it), processes.
    fn limit(&self, memory: u64, processes: u64) -> Result<(), String> {
        let set = |dir: &Path, file: &str, value: u64| -> Result<(), String> {
            fs::write(dir.join(file), value.to_string())
                .map_err(|error| format!("cannot set {} of {}: {error}", file, dir.display()))
        };
        if self.unified {
            let dir = &self.dirs[0];
            set(dir, "memory.max", memory)?;
            // No swap: a cap on memory that swap could outgrow caps nothing.
            if dir.join("memory.swap.max").exists() {
                set(dir, "memory.swap.max", 0)?;
            }
            return set(dir, "pids.max", processes);
        }
        let (memory_dir, pids_dir) = (&self.dirs[0], &self.dirs[1]);
        set(memory_dir, "memory.limit_in_bytes", memory)?;
        if memory_dir.join("memory.memsw.limit_in_bytes").exists() {
            set(memory_dir, "memory.memsw.limit_in_bytes", memory)?;
        }
        set(pids_dir, "pids.max", processes)
    }

    /// The descriptors of the files a process writes its own id into to
    /// join the group ([`join_raw`]), for a child about to start.
    pub fn joiners(&self) -> Vec<RawFd> {
        self.joiners.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// Whether the kernel killed a process of the group for its memory.
    pub fn memory_met(&self) -> bool {
        let (file, key) = if self.unified {
            ("memory.events", "oom_kill")
        } else {
            ("memory.oom_control", "oom_kill")
        };
        fs::read_to_string(self.dirs[0].join(file))
            .ok()
            .and_then(|text| counter(&text, key))
            .is_some_and(|kills| kills > 0)
    }

    /// The processes still in the group.
    fn members(&self) -> Vec<libc::pid_t> {
        self.dirs
            .iter()
            .flat_map(|dir| {
                fs::read_to_string(dir.join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|line| line.trim().parse().ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

impl Cgroup {
    /// Ends every process left in the group, then removes it (a group
    /// that still holds a process cannot be removed). Nothing more joins
    /// it after.
    pub fn remove(&self) {
        if self.unified {
            let _ = fs::write(self.dirs[0].join("cgroup.kill"), "1");
        }
        for _ in 0..100 {
            let members = self.members();
            if members.is_empty() {
                break;
            }
            for pid in members {
                // SAFETY: kill(2) sends a signal; it touches no memory.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        for dir in self.dirs.iter().rev() {
            // A process just killed may count in the group until it is
            // reaped: the group is busy for that moment.
            for _ in 0..100 {
                match fs::remove_dir(dir) {
                    Err(error) if error.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                    }
                    _ => break,
                }
            }
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Removes the groups made with the name `name` ([`Cgroup::make`]) and
/// left behind (the process that made them was stopped before it could
/// remove them), with any process left in them.
pub fn remove_named(name: &str) {
    let (Ok(mounts), Ok(own)) = (
        fs::read_to_string("/proc/self/mountinfo"),
        fs::read_to_string("/proc/self/cgroup"),
    ) else {
        return;
    };
    let (parents, unified) = match placement(&mounts, &own) {
        Some(Placement::Unified(parent)) => (vec![parent], true),
        Some(Placement::Split { memory, pids }) => (vec![memory, pids], false),
        None => return,
    };
    let prefix = format!("{PREFIX}{name}-");
    let mut names: Vec<std::ffi::OsString> = fs::read_dir(&parents[0])
        .into_iter()
        .flatten()
        .filter_map(|entry| Some(entry.ok()?.file_name()))
        .filter(|name| name.to_string_lossy().starts_with(&prefix))
        .collect();
    names.sort();
    for name in names {
        drop(Cgroup {
            dirs: parents.iter().map(|parent| parent.join(&name)).collect(),
            unified,
            joiners: Vec::new(),
        });
    }
}

/// Makes the calling process join the group through `fds` (from
/// [`Cgroup::joiners`]): it writes its own id into each. Safe to call
/// between fork and exec: it allocates nothing.
pub fn join_raw(fds: &[RawFd]) -> io::Result<()> {
    // SAFETY: getpid(2) cannot fail.
    let pid = unsafe { libc::getpid() };
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = pid.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    for &fd in fds {
        let mut file = std::mem::ManuallyDrop::new(
            // SAFETY: `fd` is an open descriptor the caller keeps; it is
            // borrowed here and never closed (ManuallyDrop).
            unsafe { <fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) },
        );
        file.write_all(&digits[at..])?;
    }
    Ok(())
}

/// Where the lab's groups go.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Placement {
    /// Under this cgroup v2 folder.
    Unified(PathBuf),
    /// Under these v1 controllers' folders.
    Split { memory: PathBuf, pids: PathBuf },
}

/// Where a group of the lab's can go, from this process's mounts
/// (`/proc/self/mountinfo`) and groups (`/proc/self/cgroup`): under its v1
/// memory and pids groups when both controllers are mounted and writable,
/// else under its v2 group when that delegates both controllers and is
/// writable.
fn placement(mountinfo: &str, own: &str) -> Option<Placement> {
    let mounted = |kind: &str, option: Option<&str>| -> Option<PathBuf> {
        mountinfo.lines().find_map(|line| {
            let (mount, fs) = line.split_once(" - ")?;
            let point = mount.split_whitespace().nth(4)?;
            let mut fs = fs.split_whitespace();
            let (fs_type, _, options) = (fs.next()?, fs.next()?, fs.next()?);
            let wanted = fs_type == kind
                && option.is_none_or(|option| options.split(',').any(|each| each == option));
            wanted.then(|| PathBuf::from(point))
        })
    };
    let group_of = |controller: &str| -> Option<String> {
        own.lines().find_map(|line| {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            let ours = if controller.is_empty() {
                controllers.is_empty()
            } else {
                controllers.split(',').any(|each| each == controller)
            };
            ours.then(|| path.trim_start_matches('/').to_string())
        })
    };
    let writable = |dir: &Path| {
        let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: access(2) reads the string, which lives for the call.
        unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
    };
    let split = ["memory", "pids"].map(|controller| {
        let dir = mounted("cgroup", Some(controller))?.join(group_of(controller)?);
        writable(&dir).then_some(dir)
    });
    if let [Some(memory), Some(pids)] = split {
        return Some(Placement::Split { memory, pids });
    }
    let unified = mounted("cgroup2", None)?.join(group_of("")?);
    let delegated = fs::read_to_string(unified.join("cgroup.subtree_control")).ok()?;
    let controllers: Vec<&str> = delegated.split_whitespace().collect();
    (controllers.contains(&"memory") && controllers.contains(&"pids") && writable(&unified))
        .then_some(Placement::Unified(unified))
}

/// The number after `key` in a control group's flat keyed file.
fn counter(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const V1_MOUNTS: &str = "\
30 25 0:26 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
31 25 0:27 / /sys/fs/cgroup/pids rw,relatime shared:10 - cgroup cgroup rw,pids
32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:11 - cgroup cgroup rw,cpu,cpuacct
";

    #[test]
    fn a_group_goes_under_the_lab_s_own_groups_when_they_can_be_written() {
        let own = "8:pids:/\n4:memory:/\n0::/\n";
        // The root groups: writable as root only.
        let root = unsafe { libc::geteuid() } == 0;
        let found = placement(V1_MOUNTS, own);
        if root && Path::new("/sys/fs/cgroup/memory").is_dir() {
            assert!(matches!(found, Some(Placement::Split { .. }) | None));
        }
        // Without the pids controller mounted: nothing on v1.
        let memory_only = V1_MOUNTS.lines().next().unwrap();
        assert_eq!(placement(memory_only, own), None);
        // Nothing mounted at all: nothing.
        assert_eq!(placement("", own), None);
    }

    #[test]
    fn a_v2_group_must_delegate_both_controllers() {
        let folder = tempfile::tempdir().unwrap();
        let mounts = format!(
            "40 25 0:30 / {} rw - cgroup2 cgroup2 rw\n",
            folder.path().display()
        );
        let group = folder.path().join("job");
        fs::create_dir(&group).unwrap();
        fs::write(group.join("cgroup.subtree_control"), "cpu memory\n").unwrap();
        assert_eq!(placement(&mounts, "0::/job\n"), None, "no pids");
        fs::write(group.join("cgroup.subtree_control"), "cpu memory pids\n").unwrap();
        assert_eq!(
            placement(&mounts, "0::/job\n"),
            Some(Placement::Unified(group))
        );
    }

    #[test]
    fn a_counter_is_read_by_its_key() {
        let events = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n";
        assert_eq!(counter(events, "oom_kill"), Some(1));
        assert_eq!(counter(events, "max"), Some(12));
        assert_eq!(counter(events, "oom_group_kill"), None);
    }

    /// A group is made with its caps, a process joins it, and the group
    /// goes with the process it still held.
    #[test]
    #[ignore = "needs a control group it may write (root on cgroup v1, or a delegated v2 group); .ci/run runs it"]
    fn a_group_is_made_joined_and_removed() {
        let group = Cgroup::make(Some("test"), 64 << 20, 16).unwrap();
        let dirs = group.dirs.clone();
        let fds = group.joiners();
        let mut command = std::process::Command::new("sleep");
        command.arg("30");
        // SAFETY: join_raw allocates nothing and only writes to `fds`.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut command, move || join_raw(&fds));
        }
        let mut child = command.spawn().unwrap();
        assert_eq!(group.members(), vec![child.id() as libc::pid_t; dirs.len()]);
        assert!(!group.memory_met());
        drop(group);
        assert!(
            child.wait().unwrap().code().is_none(),
            "killed with its group"
        );
        for dir in dirs {
            assert!(!dir.exists(), "{} removed", dir.display());
        }
    }

    /// A name taken already (a group a stopped run left behind) is passed
    /// over for the next number: the group is made, and the one there is
    /// left alone.
    #[test]
    #[ignore = "needs a control group it may write (root on cgroup v1, or a delegated v2 group); .ci/run runs it"]
    fn a_name_taken_already_is_passed_over() {
        let first = Cgroup::make(Some("test-taken"), 64 << 20, 16).unwrap();
        let next = MADE.load(Ordering::Relaxed);
        let taken: Vec<PathBuf> = first
            .dirs
            .iter()
            .map(|dir| dir.with_file_name(format!("{PREFIX}test-taken-{next}")))
            .collect();
        for dir in &taken {
            fs::create_dir(dir).unwrap();
        }
        let second = Cgroup::make(Some("test-taken"), 64 << 20, 16);
        let left_alone = taken.iter().all(|dir| dir.exists());
        for dir in &taken {
            fs::remove_dir(dir).unwrap();
        }
        let second = second.expect("a group is made past the taken name");
        assert!(left_alone, "the group there is left alone");
        assert!(second.dirs.iter().all(|dir| !taken.contains(dir)));
    }
}

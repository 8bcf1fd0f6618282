//! The threads of another program, seen from outside: which of them are
//! asleep in a timed sleep right now, as SQLite's busy handler sleeps
//! between two tries of a lock that another client holds.
//!
//! The lab's VFS shim sees the connections of this process queue behind a
//! held lock; it cannot see another program's. What it can see, on Linux,
//! is each thread's wait channel in `/proc`: a thread that waits for a lock
//! through SQLite's busy handler (Python's `sqlite3`, rusqlite, anything on
//! the C library) spends that wait in the kernel's `nanosleep`. A racer
//! seen there has made its first try and will try again, so the race can
//! be let go as soon as all of them are seen, not after a fixed pause.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// A program's process, whose threads (and those of the processes it
/// started) can be looked at.
#[derive(Debug, Clone)]
pub struct ProgramThreads {
    pid: u32,
}

/// One thread of a program or of a process it started: its process and
/// thread ids.
pub type ThreadId = (u32, u32);

impl ProgramThreads {
    /// The threads of process `pid`, when this system shows them and where
    /// each waits (Linux's `/proc`, readable for the lab's own children);
    /// `None` elsewhere.
    pub fn of(pid: u32) -> Option<ProgramThreads> {
        let threads = ProgramThreads { pid };
        let first = tasks(pid).into_iter().next()?;
        napping_state(&task_dir(pid, first))?;
        Some(threads)
    }

    /// The threads asleep in a timed sleep right now, in the program and
    /// in every process it started.
    pub fn napping(&self) -> BTreeSet<ThreadId> {
        family(self.pid)
            .into_iter()
            .flat_map(|pid| tasks(pid).into_iter().map(move |tid| (pid, tid)))
            .filter(|&(pid, tid)| napping_state(&task_dir(pid, tid)) == Some(true))
            .collect()
    }
}

/// Process `pid` and every process it started that still runs, and the
/// ones they started, parents before their children (Linux's `/proc`; on
/// other systems, or once `pid` has ended, `pid` alone or nothing).
///
/// A process that ends is taken from its parent and given to the system's
/// first process, so this must be read while the parents run: a program's
/// family is read before it is stopped.
pub fn family(pid: u32) -> Vec<u32> {
    let mut family = Vec::new();
    let mut seen = BTreeSet::new();
    let mut next = std::collections::VecDeque::from([pid]);
    while let Some(pid) = next.pop_front() {
        if !seen.insert(pid) {
            continue;
        }
        let tasks = tasks(pid);
        if tasks.is_empty() {
            continue;
        }
        family.push(pid);
        for tid in tasks {
            next.extend(children(&task_dir(pid, tid)));
        }
    }
    family
}

fn task_dir(pid: u32, tid: u32) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/task/{tid}"))
}

/// The thread ids of process `pid` (none once it has ended).
fn tasks(pid: u32) -> Vec<u32> {
    fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// The processes a thread started (`children`: absent on kernels built
/// without it, and then none are followed).
fn children(task: &Path) -> Vec<u32> {
    fs::read_to_string(task.join("children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect()
}

/// Whether the thread sleeps in `nanosleep` now: from its wait channel,
/// the kernel function it waits in, else from the system call it is in
/// (when the kernel hides function names). `None`: neither can be read.
fn napping_state(task: &Path) -> Option<bool> {
    if let Ok(channel) = fs::read_to_string(task.join("wchan")) {
        if channel != "0" && !channel.is_empty() {
            return Some(channel.contains("nanosleep"));
        }
    }
    let call = fs::read_to_string(task.join("syscall")).ok()?;
    let number = call.split_whitespace().next()?;
    Some(NANOSLEEP_CALLS.contains(&number))
}

/// The numbers of `nanosleep` and `clock_nanosleep` as `/proc/*/syscall`
/// gives them, for the architectures the lab is built for.
#[cfg(target_arch = "x86_64")]
const NANOSLEEP_CALLS: &[&str] = &["35", "230"];
#[cfg(target_arch = "aarch64")]
const NANOSLEEP_CALLS: &[&str] = &["101", "115"];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const NANOSLEEP_CALLS: &[&str] = &[];

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// Waits (bounded) until `threads` shows `count` napping threads.
    fn seen_napping(threads: &ProgramThreads, count: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if threads.napping().len() >= count {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn the_sleeping_threads_of_a_program_and_its_children_are_seen() {
        // A shell that starts two sleeps and waits: the sleeps nap, the
        // shell itself waits for its children, which is no nap.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & sleep 30 & wait"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let threads = ProgramThreads::of(child.id()).expect("Linux shows threads");
        let seen = seen_napping(&threads, 2);
        let napping = threads.napping();
        let family = family(child.id());
        for &pid in family.iter().rev() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        let _ = child.wait();
        assert!(seen, "the two sleeps were never seen napping");
        assert_eq!(family.len(), 3, "the shell and its two sleeps: {family:?}");
        assert_eq!(family[0], child.id(), "the program comes first");
        let sleeps: BTreeSet<u32> = napping.iter().map(|&(pid, _)| pid).collect();
        assert_eq!(sleeps, family[1..].iter().copied().collect());
        assert_eq!(napping.len(), 2, "{napping:?}");
        assert!(
            napping.iter().all(|&(pid, _)| pid != child.id()),
            "the shell waits, it does not nap: {napping:?}"
        );
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_busy_thread_is_not_napping() {
        let mut child = Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let threads = ProgramThreads::of(child.id()).expect("Linux shows threads");
        let napping = threads.napping();
        child.kill().unwrap();
        let _ = child.wait();
        assert!(napping.is_empty(), "{napping:?}");
    }

    #[test]
    fn a_process_that_is_gone_has_no_threads_to_see_and_no_family() {
        assert!(ProgramThreads::of(u32::MAX).is_none());
        assert!(family(u32::MAX).is_empty());
    }
}

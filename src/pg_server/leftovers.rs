//! What the lab leaves on this machine, outside its own process, while a
//! run lasts: throwaway PostgreSQL clusters ([`crate::pg_server::Cluster`])
//! and network namespaces ([`crate::pg_server::Hosts`]). Each is removed
//! when its owner is dropped; but a run ended by Ctrl-C (SIGINT), SIGTERM
//! or SIGHUP drops nothing, so each registers its removal here
//! ([`register`]), and `lab` calls [`remove_on_interrupt`]: on such a
//! signal every removal still registered runs before the process exits.
//! (SIGKILL cannot be caught: what it leaves, `ip netns delete` and the
//! `lease-lab-pg-` folders under the temporary folder remove by hand.)

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

/// A removal: it runs once, and must not wait long.
type Removal = Box<dyn FnOnce() + Send>;

/// Removals of what is still on the machine, by registration number.
pub struct Leftovers {
    left: Mutex<BTreeMap<u64, Removal>>,
    next: AtomicU64,
}

/// The lab's: what [`remove_on_interrupt`] removes.
static LEFT: Leftovers = Leftovers::new();

/// A removal registered; dropped, it is forgotten (its owner removed what
/// it made itself).
#[must_use = "dropped, the removal is forgotten at once"]
pub struct Registered {
    leftovers: &'static Leftovers,
    number: u64,
}

impl std::fmt::Debug for Registered {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "Registered({})", self.number)
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.leftovers.lock().remove(&self.number);
    }
}

impl Leftovers {
    /// None yet.
    const fn new() -> Leftovers {
        Leftovers {
            left: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Removal>> {
        self.left.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `removal`, to run on [`Leftovers::remove_all`], until the
    /// [`Registered`] is dropped.
    pub fn register(&'static self, removal: impl FnOnce() + Send + 'static) -> Registered {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(number, Box::new(removal));
        Registered {
            leftovers: self,
            number,
        }
    }

    /// Runs every removal still registered, the latest first (a cluster
    /// made in a namespace goes before the namespace), and forgets them:
    /// each runs once. Answers how many ran.
    pub fn remove_all(&self) -> usize {
        let left = std::mem::take(&mut *self.lock());
        let count = left.len();
        for (_, removal) in left.into_iter().rev() {
            removal();
        }
        count
    }
}

/// Registers `removal`, which removes something made on the machine, to
/// run on an interrupt ([`remove_on_interrupt`]), until the [`Registered`]
/// is dropped.
pub fn register(removal: impl FnOnce() + Send + 'static) -> Registered {
    LEFT.register(removal)
}

/// Whether an interrupt is being handled.
static INTERRUPTED_NOW: AtomicBool = AtomicBool::new(false);

/// Waits for ever when an interrupt is being handled, so that a command
/// failing because the handler stopped its server (as it will) neither
/// says so nor exits first: the handler ends the process. Returns at once
/// otherwise.
pub fn wait_if_interrupted() {
    while INTERRUPTED_NOW.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

/// The exit code of a run ended by a signal, as a shell reports SIGINT's.
pub const INTERRUPTED: i32 = 130;

/// On Ctrl-C, SIGTERM or SIGHUP: says so on standard error when anything
/// is left to remove, removes it ([`Leftovers::remove_all`]), and exits with
/// [`INTERRUPTED`]. The handler runs on a thread of its own, not in the
/// signal's context, so a removal may do what it needs.
///
/// Errors: the handler could not be installed (a second call, say).
pub fn remove_on_interrupt() -> Result<(), ctrlc::Error> {
    ctrlc::set_handler(|| {
        INTERRUPTED_NOW.store(true, Ordering::SeqCst);
        if !LEFT.lock().is_empty() {
            eprintln!("\nlab: interrupted: removing the clusters and namespaces it made");
        }
        LEFT.remove_all();
        std::process::exit(INTERRUPTED);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Every removal registered and not yet dropped runs once, the latest
    /// first; one whose registration was dropped does not run.
    #[test]
    fn removals_still_registered_run_once_latest_first() {
        static MINE: Leftovers = Leftovers::new();
        let ran = Arc::new(Mutex::new(Vec::new()));
        let noting = |name: &'static str| {
            let ran = Arc::clone(&ran);
            move || ran.lock().unwrap().push(name)
        };
        let first = MINE.register(noting("namespace"));
        let dropped = MINE.register(noting("dropped"));
        let last = MINE.register(noting("cluster"));
        drop(dropped);
        assert_eq!(MINE.remove_all(), 2);
        assert_eq!(*ran.lock().unwrap(), ["cluster", "namespace"]);
        assert_eq!(MINE.remove_all(), 0, "each runs once");
        assert_eq!(ran.lock().unwrap().len(), 2);
        drop((first, last));
    }
}

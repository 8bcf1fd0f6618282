//! Programs started ahead of need: fresh runs of one command, each greeted
//! and never sent a request, for the stores that will need one. A chaos
//! shrink makes dozens of short runs of the same program, and a run kills
//! and starts its workers again; a student's interpreter takes a tenth of
//! a second or more to start, which would be most of a short run's time.
//!
//! A spare is exactly what a start at that moment gives: the same command,
//! started in the same folder with the same environment, that has heard
//! nothing yet (a program keeps nothing between its runs that the lab does
//! not send it). Each one taken is replaced on a thread of its own, so the
//! next start costs nothing while the machine has a core to spare.

use super::session::Session;
use super::{ExternalStore, ImplCommand};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Runs of one command started ahead (see the module's documentation).
pub struct Spares {
    command: ImplCommand,
    /// The longest a start waits for the program's greeting.
    limit: Duration,
    /// The runs started and greeted, and how many are starting.
    stock: Mutex<Stock>,
}

#[derive(Default)]
struct Stock {
    ready: Vec<Session>,
    starting: usize,
}

impl Spares {
    /// None yet: each one taken, or asked for in vain, is replaced.
    pub fn of(command: ImplCommand, limit: Duration) -> Arc<Spares> {
        Arc::new(Spares {
            command,
            limit,
            stock: Mutex::new(Stock::default()),
        })
    }

    /// Whether these are runs of `command`.
    pub(super) fn runs(&self, command: &ImplCommand) -> bool {
        self.command == *command
    }

    /// A spare that has greeted and not broken since, if one is ready;
    /// another is started in its place either way, so that the stock grows
    /// to what is asked of it at once.
    pub(super) fn take(self: &Arc<Self>) -> Option<Session> {
        let taken = {
            let mut stock = self.stock.lock().unwrap_or_else(PoisonError::into_inner);
            // (One whose program ended while it waited is no spare.)
            stock.ready.retain(|session| {
                !session.broken()
                    && session
                        .unheard
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .is_none()
            });
            stock.starting += 1;
            stock.ready.pop()
        };
        let spares = Arc::clone(self);
        std::thread::spawn(move || {
            // A start that fails is the next start's to report, made then.
            let started = Session::start(&spares.command, spares.limit).ok();
            let mut stock = spares.stock.lock().unwrap_or_else(PoisonError::into_inner);
            stock.starting -= 1;
            stock.ready.extend(started);
        });
        taken
    }

    /// How many are ready.
    #[cfg(test)]
    pub(super) fn ready(&self) -> usize {
        self.stock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .ready
            .len()
    }
}

impl ExternalStore {
    /// The same store, its program started from `spares` when one is
    /// ready (see [`Spares`]); unchanged when they run another command.
    pub fn with_spares(self, spares: &Arc<Spares>) -> ExternalStore {
        if !spares.runs(&self.command) {
            return self;
        }
        ExternalStore {
            spares: Some(Arc::clone(spares)),
            ..self
        }
    }

    /// Starts the program on a thread of its own when it is not running,
    /// so that the next call finds it started (a call made meanwhile waits
    /// for this start, as it would for its own). A run that kills or stops
    /// a worker's program starts its next one at once, while the other
    /// workers' calls go on, rather than when the worker's next call comes;
    /// a fault in starting is the next call's, as it would be.
    pub fn start_ahead(self: &Arc<Self>) {
        let store = Arc::clone(self);
        std::thread::spawn(move || {
            let _ = store.session();
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job_store::JobStore;
    use std::time::Instant;

    /// A program that greets, then reads requests and answers none.
    fn greeter() -> ImplCommand {
        ImplCommand {
            argv: vec![
                "sh".into(),
                "-c".into(),
                r#"echo '{"protocol":"lease-lab","version":1,"name":"spare"}'; while read line; do :; done"#
                    .into(),
            ],
            dir: None,
            env: Vec::new(),
        }
    }

    /// Waits until `spares` has `count` ready (a start takes a few
    /// milliseconds; the bound only proves it ends).
    fn until_ready(spares: &Spares, count: usize) {
        let began = Instant::now();
        while spares.ready() != count {
            assert!(began.elapsed() < Duration::from_secs(10), "never ready");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A store's first start finds no spare and starts its own, and one is
    /// started for the next; its next start takes that very program, and
    /// another is started in its place. A store of another command takes
    /// none.
    #[test]
    fn a_start_takes_a_spare_and_another_is_started_in_its_place() {
        let limit = Duration::from_secs(10);
        let spares = Spares::of(greeter(), limit);
        let store = Arc::new(ExternalStore::new(greeter(), limit).with_spares(&spares));
        assert_eq!(store.name().expect("it greets"), "spare");
        until_ready(&spares, 1);
        let spare = spares.stock.lock().unwrap().ready[0]
            .child
            .lock()
            .unwrap()
            .program_id();
        assert_ne!(store.program_pid(), Some(spare));
        store.abandon();
        store.name().expect("it greets");
        assert_eq!(store.program_pid(), Some(spare));
        until_ready(&spares, 1);

        let mut other = greeter();
        other.argv.push("another".into());
        let elsewhere = ExternalStore::new(other, limit).with_spares(&spares);
        assert!(elsewhere.spares.is_none());
    }
}

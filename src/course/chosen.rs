//! Which implementation a command runs: the one rule that every command
//! running a store follows (`check`, `watch`, `step`, `probe`, `run`,
//! `matrix`, `analyze`, `tests --variants`, `mutant new`), so that none of
//! them decides it another way.
//!
//! `--impl` names it, when given: `rust` or `python` the lab's own store,
//! anything else the student's own program. Without `--impl`, it is the
//! student's current implementation, as the progress file records it (the
//! one `lab new` made or `lab check --impl` named last). With none
//! recorded, it is the lab's Rust store, and the command says so.

use super::progress::Progress;
use crate::subject::{Implementation, Subject};

/// The implementation a command runs, and why it is that one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    /// What runs.
    pub subject: Subject,
    /// Why: named, current or nothing recorded.
    pub how: How,
}

/// Why a command runs the implementation it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// `--impl` names it.
    Named,
    /// It is the student's current implementation, recorded in the
    /// progress file.
    Current,
    /// Nothing is named or recorded: the lab's Rust store.
    NothingRecorded,
}

impl Chosen {
    /// The rule: `given` (what `--impl` names) if any, else the current
    /// implementation `progress` records, else the lab's Rust store.
    pub fn of(given: Option<&Subject>, progress: &Progress) -> Chosen {
        match (given, &progress.implementation) {
            (Some(given), _) => Chosen {
                subject: given.clone(),
                how: How::Named,
            },
            (None, Some(current)) => Chosen {
                subject: Subject::Own(current.clone()),
                how: How::Current,
            },
            (None, None) => Chosen {
                subject: Subject::Rust,
                how: How::NothingRecorded,
            },
        }
    }

    /// The student's own implementation, when that is what runs.
    pub fn own(&self) -> Option<&Implementation> {
        match &self.subject {
            Subject::Own(own) => Some(own),
            _ => None,
        }
    }

    /// What runs, as a header names it: `your current implementation,
    /// python3 /x/store.py`; the program as `--impl` named it; `the lab's
    /// Rust store`.
    pub fn named(&self) -> String {
        match (&self.subject, self.how) {
            (Subject::Own(own), How::Current) => {
                format!("your current implementation, {}", own.describe())
            }
            (Subject::Own(own), _) => own.describe(),
            (Subject::Rust, _) => "the lab's Rust store".into(),
            (Subject::Python, _) => "the lab's Python store".into(),
        }
    }

    /// The header of a command that runs it and records nothing (`lab
    /// run`, `lab matrix`): what runs, and how to run another.
    pub fn header(&self) -> String {
        let how = match self.how {
            How::Named => "as --impl names it",
            How::Current => "--impl rust or --impl python runs the lab's own",
            How::NothingRecorded => {
                "no implementation of yours is recorded; --impl names one, lab new makes one"
            }
        };
        format!("running {} ({how})", self.named())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--impl` wins, then the current implementation, then the lab's Rust
    /// store; each header names what runs and why.
    #[test]
    fn the_named_one_runs_else_the_current_one_else_the_lab_s_rust_store() {
        let mut progress = Progress::default();
        let nothing = Chosen::of(None, &progress);
        assert_eq!(
            (nothing.subject.clone(), nothing.how),
            (Subject::Rust, How::NothingRecorded)
        );
        assert_eq!(nothing.own(), None);
        assert_eq!(
            nothing.header(),
            "running the lab's Rust store (no implementation of yours is recorded; --impl names one, lab new makes one)"
        );
        let python = Chosen::of(Some(&Subject::Python), &progress);
        assert_eq!(
            python.header(),
            "running the lab's Python store (as --impl names it)"
        );

        let current = Implementation::Python {
            file: "/home/ada/mine/store.py".into(),
        };
        progress.make_current(&current);
        let chosen = Chosen::of(None, &progress);
        assert_eq!(chosen.how, How::Current);
        assert_eq!(chosen.own(), Some(&current));
        assert_eq!(
            chosen.named(),
            "your current implementation, python3 /home/ada/mine/store.py"
        );
        assert!(chosen
            .header()
            .ends_with("(--impl rust or --impl python runs the lab's own)"));
        let rust = Chosen::of(Some(&Subject::Rust), &progress);
        assert_eq!((rust.subject, rust.how), (Subject::Rust, How::Named));
        let other = Subject::Own(Implementation::Command {
            line: "./other --fast".into(),
        });
        let named = Chosen::of(Some(&other), &progress);
        assert_eq!(named.subject, other);
        assert_eq!(named.named(), "./other --fast");
    }
}

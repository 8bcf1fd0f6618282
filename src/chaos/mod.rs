//! `lab chaos`: any implementation under many workers, stalls, kills and
//! skewed clocks, judged from its history.
//!
//! A run ([`run`]) starts one process per worker against one database and
//! drives them round by round from a seeded plan ([`plan`]); the history
//! it records is judged twice: by the named checks of the fencing property
//! ([`properties`]) and against the worksheet's contract as a model
//! ([`model`], [`linearize`]). A failing run is shrunk to a counterexample
//! ([`judge`]) and shown as a timeline ([`timeline`]; as a page,
//! [`crate::report::chaos`]); two external sinks show what leases do not
//! promise ([`sink`]).
//!
//! Many workers call one database at once; each call is recorded with the
//! interval of real time it took ([`history`]). The contract, read as a
//! sequential specification of one job ([`model`]), says what each call may
//! answer in each state. A history is correct when it is *linearizable*:
//! every call can be given one instant inside its interval at which it took
//! effect, and the calls, run through the model in the order of those
//! instants, give exactly the recorded answers ([`linearize`]).
//!
//! Every operation but `init_db` names one job, and jobs share no state, so
//! the history is checked job by job (linearizability is local: the whole is
//! linearizable exactly when each job's part is).

pub mod beside;
pub mod history;
pub mod judge;
pub mod linearize;
pub mod model;
pub mod plan;
pub mod properties;
pub mod rng;
pub mod run;
pub mod sink;
pub mod timeline;

/// What ran, in words: `the Rust store, reference`, `the Python store,
/// mutant py07`; a student's program as its command (`python3 mine.py`),
/// never called the reference, which is the lab's own store.
pub fn subject_text(subject: &Subject, variant: &Variant) -> String {
    let (name, lab_s) = match subject {
        Subject::Rust if variant.server().is_some() => {
            ("the store on PostgreSQL".to_string(), true)
        }
        Subject::Rust => ("the Rust store".to_string(), true),
        Subject::Python => ("the Python store".to_string(), true),
        own => (own.describe(), false),
    };
    match (variant.is_reference(), lab_s) {
        (true, true) => format!("{name}, reference"),
        (true, false) => name,
        (false, _) => format!("{name}, mutant {}", variant.id),
    }
}

#[cfg(test)]
mod testing;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::own::Implementation;

    #[test]
    fn a_student_s_program_is_named_by_its_command_never_the_reference() {
        let reference = Variant::reference();
        assert_eq!(
            subject_text(&Subject::Rust, &reference),
            "the Rust store, reference"
        );
        assert_eq!(
            subject_text(&Subject::Python, &reference),
            "the Python store, reference"
        );
        let own = Subject::Own(Implementation::parse("python3 mine.py").unwrap());
        assert_eq!(subject_text(&own, &reference), "python3 mine.py");
        let mutant = Variant::find("07").unwrap();
        assert_eq!(
            subject_text(&Subject::Rust, &mutant),
            "the Rust store, mutant 07"
        );
    }
}

pub use history::{error_may_have_taken_effect, Call, Returned};
pub use linearize::{check, check_job, Malformation, Placement, Verdict, Witness};
pub use model::{check_arguments, Expected, JobModel, Refusal, Row};

use crate::status_line::StatusLine;
use crate::subject::Subject;
use crate::variant::Variant;
use judge::{Judgement, Shrunk};
use plan::Settings;
use run::{RunError, Workers};
use std::path::Path;

/// What a chaos run is of, as its report names it.
#[derive(Debug, Clone)]
pub struct Named {
    /// What ran, in words ([`subject_text`]).
    pub subject: String,
    /// Why it ran, when `--impl` did not name it: the implementation the
    /// progress file records, or the lab's own store when it records none.
    pub chosen: Option<String>,
    /// The command that replays a run, before its seed and sizes.
    pub replay_prefix: String,
}

/// A chaos run as `lab chaos` reports it: what ran, the run judged, and,
/// when it failed, the run shrunk.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Chaos {
    /// What ran, in words.
    pub subject: String,
    /// Why it ran, when `--impl` did not name it (see [`Named::chosen`]).
    pub chosen: Option<String>,
    /// The command that replays a run, before its seed and sizes.
    pub replay_prefix: String,
    /// The run.
    pub judged: Judgement,
    /// The failing run shrunk, when it failed and shrinking was asked for.
    pub shrunk: Option<Shrunk>,
}

impl Chaos {
    /// The command that replays a run with `settings`.
    pub fn replay(&self, settings: &Settings) -> String {
        let faults = &settings.faults;
        let named: Vec<&str> = [
            (faults.stalls, "stalls"),
            (faults.kills, "kills"),
            (faults.restarts, "restarts"),
            (faults.skew > 0.0, "skew"),
            (faults.power, "power"),
            (faults.server_crash, "server-crash"),
            (faults.partition, "partition"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect();
        let mut faults_words = String::new();
        // The command line's default is stalls, kills and skew.
        if named != ["stalls", "kills", "skew"] {
            let list = if named.is_empty() {
                "none".to_string()
            } else {
                named.join(",")
            };
            faults_words = format!(" --faults {list}");
        }
        if faults.skew > 0.0 && faults.skew != plan::TTL {
            faults_words.push_str(&format!(" --skew {}", faults.skew));
        }
        format!(
            "{}{faults_words} --seed {} --workers {} --operations {}",
            self.replay_prefix, settings.seed, settings.workers, settings.operations
        )
    }
}

/// Runs `settings` against `workers`, judges the run, and shrinks it when
/// it failed and `shrink` is set, saying how far it got on `progress`.
/// `named` says what ran.
///
/// Errors: a run that could not be made (no folder for the database, an
/// implementation that does not start).
pub fn chaos(
    named: Named,
    workers: &Workers,
    settings: &Settings,
    scratch: &Path,
    shrink: bool,
    progress: &StatusLine,
) -> Result<Chaos, RunError> {
    let watch = run::Watch {
        progress,
        label: "the run".into(),
    };
    let record = run::run_until(workers, settings, scratch, None, None, &watch)?;
    progress.say(|| {
        format!(
            "the run: {} calls made; judging them against the contract",
            record.calls.len()
        )
    });
    let judged = Judgement::of(record);
    let shrunk = if shrink && judged.failed() {
        Some(judge::shrink(workers, &judged, scratch, progress)?)
    } else {
        None
    };
    Ok(Chaos {
        subject: named.subject,
        chosen: named.chosen,
        replay_prefix: named.replay_prefix,
        judged,
        shrunk,
    })
}

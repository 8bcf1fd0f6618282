//! The student's progress file: what was predicted at each exercise, what
//! happened, the hints seen, and the closing reflection.
//!
//! Stored as JSON, written atomically (a temporary file renamed over the
//! old one), so an interrupted write never leaves half a file. A file that
//! cannot be read as progress is moved aside, never silently overwritten.

use super::prediction::Score;
use crate::exercise::{self, Exercise};
use crate::subject::Implementation;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The file name used when no other is given.
pub const DEFAULT_FILE: &str = "lease-lab-progress.json";

/// The environment variable that names another progress file.
pub const FILE_VARIABLE: &str = "LEASE_LAB_PROGRESS";

/// The format's version, written into every file.
pub const VERSION: u32 = 1;

/// Everything recorded for one student.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// The file format's version.
    pub version: u32,
    /// Who the student is, as their instructor sees it (`--student`, or
    /// asked once by the overview); files written before it was asked
    /// for have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub student: Option<String>,
    /// Per exercise key (`4`, `8b`).
    #[serde(default)]
    pub exercises: BTreeMap<String, ExerciseProgress>,
    /// The answers to the worksheet's closing questions, once given.
    #[serde(default)]
    pub reflection: Option<Reflection>,
    /// The student's current implementation, the one the commands run
    /// without `--impl` (`lab new` makes it, `lab check --impl` names it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    /// The last `lab check` of the current implementation, per step (`1`
    /// to `8`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, StepCheck>,
    /// The student's other implementations, each with its own last check,
    /// the one current most recently first. The current one and its checks
    /// stay in the two fields above, where files written before there
    /// were several have them (and where `lab grade` reads them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_implementations: Vec<OwnRecord>,
    /// Predictions about deliberate breaks of it (`lab check --predict`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_predictions: Vec<OwnPrediction>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            version: VERSION,
            student: None,
            exercises: BTreeMap::new(),
            reflection: None,
            implementation: None,
            checks: BTreeMap::new(),
            other_implementations: Vec::new(),
            own_predictions: Vec::new(),
        }
    }
}

/// How one step's contract tests went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepStatus {
    /// Every contract test of the step passes.
    Passed,
    /// At least one fails for another reason than a stub.
    Failing,
    /// A call answered that it is not written yet (and nothing else failed).
    NotImplemented,
}

/// One step of the last check of the student's implementation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCheck {
    /// When it ran (RFC 3339, UTC).
    pub at: String,
    /// Passed, failing or not implemented.
    pub status: StepStatus,
    /// The step's contract tests that did not pass.
    #[serde(default)]
    pub failing: Vec<String>,
}

/// An implementation of the student's that is not the current one, and
/// its last check, kept until it is current again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnRecord {
    /// The implementation.
    pub implementation: Implementation,
    /// Its last `lab check`, per step, as [`Progress::checks`] holds the
    /// current one's.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, StepCheck>,
}

/// What making an implementation current changed ([`Progress::make_current`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Became {
    /// It was current already: nothing changed.
    AlreadyCurrent,
    /// It is current now, and no implementation was before.
    Current,
    /// It is current now, in the place of `previous`, which stays recorded
    /// with its checks.
    CurrentInstead {
        /// The implementation that was current.
        previous: Implementation,
    },
}

/// A prediction of which tests fail after the student broke their own
/// code on purpose (the worksheet's last instruction), and its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnPrediction {
    /// When it was made.
    pub at: String,
    /// The last step whose tests ran (steps 1 to this one).
    pub through: u8,
    /// The tests predicted to fail.
    pub predicted: Vec<String>,
    /// The student's words: which input, error or stored state shows the break.
    pub why: String,
    /// The contract tests that did fail.
    pub failed: Vec<String>,
    /// The prediction beside the result.
    pub score: Score,
}

/// One exercise's record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExerciseProgress {
    /// How many hints have been shown.
    #[serde(default)]
    pub hints_seen: usize,
    /// Every run, oldest first.
    #[serde(default)]
    pub attempts: Vec<Attempt>,
}

/// One prediction and its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// When it was recorded (RFC 3339, UTC).
    pub at: String,
    /// The mutant it was about.
    pub mutant: String,
    /// The tests the student said would catch it.
    pub predicted: Vec<String>,
    /// The student's words: which input, error or stored state reveals it.
    pub why: String,
    /// A probe given as the prediction, if any: its file name and text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeRecord>,
    /// The tests that did catch it.
    pub caught_by: Vec<String>,
    /// The prediction beside the result.
    pub score: Score,
}

/// A probe kept with the attempt that used it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeRecord {
    /// The probe's file name, as given.
    pub file: String,
    /// Its text, as run.
    pub text: String,
    /// What the lab made of it.
    pub verdict: String,
    /// Whether it killed the mutant: a right prediction.
    #[serde(default)]
    pub killed: bool,
}

/// The answers to the worksheet's closing questions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reflection {
    /// When they were given.
    pub at: String,
    /// Why the earlier steps' tests are kept at every later step.
    pub why_tests_are_kept: String,
    /// One operational condition the lab does not guarantee.
    pub not_guaranteed: String,
}

/// The worksheet's two closing questions, in the order they are asked.
pub const CLOSING_QUESTIONS: [&str; 2] = [
    "Why are the earlier steps' tests kept at every later step?",
    "Name one operational condition this lab does not guarantee:",
];

impl Reflection {
    /// The answers to [`CLOSING_QUESTIONS`], given now; `None` unless both
    /// hold some text.
    pub fn answered(why_tests_are_kept: &str, not_guaranteed: &str) -> Option<Reflection> {
        if why_tests_are_kept.trim().is_empty() || not_guaranteed.trim().is_empty() {
            return None;
        }
        Some(Reflection {
            at: now_stamp(),
            why_tests_are_kept: why_tests_are_kept.to_string(),
            not_guaranteed: not_guaranteed.to_string(),
        })
    }
}

/// Why a student's name was not recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StudentError {
    /// The name is empty or only spaces.
    #[error("the student's name is empty: give the name your instructor knows you by (--student \"Ada Lovelace\")")]
    Empty,
    /// Another name is recorded, and replacing it was not asked for.
    #[error("the progress file already records the student {recorded:?}; to change it, give --student with the new name")]
    AlreadyRecorded {
        /// The name recorded.
        recorded: String,
    },
}

/// What recording a student's name did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StudentChange {
    /// The same name was recorded already: nothing changed.
    Unchanged,
    /// No name was recorded; now this one is.
    Recorded,
    /// Another name was recorded; it was replaced, as asked.
    Replaced {
        /// The name recorded before.
        previous: String,
    },
}

impl Progress {
    /// Records `name` (without surrounding spaces) as the student's
    /// identity. A different name already recorded is replaced only when
    /// `replace` is true (an explicit `--student`); otherwise it is an
    /// error and nothing changes.
    ///
    /// Errors: the name is empty or whitespace; another name is recorded
    /// and `replace` is false.
    pub fn record_student(
        &mut self,
        name: &str,
        replace: bool,
    ) -> Result<StudentChange, StudentError> {
        let name = name.trim();
        if name.is_empty() {
            return Err(StudentError::Empty);
        }
        match &self.student {
            Some(recorded) if recorded == name => Ok(StudentChange::Unchanged),
            Some(recorded) if !replace => Err(StudentError::AlreadyRecorded {
                recorded: recorded.clone(),
            }),
            recorded => {
                let change = match recorded {
                    Some(previous) => StudentChange::Replaced {
                        previous: previous.clone(),
                    },
                    None => StudentChange::Recorded,
                };
                self.student = Some(name.to_string());
                Ok(change)
            }
        }
    }

    /// Makes `own` the current implementation, with its own checks: those
    /// recorded when it was current before, if it was, else none. The one
    /// it replaces goes first among the others, with its checks.
    pub fn make_current(&mut self, own: &Implementation) -> Became {
        if self.implementation.as_ref() == Some(own) {
            return Became::AlreadyCurrent;
        }
        let checks = match self
            .other_implementations
            .iter()
            .position(|other| &other.implementation == own)
        {
            Some(at) => self.other_implementations.remove(at).checks,
            None => BTreeMap::new(),
        };
        let previous_checks = std::mem::replace(&mut self.checks, checks);
        match self.implementation.replace(own.clone()) {
            Some(previous) => {
                self.other_implementations.insert(
                    0,
                    OwnRecord {
                        implementation: previous.clone(),
                        checks: previous_checks,
                    },
                );
                Became::CurrentInstead { previous }
            }
            None => Became::Current,
        }
    }

    /// The exercise's record, created empty if needed.
    pub fn exercise(&mut self, key: &str) -> &mut ExerciseProgress {
        self.exercises.entry(key.to_string()).or_default()
    }

    /// Whether the last check of the student's own implementation passed
    /// every step of the worksheet.
    pub fn all_steps_pass(&self) -> bool {
        self.checks.len() == crate::operation::NAMES.len()
            && self
                .checks
                .values()
                .all(|check| check.status == StepStatus::Passed)
    }

    /// The latest attempt at an exercise, if any.
    pub fn latest(&self, key: &str) -> Option<&Attempt> {
        self.exercises
            .get(key)
            .and_then(|exercise| exercise.attempts.last())
    }

    /// The first exercise without a recorded attempt, in order.
    pub fn next_exercise(&self) -> Option<Exercise> {
        exercise::exercises()
            .into_iter()
            .find(|exercise| self.latest(&exercise.key).is_none())
    }

    /// What to do after exercise `key`: the first exercise after it without
    /// a recorded attempt, else the first one before it.
    pub fn next_exercise_after(&self, key: &str) -> Option<Exercise> {
        let all = exercise::exercises();
        let at = all
            .iter()
            .position(|exercise| exercise.key == key)
            .unwrap_or(0);
        all[at..]
            .iter()
            .chain(&all[..at])
            .find(|exercise| self.latest(&exercise.key).is_none())
            .cloned()
    }
}

/// Where the progress file is: `explicit` if given, else `LEASE_LAB_PROGRESS`,
/// else the [`DEFAULT_FILE`] of the current folder or, as git finds its
/// repository, of the nearest folder above it that has one (so that `lab`
/// run in the folder `lab new` made reads the progress of the folder it
/// was made from), else [`DEFAULT_FILE`] in the current folder, where the
/// first change writes it.
pub fn location(explicit: Option<&Path>) -> PathBuf {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os(FILE_VARIABLE).map(PathBuf::from))
        .or_else(|| found_above(&std::env::current_dir().ok()?))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FILE))
}

/// The [`DEFAULT_FILE`] of a folder above `folder` (not `folder` itself,
/// whose file is named relatively), the nearest one, as an absolute path.
fn found_above(folder: &Path) -> Option<PathBuf> {
    folder
        .ancestors()
        .skip(1)
        .map(|above| above.join(DEFAULT_FILE))
        .find(|file| file.is_file())
}

/// A progress file that was loaded, and what had to be done to load it.
#[derive(Debug)]
pub struct Loaded {
    /// The progress (empty for a new or set-aside file).
    pub progress: Progress,
    /// Where an unreadable file was moved, if one was.
    pub set_aside: Option<(PathBuf, String)>,
}

/// Reads the progress file at `path`.
///
/// A missing file is an empty progress. A file that is not valid progress
/// JSON is renamed to `PATH.corrupt-SECONDS` and reported in
/// [`Loaded::set_aside`] with the reason, and an empty progress is returned.
/// Any other reading error is returned as is.
pub fn load(path: &Path) -> io::Result<Loaded> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Ok(Loaded {
                progress: Progress::default(),
                set_aside: None,
            })
        }
        Err(error) => return Err(error),
    };
    match parse(&bytes) {
        Ok(progress) => Ok(Loaded {
            progress,
            set_aside: None,
        }),
        Err(reason) => {
            let aside = aside_name(path);
            fs::rename(path, &aside)?;
            Ok(Loaded {
                progress: Progress::default(),
                set_aside: Some((aside, reason)),
            })
        }
    }
}

/// Reads progress from a file's bytes, or says why they are not progress
/// this lab can read.
fn parse(bytes: &[u8]) -> Result<Progress, String> {
    match serde_json::from_slice::<Progress>(bytes) {
        Ok(progress) if progress.version == VERSION => Ok(progress),
        Ok(progress) => Err(format!(
            "it has format version {}, this lab reads {VERSION}",
            progress.version
        )),
        Err(error) => Err(format!("it is not a progress file ({error})")),
    }
}

fn aside_name(path: &Path) -> PathBuf {
    let seconds = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let mut name = path.as_os_str().to_os_string();
    name.push(format!(".corrupt-{seconds}"));
    PathBuf::from(name)
}

/// Writes `progress` to `path` atomically.
pub fn save(path: &Path, progress: &Progress) -> io::Result<()> {
    // The temporary file is written beside the progress file, so that
    // putting it in place is a rename within one file system.
    let path = std::path::absolute(path)?;
    let folder = path.parent().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} names a folder, not a file", path.display()),
        )
    })?;
    let mut temporary = tempfile::NamedTempFile::new_in(folder)?;
    let text = serde_json::to_string_pretty(progress).map_err(io::Error::other)?;
    temporary.write_all(text.as_bytes())?;
    temporary.write_all(b"\n")?;
    temporary.as_file().sync_all()?;
    temporary.persist(&path).map_err(|error| error.error)?;
    Ok(())
}

/// The current time as RFC 3339 in UTC, to the second.
pub fn now_stamp() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// Reads another student's progress file (`lab grade`): unlike [`load`],
/// a file that cannot be read as progress is an error and is left in place.
pub fn read_for_grading(path: &Path) -> io::Result<Progress> {
    parse(&fs::read(path)?).map_err(|reason| io::Error::new(io::ErrorKind::InvalidData, reason))
}

/// A progress file that cannot be used stops the command that needed it:
/// it could not do its work.
impl From<ProgressError> for crate::command::CommandError {
    fn from(error: ProgressError) -> crate::command::CommandError {
        crate::command::CommandError::Failed(error.to_string())
    }
}

/// Why the progress file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ProgressError {
    /// The file exists but cannot be read (or set aside).
    #[error("cannot read the progress file {}: {error}", path.display())]
    Read {
        /// The progress file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// The file cannot be written; what was recorded before is kept.
    #[error("cannot write the progress file {}: {error}", path.display())]
    Write {
        /// The progress file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
}

#[cfg(test)]
mod tests;

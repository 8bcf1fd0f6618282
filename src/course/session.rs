//! A student's progress for the length of one command, and every change a
//! command makes to it: a hint shown, an attempt or a reflection recorded,
//! an exercise or everything forgotten. The commands ask the session; none
//! edits the progress file's fields itself.

use super::check::CheckReport;
use super::progress::{
    load, save, Attempt, Became, ExerciseProgress, OwnPrediction, Progress, ProgressError,
    Reflection,
};
use crate::subject::Implementation;
use crate::terminal::plural;
use std::path::{Path, PathBuf};

/// A student's progress for the length of one command: loaded once when
/// the command starts, changed in memory, and saved once, atomically, when
/// it ends (only if something changed).
#[derive(Debug)]
pub struct Session {
    path: PathBuf,
    progress: Progress,
    set_aside: Option<(PathBuf, String)>,
    changed: bool,
}

impl Session {
    /// Loads the progress file at `path` ([`load`]): a missing file is an
    /// empty progress, an unreadable one is set aside
    /// ([`Session::set_aside`] says where and why).
    ///
    /// Errors: the file cannot be read at all.
    pub fn open(path: &Path) -> Result<Session, ProgressError> {
        let loaded = load(path).map_err(|error| ProgressError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Ok(Session {
            path: path.to_path_buf(),
            progress: loaded.progress,
            set_aside: loaded.set_aside,
            changed: false,
        })
    }

    /// [`Session::open`], saying on standard error when an unreadable file
    /// was set aside, and where.
    ///
    /// Errors: as for [`Session::open`].
    pub fn open_saying(path: &Path) -> Result<Session, ProgressError> {
        let session = Session::open(path)?;
        if let Some((aside, reason)) = session.set_aside() {
            eprintln!(
                "lab: warning: {} could not be read ({reason}); it was moved to {} and a new progress file was started",
                path.display(),
                aside.display()
            );
        }
        Ok(session)
    }

    /// The progress file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The progress as loaded, with the changes made since.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The progress, to change, for the methods of this type only: they
    /// are what may change it. The change is saved by [`Session::save`].
    fn edit(&mut self) -> &mut Progress {
        self.changed = true;
        &mut self.progress
    }

    /// Where an unreadable file was moved when it was opened, and why it
    /// could not be read.
    pub fn set_aside(&self) -> Option<&(PathBuf, String)> {
        self.set_aside.as_ref()
    }

    /// Saves the progress ([`save`]) if it was changed.
    ///
    /// Errors: the file cannot be written.
    pub fn save(&mut self) -> Result<(), ProgressError> {
        if !self.changed {
            return Ok(());
        }
        save(&self.path, &self.progress).map_err(|error| ProgressError::Write {
            path: self.path.clone(),
            error,
        })?;
        self.changed = false;
        Ok(())
    }

    /// How many of exercise `key`'s hints the student has seen.
    pub fn hints_seen(&self, key: &str) -> usize {
        self.progress
            .exercises
            .get(key)
            .map_or(0, |record| record.hints_seen)
    }

    /// Records that the student has seen the first `seen` hints of exercise
    /// `key` (never fewer than before), and returns how many that makes.
    pub fn saw_hints(&mut self, key: &str, seen: usize) -> usize {
        let record = self.edit().exercise(key);
        record.hints_seen = record.hints_seen.max(seen);
        record.hints_seen
    }

    /// Shows one more of exercise `key`'s `total` hints (or all of them),
    /// recorded as seen: how many to show now, never more than there are.
    pub fn show_hint(&mut self, key: &str, total: usize, all: bool) -> usize {
        let shown = if all {
            total
        } else {
            (self.hints_seen(key) + 1).min(total)
        };
        self.saw_hints(key, shown);
        shown
    }

    /// Records `name` as the student's, replacing any other (`--student`):
    /// what changed.
    ///
    /// Errors: an empty name (nothing is changed).
    pub fn record_student(
        &mut self,
        name: &str,
    ) -> Result<super::progress::StudentChange, super::progress::StudentError> {
        let change = self.progress.record_student(name, true)?;
        if change != super::progress::StudentChange::Unchanged {
            self.changed = true;
        }
        Ok(change)
    }

    /// Makes `own` the student's current implementation, the one the
    /// commands run without `--impl` ([`Progress::make_current`]): the
    /// one it replaces stays recorded, with its checks.
    pub fn make_current(&mut self, own: &Implementation) -> Became {
        let became = self.progress.make_current(own);
        if became != Became::AlreadyCurrent {
            self.changed = true;
        }
        became
    }

    /// Records a check of `own` ([`CheckReport::record`]), which makes it
    /// the current implementation first: a check is of the current one.
    pub fn record_check(&mut self, report: &CheckReport, own: &Implementation) -> Became {
        let became = self.make_current(own);
        report.record(self.edit());
        became
    }

    /// Records a prediction about a break of the student's own code.
    pub fn record_own_prediction(&mut self, prediction: OwnPrediction) {
        self.edit().own_predictions.push(prediction);
    }

    /// Records an attempt at exercise `key`.
    pub fn record_attempt(&mut self, key: &str, attempt: Attempt) {
        self.edit().exercise(key).attempts.push(attempt);
    }

    /// Records the answers to the closing questions, replacing any earlier
    /// ones, and returns them.
    ///
    /// Errors: an answer is empty (nothing is changed).
    pub fn record_reflection(
        &mut self,
        why_tests_are_kept: &str,
        not_guaranteed: &str,
    ) -> Result<&Reflection, EmptyAnswer> {
        let reflection =
            Reflection::answered(why_tests_are_kept, not_guaranteed).ok_or(EmptyAnswer)?;
        Ok(self.edit().reflection.insert(reflection))
    }

    /// Keeps `reflection`, the answers to the closing questions as the
    /// student gave them, replacing any earlier ones.
    pub fn keep_reflection(&mut self, reflection: Reflection) {
        self.edit().reflection = Some(reflection);
    }

    /// Forgets exercise `key`: what was recorded of it, if anything.
    pub fn forget_exercise(&mut self, key: &str) -> Option<ExerciseProgress> {
        if !self.progress.exercises.contains_key(key) {
            return None;
        }
        self.edit().exercises.remove(key)
    }

    /// Forgets everything recorded but who the student is, which is not
    /// progress.
    pub fn forget_all(&mut self) {
        let student = self.progress.student.clone();
        *self.edit() = Progress {
            student,
            ..Progress::default()
        };
    }

    /// What the progress records, one item each in words, for `lab reset`
    /// to name before it forgets them; empty when nothing is recorded.
    pub fn recorded_items(&self) -> Vec<String> {
        let progress = &self.progress;
        let mut items = Vec::new();
        let started: Vec<&str> = progress.exercises.keys().map(String::as_str).collect();
        if !started.is_empty() {
            let attempts: usize = progress.exercises.values().map(|e| e.attempts.len()).sum();
            items.push(format!(
                "exercises {} ({}, and the hints seen)",
                started.join(", "),
                plural(attempts, "attempt")
            ));
        }
        if progress.reflection.is_some() {
            items.push("your answers to the closing questions".into());
        }
        if let Some(implementation) = &progress.implementation {
            let checked = if progress.checks.is_empty() {
                String::new()
            } else {
                format!(
                    ", and its last check of {}",
                    plural(progress.checks.len(), "step")
                )
            };
            items.push(format!(
                "your implementation, {} (its files stay){checked}",
                implementation.describe()
            ));
        }
        let others: Vec<String> = progress
            .other_implementations
            .iter()
            .map(|other| other.implementation.describe())
            .collect();
        if !others.is_empty() {
            items.push(format!(
                "your other {}, {} (their files stay)",
                if others.len() == 1 {
                    "implementation"
                } else {
                    "implementations"
                },
                others.join(", ")
            ));
        }
        if !progress.own_predictions.is_empty() {
            items.push(format!(
                "{} about breaks of your own",
                plural(progress.own_predictions.len(), "prediction")
            ));
        }
        items
    }
}

/// An answer to a closing question was empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("give both answers as non-empty text: --why-kept \"...\" --not-guaranteed \"...\" (at a terminal, lab reflect asks for them)")]
pub struct EmptyAnswer;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::prediction::Score;

    /// `--student` and `lab new` each make a change that is saved; the
    /// same name again is none, and an empty one changes nothing.
    #[test]
    fn the_student_and_the_implementation_are_recorded_and_saved() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        assert!(session.record_student("  ").is_err());
        assert!(!session.changed);
        assert_eq!(
            session.record_student(" Ada ").unwrap(),
            super::super::progress::StudentChange::Recorded
        );
        session.save().unwrap();
        assert_eq!(
            session.record_student("Ada").unwrap(),
            super::super::progress::StudentChange::Unchanged
        );
        assert!(!session.changed, "the same name is no change to save");
        let own = crate::subject::Implementation::Command {
            line: "python3 mine.py".into(),
        };
        assert_eq!(session.make_current(&own), Became::Current);
        session.save().unwrap();
        assert_eq!(session.make_current(&own), Became::AlreadyCurrent);
        assert!(!session.changed, "the current one again is no change");
        let saved = Session::open(&path).unwrap();
        assert_eq!(saved.progress().student.as_deref(), Some("Ada"));
        assert_eq!(saved.progress().implementation, Some(own));
    }

    /// A session reads the file once and writes it once, only when
    /// something changed; an unreadable file is set aside and said so; a
    /// file that cannot be written is an error naming it.
    #[test]
    fn a_session_saves_once_and_only_a_change() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("progress.json");
        let mut session = Session::open(&path).unwrap();
        assert_eq!(session.path(), path);
        assert_eq!(session.progress(), &Progress::default());
        assert!(session.set_aside().is_none());
        session.save().unwrap();
        assert!(!path.exists(), "nothing changed, nothing written");
        session.edit().exercise("4").hints_seen = 2;
        session.save().unwrap();
        assert_eq!(load(&path).unwrap().progress.exercises["4"].hints_seen, 2);
        std::fs::write(&path, "not json").unwrap();
        session.save().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "not json",
            "saved once: a second save without a change writes nothing"
        );
        let reopened = Session::open(&path).unwrap();
        let (aside, reason) = reopened.set_aside().expect("set aside");
        assert!(
            aside.exists() && reason.contains("not a progress file"),
            "{reason}"
        );
        assert_eq!(reopened.progress(), &Progress::default());

        let mut unwritable = Session::open(&folder.path().join("gone/progress.json")).unwrap();
        unwritable.edit();
        let error = unwritable.save().unwrap_err();
        assert!(matches!(error, ProgressError::Write { .. }));
        assert!(
            error
                .to_string()
                .starts_with("cannot write the progress file "),
            "{error}"
        );
        let unreadable = Session::open(folder.path()).unwrap_err();
        assert!(
            matches!(unreadable, ProgressError::Read { .. }),
            "{unreadable}"
        );
    }

    /// Hints are counted once, wherever they are shown: one more each
    /// time, never past the last, all at once on request, and never fewer
    /// than were seen.
    #[test]
    fn hints_are_counted_one_more_at_a_time_and_never_fewer() {
        let folder = tempfile::tempdir().unwrap();
        let mut session = Session::open(&folder.path().join("p.json")).unwrap();
        assert_eq!(session.hints_seen("4"), 0);
        assert_eq!(session.show_hint("4", 3, false), 1);
        assert_eq!(session.show_hint("4", 3, false), 2);
        assert_eq!(session.saw_hints("4", 1), 2, "never fewer");
        assert_eq!(session.show_hint("4", 3, true), 3);
        assert_eq!(session.show_hint("4", 3, false), 3, "never past the last");
        assert_eq!(session.hints_seen("4"), 3);
        assert_eq!(session.hints_seen("5"), 0);
    }

    /// A reflection needs both answers; an empty one changes nothing, and
    /// a new one replaces the old.
    #[test]
    fn a_reflection_needs_both_answers_and_replaces_the_last() {
        let folder = tempfile::tempdir().unwrap();
        let mut session = Session::open(&folder.path().join("p.json")).unwrap();
        assert_eq!(session.record_reflection("kept", " "), Err(EmptyAnswer));
        assert_eq!(session.record_reflection("", "clocks"), Err(EmptyAnswer));
        assert_eq!(session.progress().reflection, None);
        session.record_reflection("kept", "clocks").unwrap();
        let answered = session.record_reflection("still kept", "skew").unwrap();
        assert_eq!(
            (
                answered.why_tests_are_kept.as_str(),
                answered.not_guaranteed.as_str()
            ),
            ("still kept", "skew")
        );
        assert_eq!(
            session
                .progress()
                .reflection
                .as_ref()
                .unwrap()
                .why_tests_are_kept,
            "still kept"
        );
    }

    /// What a reset names and forgets: an exercise alone, or everything
    /// but the student's name.
    #[test]
    fn forgetting_names_what_is_recorded_and_keeps_the_student() {
        let folder = tempfile::tempdir().unwrap();
        let mut session = Session::open(&folder.path().join("p.json")).unwrap();
        assert!(session.recorded_items().is_empty());
        assert_eq!(session.forget_exercise("4"), None);
        session.edit().student = Some("Ada".into());
        let attempt = Attempt {
            at: "2026-12-01T10:00:00Z".into(),
            mutant: "04".into(),
            predicted: vec!["claim_at_exact_expiry_is_reassigned".into()],
            why: String::new(),
            probe: None,
            caught_by: vec!["claim_at_exact_expiry_is_reassigned".into()],
            score: Score::of(
                &["claim_at_exact_expiry_is_reassigned".to_string()],
                &["claim_at_exact_expiry_is_reassigned".to_string()],
            ),
        };
        session.record_attempt("4", attempt.clone());
        session.record_attempt("4", attempt);
        session.saw_hints("5", 1);
        session.record_reflection("kept", "clocks").unwrap();
        assert_eq!(
            session.recorded_items(),
            [
                "exercises 4, 5 (2 attempts, and the hints seen)",
                "your answers to the closing questions"
            ]
        );
        let forgotten = session.forget_exercise("5").expect("recorded");
        assert_eq!(forgotten.hints_seen, 1);
        assert_eq!(session.forget_exercise("5"), None);
        session.forget_all();
        assert!(session.recorded_items().is_empty());
        assert_eq!(session.progress().student.as_deref(), Some("Ada"));
    }
}

//! The files given to `lab grade`, one student each: a student's several
//! progress files (a laptop's and a lab machine's, say) merged into one,
//! the same file given twice counted once, and what became of each file.

use super::StudentFile;
use serde::Serialize;

/// What became of a file given to `lab grade`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum FileStatus {
    /// Graded: its student's row is `row` (from 0, in the class's rows).
    Graded {
        /// The student's row.
        row: usize,
    },
    /// Another file of the same student, merged into row `row`.
    MergedInto {
        /// The student's row.
        row: usize,
    },
    /// The same file given again: graded once.
    GivenTwice,
    /// A file of a student given already that cannot be merged with the
    /// others (two different attempts at one moment): graded in a row of
    /// its own, `row`, marked.
    NotMerged {
        /// Its own row.
        row: usize,
        /// Why it was not merged.
        why: String,
    },
    /// It could not be read: no row.
    Unreadable {
        /// Why.
        reason: String,
    },
}

/// A file given to `lab grade`, in the order given, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GivenFile {
    /// The file, as given.
    pub file: String,
    /// What became of it.
    #[serde(flatten)]
    pub status: FileStatus,
}

/// A file that could not be read, and why, for its line in the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// The file, as given.
    pub file: String,
    /// Why it could not be read.
    pub reason: String,
}

/// The class's rows: one per student, each student's files merged (first
/// attempts and latest attempts by time), a file that cannot be merged a
/// row of its own; each row with the files merged into it, after the
/// first. Beside them, what became of every file given, in the order
/// given, `unreadable` ones last.
pub fn rows(
    files: &[StudentFile],
    unreadable: Vec<Unreadable>,
) -> (Vec<(StudentFile, Vec<String>)>, Vec<GivenFile>) {
    let mut rows: Vec<(StudentFile, Vec<String>)> = Vec::new();
    let mut given = Vec::new();
    for file in files {
        let status = place(file, &mut rows);
        given.push(GivenFile {
            file: file.file.clone(),
            status,
        });
    }
    given.extend(unreadable.into_iter().map(|file| GivenFile {
        file: file.file,
        status: FileStatus::Unreadable {
            reason: file.reason,
        },
    }));
    (rows, given)
}

/// Puts `file` in the rows: into its student's first row when it merges
/// with it, else in a row of its own.
fn place(file: &StudentFile, rows: &mut Vec<(StudentFile, Vec<String>)>) -> FileStatus {
    let Some(row) = rows
        .iter()
        .position(|(graded, _)| graded.identity() == file.identity())
    else {
        rows.push((file.clone(), Vec::new()));
        return FileStatus::Graded {
            row: rows.len() - 1,
        };
    };
    let (graded, merged) = &mut rows[row];
    if graded.file == file.file || merged.contains(&file.file) {
        return FileStatus::GivenTwice;
    }
    match merge(graded, file) {
        Ok(()) => {
            merged.push(file.file.clone());
            FileStatus::MergedInto { row }
        }
        Err(why) => {
            let why = format!("not merged with {}: {why}", graded.file);
            rows.push((file.clone(), Vec::new()));
            FileStatus::NotMerged {
                row: rows.len() - 1,
                why,
            }
        }
    }
}

/// Merges `other`'s progress into `into`'s: each exercise's attempts from
/// both, in the order of their times (an attempt in both once; attempts of
/// one file at the same second in that file's order), the hints seen the
/// most either saw, the later reflection (`into`'s at a tie). Changes nothing and says why
/// when the two files hold different attempts at one exercise at the same
/// time: which came first cannot be known.
fn merge(into: &mut StudentFile, other: &StudentFile) -> Result<(), String> {
    let mut exercises = into.progress.exercises.clone();
    for (key, theirs) in &other.progress.exercises {
        let ours = exercises.entry(key.clone()).or_default();
        let mut attempts = ours.attempts.clone();
        for attempt in &theirs.attempts {
            if ours.attempts.contains(attempt) {
                continue;
            }
            if ours.attempts.iter().any(|mine| mine.at == attempt.at) {
                return Err(format!(
                    "exercise {key} has two different attempts at {}",
                    attempt.at
                ));
            }
            attempts.push(attempt.clone());
        }
        // A stable sort: what one file recorded in one second keeps its order.
        attempts.sort_by(|a, b| a.at.cmp(&b.at));
        ours.attempts = attempts;
        ours.hints_seen = ours.hints_seen.max(theirs.hints_seen);
    }
    into.progress.exercises = exercises;
    let later = match (&into.progress.reflection, &other.progress.reflection) {
        (Some(ours), Some(theirs)) => theirs.at > ours.at,
        (None, Some(_)) => true,
        _ => false,
    };
    if later {
        into.progress.reflection = other.progress.reflection.clone();
    }
    Ok(())
}

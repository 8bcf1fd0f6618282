//! `lab watch`'s rounds: a check of the student's own implementation now,
//! and again each time one of its files is saved with other contents,
//! each recorded as `lab check` records it.

use super::say;
use crate::command::CommandError;
use crate::course::check::{check_shown, CheckError};
use crate::course::session::Session;
use crate::report::student::check::{next_text, watch_text};
use crate::runner::{RunOptions, WorkerCommand};
use crate::subject::{Implementation, Subject, SubjectError};
use crate::terminal::fill;
use colored::Colorize;
use notify_debouncer_mini::notify::RecursiveMode;
use std::io::{self, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long `lab watch` waits after a change of a file for the next one,
/// so that an editor's save (often several writes and a rename, within a
/// few milliseconds) checks once. Each file's change is told as soon as it
/// settled, not batched with others (which could double the wait): the
/// check starts about this long after the save. A change that only renames
/// or rewrites the same contents checks nothing (see [`fingerprint`]).
const SETTLE: Duration = Duration::from_millis(50);

/// `lab watch`: a check of `checked` (steps 1 to `through`) now, and again
/// after each save of its files, until interrupted or the output is
/// closed; each check is recorded in the progress file at `progress_path`,
/// its heading followed by `named`, how the command names what it checks
/// (`your current implementation, FILE`).
///
/// Errors: `checked` is one of the lab's stores, or its files cannot be
/// told or watched; the output was closed (an [`io::Error`] of kind
/// `BrokenPipe`, which ends the watch).
pub fn watch(
    checked: &Subject,
    named: &str,
    through: u8,
    options: &RunOptions,
    worker: &WorkerCommand,
    progress_path: &Path,
) -> Result<(), CommandError> {
    let Subject::Own(own) = checked else {
        return Err(CommandError::Usage(
            "the lab's own stores do not change: watch your implementation (--impl FILE-OR-FOLDER, or the one `lab new` recorded)".into(),
        ));
    };
    let watched = own.watched();
    if watched.is_empty() {
        return Err(CommandError::Usage(format!(
            "cannot tell which files to watch in `{}`: give --impl the .py file or the Rust project's folder",
            own.describe()
        )));
    }
    let (sender, changes) = std::sync::mpsc::channel();
    let settle = notify_debouncer_mini::Config::default()
        .with_timeout(SETTLE)
        .with_batch_mode(false);
    let mut debouncer =
        notify_debouncer_mini::new_debouncer_opt::<_, notify::RecommendedWatcher>(settle, sender)
            .map_err(|error| CommandError::Failed(format!("cannot watch files: {error}")))?;
    for path in &watched {
        // A file is watched through its folder: editors often save by
        // writing a new file and renaming it over the old one.
        let (target, mode) = if path.is_dir() {
            (path.as_path(), RecursiveMode::Recursive)
        } else {
            (
                path.parent().unwrap_or(Path::new(".")),
                RecursiveMode::NonRecursive,
            )
        };
        debouncer.watcher().watch(target, mode).map_err(|error| {
            CommandError::Failed(format!("cannot watch {}: {error}", target.display()))
        })?;
    }
    // Names, not paths: the heading of each run fits one line.
    let names: Vec<String> = watched
        .iter()
        .map(|path| {
            path.file_name()
                .unwrap_or(path.as_os_str())
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let round = WatchRound {
        checked,
        named,
        own,
        through,
        options,
        worker,
        progress_path,
        watching: names.join(", "),
        terminal: std::io::stdout().is_terminal(),
    };
    let mut last_seen: Vec<u64> = watched.iter().map(|path| fingerprint(path)).collect();
    let mut runs = 1;
    round.run(runs, None)?;
    for batch in changes {
        batch.map_err(|error| CommandError::Failed(format!("watching failed: {error}")))?;
        // The watcher also reports files being opened and read (the check
        // itself reads them) and files beside a watched one: only a change
        // of what the watched files hold counts.
        let now_seen: Vec<u64> = watched.iter().map(|path| fingerprint(path)).collect();
        let Some(changed) = (0..watched.len()).find(|&at| now_seen[at] != last_seen[at]) else {
            continue;
        };
        last_seen = now_seen;
        runs += 1;
        round.run(runs, Some(&watched[changed]))?;
    }
    Ok(())
}

/// A hash of what a watched file holds (a folder: its files, recursively,
/// with their names): it changes exactly when a file is saved with other
/// contents, added, removed or renamed.
fn fingerprint(path: &Path) -> u64 {
    fn visit(path: &Path, hasher: &mut std::collections::hash_map::DefaultHasher) {
        use std::hash::Hash;
        path.hash(hasher);
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
                .into_iter()
                .flatten()
                .filter_map(|entry| entry.ok().map(|entry| entry.path()))
                .collect();
            entries.sort();
            for entry in entries {
                visit(&entry, hasher);
            }
        } else {
            std::fs::read(path).ok().hash(hasher);
        }
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    visit(path, &mut hasher);
    std::hash::Hasher::finish(&hasher)
}

/// What every check of `lab watch` needs.
struct WatchRound<'a> {
    checked: &'a Subject,
    /// How each run's heading names the implementation.
    named: &'a str,
    own: &'a Implementation,
    through: u8,
    options: &'a RunOptions,
    worker: &'a WorkerCommand,
    progress_path: &'a Path,
    /// The files watched, said in the first check's heading.
    watching: String,
    /// Whether standard output is a terminal, whose screen each check
    /// clears.
    terminal: bool,
}

impl WatchRound<'_> {
    /// Check number `run` (`changed`: the file whose save started it): at a
    /// terminal on a cleared screen, else under a blank line; headed by
    /// its time and, on a line under it, what it checks, said before the
    /// program is built or started (so that a build's progress and its
    /// compiler's messages show under it); then one line per step and the
    /// first failure in full. A failure to build or run is shown, and the
    /// watch goes on; only a closed output ends it.
    fn run(&self, run: usize, changed: Option<&Path>) -> Result<(), CommandError> {
        let width = crate::terminal::text_width();
        let why = match changed {
            None => format!(": watching {}", self.watching),
            Some(file) => format!(
                ", after {} changed",
                file.file_name()
                    .unwrap_or(file.as_os_str())
                    .to_string_lossy()
            ),
        };
        // The heading names the student's files.
        let heading = crate::inert::line(&format!(
            "Run {run} at {}{why} (Ctrl-C stops)",
            clock_time_utc(std::time::SystemTime::now()),
        ))
        .into_owned();
        let named = crate::inert::line(self.named);
        let clear = if self.terminal { "\x1b[2J\x1b[H" } else { "\n" };
        say(&format!(
            "{clear}{}\n{}\n",
            fill(&heading, width, "", "  ").bold(),
            fill(&named, width, "  ", "  ")
        ))?;
        let shown = check_shown(
            self.checked,
            self.through,
            self.options,
            self.worker,
            true,
            || Ok(()),
        );
        match shown {
            Ok((report, _running)) => {
                // A watch lasts: each round records what it found, as a
                // command of its own would.
                let mut session = Session::open_saying(self.progress_path)?;
                session.record_check(&report, self.own);
                session.save()?;
                say(&watch_text(&report, width))?;
                say(&next_text(
                    &report,
                    &self.checked.source(),
                    self.through,
                    &self.checked.impl_arg(),
                ))?;
            }
            Err(CheckError::Io(error)) if error.kind() == io::ErrorKind::BrokenPipe => {
                return Err(CommandError::Io(error))
            }
            Err(CheckError::Subject(SubjectError::Build(failure))) => say(&format!(
                "\n{}\n\n{}\n",
                failed_run(&format!("lab watch: {failure}"), width).red(),
                fill(
                    &failure.next("save it: lab watch checks again"),
                    width,
                    "",
                    ""
                )
                .bold()
            ))?,
            Err(error) => say(&format!(
                "\n{}\n",
                failed_run(&format!("lab watch: {error}"), width).red()
            ))?,
        }
        Ok(())
    }
}

/// A run that failed, as `text` says (its first line prose, the others a
/// program's lines as it wrote them, a traceback's, or a build's): each
/// line made inert ([`crate::inert::line`]); the first filled to
/// `width`, the others indented by two columns and cut to it, so that a
/// caret stays under its column.
fn failed_run(text: &str, width: usize) -> String {
    let mut lines = text.lines().map(crate::inert::line);
    let first = fill(&lines.next().unwrap_or_default(), width, "", "  ");
    std::iter::once(first)
        .chain(lines.map(|line| crate::terminal::cut(&format!("  {line}"), width)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The time of day of `at` as `14:02:07 UTC`: the lab keeps no time zone
/// data, so it says the zone it uses.
fn clock_time_utc(at: std::time::SystemTime) -> String {
    let stamp = humantime::format_rfc3339_seconds(at).to_string();
    format!("{} UTC", &stamp[11..19])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed run quotes a program or a build: each line is shown
    /// inert, the first filled and the others cut to the width.
    #[test]
    fn a_failed_run_is_shown_inert_within_the_width() {
        let text = format!(
            "Run 2, lab watch: s.py did not greet \x1b]0;pwned\x07\n    {}\n    \u{202e}x",
            "\x1b[1A".repeat(20)
        );
        let shown = failed_run(&text, 40);
        assert!(
            !shown
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{shown:?}"
        );
        assert!(shown.contains("\\x1b]0;pwned\\x07"), "{shown}");
        assert!(shown.ends_with("\n      \\u{202e}x"), "{shown}");
        assert!(
            shown.lines().all(|line| line.chars().count() <= 40),
            "{shown}"
        );
    }

    #[test]
    fn the_fingerprint_changes_with_contents_and_names_but_not_with_reading() {
        let folder = tempfile::tempdir().unwrap();
        let file = folder.path().join("store.py");
        let src = folder.path().join("src");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(&file, "a").unwrap();
        std::fs::write(src.join("store.rs"), "b").unwrap();
        let (first, first_src) = (fingerprint(&file), fingerprint(&src));
        let _ = std::fs::read(&file).unwrap();
        assert_eq!(fingerprint(&file), first, "reading changes nothing");
        std::fs::write(&file, "a2").unwrap();
        assert_ne!(fingerprint(&file), first, "a save with other contents");
        assert_eq!(fingerprint(&src), first_src, "a file outside the folder");
        std::fs::write(src.join("other.rs"), "").unwrap();
        let second_src = fingerprint(&src);
        assert_ne!(second_src, first_src, "a new file in a watched folder");
        std::fs::write(src.join("other.rs"), "x").unwrap();
        assert_ne!(fingerprint(&src), second_src, "a file in the folder saved");
    }
}

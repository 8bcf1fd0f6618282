//! How a command ends: its error and exit code, and the output it writes
//! on the way, which ends quietly when the reader goes away.
//!
//! The exit codes, for every command (the one place they are decided;
//! `lab --help` and the README say the same):
//!
//! | code | meaning |
//! |---|---|
//! | 0 | it did what it was asked (for `lab db`, `false` and `null` are answers) |
//! | 1 | it ran and found a problem: a mutant survived or the reference failed (`lab matrix --check`, `lab run reference`), a probe did not kill, a check of your implementation has a failing step, a store operation answered an error |
//! | 2 | it was used wrongly: an unknown exercise, variant or test, an invalid argument, a probe that does not parse |
//! | 3 | it could not run: a file it cannot read or write (for `lab grade`, a progress file it skipped with a warning, having graded the others), a project that does not build, a program or worker that cannot be started |

use lease_lab::subject::rust_project::BuildFailure;
use lease_lab::terminal::fill_lines;
use std::fmt;
use std::io::{self, Write};

/// The exit code of a command that did what it was asked.
pub const EXIT_OK: u8 = 0;
/// The exit code of a command that ran and found a problem.
pub const EXIT_FOUND: u8 = 1;
/// The exit code of a command used wrongly.
pub const EXIT_USAGE: u8 = 2;
/// The exit code of a command that could not run.
pub const EXIT_COULD_NOT_RUN: u8 = 3;

/// The exit codes as `lab --help` ends, in lines that fit 80 columns.
pub const EXIT_CODES_HELP: &str = "Exit codes:
  0  done
  1  a problem found: a mutant survived, a test failed, a probe did not kill
  2  a usage error
  3  could not run: a file, a build, a program that does not start";

/// Why a command did not do what it was asked.
#[derive(Debug)]
pub enum CliError {
    /// The command was used wrongly: [`EXIT_USAGE`], with what to do instead.
    Usage(String),
    /// It ran and found a problem, which this says: [`EXIT_FOUND`].
    Found(String),
    /// It ran and found a problem, and has said so already: [`EXIT_FOUND`].
    Reported,
    /// It could not do its work (a file, a build, a program that does not
    /// start), which this says: [`EXIT_COULD_NOT_RUN`].
    Failed(String),
    /// The reader of its output went away (`lab ... | head`): [`EXIT_OK`], quietly.
    ClosedPipe,
    /// Its work ran in a process of its own (a check in its room), which
    /// said what it had to say and ended with this code.
    Exited(u8),
    /// A Rust project did not build: [`EXIT_COULD_NOT_RUN`], the
    /// compiler's messages shown as it wrote them (see [`CliError::shown`]).
    Build(BuildFailure),
}

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => EXIT_USAGE,
            CliError::Found(_) | CliError::Reported => EXIT_FOUND,
            CliError::Failed(_) | CliError::Build(_) => EXIT_COULD_NOT_RUN,
            CliError::ClosedPipe => EXIT_OK,
            CliError::Exited(code) => *code,
        }
    }

    /// The message to print, if any.
    pub fn message(&self) -> Option<&str> {
        match self {
            CliError::Usage(message) | CliError::Found(message) | CliError::Failed(message) => {
                Some(message)
            }
            CliError::Build(failure) => Some(&failure.message),
            CliError::Reported | CliError::ClosedPipe | CliError::Exited(_) => None,
        }
    }

    /// The message as `command` (`lab check`) ends with it on standard
    /// error, for a terminal `width` columns wide: `lab check: ...`, made
    /// inert line by line ([`lease_lab::inert::lines`]: it may quote a
    /// file's name or what a program wrote) and filled to the width, a
    /// line's indent kept. A build's failure is filled in its first line
    /// only: the compiler's messages after it keep their lines and their
    /// gutter as written, and a Next line says what to do. `None` when
    /// there is nothing to say.
    pub fn shown(&self, command: &str, width: usize) -> Option<String> {
        let fill = |text: &str| fill_lines(&lease_lab::inert::lines(text), width);
        let CliError::Build(failure) = self else {
            return Some(fill(&format!("{command}: {}", self.message()?)));
        };
        let mut shown = fill(&format!("{command}: {}", failure.what()));
        if let Some(quoted) = failure.quoted() {
            shown.push('\n');
            shown.push_str(&lease_lab::inert::lines(quoted));
        }
        shown.push('\n');
        shown.push_str(&fill(&failure.next(&format!("run `{command}` again"))));
        Some(shown)
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().unwrap_or(""))
    }
}

/// Writing to standard output failed: a reader that went away ends the
/// command quietly, as it would end `cat`; anything else is a failure.
impl From<io::Error> for CliError {
    fn from(error: io::Error) -> CliError {
        if error.kind() == io::ErrorKind::BrokenPipe {
            CliError::ClosedPipe
        } else {
            CliError::Failed(format!("cannot write the output: {error}"))
        }
    }
}

/// What every command returns.
pub type Outcome = Result<(), CliError>;

/// Writes `text` to standard output and flushes it.
pub fn say(text: &str) -> Outcome {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}

/// Writes a command's report to `output`, saying so on standard error as
/// `lab COMMAND: wrote FILE`, or to standard output when there is none.
pub fn say_or_write(command: &str, rendered: &str, output: Option<&std::path::Path>) -> Outcome {
    match output {
        None => say(rendered),
        Some(path) => {
            std::fs::write(path, rendered).map_err(|error| {
                CliError::Failed(format!("cannot write {}: {error}", path.display()))
            })?;
            eprintln!("lab {command}: wrote {}", path.display());
            Ok(())
        }
    }
}

/// [`say`] with a line break after it.
pub fn say_line(text: &str) -> Outcome {
    say(&format!("{text}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_error_knows_its_exit_code() {
        assert_eq!(CliError::Usage("u".into()).exit_code(), 2);
        assert_eq!(CliError::Found("p".into()).exit_code(), 1);
        assert_eq!(CliError::Found("p".into()).message(), Some("p"));
        assert_eq!(CliError::Failed("f".into()).exit_code(), 3);
        assert_eq!(CliError::Reported.exit_code(), 1);
        assert_eq!(CliError::ClosedPipe.exit_code(), 0);
        assert_eq!(CliError::Reported.message(), None);
        let closed = CliError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(matches!(closed, CliError::ClosedPipe));
        let other = CliError::from(io::Error::other("disk full"));
        assert_eq!(other.message(), Some("cannot write the output: disk full"));
    }

    /// A message is filled to the width; a build's failure only in its
    /// first line and its Next: the compiler's lines after it keep their
    /// gutter and their length, however long, and are made inert.
    #[test]
    fn a_build_failure_shows_the_compiler_s_lines_as_written_then_next() {
        let usage = CliError::Usage(format!("{} end", "word ".repeat(20)));
        let shown = usage.shown("lab check", 40).unwrap();
        assert!(
            shown.lines().all(|line| line.chars().count() <= 40),
            "{shown}"
        );
        assert!(shown.starts_with("lab check: word word"), "{shown}");
        assert_eq!(CliError::Reported.shown("lab check", 40), None);

        let gutter = format!(
            "52 |     let x: u8 = \"{}\";\n   |                 ^^^ expected `u8`, found `&str`\x1b[2J",
            "long ".repeat(20)
        );
        let failure = CliError::Build(BuildFailure {
            message: format!(
                "cargo build in /room/mine failed (exit status: 101):\nerror[E0308]: mismatched types\n  --> src/store.rs:52:17\n   |\n{gutter}"
            ),
            compiler_said: true,
        });
        assert_eq!(failure.exit_code(), EXIT_COULD_NOT_RUN);
        let shown = failure.shown("lab check", 40).unwrap();
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[0], "lab check: cargo build in /room/mine");
        assert_eq!(lines[1], "  failed (exit status: 101):");
        assert_eq!(
            &lines[2..7],
            [
                "error[E0308]: mismatched types",
                "  --> src/store.rs:52:17",
                "   |",
                gutter.lines().next().unwrap(),
                "   |                 ^^^ expected `u8`, found `&str`\\x1b[2J",
            ],
            "{shown}"
        );
        assert!(
            lines[7].starts_with("Next: fix the first error the"),
            "{shown}"
        );
        assert!(shown.ends_with("then run `lab check` again."), "{shown}");
        assert!(!shown.contains('\x1b'), "{shown:?}");
        assert_eq!(failure.message().map(|m| m.lines().count()), Some(6));
    }
}

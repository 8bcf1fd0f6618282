//! How a command ends: its error and exit code, and the output it writes
//! on the way, which ends quietly when the reader goes away.

use std::fmt;
use std::io::{self, Write};

/// Why a command did not do what it was asked.
#[derive(Debug)]
pub enum CliError {
    /// The command was used wrongly: exit 2, with what to do instead.
    Usage(String),
    /// It ran into a failure, or found something wrong: exit 1.
    Failed(String),
    /// It found something wrong and has said so already: exit 1.
    Reported,
    /// The reader of its output went away (`lab ... | head`): exit 0, quietly.
    ClosedPipe,
}

impl CliError {
    /// The process's exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Failed(_) | CliError::Reported => 1,
            CliError::ClosedPipe => 0,
        }
    }

    /// The message to print, if any.
    pub fn message(&self) -> Option<&str> {
        match self {
            CliError::Usage(message) | CliError::Failed(message) => Some(message),
            CliError::Reported | CliError::ClosedPipe => None,
        }
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

/// How a command's report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Text for the terminal.
    Text,
    /// JSON for tools.
    Json,
}

/// Writes `text` to standard output and flushes it.
pub fn say(text: &str) -> Outcome {
    let mut stdout = io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
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
        assert_eq!(CliError::Failed("f".into()).exit_code(), 1);
        assert_eq!(CliError::Reported.exit_code(), 1);
        assert_eq!(CliError::ClosedPipe.exit_code(), 0);
        assert_eq!(CliError::Reported.message(), None);
        let closed = CliError::from(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(matches!(closed, CliError::ClosedPipe));
        let other = CliError::from(io::Error::other("disk full"));
        assert_eq!(other.message(), Some("cannot write the output: disk full"));
    }
}

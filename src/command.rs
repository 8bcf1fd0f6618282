//! How a command whose work is the library's stops before its end: used
//! wrongly, unable to do its work, or its output gone. The `lab` binary
//! turns each into its message and exit code (`src/cli/exit.rs`).

/// Why a command stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// It was used wrongly: the message says what to give instead.
    #[error("{0}")]
    Usage(String),
    /// It could not do its work (a file it cannot read, watch or write, a
    /// disk that cannot be shared); the message says which and why.
    #[error("{0}")]
    Failed(String),
    /// Reading its input or writing its output failed (a reader that went
    /// away ends the command).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

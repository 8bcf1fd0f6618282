//! `lab new`: writes a starter of the student's own implementation
//! (Python or Rust) with the protocol done and the eight operations to
//! write, and records it as the implementation that `lab check` and
//! `lab watch` run.

use super::exit::{say, CliError, Outcome};
use lease_lab::course::starter;
use lease_lab::lab_text::Language;
use lease_lab::report::student::starter::{new_text, Written};
use std::path::{Path, PathBuf};

/// `lab new`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The language to write it in.
    #[arg(long, value_enum)]
    lang: Language,
    /// The folder to write it into (made if missing; a file of yours there is never overwritten).
    dir: PathBuf,
}

/// `lab new`: writes a starter and records it as the implementation that
/// `lab check` and `lab watch` run.
pub fn new(args: &Args, progress_path: &Path) -> Outcome {
    let (implementation, start) = starter::write_starter(args.lang, &args.dir)
        .map_err(|error| CliError::Failed(error.to_string()))?;
    let mut session = super::session(progress_path)?;
    let became = session.make_current(&implementation);
    session.save()?;
    say(&new_text(
        &Written {
            language: args.lang,
            dir: &args.dir,
            start: &start,
        },
        &became,
        progress_path,
        lease_lab::terminal::text_width(),
    ))
}

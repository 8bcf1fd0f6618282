//! What several commands take: an exercise or a variant by name, and how
//! a suite run is carried out.

use super::outcome::CliError;
use lease_lab::exercise::{self, Exercise};
use lease_lab::runner::{self, RunOptions, WorkerCommand};
use lease_lab::variant::Variant;
use std::path::PathBuf;
use std::time::Duration;

/// The exercise named on the command line, or a usage error listing them.
pub fn find_exercise(key: &str) -> Result<Exercise, CliError> {
    exercise::find(key).ok_or_else(|| {
        CliError::Usage(format!(
            "no exercise {key:?}; the exercises are: {}",
            exercise::keys()
        ))
    })
}

/// The variant named on the command line, or a usage error listing the ids.
pub fn find_variant(id: &str) -> Result<Variant, CliError> {
    // `correct` is what earlier versions called the reference.
    let id = if id == "correct" {
        lease_lab::variant::REFERENCE_ID
    } else {
        id
    };
    Variant::find(id).ok_or_else(|| {
        let ids: Vec<String> = Variant::all_compiled()
            .into_iter()
            .map(|variant| variant.id)
            .collect();
        CliError::Usage(format!(
            "no variant {id:?}; the variants are: {}",
            ids.join(", ")
        ))
    })
}

/// How to start the workers that run variants: this very binary.
pub fn worker_command() -> Result<WorkerCommand, CliError> {
    WorkerCommand::current_lab().map_err(|error| {
        CliError::Failed(format!(
            "cannot find the lab binary to start workers: {error}"
        ))
    })
}

/// How a suite run is carried out, as every command that runs one takes it.
#[derive(Debug, Clone, clap::Args)]
pub struct SuiteArgs {
    /// The longest one test may run, in milliseconds, before it counts as a timeout.
    #[arg(long, default_value_t = millis(runner::DEFAULT_TIMEOUT))]
    pub timeout_ms: u64,
    /// How many variants to run at once (default: four per core, since many
    /// tests wait for a lock while others work).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Where to put the tests' temporary databases.
    #[arg(long)]
    pub scratch: Option<PathBuf>,
}

/// A duration in whole milliseconds, for a default value.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

impl SuiteArgs {
    /// The run's options.
    pub fn options(&self) -> RunOptions {
        let defaults = RunOptions::default();
        RunOptions {
            timeout: Duration::from_millis(self.timeout_ms),
            scratch: self.scratch.clone().unwrap_or(defaults.scratch),
            jobs: self.jobs.unwrap_or(defaults.jobs).max(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_found_by_its_old_name_too() {
        assert_eq!(find_variant("correct").unwrap().id, "reference");
        let error = find_variant("99").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("the variants are: reference, 01"),
            "{error}"
        );
        assert_eq!(error.exit_code(), 2);
        assert!(find_exercise("9")
            .unwrap_err()
            .to_string()
            .contains("1, 2, 3"));
    }
}

//! `lab probe`: runs a probe file against the reference and mutants.

use super::args::{millis, ImplArgs};
use super::exit::{say, say_line, CliError, Outcome};
use lease_lab::probe::{self, CheckOptions};
use lease_lab::report::format::ReportFormat;
use lease_lab::runner::DEFAULT_TIMEOUT;
use lease_lab::variant::Variant;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `lab probe`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The probe file.
    file: PathBuf,
    /// The mutant(s) it should kill (default: every mutant).
    #[arg(long)]
    variant: Vec<String>,
    /// The longest one run may take, in milliseconds.
    #[arg(long, default_value_t = millis(DEFAULT_TIMEOUT))]
    timeout_ms: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    format: ReportFormat,
    #[command(flatten)]
    implementation: ImplArgs,
}

/// `lab probe FILE`: the probe's verdict on each mutant it runs against,
/// of the implementation the rule chooses ([`ImplArgs::following`]).
///
/// Exit 0 when the probe holds on the reference and kills every mutant it
/// ran against (those named with `--variant`, else all of them); 1 when it
/// reads the contract wrongly or a mutant survives it; 2 when it cannot be
/// read or names an unknown mutant.
pub fn run(args: &Args, progress: &Path) -> Outcome {
    args.implementation.on_sqlite_only("probe")?;
    let probe = probe::load(&args.file).map_err(|error| CliError::Usage(error.to_string()))?;
    let implementation = args.implementation.following("probe", progress)?;
    let reference = implementation.variant(lease_lab::variant::REFERENCE_ID)?;
    let mutants: Vec<Variant> = if args.variant.is_empty() {
        implementation
            .variants()?
            .into_iter()
            .filter(|variant| !variant.is_reference())
            .collect()
    } else {
        args.variant
            .iter()
            .map(|id| implementation.variant(id))
            .collect::<Result<_, _>>()?
    };
    // A crashing mutant is a verdict here, reported in the output.
    std::panic::set_hook(Box::new(|_| {}));
    let options = CheckOptions {
        timeout: Duration::from_millis(args.timeout_ms),
        ..CheckOptions::default()
    };
    let check = probe::check(&probe, &reference, &mutants, &options)
        .map_err(|error| CliError::Failed(error.to_string()))?;
    match args.format {
        ReportFormat::Text => say(&probe::check_text(
            &probe,
            &check,
            lease_lab::terminal::text_width(),
        ))?,
        ReportFormat::Json => {
            say_line(&serde_json::to_string_pretty(&check).expect("a probe check is JSON"))?
        }
    }
    if check.kills_all() {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

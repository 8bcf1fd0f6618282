//! `lab chaos`: an implementation under many workers and faults, judged
//! from its history.

use super::args::{worker_command, EngineArg, ImplArgs};
use super::outcome::{say_or_write, CliError, Outcome};
use lease_lab::chaos::plan::{Faults, Place, Settings, DEFAULT_CALLS, DEFAULT_WORKERS, TTL};
use lease_lab::chaos::run::Workers;
use lease_lab::report::format::ChaosFormat;
use lease_lab::subject::Subject;
use lease_lab::variant::REFERENCE_ID;
use std::path::PathBuf;

/// `lab chaos`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Which implementations.
    #[command(flatten)]
    pub implementation: ImplArgs,
    /// The variant to run: `reference` (your program, with --impl FILE) or
    /// a mutant id.
    #[arg(long, default_value = REFERENCE_ID)]
    pub variant: String,
    /// How many workers run at once, each a process of its own.
    #[arg(long, default_value_t = DEFAULT_WORKERS, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub workers: u16,
    /// How many store calls the run makes in all.
    #[arg(long, default_value_t = DEFAULT_CALLS, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub operations: u32,
    /// The seed of every random choice (default: one from the clock,
    /// printed so that the run can be replayed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The faults, as a comma-separated list of `stalls` (past the lease),
    /// `kills` (SIGKILL in the middle of a call), `restarts` (a worker
    /// stopped between calls and started again), `skew` (clocks that
    /// disagree), `power` (a power cut of every worker; the compiled
    /// stores on SQLite only) and `server-crash` (the server killed and
    /// restarted under the calls in flight; --engine postgres only, on a
    /// cluster of the run's own) and `partition` (a worker's link to the
    /// server cut mid-call until past its lease; --hosts only), or `none`.
    /// Only stalls, kills and skew are in the default.
    #[arg(long, default_value = "stalls,kills,skew", value_parser = Faults::named)]
    pub faults: Faults,
    /// With --engine postgres: each worker on a host of its own (a network
    /// namespace, linked to the server's by a veth pair), connecting over
    /// TCP, the server on a cluster of the run's own in another; needs root
    /// and `ip`. Nothing is left when the run ends.
    #[arg(long)]
    pub hosts: bool,
    /// With `skew`: how far each worker's clock may be off, in seconds
    /// (a lease lasts 2).
    #[arg(long, default_value_t = TTL, allow_negative_numbers = true)]
    pub skew: f64,
    /// Report the first failing run as it ran, without shrinking it.
    #[arg(long)]
    pub no_shrink: bool,
    /// Text for the terminal, the whole history as JSON, or an HTML page
    /// that draws the counterexample with the workers as lanes.
    #[arg(long, value_enum, default_value_t = ChaosFormat::Text)]
    pub format: ChaosFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Where to put the run's database.
    #[arg(long)]
    pub scratch: Option<PathBuf>,
}

/// Runs the chaos, prints what it found; exit 1 when the contract broke.
pub fn run(args: &Args) -> Outcome {
    if !(args.skew.is_finite() && args.skew >= 0.0) {
        return Err(CliError::Usage(format!(
            "--skew must be a number of seconds, 0 or more (got {})",
            args.skew
        )));
    }
    let place = Place {
        on_server: args.implementation.engine == EngineArg::Postgres,
        hosts: args.hosts,
        server_given: args.implementation.dsn.is_some(),
    };
    if let Some(why) = args.faults.refusal(place) {
        return Err(CliError::Usage(why.into()));
    }
    // (On hosts, each run starts a cluster of its own there: none now.)
    let variant = if args.hosts {
        args.implementation.variant_on_hosts(&args.variant)?
    } else {
        args.implementation.variant(&args.variant)?
    };
    if args.faults.power && !matches!(variant.engine, lease_lab::variant::Engine::Compiled(_)) {
        return Err(CliError::Usage(
            "--faults power needs the lab's disk model in every worker, which \
             only the compiled stores run on (the Rust store and its \
             mutants); leave power out for a program"
                .into(),
        ));
    }
    let seed = args
        .seed
        .unwrap_or_else(lease_lab::chaos::plan::seed_from_clock);
    let settings = Settings {
        workers: usize::from(args.workers),
        operations: usize::try_from(args.operations).unwrap_or(usize::MAX),
        seed,
        faults: args.faults.with_skew(args.skew),
    };
    let mut workers = Workers::of(&variant, &worker_command()?);
    if args.hosts {
        workers = workers
            .on_hosts()
            .map_err(|error| CliError::Usage(error.to_string()))?;
        lease_lab::pg_server::Hosts::can_be_made()
            .map_err(|error| CliError::Failed(error.to_string()))?;
        // Said before the run: what it makes, and that it goes.
        eprintln!(
            "lab: each worker on a host of its own (a network namespace), the server on\n     another, on a cluster of the run's own; all removed when the run ends"
        );
    }
    let scratch = args
        .scratch
        .clone()
        .unwrap_or_else(lease_lab::runner::default_scratch);
    let subject = lease_lab::chaos::subject_text(&args.implementation.subject, &variant);
    let replay = replay_prefix(args);
    let chaos = lease_lab::chaos::chaos(
        subject,
        replay,
        &workers,
        &settings,
        &scratch,
        !args.no_shrink,
        &lease_lab::progress::Progress::at_terminal(),
    )?;
    let rendered = args.format.render(&chaos);
    say_or_write("chaos", &rendered, args.output.as_deref())?;
    if chaos.judged.failed() {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

/// The command that replays a run, up to its seed and sizes.
fn replay_prefix(args: &Args) -> String {
    let mut words = vec!["lab chaos".to_string()];
    if args.implementation.engine == EngineArg::Postgres {
        words.push("--engine postgres".into());
    }
    if args.hosts {
        words.push("--hosts".into());
    }
    if args.implementation.subject != Subject::Rust {
        words.push(format!("--impl {}", args.implementation.subject.impl_arg()));
    }
    if args.variant != REFERENCE_ID {
        words.push(format!("--variant {}", args.variant));
    }
    words.join(" ")
}

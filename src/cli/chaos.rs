//! `lab chaos`: an implementation under many workers and faults, judged
//! from its history; and `lab __serve`, which serves one of the lab's
//! compiled stores over the protocol for those workers.

use super::args::{worker_command, EngineArg, ImplArgs};
use super::outcome::{say_or_write, CliError, Outcome};
use lease_lab::chaos::plan::{Faults, Settings, DEFAULT_CALLS, DEFAULT_WORKERS, TTL};
use lease_lab::chaos::run::Workers;
use lease_lab::report::format::ChaosFormat;
use lease_lab::subject::Subject;
use lease_lab::variant::{Variant, REFERENCE_ID};
use std::path::PathBuf;
use std::time::Duration;

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
    #[arg(long, default_value = "stalls,kills,skew", value_parser = parse_faults)]
    pub faults: FaultList,
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

/// The faults named on the command line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultList {
    stalls: bool,
    kills: bool,
    restarts: bool,
    skew: bool,
    power: bool,
    server_crash: bool,
    partition: bool,
}

fn parse_faults(text: &str) -> Result<FaultList, String> {
    let mut list = FaultList {
        stalls: false,
        kills: false,
        restarts: false,
        skew: false,
        power: false,
        server_crash: false,
        partition: false,
    };
    if text == "none" {
        return Ok(list);
    }
    for name in text.split(',').map(str::trim) {
        match name {
            "stalls" => list.stalls = true,
            "kills" => list.kills = true,
            "restarts" => list.restarts = true,
            "skew" => list.skew = true,
            "power" => list.power = true,
            "server-crash" => list.server_crash = true,
            "partition" => list.partition = true,
            other => {
                return Err(format!(
                    "no fault {other:?}; the faults are stalls, kills, restarts, skew, power, \
                     server-crash and partition (or none)"
                ))
            }
        }
    }
    Ok(list)
}

/// Runs the chaos, prints what it found; exit 1 when the contract broke.
pub fn run(args: &Args) -> Outcome {
    if !(args.skew.is_finite() && args.skew >= 0.0) {
        return Err(CliError::Usage(format!(
            "--skew must be a number of seconds, 0 or more (got {})",
            args.skew
        )));
    }
    refuse_what_the_engine_cannot_run(args)?;
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
        faults: Faults {
            stalls: args.faults.stalls,
            kills: args.faults.kills,
            restarts: args.faults.restarts,
            skew: if args.faults.skew { args.skew } else { 0.0 },
            power: args.faults.power,
            server_crash: args.faults.server_crash,
            partition: args.faults.partition,
        },
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

/// Refuses, before any server is started, what the engine cannot run: a
/// fault or hosts of the other engine, hosts on a server it was given.
fn refuse_what_the_engine_cannot_run(args: &Args) -> Result<(), CliError> {
    let on_server = args.implementation.engine == EngineArg::Postgres;
    let refused = [
        (
            args.faults.power && on_server,
            "--faults power cuts the power of workers on the lab's disk model, which the \
             store on PostgreSQL is not on; use server-crash to kill its server",
        ),
        (
            args.hosts && !on_server,
            "--hosts puts the workers and the server on hosts of their own, and this \
             store keeps its jobs in a file; add --engine postgres",
        ),
        (
            args.hosts && args.implementation.dsn.is_some(),
            "--hosts starts a cluster of the run's own on a host of its own, and cannot \
             move a server it is given; leave out --dsn",
        ),
        (
            args.faults.partition && !args.hosts,
            "--faults partition cuts a worker's link to the server, and only workers on \
             hosts of their own have one; add --hosts (with --engine postgres)",
        ),
        (
            args.faults.server_crash && !on_server,
            "--faults server-crash kills a PostgreSQL server, and this store keeps its jobs \
             in a file; add --engine postgres, or use power or kills",
        ),
    ];
    match refused.into_iter().find(|(refused, _)| *refused) {
        Some((_, why)) => Err(CliError::Usage(why.into())),
        None => Ok(()),
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

/// `lab __serve`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// The compiled variant to serve: `reference` or a mutant id.
    #[arg(long)]
    pub variant: String,
    /// Share the disk of this database with the other workers through the
    /// undo log `--power-log`, so that the run can cut the power of all.
    #[arg(long, requires = "power_log")]
    pub power_db: Option<PathBuf>,
    /// The undo log shared by every worker (see `--power-db`).
    #[arg(long, requires = "power_db")]
    pub power_log: Option<PathBuf>,
    /// Serve the store on PostgreSQL's variant, on the server whose
    /// connection string is in LEASE_LAB_PG.
    #[arg(long, conflicts_with = "power_db")]
    pub on_server: bool,
    /// With --on-server: keep the jobs in this schema, which the lab made
    /// for a chaos run and shares among its workers.
    #[arg(long, requires = "on_server")]
    pub schema: Option<String>,
}

/// Serves the variant on standard input and output until input ends.
pub fn serve(args: &ServeArgs) -> Outcome {
    let variant = if args.on_server {
        let variant = Variant::find_on_the_server_of_the_environment(&args.variant)
            .map_err(CliError::Usage)?;
        match &args.schema {
            Some(schema) => variant.in_schema(schema),
            None => variant,
        }
    } else {
        Variant::find(&args.variant).ok_or_else(|| {
            CliError::Usage(format!(
                "no compiled variant {:?}; `lab tests --variants` lists them",
                args.variant
            ))
        })?
    };
    // The disk stays shared while the process lives.
    let _disk = match (&args.power_db, &args.power_log) {
        (Some(db), Some(log)) => Some(
            lease_lab::vfs_shim::install()
                .and_then(|()| lease_lab::vfs_shim::Disk::track_shared(db, log))
                .map_err(|error| CliError::Failed(error.to_string()))?,
        ),
        _ => None,
    };
    let store = variant.open(Duration::from_secs(60));
    let name = format!("the lab's Rust store, variant {}", variant.id);
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    lease_lab::serve::serve(store.as_ref(), &name, stdin, stdout).map_err(CliError::from)
}

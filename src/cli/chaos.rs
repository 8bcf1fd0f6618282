//! `lab chaos`: an implementation under many workers and faults, judged
//! from its history.

use super::args::{worker_command, EngineArg, ImplArgs};
use super::exit::{say_or_write, CliError, Outcome};
use lease_lab::chaos::plan::{Faults, Place, Settings, DEFAULT_CALLS, DEFAULT_WORKERS, TTL};
use lease_lab::chaos::run::Workers;
use lease_lab::chaos::Named;
use lease_lab::course::chosen::{Chosen, How};
use lease_lab::report::format::ChaosFormat;
use lease_lab::subject::Subject;
use lease_lab::variant::REFERENCE_ID;
use std::path::{Path, PathBuf};

/// `lab chaos`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Which implementation.
    #[command(flatten)]
    pub implementation: Which,
    /// The variant to run: `reference` (the implementation itself: yours,
    /// or the lab's store) or a mutant id, which names the lab's store it
    /// belongs to (`08b` the Rust store's, `py08b` the Python store's).
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

/// Which implementation `lab chaos` runs, and on which engine: the
/// arguments of [`ImplArgs`], with `--impl` optional, as `lab check`'s is.
#[derive(Debug, Clone, clap::Args)]
pub struct Which {
    /// `rust` (the built-in store and its mutants), `python` (the
    /// worksheet's Python store and its mutants), or your own
    /// implementation: a .py file, a Rust project's folder, or a command
    /// line (`"python3 my_store.py"`; see labs/protocol.md). Default: the
    /// one your progress file records (`lab new`, `lab check --impl`), as
    /// for `lab check`; with none recorded, the lab's Rust store.
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    pub subject: Option<Subject>,
    /// The folder of your own mutant files: those that are not compiled
    /// into lab run beside the built-in ones.
    #[arg(long, value_name = "DIR", default_value = "mutants")]
    pub mutants: PathBuf,
    /// The engine under the store: `sqlite`, a file (the default), or
    /// `postgres`: the lab's Rust store on PostgreSQL and its mutants, on
    /// the server --dsn names, else on a throwaway cluster the lab starts.
    #[arg(long, value_enum, default_value_t = EngineArg::Sqlite)]
    pub engine: EngineArg,
    /// The PostgreSQL server, as a connection string (`host=... user=...
    /// dbname=...` or `postgresql://...`); default: $LEASE_LAB_PG.
    #[arg(long, value_name = "URL")]
    pub dsn: Option<String>,
}

impl Which {
    /// The arguments of the commands that take `--impl` with a default,
    /// for `subject`.
    fn with(&self, subject: Subject) -> ImplArgs {
        ImplArgs {
            named: self.subject.clone(),
            subject,
            mutants: self.mutants.clone(),
            engine: self.engine,
            dsn: self.dsn.clone(),
        }
    }
}

/// What `lab chaos` runs, and, when `--impl` did not name it, why, in
/// words for the report's header: `--impl`'s subject; else the lab's Rust
/// store on PostgreSQL (the one store there); else the store a mutant's
/// id belongs to (`--variant py08b`: the Python store; an id the lab does
/// not know, as before: the Rust store's own mutant files); else, as `lab
/// check` runs ([`Chosen::of`]), the implementation the progress file
/// at `progress` records; else the lab's Rust store.
///
/// Errors: the progress file cannot be read (one that is not progress
/// JSON is set aside, as every command that reads it does).
fn chosen(args: &Args, progress: &Path) -> Result<(Subject, Option<String>), CliError> {
    if let Some(given) = &args.implementation.subject {
        return Ok((given.clone(), None));
    }
    if args.implementation.engine == EngineArg::Postgres || args.hosts {
        return Ok((Subject::Rust, None));
    }
    if args.variant != REFERENCE_ID {
        return Ok((
            Subject::of_mutant(&args.variant).unwrap_or(Subject::Rust),
            None,
        ));
    }
    let session = super::session(progress)?;
    let chosen = Chosen::of(None, session.progress());
    let why = match chosen.how {
        How::Current => RECORDED,
        How::Named | How::NothingRecorded => NONE_RECORDED,
    };
    Ok((chosen.subject, Some(why.into())))
}

/// Why `lab chaos` runs the student's implementation, unnamed.
const RECORDED: &str = "yours, as your progress file records it; --impl rust runs the lab's store";

/// Why `lab chaos` runs the lab's Rust store, unnamed.
const NONE_RECORDED: &str =
    "the lab's own: no implementation of yours is recorded; lab new starts one";

/// Runs the chaos, prints what it found; exit 1 when the contract broke.
pub fn run(args: &Args, progress: &Path) -> Outcome {
    if !(args.skew.is_finite() && args.skew >= 0.0) {
        return Err(CliError::Usage(format!(
            "--skew must be a number of seconds, 0 or more (got {})",
            args.skew
        )));
    }
    let (subject, why) = chosen(args, progress)?;
    let implementation = args.implementation.with(subject);
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
        implementation.variant_on_hosts(&args.variant)?
    } else {
        implementation.variant(&args.variant)?
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
    let named = Named {
        subject: lease_lab::chaos::subject_text(&implementation.subject, &variant),
        chosen: why,
        replay_prefix: replay_prefix(args, &implementation.subject),
    };
    let chaos = lease_lab::chaos::chaos(
        named,
        &workers,
        &settings,
        &scratch,
        !args.no_shrink,
        &lease_lab::status_line::StatusLine::at_terminal(),
    )?;
    let rendered = args.format.render(&chaos);
    say_or_write("chaos", &rendered, args.output.as_deref())?;
    if chaos.judged.failed() {
        Err(CliError::Reported)
    } else {
        Ok(())
    }
}

/// The command that replays a run of `subject`, up to its seed and sizes.
fn replay_prefix(args: &Args, subject: &Subject) -> String {
    let mut words = vec!["lab chaos".to_string()];
    if args.implementation.engine == EngineArg::Postgres {
        words.push("--engine postgres".into());
    }
    if args.hosts {
        words.push("--hosts".into());
    }
    if *subject != Subject::Rust {
        words.push(format!("--impl {}", subject.impl_arg()));
    }
    if args.variant != REFERENCE_ID {
        words.push(format!("--variant {}", args.variant));
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use lease_lab::course::session::Session;
    use lease_lab::subject::Implementation;

    /// `lab chaos ARGS`'s arguments.
    fn args(words: &[&str]) -> Args {
        #[derive(clap::Parser)]
        struct Lab {
            #[command(flatten)]
            chaos: Args,
        }
        let words = std::iter::once("lab").chain(words.iter().copied());
        Lab::try_parse_from(words).expect("valid arguments").chaos
    }

    /// Without --impl, the implementation the progress file records runs,
    /// saying so; with none recorded, the lab's Rust store, saying so;
    /// `--impl rust` (or python) the lab's store, and a mutant's id the
    /// store it belongs to, with nothing to say.
    #[test]
    fn chaos_runs_the_recorded_implementation_unless_told_otherwise() {
        let folder = tempfile::tempdir().expect("a folder");
        let progress = folder.path().join("progress.json");
        assert_eq!(
            chosen(&args(&[]), &progress).unwrap(),
            (Subject::Rust, Some(NONE_RECORDED.into()))
        );
        let mut session = Session::open(&progress).unwrap();
        let own = Implementation::parse("python3 mine.py").unwrap();
        session.make_current(&own);
        session.save().unwrap();
        assert_eq!(
            chosen(&args(&[]), &progress).unwrap(),
            (Subject::Own(own), Some(RECORDED.into()))
        );
        for (words, subject) in [
            (&["--impl", "rust"][..], Subject::Rust),
            (&["--impl", "python"], Subject::Python),
            (&["--variant", "py08b"], Subject::Python),
            (&["--variant", "08b"], Subject::Rust),
            (&["--engine", "postgres"], Subject::Rust),
        ] {
            assert_eq!(
                chosen(&args(words), &progress).unwrap(),
                (subject, None),
                "{words:?}"
            );
        }
    }
}

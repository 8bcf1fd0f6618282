//! What several commands take: an exercise or a variant by name, how
//! a suite run is carried out, and which implementation `lab check` and
//! `lab watch` check.

use super::exit::CliError;
use lease_lab::course::chosen::Chosen;
use lease_lab::exercise::{self, Exercise};
use lease_lab::pg_server::Server;
use lease_lab::runner::{self, RunOptions, WorkerCommand};
use lease_lab::subject::{Subject, SubjectError};
use lease_lab::terminal::fill;
use lease_lab::variant::Variant;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The exercise named on the command line, or a usage error listing them.
pub fn find_exercise(key: &str) -> Result<Exercise, CliError> {
    exercise::find_or_list(key).map_err(CliError::Usage)
}

/// Which implementations a command is about: `--impl`, the mutants
/// folder, the engine. [`ImplArgs::subject`] is what `--impl` names, else
/// the lab's Rust store; a command that follows the student's current
/// implementation asks [`ImplArgs::following`] instead.
#[derive(Debug, Clone)]
pub struct ImplArgs {
    /// What `--impl` names, when it is given.
    pub named: Option<Subject>,
    /// What `--impl` names, else the lab's Rust store.
    pub subject: Subject,
    /// The folder of one's own mutant files.
    pub mutants: PathBuf,
    /// The engine under the store.
    pub engine: EngineArg,
    /// The PostgreSQL server's connection string.
    pub dsn: Option<String>,
}

/// The options of [`ImplArgs`], as clap reads them.
#[derive(Debug, Clone, clap::Args)]
struct ImplFlags {
    /// `rust` (the built-in store and its mutants), `python` (the worksheet's
    /// Python store and its mutants), or your own implementation: a .py
    /// file, a Rust project's folder, or a command line
    /// (`"python3 my_store.py"`; see labs/protocol.md). Default: your
    /// current implementation (the one `lab new` made or `lab check
    /// --impl` named last), else `rust` (lab db and lab demo: `rust`).
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    named: Option<Subject>,
    /// The folder of your own mutant files: those that are not compiled
    /// into lab run beside the built-in ones.
    #[arg(long, value_name = "DIR", default_value = "mutants")]
    mutants: PathBuf,
    /// The engine under the store: `sqlite`, a file (the default), or
    /// `postgres`: the lab's Rust store on PostgreSQL and its mutants, on
    /// the server --dsn names, else on a throwaway cluster the lab starts
    /// (but for lab db, whose jobs would go with it: give it --dsn).
    #[arg(long, global = true, value_enum, default_value_t = EngineArg::Sqlite)]
    engine: EngineArg,
    /// The PostgreSQL server, as a connection string (`host=... user=...
    /// dbname=...` or `postgresql://...`); default: $LEASE_LAB_PG.
    #[arg(long, global = true, value_name = "URL")]
    dsn: Option<String>,
}

impl From<ImplFlags> for ImplArgs {
    fn from(flags: ImplFlags) -> ImplArgs {
        ImplArgs {
            subject: flags.named.clone().unwrap_or(Subject::Rust),
            named: flags.named,
            mutants: flags.mutants,
            engine: flags.engine,
            dsn: flags.dsn,
        }
    }
}

impl From<ImplArgs> for ImplFlags {
    fn from(args: ImplArgs) -> ImplFlags {
        ImplFlags {
            named: args.named,
            mutants: args.mutants,
            engine: args.engine,
            dsn: args.dsn,
        }
    }
}

/// Read as [`ImplFlags`], with the subject they name.
impl clap::FromArgMatches for ImplArgs {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        ImplFlags::from_arg_matches(matches).map(ImplArgs::from)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        let mut flags = ImplFlags::from(self.clone());
        flags.update_from_arg_matches(matches)?;
        *self = ImplArgs::from(flags);
        Ok(())
    }
}

/// The options of [`ImplFlags`].
impl clap::Args for ImplArgs {
    fn group_id() -> Option<clap::Id> {
        ImplFlags::group_id()
    }

    fn augment_args(command: clap::Command) -> clap::Command {
        ImplFlags::augment_args(command)
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        ImplFlags::augment_args_for_update(command)
    }
}

/// The engine under the store, as `--engine` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineArg {
    /// The store on an SQLite file.
    Sqlite,
    /// The lab's Rust store on a PostgreSQL server.
    Postgres,
}

/// A subject that cannot run: a usage error when `--impl` names nothing
/// that can, a build's failure as the compiler said it, a failure
/// otherwise.
impl From<SubjectError> for CliError {
    fn from(error: SubjectError) -> CliError {
        match error {
            SubjectError::Invalid(message) => CliError::Usage(message),
            SubjectError::Build(failure) => CliError::Build(failure),
            other => CliError::Failed(other.to_string()),
        }
    }
}

impl ImplArgs {
    /// These arguments with the implementation the one rule chooses
    /// ([`Chosen::of`]): what `--impl` names, else the student's current
    /// implementation, recorded in the progress file at `progress_path`,
    /// else the lab's Rust store; said on standard error as the command's
    /// header, `lab COMMAND: running ...`. On PostgreSQL, where the lab's
    /// Rust store is the one store, what `--impl` names, else that store.
    ///
    /// Errors: the progress file cannot be read.
    pub fn following(&self, command: &str, progress_path: &Path) -> Result<ImplArgs, CliError> {
        if self.engine == EngineArg::Postgres {
            return Ok(self.clone());
        }
        let chosen = Chosen::of(
            self.named.as_ref(),
            super::session(progress_path)?.progress(),
        );
        // It names the student's file.
        let header =
            lease_lab::inert::line(&format!("lab {command}: {}", chosen.header())).into_owned();
        eprintln!("{}", fill(&header, lease_lab::terminal::width(), "", "  "));
        Ok(ImplArgs {
            subject: chosen.subject,
            ..self.clone()
        })
    }

    /// Its implementations: the reference (or the program) first, then the
    /// mutants, built-in ones and then those of [`ImplArgs::mutants`]. On
    /// PostgreSQL, the store on the server and its mutants: on the server
    /// given, else on a throwaway cluster, started now (and said on
    /// standard error), which runs while any of them lives.
    pub fn variants(&self) -> Result<Vec<Variant>, CliError> {
        match self.engine {
            EngineArg::Sqlite => Ok(self.subject.variants(&self.mutants)?),
            EngineArg::Postgres => Ok(Variant::all_on_server(&Arc::new(self.server()?))),
        }
    }

    /// The PostgreSQL server of `--engine postgres`: the one given, else a
    /// throwaway cluster.
    ///
    /// Errors: `--impl` names another store than the lab's Rust one (a
    /// usage error), or no cluster could be started (PostgreSQL is not
    /// installed, say: the message names the package).
    fn server(&self) -> Result<Server, CliError> {
        self.rust_on_postgres()?;
        let server = Server::given_or_throwaway(self.dsn.as_deref()).map_err(CliError::Failed)?;
        eprintln!("lab: {}", server.describe());
        Ok(server)
    }

    /// A usage error unless the subject is the lab's Rust store, the one
    /// store on PostgreSQL.
    fn rust_on_postgres(&self) -> Result<(), CliError> {
        if self.subject == Subject::Rust {
            return Ok(());
        }
        Err(CliError::Usage(format!(
            "--engine postgres runs the lab's Rust store on PostgreSQL (crates/store/src/store_postgres.rs), \
             not {}; leave out --impl",
            self.subject.describe()
        )))
    }

    /// The implementation of the family with this id, on PostgreSQL, with
    /// no server started now: each run puts its database on a cluster of
    /// its own, on a host of its own ([`Server::of_each_run`]), as `lab
    /// chaos --hosts` and `lab demo --partition` do.
    ///
    /// Errors: `--impl` names another store than the lab's Rust one, or
    /// there is no such variant (usage errors).
    pub fn variant_on_hosts(&self, id: &str) -> Result<Variant, CliError> {
        self.rust_on_postgres()?;
        self.find(Variant::all_on_server(&Arc::new(Server::of_each_run())), id)
    }

    /// A usage error when `--engine postgres` was given to `command`,
    /// which runs only on SQLite so far.
    pub fn on_sqlite_only(&self, command: &str) -> Result<(), CliError> {
        match self.engine {
            EngineArg::Sqlite => Ok(()),
            EngineArg::Postgres => Err(CliError::Usage(format!(
                "--engine postgres: {command} runs on SQLite only so far; the store on \
                 PostgreSQL runs under lab matrix, lab run, lab tests --variants, lab db, lab chaos and lab demo \
                 (leave out --engine)"
            ))),
        }
    }

    /// The implementation of the family with this id (`reference` and
    /// `correct` name the reference; a program is `yours` or `reference`).
    pub fn variant(&self, id: &str) -> Result<Variant, CliError> {
        self.find(self.variants()?, id)
    }

    /// The variant with this id among `variants`, or a usage error listing
    /// theirs.
    fn find(&self, variants: Vec<Variant>, id: &str) -> Result<Variant, CliError> {
        Variant::find_in(variants, id).map_err(|ids| {
            CliError::Usage(format!(
                "no variant {id:?} for --impl {}; the variants are: {}",
                self.subject.name(),
                ids.join(", ")
            ))
        })
    }
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
            give_up_after_timeouts: None,
        }
    }
}

/// Which implementation to check, and how far.
#[derive(Debug, clap::Args)]
pub struct WhichArgs {
    /// Your implementation: a .py file, a Rust project's folder, or a
    /// command line, which becomes your current one (the others stay
    /// recorded, each with its checks). Default: your current
    /// implementation (`lab new`'s, or the last --impl). `rust` or `python`
    /// checks the lab's own stores instead, without recording anything.
    #[arg(long = "impl", value_name = "IMPL", value_parser = Subject::parse)]
    pub implementation: Option<Subject>,
    /// Check steps 1 to this one (default: all eight).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub step: Option<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reference_is_found_by_its_old_name_too() {
        let rust = ImplArgs {
            named: None,
            subject: Subject::Rust,
            mutants: PathBuf::from("/no/such/folder"),
            engine: EngineArg::Sqlite,
            dsn: None,
        };
        assert_eq!(rust.variant("correct").unwrap().id, "reference");
        let error = rust.variant("99").unwrap_err();
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

    /// A subject that names nothing runnable is a usage error; one that
    /// cannot be prepared is a command that could not run.
    #[test]
    fn a_subject_that_cannot_run_is_a_usage_error_or_could_not_run() {
        let invalid = CliError::from(SubjectError::Invalid("unbalanced quotes".into()));
        assert_eq!(invalid.exit_code(), 2);
        assert_eq!(invalid.message(), Some("unbalanced quotes"));
        let unwritable = CliError::from(SubjectError::Unwritable {
            subject: "python".into(),
            error: std::io::Error::other("disk full"),
        });
        assert_eq!(unwritable.exit_code(), 3);
        assert_eq!(
            unwritable.message(),
            Some("cannot prepare the python implementations: disk full")
        );
    }

    /// `--timeout-ms`, `--jobs` (at least one) and `--scratch` make the
    /// run's options; what is not given is the default.
    #[test]
    fn suite_arguments_make_the_run_options() {
        let given = SuiteArgs {
            timeout_ms: 1234,
            jobs: Some(0),
            scratch: Some(PathBuf::from("/scratch/here")),
        };
        let options = given.options();
        assert_eq!(options.timeout, Duration::from_millis(1234));
        assert_eq!(options.jobs, 1);
        assert_eq!(options.scratch, PathBuf::from("/scratch/here"));
        assert_eq!(options.give_up_after_timeouts, None);
        let defaults = RunOptions::default();
        let options = SuiteArgs {
            timeout_ms: millis(runner::DEFAULT_TIMEOUT),
            jobs: None,
            scratch: None,
        }
        .options();
        assert_eq!(options.timeout, defaults.timeout);
        assert_eq!(
            (options.jobs, options.scratch),
            (defaults.jobs, defaults.scratch)
        );
    }
}

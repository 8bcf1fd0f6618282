//! `lab`: the lease-lab command line. A thin layer over the library: each
//! command parses its arguments, calls the library, prints, and says how
//! it went; this file picks the command and turns the outcome into the
//! message and the exit code.

mod cli;

use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    // The command's name as clap knows it, for messages: `lab step: ...`.
    let name = matches.subcommand_name().unwrap_or_default().to_string();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
    // A run ended by Ctrl-C or SIGTERM removes the clusters and network
    // namespaces it made, as one that ends by itself does: the commands
    // that may make them install the handler (a thread of its own), no
    // other.
    let interruptible = cli
        .command
        .as_ref()
        .is_some_and(Command::may_start_a_server);
    if interruptible {
        if let Err(error) = lease_lab::pg_server::leftovers::remove_on_interrupt() {
            eprintln!("lab: warning: Ctrl-C would leave what a run made: {error}");
        }
    }
    lease_lab::terminal::apply_color(cli.color);
    let progress = lease_lab::course::progress::location(cli.progress.as_deref());
    let Some(command) = cli.command else {
        let outcome = student(cli.student.as_deref(), &progress)
            .and_then(|()| cli::overview::overview(&progress));
        return finish("lab", outcome);
    };
    if cli.student.is_some() && !command.records_progress() {
        return finish(
            &format!("lab {name}"),
            Err(cli::exit::CliError::Usage(format!(
                "--student is recorded in your progress file: give it to lab alone or to a command that records progress (step, hint, reset, reflect, progress, new, check, watch), not to lab {name}"
            ))),
        );
    }
    if let Err(error) = student(cli.student.as_deref(), &progress) {
        return finish(&format!("lab {name}"), Err(error));
    }
    let outcome = match command {
        Command::Step(args) => cli::step::run(args, &progress),
        Command::Hint(args) => cli::hint::hint(&args, &progress),
        Command::Reset(args) => cli::reset::reset(&args, &progress),
        Command::Reflect(args) => cli::reflect::reflect(&args, &progress),
        Command::Progress(args) => cli::progress::progress(&args, &progress),
        Command::Probe(args) => cli::probe::run(&args, &progress),
        Command::New(args) => cli::new::new(&args, &progress),
        Command::Check(args) => cli::check::check(&args, &progress),
        Command::Watch(args) => cli::watch::watch(&args, &progress),
        Command::Mutant { action } => cli::mutant::run(action, &progress),
        Command::Grade(args) => cli::grade::run(&args),
        Command::Demo(args) => cli::demo::run(&args),
        Command::Chaos(args) => cli::chaos::run(&args, &progress),
        Command::Matrix(args) => cli::matrix::matrix(&args, &progress),
        Command::Analyze(args) => cli::analyze::analyze(&args, &progress),
        Command::Run(args) => cli::run::run(&args, &progress),
        Command::Tests(args) => cli::test_list::tests(&args, &progress),
        Command::Db(args) => cli::db::run(args),
        Command::Worker(args) => cli::worker::worker(&args),
        Command::Serve(args) => {
            lease_lab::serve::serve_variant(&args).map_err(cli::exit::CliError::from)
        }
    };
    finish(&format!("lab {name}"), outcome)
}

/// Records `--student`, when given, before the command runs.
fn student(name: Option<&str>, progress: &std::path::Path) -> cli::exit::Outcome {
    match name {
        Some(name) => cli::record_student(progress, name),
        None => Ok(()),
    }
}

/// Prints a failed command's message as `lab <command>: <message>`
/// ([`cli::exit::CliError::shown`]: made inert, filled to the width
/// but for a compiler's messages) and gives its exit code.
fn finish(command: &str, outcome: cli::exit::Outcome) -> ExitCode {
    // Interrupted: what failed failed because its server was stopped; the
    // handler says so and exits once it has removed everything.
    lease_lab::pg_server::leftovers::wait_if_interrupted();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(shown) = error.shown(command, lease_lab::terminal::width()) {
                eprintln!("{shown}");
            }
            ExitCode::from(error.exit_code())
        }
    }
}

//! `lab`: the lease-lab command line. A thin layer over the library: each
//! command parses its arguments, calls the library, prints, and says how
//! it went; this file picks the command and turns the outcome into the
//! message and the exit code.

mod cli;

use clap::Parser;
use cli::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    lease_lab::terminal::apply_color(cli.color);
    let progress = lease_lab::course::progress::location(cli.progress.as_deref());
    let Some(command) = cli.command else {
        return finish("lab", cli::study::overview(&progress));
    };
    let name = command.name();
    let outcome = match command {
        Command::Step(args) => cli::step::run(args, &progress),
        Command::Hint(args) => cli::study::hint(&args, &progress),
        Command::Reset(args) => cli::study::reset(&args, &progress),
        Command::Reflect(args) => cli::study::reflect(&args, &progress),
        Command::Progress(args) => cli::study::progress(&args, &progress),
        Command::Probe(args) => cli::probe::run(&args),
        Command::New(args) => cli::own_impl::new(&args, &progress),
        Command::Check(args) => cli::own_impl::check(&args, &progress),
        Command::Watch(args) => cli::own_impl::watch(&args, &progress),
        Command::Mutant { action } => cli::own_mutant::run(action),
        Command::Grade(args) => cli::grade::run(&args),
        Command::Demo(args) => cli::demo::run(&args),
        Command::Chaos(args) => cli::chaos::run(&args),
        Command::Matrix(args) => cli::kill_matrix::matrix(&args),
        Command::Analyze(args) => cli::analyze::analyze(&args),
        Command::Run(args) => cli::kill_matrix::run(&args),
        Command::Tests(args) => cli::kill_matrix::tests(&args),
        Command::Db(args) => cli::db::run(args),
        Command::Worker(args) => cli::kill_matrix::worker(&args),
        Command::Serve(args) => cli::chaos::serve(&args),
    };
    finish(&format!("lab {name}"), outcome)
}

/// Prints a failed command's message as `lab <command>: <message>` and
/// gives its exit code.
fn finish(command: &str, outcome: cli::outcome::Outcome) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(message) = error.message() {
                let width = lease_lab::terminal::width();
                eprintln!(
                    "{}",
                    lease_lab::terminal::fill_lines(&format!("{command}: {message}"), width)
                );
            }
            ExitCode::from(error.exit_code())
        }
    }
}

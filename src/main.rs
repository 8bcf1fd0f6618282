//! `lab`: the lease-lab command line. A thin layer over the library: each
//! command parses its arguments, calls the library, prints, and says how
//! it went; this file picks the command and turns the outcome into the
//! message and the exit code.

mod cli;

use clap::Parser;
use cli::{Cli, Command, Context};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    lease_lab::terminal::apply_color(cli.color);
    let context = Context::new(&cli);
    let Some(command) = cli.command else {
        return finish("lab", cli::study::overview(&context));
    };
    let name = command.name();
    let outcome = match command {
        Command::Step(args) => cli::step::run(args, &context),
        Command::Hint(args) => cli::study::hint(&args, &context),
        Command::Reset(args) => cli::study::reset(&args, &context),
        Command::Reflect(args) => cli::study::reflect(&args, &context),
        Command::Progress(args) => cli::study::progress(&args, &context),
        Command::Probe(args) => cli::probe::run(&args),
        Command::Mutant { action } => cli::own_mutant::run(action),
        Command::Grade(args) => cli::grade::run(&args),
        Command::Demo(args) => cli::demo::run(&args),
        Command::Matrix(args) => cli::kill_matrix::matrix(&args),
        Command::Run(args) => cli::kill_matrix::run(&args),
        Command::Tests(args) => cli::kill_matrix::tests(&args),
        Command::Db(args) => cli::db::run(args),
        Command::Worker(args) => cli::worker(&args),
    };
    finish(&format!("lab {name}"), outcome)
}

/// Prints a failed command's message as `lab <command>: <message>` and
/// gives its exit code.
fn finish(command: &str, outcome: cli::Outcome) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(message) = error.message() {
                eprintln!("{command}: {message}");
            }
            ExitCode::from(error.exit_code())
        }
    }
}

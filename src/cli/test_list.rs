//! `lab tests`: the suite's tests, by step; with `--variants`, the
//! variants instead.
//!
//! The file is not `tests.rs`: in `cli`, as in every module of the crate,
//! `tests` names the unit tests (`#[cfg(test)] mod tests` in `mod.rs`).

use super::args::ImplArgs;
use super::exit::{say, Outcome};
use lease_lab::report;
use std::path::Path;

/// `lab tests`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// List the variants of the implementation `--impl` names (its
    /// reference and every mutant, your own mutants included) instead.
    #[arg(long)]
    variants: bool,
    #[command(flatten)]
    implementation: ImplArgs,
}

/// `lab tests [--variants]`: the tests, or the variants of the
/// implementation the rule chooses ([`ImplArgs::following`]).
pub fn tests(args: &Args, progress: &Path) -> Outcome {
    if args.variants {
        say(&report::matrix::text::variants_text(
            &args
                .implementation
                .following("tests", progress)?
                .variants()?,
            lease_lab::terminal::width(),
        ))
    } else {
        say(&report::matrix::text::tests_text(
            lease_lab::terminal::width(),
        ))
    }
}

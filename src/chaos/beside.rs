//! Chaos as a judge beside the suite (`lab matrix --chaos`): for every
//! mutant, whether a chaos run catches it and with how many calls in the
//! shrunk counterexample, and which mutants only one of the two judges
//! catches.
//!
//! The two judge different things. The suite's example tests reach the
//! boundaries and bad input that random workers seldom hit (a `now`
//! exactly at a lease's end, an empty id); chaos reaches the interleavings
//! and faults that no example test spells out.

use super::judge::Judgement;
use super::plan::Settings;
use super::run::Workers;
use crate::matrix::Matrix;
use crate::outcome::MutantStatus;
use crate::runner::WorkerCommand;
use crate::variant::Variant;
use std::path::Path;

/// What chaos made of one variant.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ChaosVerdict {
    /// The variant's id.
    pub id: String,
    /// Whether it is a reference (which chaos must find nothing on).
    pub reference: bool,
    /// Whether the run broke the contract.
    pub caught: bool,
    /// What broke first, in words, when it did.
    pub finding: Option<String>,
    /// How many calls the shrunk counterexample's timeline shows.
    pub shrunk_calls: Option<usize>,
}

/// Chaos runs `settings` against each of `variants` (shrinking what fails),
/// one after the other: each run already keeps every core busy.
///
/// Errors: a run that could not be made.
pub fn judge_variants(
    variants: &[Variant],
    lab: &WorkerCommand,
    settings: &Settings,
    scratch: &Path,
) -> Result<Vec<ChaosVerdict>, super::run::RunError> {
    variants
        .iter()
        .map(|variant| {
            let workers = Workers::of(variant, lab);
            let judged = Judgement::of(super::run::run(&workers, settings, scratch)?);
            if !judged.failed() {
                return Ok(ChaosVerdict {
                    id: variant.id.clone(),
                    reference: variant.is_reference(),
                    caught: false,
                    finding: None,
                    shrunk_calls: None,
                });
            }
            let shrunk = super::judge::shrink(
                &workers,
                &judged,
                scratch,
                &crate::status_line::StatusLine::hidden(),
            )?;
            Ok(ChaosVerdict {
                id: variant.id.clone(),
                reference: variant.is_reference(),
                caught: true,
                finding: Some(judged.finding_text()),
                shrunk_calls: Some(shrunk.judged.shown().len()),
            })
        })
        .collect()
}

/// What is wrong with the chaos verdicts, for `lab matrix --check`: a
/// reference on which chaos found a violation.
pub fn problems(verdicts: &[ChaosVerdict]) -> Vec<String> {
    verdicts
        .iter()
        .filter(|verdict| verdict.reference && verdict.caught)
        .map(|verdict| {
            format!(
                "chaos found a violation on the {}: {}",
                verdict.id,
                verdict.finding.as_deref().unwrap_or("")
            )
        })
        .collect()
}

/// Which mutants each judge catches that the other does not.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Comparison {
    /// Caught by both.
    pub both: Vec<String>,
    /// Caught by the suite's tests only.
    pub suite_only: Vec<String>,
    /// Caught by chaos only.
    pub chaos_only: Vec<String>,
    /// Caught by neither.
    pub neither: Vec<String>,
}

/// Compares the suite's verdicts in `matrix` with chaos's in `verdicts`
/// (the reference's, if there, is left out: it is no mutant).
pub fn compare(matrix: &Matrix, verdicts: &[ChaosVerdict]) -> Comparison {
    let mut comparison = Comparison::default();
    for summary in matrix.summaries() {
        let by_suite = summary.status != MutantStatus::Survived;
        let by_chaos = verdicts
            .iter()
            .any(|verdict| verdict.id == summary.id && verdict.caught);
        let list = match (by_suite, by_chaos) {
            (true, true) => &mut comparison.both,
            (true, false) => &mut comparison.suite_only,
            (false, true) => &mut comparison.chaos_only,
            (false, false) => &mut comparison.neither,
        };
        list.push(summary.id);
    }
    comparison
}

/// The chaos column and the comparison, as the terminal shows them under
/// the matrix.
pub fn text(verdicts: &[ChaosVerdict], comparison: &Comparison, settings: &Settings) -> String {
    let mut lines = vec![
        String::new(),
        format!(
            "chaos: {}, {} calls a run, seed {}, faults: {}",
            crate::terminal::plural(settings.workers, "worker"),
            settings.operations,
            settings.seed,
            settings.faults.names().join(", ")
        ),
    ];
    for verdict in verdicts {
        let found = match (&verdict.finding, verdict.shrunk_calls) {
            (Some(finding), Some(calls)) => format!(
                "{finding} ({} shrunk)",
                crate::terminal::plural(calls, "call")
            ),
            _ => String::new(),
        };
        lines.push(match (verdict.reference, verdict.caught) {
            (true, false) => format!("  {:<9} no violation", verdict.id),
            (true, true) => format!("  {:<9} BROKE THE CONTRACT: {found}", verdict.id),
            (false, true) => format!("  {:<9} caught: {found}", verdict.id),
            (false, false) => format!("  {:<9} not caught", verdict.id),
        });
    }
    let list = |ids: &[String]| {
        if ids.is_empty() {
            "none".to_string()
        } else {
            ids.join(", ")
        }
    };
    lines.push(String::new());
    lines.push(format!("caught by both: {}", list(&comparison.both)));
    lines.push(format!(
        "by the tests only (boundaries, bad input): {}",
        list(&comparison.suite_only)
    ));
    lines.push(format!("by chaos only: {}", list(&comparison.chaos_only)));
    lines.push(format!("by neither: {}", list(&comparison.neither)));
    let text = lines.join("\n");
    let mut text = crate::terminal::fill_lines(&text, 80);
    text.push('\n');
    text
}

/// Every variant of `variants` judged by a chaos run of
/// [`Settings::beside_the_matrix`], and set beside `matrix`'s verdicts.
///
/// Errors: a run could not be made (its scratch folder, its workers).
pub fn beside(
    matrix: &Matrix,
    variants: &[Variant],
    lab: &WorkerCommand,
    scratch: &Path,
) -> Result<ChaosBeside, super::run::RunError> {
    let settings = Settings::beside_the_matrix();
    let verdicts = judge_variants(variants, lab, &settings, scratch)?;
    let comparison = compare(matrix, &verdicts);
    Ok((settings, verdicts, comparison))
}

/// What a chaos run beside the matrix found (`lab matrix --chaos`): its
/// settings, each variant's verdict, and how they compare with the suite's.
pub type ChaosBeside = (super::plan::Settings, Vec<ChaosVerdict>, Comparison);

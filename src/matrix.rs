//! The kill matrix: every suite test against every variant, which tests
//! kill which mutant, and what the instructor should look at.

use crate::outcome::{MutantStatus, Outcome};
use crate::runner::{self, RunOptions, VariantRun, WorkerCommand};
use crate::suite::Case;
use crate::variant::{Variant, REFERENCE_ID};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// The outcome of every test against every variant; the reference first.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// The tests, in suite order.
    pub tests: Vec<&'static Case>,
    /// One run per variant, the reference first.
    pub runs: Vec<VariantRun>,
}

/// What one mutant's column of the matrix says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutantSummary {
    /// The mutant's id.
    pub id: &'static str,
    /// Its step.
    pub step: u8,
    /// Killed, timeout, crashed or survived.
    pub status: MutantStatus,
    /// The tests that caught it, in suite order.
    pub killers: Vec<&'static str>,
    /// How many of those belong to the mutant's own step.
    pub own_step_killers: usize,
}

impl Matrix {
    /// Runs `tests` against the reference and every variant of `variants`.
    pub fn build(
        command: &WorkerCommand,
        variants: &[Variant],
        tests: Vec<&'static Case>,
        options: &RunOptions,
    ) -> Matrix {
        let runs = runner::run_all(command, variants, &tests, options);
        Matrix { tests, runs }
    }

    /// The reference's run, if it was part of the matrix.
    pub fn reference(&self) -> Option<&VariantRun> {
        self.runs
            .iter()
            .find(|run| matches!(run.variant, Variant::Reference))
    }

    /// The mutants' runs.
    pub fn mutant_runs(&self) -> impl Iterator<Item = &VariantRun> {
        self.runs
            .iter()
            .filter(|run| run.variant.mutant().is_some())
    }

    /// What the suite made of each mutant.
    pub fn summaries(&self) -> Vec<MutantSummary> {
        self.mutant_runs()
            .map(|run| {
                let mutant = run.variant.mutant().expect("mutant runs only");
                let killers: Vec<&'static str> = self
                    .tests
                    .iter()
                    .filter(|case| run.outcome(case.name).is_some_and(Outcome::catches))
                    .map(|case| case.name)
                    .collect();
                let own_step_killers = self
                    .tests
                    .iter()
                    .filter(|case| case.step == mutant.step && killers.contains(&case.name))
                    .count();
                MutantSummary {
                    id: mutant.id,
                    step: mutant.step,
                    status: MutantStatus::of(run.runs.iter().map(|r| &r.outcome)),
                    killers,
                    own_step_killers,
                }
            })
            .collect()
    }

    /// The tests that catch no mutant at all.
    pub fn idle_tests(&self) -> Vec<&'static str> {
        self.tests
            .iter()
            .filter(|case| {
                !self
                    .mutant_runs()
                    .any(|run| run.outcome(case.name).is_some_and(Outcome::catches))
            })
            .map(|case| case.name)
            .collect()
    }

    /// What `lab matrix --check` fails on: a reference test that does not
    /// pass, a mutant that survives, or a mutant no test of its own step kills.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        match self.reference() {
            None => problems.push("the reference implementation was not run".to_string()),
            Some(reference) => {
                for run in &reference.runs {
                    if let Some(reason) = run.outcome.reason() {
                        problems.push(format!("the reference fails {}: {reason}", run.test));
                    }
                }
            }
        }
        for summary in self.summaries() {
            if !summary.status.detected() {
                problems.push(format!(
                    "mutant {} survives: no test catches it (write a test, or a probe, that tells it from the reference)",
                    summary.id
                ));
            } else if summary.own_step_killers == 0 {
                problems.push(format!(
                    "mutant {} is caught only by tests of other steps; step {} has no test that catches it",
                    summary.id, summary.step
                ));
            }
        }
        problems
    }

    /// The matrix as JSON: `tests` with name and step, and `variants` with
    /// id, step, title, kind, status, and each test's outcome.
    pub fn to_json(&self) -> Value {
        let summaries = self.summaries();
        let tests: Vec<Value> = self
            .tests
            .iter()
            .map(|case| json!({"name": case.name, "step": case.step}))
            .collect();
        let variants: Vec<Value> = self
            .runs
            .iter()
            .map(|run| {
                let mut outcomes = Map::new();
                let mut details = Map::new();
                for test in &run.runs {
                    outcomes.insert(test.test.clone(), json!(test.outcome.label()));
                    if let Some(reason) = test.outcome.reason() {
                        details.insert(test.test.clone(), json!(reason));
                    }
                }
                let mut entry = match run.variant.mutant() {
                    None => json!({
                        "id": REFERENCE_ID,
                        "step": Value::Null,
                        "title": "the reference implementation",
                        "kind": "reference",
                    }),
                    Some(mutant) => {
                        let summary = summaries
                            .iter()
                            .find(|s| s.id == mutant.id)
                            .expect("a summary per mutant");
                        json!({
                            "id": mutant.id,
                            "step": mutant.step,
                            "title": mutant.title,
                            "kind": mutant.kind.name(),
                            "status": summary.status,
                            "killed_by": summary.killers,
                            "fragment": mutant.fragment,
                            "replacement": mutant.replacement,
                        })
                    }
                };
                entry["outcomes"] = Value::Object(outcomes);
                entry["details"] = Value::Object(details);
                entry
            })
            .collect();
        json!({
            "tests": tests,
            "variants": variants,
            "idle_tests": self.idle_tests(),
            "problems": self.problems(),
        })
    }

    /// The matrix as a Markdown table: a row per test, a column per variant.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("| step | test |");
        for run in &self.runs {
            write!(out, " {} |", run.variant.id()).unwrap();
        }
        out.push_str("\n|---:|---|");
        out.push_str(&":---:|".repeat(self.runs.len()));
        out.push('\n');
        for case in &self.tests {
            write!(out, "| {} | `{}` |", case.step, case.name).unwrap();
            for run in &self.runs {
                let cell = match (run.variant.mutant(), run.outcome(case.name)) {
                    (_, None) => "",
                    (None, Some(Outcome::Pass)) => "pass",
                    (Some(_), Some(Outcome::Pass)) => "",
                    (_, Some(outcome)) => match outcome {
                        Outcome::Fail { .. } => "**killed**",
                        Outcome::Timeout { .. } => "timeout",
                        _ => "crash",
                    },
                };
                write!(out, " {cell} |").unwrap();
            }
            out.push('\n');
        }
        out.push_str("\n| mutant | step | status | killed by |\n|---|---:|---|---:|\n");
        for summary in self.summaries() {
            writeln!(
                out,
                "| {} | {} | {} | {} tests ({} of step {}) |",
                summary.id,
                summary.step,
                summary.status.label(),
                summary.killers.len(),
                summary.own_step_killers,
                summary.step
            )
            .unwrap();
        }
        out
    }
}

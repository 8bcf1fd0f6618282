//! The kill matrix: every suite test against every variant, which tests
//! kill which mutant, and what the instructor should look at.

use crate::outcome::{MutantStatus, Outcome, TestRun};
use crate::runner::{self, RunOptions, VariantRun, WorkerCommand};
use crate::suite::Case;
use crate::variant::{Mutant, Variant};

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
    pub id: String,
    /// Its step.
    pub step: u8,
    /// Killed, timeout, crashed or survived.
    pub status: MutantStatus,
    /// The tests that caught it, in suite order.
    pub killers: Vec<&'static str>,
    /// How many of those belong to the mutant's own step.
    pub own_step_killers: usize,
}

/// What one test's outcome against one variant counts for (see
/// [`Matrix::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The test passed.
    Pass,
    /// The test did not pass, and that counts: against a mutant, the test
    /// caught it; against a reference, the reference breaks the suite.
    Fail,
    /// The test did not pass, but that counts for nothing, for this reason.
    NotCounted(NotCounted),
}

/// Why a test that did not pass counts for nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotCounted {
    /// The test checks a promise of the Rust store's own
    /// ([`Tag::Reference`](crate::suite::Tag::Reference)), and the variant is a program, which the
    /// worksheet's contract alone judges.
    BeyondTheWorksheet,
    /// The test fails on the reference too, so it cannot tell the mutant
    /// from it.
    FailsOnTheReference,
}

impl Matrix {
    /// The whole suite against `variants` as `lab matrix` runs it: every
    /// test against every mutant with `every_test`, else only the tests
    /// that can run a mutant's change ([`Matrix::build_covered`]).
    pub fn of_suite(
        command: &WorkerCommand,
        variants: &[Variant],
        every_test: bool,
        options: &RunOptions,
    ) -> Matrix {
        let build = if every_test {
            Matrix::build
        } else {
            Matrix::build_covered
        };
        let tests = variants
            .first()
            .map_or_else(|| crate::suite::CASES.iter().collect(), Variant::suite);
        build(command, variants, tests, options)
    }

    /// What `--check` says when it finds nothing wrong ([`Matrix::problems`]
    /// is empty): what the reference passes, and that every mutant is
    /// caught by a test of its own step.
    pub fn check_passed(&self) -> String {
        let beyond = self.beyond_the_worksheet().len();
        let passes = if beyond == 0 {
            format!("passes all {} tests", self.tests.len())
        } else {
            let contract = self
                .tests
                .iter()
                .filter(|case| case.judges_programs())
                .count();
            format!(
                "passes all {contract} tests of the worksheet's contract and {} of the Rust store's own promises (the other {beyond}, beyond the worksheet, do not count)",
                self.tests.len() - contract - beyond
            )
        };
        format!(
            "the reference {passes} and every one of the {} mutants is caught by a test of its own step",
            self.runs.len() - 1
        )
    }

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

    /// [`Matrix::build`], but a mutant is run only against the tests that
    /// can run its change, as mutation tools do (PIT; Stryker's per-test
    /// coverage): the reference runs first, each of its tests noting the
    /// operations it called, and a mutant runs the tests that called an
    /// operation its change reaches ([`Mutant::covered_by`]). Every other
    /// cell of the mutant is the reference's run of that test, marked
    /// [`TestRun::not_covered`]: a test that runs no mutated code answers
    /// as on the reference. A mutant whose reach is unknown, or a matrix
    /// without a reference, runs every test.
    ///
    /// Which tests catch each mutant is the same as [`Matrix::build`]'s
    /// (a test of the lab runs the matrix both ways to show it).
    pub fn build_covered(
        command: &WorkerCommand,
        variants: &[Variant],
        tests: Vec<&'static Case>,
        options: &RunOptions,
    ) -> Matrix {
        let Some(first) = variants.iter().position(Variant::is_reference) else {
            return Matrix::build(command, variants, tests, options);
        };
        let reference = run_spread(command, &variants[first], &tests, options);
        let covering = |variant: &Variant| -> Vec<&'static Case> {
            tests
                .iter()
                .copied()
                .filter(
                    |case| match (&variant.mutant, reference.test_run(case.name)) {
                        (Some(mutant), Some(run)) => {
                            mutant.covered_by(run.operations.iter().map(String::as_str))
                        }
                        _ => true,
                    },
                )
                .collect()
        };
        let plans = variants
            .iter()
            .enumerate()
            .filter(|(index, _)| *index != first)
            .map(|(_, variant)| (variant.clone(), covering(variant)))
            .collect();
        let mut others = runner::run_planned(command, plans, options).into_iter();
        let runs = (0..variants.len())
            .map(|index| {
                if index == first {
                    return reference.clone();
                }
                let ran = others.next().expect("one run per variant");
                let runs = tests
                    .iter()
                    .filter_map(|case| match ran.test_run(case.name) {
                        Some(run) => Some(run.clone()),
                        None => reference.test_run(case.name).map(TestRun::not_covered),
                    })
                    .collect();
                VariantRun {
                    variant: ran.variant,
                    runs,
                }
            })
            .collect();
        Matrix { tests, runs }
    }

    /// The tests that can run the change of the mutant of `run`, in suite
    /// order: those whose run against the reference called an operation
    /// the change reaches ([`Mutant::covered_by`]). Every test that ran
    /// against it when its reach, or the reference's run, is not known.
    pub fn covering(&self, run: &VariantRun) -> Vec<&'static str> {
        let reference = self.reference();
        self.tests
            .iter()
            .filter(|case| {
                let called = reference.and_then(|reference| reference.test_run(case.name));
                match (run.variant.mutant.as_deref(), called) {
                    (Some(mutant), Some(called)) => {
                        mutant.covered_by(called.operations.iter().map(String::as_str))
                    }
                    _ => run.test_run(case.name).is_some(),
                }
            })
            .map(|case| case.name)
            .collect()
    }

    /// How many cells were not run because their test cannot run their
    /// mutant's change (see [`Matrix::build_covered`]).
    pub fn not_covered(&self) -> usize {
        self.runs.iter().map(VariantRun::not_covered).sum()
    }

    /// The reference's run, if it was part of the matrix.
    pub fn reference(&self) -> Option<&VariantRun> {
        self.runs.iter().find(|run| run.variant.is_reference())
    }

    /// The mutants' runs, each with its mutant.
    pub fn mutant_runs(&self) -> impl Iterator<Item = (&VariantRun, &Mutant)> {
        self.runs
            .iter()
            .filter_map(|run| run.variant.mutant.as_deref().map(|mutant| (run, mutant)))
    }

    /// Whether `test` can tell a mutant from the reference: it passes on
    /// the reference (or the reference was not run). A test the reference
    /// fails kills nothing, as in any mutation testing.
    fn distinguishes(&self, test: &str) -> bool {
        self.reference()
            .is_none_or(|reference| reference.outcome(test) == Some(&Outcome::Pass))
    }

    /// Whether `test` judges `variant`: every test judges a store compiled
    /// into this binary; a program is judged by the worksheet's contract
    /// alone, since the protocol carries neither the Rust store's typed
    /// errors nor a power cut simulated in this process.
    pub fn judges(case: &Case, variant: &Variant) -> bool {
        case.judges_programs() || variant.command().is_none()
    }

    /// What `case`'s outcome in `run` counts for: the lab's one rule for
    /// "caught", which every screen, score and report reads. `None` when
    /// the test was not run against that variant.
    ///
    /// A test that did not pass counts ([`Verdict::Fail`]: for a mutant,
    /// the test caught it) only when it judges the variant and, for a
    /// mutant, passes on the reference; otherwise it counts for nothing.
    pub fn verdict(&self, case: &Case, run: &VariantRun) -> Option<Verdict> {
        let outcome = run.outcome(case.name)?;
        Some(if !outcome.catches() {
            Verdict::Pass
        } else if !Matrix::judges(case, &run.variant) {
            Verdict::NotCounted(NotCounted::BeyondTheWorksheet)
        } else if !run.variant.is_reference() && !self.distinguishes(case.name) {
            Verdict::NotCounted(NotCounted::FailsOnTheReference)
        } else {
            Verdict::Fail
        })
    }

    /// The tests that caught the mutant of `run`, in suite order: those
    /// whose [`verdict`](Matrix::verdict) is a counted failure.
    pub fn caught_by(&self, run: &VariantRun) -> Vec<&'static str> {
        self.tests
            .iter()
            .filter(|case| self.verdict(case, run) == Some(Verdict::Fail))
            .map(|case| case.name)
            .collect()
    }

    /// What the suite made of each mutant.
    pub fn summaries(&self) -> Vec<MutantSummary> {
        self.mutant_runs()
            .map(|(run, mutant)| {
                let mutant = &mutant.spec;
                let killers = self.caught_by(run);
                let own_step_killers = self
                    .tests
                    .iter()
                    .filter(|case| case.step == mutant.step && killers.contains(&case.name))
                    .count();
                MutantSummary {
                    id: mutant.id.clone(),
                    step: mutant.step,
                    status: MutantStatus::of(
                        self.tests
                            .iter()
                            .filter(|case| self.verdict(case, run) == Some(Verdict::Fail))
                            .filter_map(|case| run.outcome(case.name)),
                    ),
                    killers,
                    own_step_killers,
                }
            })
            .collect()
    }

    /// The tests that catch no mutant at all.
    pub fn idle_tests(&self) -> Vec<&'static str> {
        let killers: Vec<&str> = self
            .summaries()
            .into_iter()
            .flat_map(|summary| summary.killers)
            .collect();
        self.tests
            .iter()
            .map(|case| case.name)
            .filter(|name| !killers.contains(name))
            .collect()
    }

    /// The reference's failures that do not count against it: tests of
    /// the Rust store's own promises ([`Tag::Reference`](crate::suite::Tag::Reference)), failed by an
    /// implementation that is not the Rust store. They are beyond the
    /// worksheet: shown, never a problem.
    pub fn beyond_the_worksheet(&self) -> Vec<&'static str> {
        let Some(reference) = self.reference() else {
            return Vec::new();
        };
        self.tests
            .iter()
            .filter(|case| matches!(self.verdict(case, reference), Some(Verdict::NotCounted(_))))
            .map(|case| case.name)
            .collect()
    }

    /// The tests beyond the worksheet for this matrix's implementation:
    /// those of the Rust store's own promises ([`Tag::Reference`](crate::suite::Tag::Reference)) when the
    /// reference is a program, which the worksheet's contract alone judges.
    /// Whatever they show of the program or its mutants counts for nothing
    /// (see [`Matrix::verdict`]); [`Matrix::beyond_the_worksheet`] is those
    /// of them that the reference fails.
    pub fn beyond_the_worksheet_tests(&self) -> Vec<&'static str> {
        let Some(reference) = self.reference() else {
            return Vec::new();
        };
        self.tests
            .iter()
            .filter(|case| !Matrix::judges(case, &reference.variant))
            .map(|case| case.name)
            .collect()
    }

    /// The reference's failures that count against it, each with its
    /// reason: every test it did not pass, but those beyond the worksheet.
    pub fn reference_failures(&self) -> Vec<(&'static str, String)> {
        let Some(reference) = self.reference() else {
            return Vec::new();
        };
        self.tests
            .iter()
            .filter(|case| self.verdict(case, reference) == Some(Verdict::Fail))
            .filter_map(|case| Some((case.name, reference.outcome(case.name)?.reason()?)))
            .collect()
    }

    /// What `lab matrix --check` fails on: a reference test that does not
    /// pass, a mutant that survives, or a mutant no test of its own step kills.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.reference().is_none() {
            problems.push("the reference implementation was not run".to_string());
        }
        for (test, reason) in self.reference_failures() {
            problems.push(format!("the reference fails {test}: {reason}"));
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
}

/// Runs `tests` against `variant` in `options.jobs` workers at once, each
/// taking every so many of them (a program: in one process of it per core,
/// sharing the tests as a check's lanes do): the mutants wait for this
/// run, so it should not take one worker's time alone. Its runs come in
/// suite order.
fn run_spread(
    command: &WorkerCommand,
    variant: &Variant,
    tests: &[&'static Case],
    options: &RunOptions,
) -> VariantRun {
    if variant.command().is_some() {
        // A program's processes each cost a start: one a core keeps every
        // core busy, as a check's lanes do.
        let lanes: Vec<_> = (0..crate::runner::check_lanes())
            .map(|_| variant.open(runner::call_limit(options.timeout)))
            .collect();
        return VariantRun {
            variant: variant.clone(),
            runs: runner::run_program(&lanes, tests, options, &mut |_| {}),
        };
    }
    let shares = options.jobs.clamp(1, tests.len().max(1));
    let plans = (0..shares)
        .map(|share| {
            let mine = tests.iter().skip(share).step_by(shares).copied().collect();
            (variant.clone(), mine)
        })
        .collect();
    let mut ran: Vec<TestRun> = runner::run_planned(command, plans, options)
        .into_iter()
        .flat_map(|share| share.runs)
        .collect();
    let place = |run: &TestRun| tests.iter().position(|case| case.name == run.test);
    ran.sort_by_key(place);
    VariantRun {
        variant: variant.clone(),
        runs: ran,
    }
}

/// Small made-up matrices, for the tests of the matrix and its renderings.
#[cfg(test)]
pub(crate) mod sample {
    use super::*;
    use crate::outcome::TestRun;
    use crate::suite;
    use std::time::Duration;

    pub(crate) fn run(test: &str, outcome: Outcome) -> TestRun {
        TestRun::new(test, outcome, Duration::ZERO)
    }

    pub(crate) fn failed() -> Outcome {
        Outcome::Fail {
            check: "c".into(),
            expected: "e".into(),
            actual: "a".into(),
            state: None,
        }
    }

    /// Steps 1 and 4's first tests against the reference, mutant 04 and mutant 01.
    pub(crate) fn small_matrix(
        reference_first: Outcome,
        m04: [Outcome; 2],
        m01: [Outcome; 2],
    ) -> Matrix {
        let first = &suite::CASES[0];
        let boundary = suite::case("claim_at_exact_expiry_is_reassigned").unwrap();
        let [a, b] = m04;
        let [c, d] = m01;
        Matrix {
            tests: vec![first, boundary],
            runs: vec![
                VariantRun {
                    variant: Variant::reference(),
                    runs: vec![
                        run(first.name, reference_first),
                        run(boundary.name, Outcome::Pass),
                    ],
                },
                VariantRun {
                    variant: Variant::find("04").unwrap(),
                    runs: vec![run(first.name, a), run(boundary.name, b)],
                },
                VariantRun {
                    variant: Variant::find("01").unwrap(),
                    runs: vec![run(first.name, c), run(boundary.name, d)],
                },
            ],
        }
    }
}

#[cfg(test)]
mod tests;

//! The kill matrix's own tests, on the small made-up matrices of
//! `super::sample` and on the suite's tests.

use super::sample::*;
use super::*;
use crate::suite::{self, Tag};

#[test]
fn a_sound_matrix_has_no_problems() {
    let matrix = small_matrix(
        Outcome::Pass,
        [Outcome::Pass, failed()],
        [failed(), Outcome::Pass],
    );
    assert_eq!(matrix.problems(), Vec::<String>::new());
    let summaries = matrix.summaries();
    assert_eq!(summaries[0].id, "04");
    assert_eq!(
        summaries[0].killers,
        ["claim_at_exact_expiry_is_reassigned"]
    );
    assert_eq!(
        (summaries[0].own_step_killers, summaries[0].status),
        (1, MutantStatus::Killed)
    );
    assert_eq!(summaries[1].killers, [suite::CASES[0].name]);
    assert_eq!(summaries[1].own_step_killers, 1);
    assert!(matrix.idle_tests().is_empty());
    assert_eq!(matrix.reference().unwrap().variant, Variant::reference());
    assert_eq!(matrix.mutant_runs().count(), 2);
}

#[test]
fn check_problems_name_the_reference_failure_the_survivor_and_the_wrong_step() {
    let matrix = small_matrix(
        failed(),
        [failed(), Outcome::Pass],
        [Outcome::Pass, Outcome::Pass],
    );
    let problems = matrix.problems();
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].starts_with(&format!(
        "the reference fails {}: c: expected e, got a",
        suite::CASES[0].name
    )));
    assert!(
        problems[1].contains("mutant 04 survives"),
        "a test the reference fails kills nothing: {}",
        problems[1]
    );
    assert!(
        problems[2].contains("mutant 01 survives"),
        "{}",
        problems[2]
    );
    let wrong_step = small_matrix(
        Outcome::Pass,
        [failed(), Outcome::Pass],
        [failed(), Outcome::Pass],
    );
    assert!(
        wrong_step.problems()[0].contains("mutant 04 is caught only by tests of other steps"),
        "{:?}",
        wrong_step.problems()
    );
    assert_eq!(
        matrix.idle_tests(),
        [suite::CASES[0].name, "claim_at_exact_expiry_is_reassigned"]
    );
    let no_reference = Matrix {
        tests: matrix.tests.clone(),
        runs: matrix.runs[1..].to_vec(),
    };
    assert!(no_reference.problems()[0].contains("reference implementation was not run"));
}

#[test]
fn a_timeout_or_crash_counts_as_caught() {
    let matrix = small_matrix(
        Outcome::Pass,
        [
            Outcome::Pass,
            Outcome::Timeout {
                limit_ms: 1,
                detail: None,
            },
        ],
        [
            Outcome::Crash {
                message: "x".into(),
            },
            Outcome::Pass,
        ],
    );
    assert!(matrix.problems().is_empty(), "{:?}", matrix.problems());
    assert_eq!(matrix.summaries()[0].status, MutantStatus::Timeout);
    assert_eq!(matrix.summaries()[1].status, MutantStatus::Crashed);
}

/// A program as the reference and as a mutant: the tests of the Rust
/// store's own promises do not judge it.
#[test]
fn a_program_is_judged_by_the_contract_and_its_other_failures_are_beyond_the_worksheet() {
    use crate::external::ImplCommand;
    let contract = suite::case("claim_at_exact_expiry_is_reassigned").unwrap();
    let promise = suite::CASES
        .iter()
        .find(|case| case.tag == Tag::Reference)
        .unwrap();
    let program = |id: &str, mutant: Option<&Variant>| Variant {
        mutant: mutant.and_then(|variant| variant.mutant.clone()),
        ..Variant::program(id, ImplCommand::parse("python3 store.py").unwrap())
    };
    let matrix = |reference: Variant, mutant: Variant, on_mutant: [Outcome; 2]| {
        let [a, b] = on_mutant;
        Matrix {
            tests: vec![contract, promise],
            runs: vec![
                VariantRun {
                    variant: reference,
                    runs: vec![
                        run(contract.name, Outcome::Pass),
                        run(promise.name, failed()),
                    ],
                },
                VariantRun {
                    variant: mutant,
                    runs: vec![run(contract.name, a), run(promise.name, b)],
                },
            ],
        }
    };
    let m04 = Variant::find("04").unwrap();
    let python = matrix(
        program("reference", None),
        program("py04", Some(&m04)),
        [failed(), failed()],
    );
    assert_eq!(python.beyond_the_worksheet(), [promise.name]);
    assert_eq!(python.beyond_the_worksheet_tests(), [promise.name]);
    assert!(python.problems().is_empty(), "{:?}", python.problems());
    assert!(python.reference_failures().is_empty());
    assert_eq!(python.summaries()[0].killers, [contract.name]);
    let (reference, mutant) = (&python.runs[0], &python.runs[1]);
    let beyond = Some(Verdict::NotCounted(NotCounted::BeyondTheWorksheet));
    assert_eq!(python.verdict(promise, reference), beyond);
    assert_eq!(python.verdict(promise, mutant), beyond);
    assert_eq!(python.verdict(contract, reference), Some(Verdict::Pass));
    assert_eq!(python.verdict(contract, mutant), Some(Verdict::Fail));
    assert_eq!(python.caught_by(mutant), [contract.name]);
    let promise_only = matrix(
        Variant::reference(),
        program("o04a", Some(&m04)),
        [
            Outcome::Pass,
            Outcome::Fail {
                check: "typed error".into(),
                expected: "error busy".into(),
                actual: "error other".into(),
                state: None,
            },
        ],
    );
    assert_eq!(
        promise_only.summaries()[0].status,
        MutantStatus::Survived,
        "a program's mutant is not killed by a test that does not judge programs"
    );
    let compiled = matrix(Variant::reference(), m04, [Outcome::Pass, failed()]);
    assert!(
        compiled.beyond_the_worksheet().is_empty(),
        "the Rust store keeps its promises"
    );
    assert!(
        compiled.beyond_the_worksheet_tests().is_empty(),
        "every test judges the Rust store"
    );
    assert_eq!(
        compiled.reference_failures(),
        [(promise.name, "c: expected e, got a".to_string())]
    );
    assert_eq!(
        compiled.verdict(promise, &compiled.runs[1]),
        Some(Verdict::NotCounted(NotCounted::FailsOnTheReference)),
        "a test the reference fails too tells nothing"
    );
    assert_eq!(
        compiled.verdict(promise, &compiled.runs[0]),
        Some(Verdict::Fail)
    );
    let unrun = suite::case("claim_of_a_new_job_returns_fence_1").unwrap();
    assert_eq!(compiled.verdict(unrun, &compiled.runs[1]), None);
    assert_eq!(compiled.problems().len(), 2, "{:?}", compiled.problems());
}

/// A stand-in for the `lab` worker process, which a unit test cannot
/// start: it answers each test it is given with a crash when
/// `VARIANT:TEST` is among `crashes`, else a pass, and records that the
/// test called the operation `calls` gives it (`TEST:OPERATION`).
fn scripted_worker(crashes: &[String], calls: &[String]) -> WorkerCommand {
    let script = r#"crashes=" $1 "; calls=" $2 "; shift 2
        while [ $# -gt 0 ]; do
            case "$1" in
                --variant) variant="$2"; shift ;;
                --tests) tests="$2"; shift ;;
            esac
            shift
        done
        for test in $(echo "$tests" | tr ',' ' '); do
            operation=${calls#* $test:}; operation=${operation%% *}
            case "$crashes" in
                *" $variant:$test "*) outcome='"outcome":"crash","message":"scripted"' ;;
                *) outcome='"outcome":"pass"' ;;
            esac
            echo "{\"event\":\"done\",\"test\":\"$test\",$outcome,\"micros\":1,\"operations\":[\"$operation\"]}"
        done"#;
    WorkerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            script.into(),
            "worker".into(),
            crashes.join(" "),
            calls.join(" "),
        ],
    }
}

/// Two workers at once, so that a variant's tests can be shared.
fn two_jobs() -> RunOptions {
    RunOptions {
        timeout: std::time::Duration::from_secs(5),
        scratch: std::env::temp_dir(),
        jobs: 2,
        give_up_after_timeouts: None,
    }
}

/// The first `count` tests of the suite.
fn first_tests(count: usize) -> Vec<&'static Case> {
    suite::CASES.iter().take(count).collect()
}

/// An operation that mutant 04's change reaches, and one it does not.
fn reached_and_not() -> (&'static str, &'static str) {
    let m04 = Variant::find("04").unwrap().mutant.unwrap();
    let reaches = m04
        .reaches
        .clone()
        .expect("a compiled mutant's reach is known");
    let unreached = crate::operation::NAMES
        .iter()
        .copied()
        .find(|name| !reaches.contains(name))
        .expect("an operation 04 does not reach");
    (reaches[0], unreached)
}

/// Every test runs against every variant, the runs in the variants'
/// order, each test's outcome the one its worker reported.
#[test]
fn a_matrix_runs_every_test_against_every_variant() {
    let tests = first_tests(2);
    let variants = [
        Variant::reference(),
        Variant::find("04").unwrap(),
        Variant::find("01").unwrap(),
    ];
    let crashes = [
        format!("04:{}", tests[1].name),
        format!("01:{}", tests[0].name),
    ];
    let matrix = Matrix::build(
        &scripted_worker(&crashes, &[]),
        &variants,
        tests.clone(),
        &two_jobs(),
    );
    let ids: Vec<&str> = matrix
        .runs
        .iter()
        .map(|run| run.variant.id.as_str())
        .collect();
    assert_eq!(ids, ["reference", "04", "01"]);
    assert_eq!(matrix.caught_by(&matrix.runs[1]), [tests[1].name]);
    assert_eq!(matrix.caught_by(&matrix.runs[2]), [tests[0].name]);
    assert_eq!(matrix.not_covered(), 0);
    let whole = Matrix::of_suite(
        &scripted_worker(&[], &[]),
        &variants[..2],
        true,
        &two_jobs(),
    );
    assert_eq!(whole.tests.len(), suite::CASES.len());
    assert!(whole
        .runs
        .iter()
        .all(|run| run.runs.len() == suite::CASES.len()));
}

/// A mutant runs only the tests that called an operation its change
/// reaches; its other cells are the reference's runs, marked not
/// covered, whatever the mutant would have done there.
#[test]
fn a_covered_matrix_runs_a_mutant_only_against_the_tests_that_reach_its_change() {
    let (reached, unreached) = reached_and_not();
    let tests = first_tests(3);
    let calls = [
        format!("{}:{reached}", tests[0].name),
        format!("{}:{unreached}", tests[1].name),
        format!("{}:{unreached}", tests[2].name),
    ];
    let crashes: Vec<String> = tests
        .iter()
        .map(|case| format!("04:{}", case.name))
        .collect();
    let variants = [Variant::reference(), Variant::find("04").unwrap()];
    let worker = scripted_worker(&crashes, &calls);
    let matrix = Matrix::build_covered(&worker, &variants, tests.clone(), &two_jobs());
    let ids: Vec<&str> = matrix
        .runs
        .iter()
        .map(|run| run.variant.id.as_str())
        .collect();
    assert_eq!(ids, ["reference", "04"]);
    let names: Vec<&str> = tests.iter().map(|case| case.name).collect();
    let reference: Vec<&str> = matrix.runs[0]
        .runs
        .iter()
        .map(|run| run.test.as_str())
        .collect();
    assert_eq!(reference, names, "the reference's runs in suite order");
    let mutant = &matrix.runs[1];
    assert_eq!(matrix.caught_by(mutant), [tests[0].name]);
    assert_eq!(matrix.covering(mutant), [tests[0].name]);
    assert_eq!(matrix.not_covered(), 2);
    for case in &tests[1..] {
        let run = mutant.test_run(case.name).unwrap();
        assert!(run.not_covered && run.outcome == Outcome::Pass, "{run:?}");
    }
    let without_reference =
        Matrix::build_covered(&worker, &variants[1..], tests.clone(), &two_jobs());
    assert_eq!(
        without_reference.not_covered(),
        0,
        "no reference: every test runs"
    );
    assert_eq!(without_reference.runs[0].runs.len(), 3);
    assert_eq!(
        without_reference.covering(&without_reference.runs[0]),
        names,
        "no reference: every test that ran covers the mutant"
    );
}

/// What `--check` says of a sound matrix: every test the reference
/// passes, and, for a program, which tests are beyond the worksheet.
#[test]
fn a_passed_check_says_what_the_reference_passes_and_counts_the_mutants() {
    let matrix = small_matrix(
        Outcome::Pass,
        [Outcome::Pass, failed()],
        [failed(), Outcome::Pass],
    );
    assert_eq!(
        matrix.check_passed(),
        "the reference passes all 2 tests and every one of the 2 mutants is caught by a test of its own step"
    );
}

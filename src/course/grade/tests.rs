//! The grading's own tests, on classes made by hand.

use super::*;
use crate::course::progress::{ProbeRecord, Reflection};

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| name.to_string()).collect()
}

/// Mutant `key` is caught by `killers`, all tests of step 1.
fn killers(key: &str, caught: &[&str]) -> Killers {
    let mut killers = Killers::default();
    killers.add_mutant(
        key,
        caught.iter().map(|name| (name.to_string(), 1)).collect(),
    );
    killers
}

/// A student whose attempts at `key` predicted as given, with the
/// scores the files claim.
fn student(
    file: &str,
    key: &str,
    attempts: &[(&[&str], u8, &str)],
    probe_killed: bool,
) -> StudentFile {
    let mut progress = Progress::default();
    for (predicted, claimed, why) in attempts {
        let mut score = Score::of(&strings(predicted), &[]);
        score.percent = *claimed;
        progress.exercise(key).attempts.push(Attempt {
            at: "2026-01-01T00:00:00Z".into(),
            mutant: key.into(),
            predicted: strings(predicted),
            why: why.to_string(),
            probe: probe_killed.then(|| ProbeRecord {
                file: "p.probe".into(),
                text: String::new(),
                verdict: String::new(),
                killed: true,
            }),
            caught_by: Vec::new(),
            score,
        });
    }
    StudentFile {
        file: file.into(),
        progress,
    }
}

fn entry<'a>(grade: &'a ClassGrade, key: &str) -> &'a ExerciseGrade {
    grade.exercises.iter().find(|e| e.exercise == key).unwrap()
}

#[test]
fn each_exercise_is_judged_on_every_students_latest_recomputed_attempt() {
    let mut reflected = student("r", "4", &[(&["x"], 0, ""), (&["a", "b"], 50, "")], false);
    reflected.progress.reflection = Some(Reflection {
        at: String::new(),
        why_tests_are_kept: "regressions".into(),
        not_guaranteed: "clocks".into(),
    });
    let class = [
        reflected,
        // Claims 100%, earns 0%.
        student("s", "4", &[(&["b", "c"], 100, "")], false),
        student("t", "4", &[(&["a"], 100, "")], true),
        StudentFile {
            file: "u".into(),
            progress: Progress::default(),
        },
    ];
    let grade = grade(&class, &killers("4", &["a"]));
    assert_eq!((grade.students.len(), grade.reflected), (4, 1));
    assert_eq!(grade.exercises.len(), exercise::exercises().len());
    assert_eq!(
        entry(&grade, "4"),
        &ExerciseGrade {
            exercise: "4".into(),
            attempted: 3,
            predicted_a_killer: 2,
            probe_killed: 1,
            // 50% (a of a, b), 0% and 100% (a and the probe).
            mean_score: 50,
            most_common_wrong_guess: Some(("b".into(), 2)),
        }
    );
    let untried = entry(&grade, "5");
    assert_eq!((untried.attempted, untried.mean_score), (0, 0));
    assert_eq!(grade.reflections[0].not_guaranteed, "clocks");
}

/// The first attempt beside the latest, recomputed; a claimed score
/// the prediction does not earn is flagged; totals add the scores.
#[test]
fn a_row_recomputes_the_first_and_the_latest_attempt() {
    let class = [
        student("a.json", "4", &[(&["x"], 0, ""), (&["a"], 100, "")], false),
        student("b.json", "4", &[(&["x"], 100, "")], false),
    ];
    let grade = grade(&class, &killers("4", &["a"]));
    let first = &grade.students[0];
    let attempts = first.exercise("4").unwrap();
    assert_eq!(attempts.attempts, 2);
    assert_eq!(
        (attempts.first.recomputed, attempts.latest.recomputed),
        (Some(0), Some(100))
    );
    assert_eq!((first.first_total, first.latest_total), (0, 100));
    assert!(first.flags.is_empty(), "{:?}", first.flags);
    let edited = &grade.students[1];
    assert!(edited.exercise("4").unwrap().first.differs());
    assert_eq!(
        edited.flags,
        ["exercise 4 first: the file says 100%, the prediction earns 0%"]
    );
    assert_eq!(edited.latest_total, 0);
}

/// A store whose matrix could not be built: the stored score, marked
/// and flagged as not recomputed.
#[test]
fn a_score_without_a_matrix_is_shown_as_stored_and_flagged() {
    let mut killers = Killers::default();
    killers.add_unavailable(&Subject::Python, "python3 not found".into());
    let class = [student("a", "4", &[(&["x"], 100, "")], false)];
    let mut class = class.to_vec();
    for attempt in &mut class[0].progress.exercise("4").attempts {
        attempt.mutant = "py04".into();
    }
    assert_eq!(
        stores_needed(class.iter().map(|file| &file.progress)),
        vec![Subject::Python]
    );
    let grade = grade(&class, &killers);
    let row = &grade.students[0];
    let attempt = &row.exercise("4").unwrap().first;
    assert_eq!((attempt.recomputed, attempt.shown()), (None, 100));
    assert_eq!(
        row.flags,
        ["exercise 4 first: stored 100%, not recomputed (python3 not found)"]
    );
    assert_eq!(grade.not_recomputed["python"], "python3 not found");
}

/// The same student twice counts once, and is reported.
#[test]
fn a_student_given_twice_is_graded_once() {
    let mut named = student("a.json", "4", &[(&["a"], 100, "")], false);
    named.progress.student = Some("Ada".into());
    let mut copy = named.clone();
    copy.file = "copy.json".into();
    let class = [
        named,
        copy,
        student("b.json", "4", &[], false),
        student("b.json", "4", &[], false),
    ];
    let grade = grade(&class, &killers("4", &["a"]));
    let rows: Vec<&str> = grade.students.iter().map(|s| s.student.as_str()).collect();
    assert_eq!(rows, ["Ada", "b.json"]);
    assert_eq!(
        grade.duplicates,
        [
            Duplicate {
                student: "Ada".into(),
                graded: "a.json".into(),
                ignored: "copy.json".into()
            },
            Duplicate {
                student: "b.json".into(),
                graded: "b.json".into(),
                ignored: "b.json".into()
            }
        ]
    );
}

/// Wrong guesses grouped by test across every attempt: how many
/// students, and their reasons, each once.
#[test]
fn misconceptions_group_wrong_guesses_by_test_with_the_reasons() {
    let class = [
        student(
            "a",
            "6",
            &[
                (&["z"], 0, "the fence, \"surely\""),
                (&["z", "y"], 0, "the fence, \"surely\""),
                (&["a"], 100, "right"),
            ],
            false,
        ),
        student("b", "6", &[(&["z"], 0, "")], false),
        student("c", "6", &[(&["a"], 100, "right")], false),
    ];
    let grade = grade(&class, &killers("6", &["a"]));
    assert_eq!(
        grade.misconceptions,
        [Misconceptions {
            exercise: "6".into(),
            wrong: vec![
                WrongGuess {
                    test: "z".into(),
                    students: 2,
                    reasons: vec![Reason {
                        student: "a".into(),
                        why: "the fence, \"surely\"".into()
                    }],
                },
                WrongGuess {
                    test: "y".into(),
                    students: 1,
                    reasons: vec![Reason {
                        student: "a".into(),
                        why: "the fence, \"surely\"".into()
                    }],
                },
            ],
        }]
    );
    assert_eq!(
        entry(&grade, "6").most_common_wrong_guess,
        Some(("z".into(), 1)),
        "a's latest attempt is right: only b's counts"
    );
}

/// Killers are counted as the exercise's run counts them: only the
/// tests in force at its step.
#[test]
fn only_the_tests_in_force_at_the_step_catch() {
    let mut killers = Killers::default();
    killers.add_mutant("04", vec![("early".into(), 1), ("late".into(), 8)]);
    assert_eq!(killers.caught_at("04", 4).unwrap(), ["early"]);
    assert_eq!(killers.caught_at("04", 8).unwrap(), ["early", "late"]);
    assert_eq!(
        killers.caught_at("zz", 4).unwrap_err().0,
        "the lab has no mutant zz"
    );
}

/// A stand-in for the `lab` worker process, which a unit test cannot
/// start: it answers each test it is given with a crash when
/// `VARIANT:TEST` is among `crashes`, else a pass; a test among `crashes`
/// records that it called `operation`, the others that they called none.
fn scripted_worker(crashes: &[String], operation: &str) -> WorkerCommand {
    let script = r#"crashes=" $1 "; operation="$2"; shift 2
        while [ $# -gt 0 ]; do
            case "$1" in
                --variant) variant="$2"; shift ;;
                --tests) tests="$2"; shift ;;
            esac
            shift
        done
        for test in $(echo "$tests" | tr ',' ' '); do
            case "$crashes" in
                *":$test "*) calls="\"$operation\"" ;;
                *) calls="" ;;
            esac
            case "$crashes" in
                *" $variant:$test "*) outcome='"outcome":"crash","message":"scripted"' ;;
                *) outcome='"outcome":"pass"' ;;
            esac
            echo "{\"event\":\"done\",\"test\":\"$test\",$outcome,\"micros\":1,\"operations\":[$calls]}"
        done"#;
    WorkerCommand {
        program: "sh".into(),
        args: vec![
            "-c".into(),
            script.into(),
            "worker".into(),
            crashes.join(" "),
            operation.into(),
        ],
    }
}

fn run_options() -> RunOptions {
    RunOptions {
        timeout: std::time::Duration::from_secs(5),
        scratch: std::env::temp_dir(),
        jobs: 2,
        give_up_after_timeouts: None,
    }
}

/// A test of step 4 or before, and an operation mutant 04's change reaches.
fn killer_of_04() -> (&'static suite::Case, &'static str) {
    let m04 = crate::variant::Variant::find("04").unwrap().mutant.unwrap();
    let reaches = m04
        .reaches
        .clone()
        .expect("a compiled mutant's reach is known");
    (&suite::CASES[0], reaches[0])
}

/// The killers of a class's mutants come from its store's matrix, built
/// with the worker given: the tests that catch each mutant there.
#[test]
fn the_killers_of_a_class_s_mutants_are_read_from_its_store_s_matrix() {
    let (test, operation) = killer_of_04();
    let class = [student("a", "04", &[(&["x"], 0, "")], false)];
    let worker = scripted_worker(&[format!("04:{}", test.name)], operation);
    let killers = super::killers(&class, &worker, &run_options());
    assert!(
        killers.unavailable().is_empty(),
        "{:?}",
        killers.unavailable()
    );
    assert_eq!(killers.caught_at("04", test.step).unwrap(), [test.name]);
}

/// A store whose reference fails a test here: what catches its mutants
/// is not known, and the reason names the test.
#[test]
fn a_store_whose_reference_fails_here_has_no_killers_and_says_which_test() {
    let (test, operation) = killer_of_04();
    let class = [student("a", "04", &[(&["x"], 0, "")], false)];
    let worker = scripted_worker(&[format!("reference:{}", test.name)], operation);
    let killers = super::killers(&class, &worker, &run_options());
    let reason = killers.caught_at("04", test.step).unwrap_err().0;
    assert!(
        reason.starts_with("its reference fails 1 test(s) here") && reason.contains(test.name),
        "{reason}"
    );
    assert_eq!(killers.unavailable()["rust"], reason);
}

/// A class scored out of 100 per exercise of the course.
#[test]
fn the_most_a_total_can_be_is_100_per_exercise() {
    assert_eq!(max_total(), 100 * exercise::exercises().len() as u32);
}

/// Only the Python store needs an interpreter that starts before its
/// matrix is built.
#[test]
fn only_the_python_store_needs_its_interpreter() {
    assert_eq!(interpreter(&Subject::Python), Some(PYTHON));
    assert_eq!(interpreter(&Subject::Rust), None);
}

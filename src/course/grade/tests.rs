//! The grading's own tests, on classes made by hand.

use super::*;
use crate::course::progress::{ProbeRecord, Reflection};
use crate::suite;

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| name.to_string()).collect()
}

/// Mutant `key` is caught by `killers`, all tests of step 1.
pub(crate) fn killers(key: &str, caught: &[&str]) -> Killers {
    let mut killers = Killers::default();
    killers.add_mutant(
        key,
        caught.iter().map(|name| (name.to_string(), 1)).collect(),
    );
    killers
}

/// A student whose attempts at `key` predicted as given, with the
/// scores the files claim.
pub(crate) fn student(
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
    let grade = grade(&class, Vec::new(), &killers("4", &["a"]));
    assert_eq!((grade.students.len(), grade.reflected), (4, 1));
    assert_eq!(grade.exercises.len(), exercise::exercises().len());
    let four = entry(&grade, "4");
    assert_eq!(
        four,
        &ExerciseGrade {
            exercise: "4".into(),
            attempted: 3,
            predicted_a_killer: 2,
            probe_killed: 1,
            // 50% (a of a, b), 0% and 100% (a and the probe).
            mean_score: 50,
            most_common_wrong_guess: Some(("b".into(), 2)),
            statistics: four.statistics.clone(),
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
    let grade = grade(&class, Vec::new(), &killers("4", &["a"]));
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
    let grade = grade(&class, Vec::new(), &killers);
    let row = &grade.students[0];
    let attempt = &row.exercise("4").unwrap().first;
    assert_eq!((attempt.recomputed, attempt.shown()), (None, 100));
    assert_eq!(
        row.flags,
        ["exercise 4 first: stored 100%, not recomputed (python3 not found)"]
    );
    assert_eq!(grade.not_recomputed["python"], "python3 not found");
}

/// `file` with `attempts` at `key` recorded at the given times, as the
/// student's own: (time, tests predicted).
pub(crate) fn timed(file: &str, key: &str, attempts: &[(&str, &[&str])]) -> StudentFile {
    let mut made = student(file, key, &[], false);
    made.progress.student = Some("Ada".into());
    for (at, predicted) in attempts {
        let mut made_one = student(file, key, &[(predicted, 0, "")], false);
        let mut attempt = made_one.progress.exercise(key).attempts.remove(0);
        attempt.at = at.to_string();
        made.progress.exercise(key).attempts.push(attempt);
    }
    made
}

/// A student's two files are one row: the attempts of both, first and
/// latest by time whichever file was given first; the same file given
/// twice counts once; a file that cannot be merged (two different
/// attempts at one moment) is a row of its own, marked, never dropped; a
/// file that could not be read is listed; every file says what became of
/// it.
#[test]
fn a_student_s_files_are_merged_into_one_row_and_no_file_is_dropped() {
    let laptop = timed("laptop.json", "4", &[("2026-01-02T00:00:00Z", &["a"])]);
    let mut lab_machine = timed("lab.json", "4", &[("2026-01-01T00:00:00Z", &["x"])]);
    let six = timed("lab.json", "6", &[("2026-01-03T00:00:00Z", &["a"])]);
    lab_machine
        .progress
        .exercises
        .extend(six.progress.exercises);
    lab_machine.progress.exercise("4").hints_seen = 2;
    let clash = timed("clash.json", "4", &[("2026-01-02T00:00:00Z", &["y"])]);
    let mut killers = killers("4", &["a"]);
    killers.add_mutant("6", vec![("a".into(), 1)]);
    for order in [
        [&laptop, &lab_machine, &laptop, &clash],
        [&lab_machine, &laptop, &laptop, &clash],
    ] {
        let class: Vec<StudentFile> = order.into_iter().cloned().collect();
        let unreadable = vec![Unreadable {
            file: "bad.json".into(),
            reason: "not a progress file".into(),
        }];
        let grade = grade(&class, unreadable, &killers);
        assert_eq!(grade.students.len(), 2, "one row, and the clash apart");
        let ada = &grade.students[0];
        let four = ada.exercise("4").expect("exercise 4");
        assert_eq!(four.attempts, 2);
        assert_eq!(
            (four.first.shown(), four.latest.shown()),
            (0, 100),
            "first by time (x, from lab.json), latest by time (a, from laptop.json)"
        );
        assert_eq!(ada.exercise("6").map(|six| six.latest.shown()), Some(100));
        assert!(ada.flags[0].starts_with("merged from "), "{:?}", ada.flags);
        assert_eq!(ada.merged.len(), 1);
        let apart = &grade.students[1];
        assert_eq!(apart.file, "clash.json");
        assert!(
            apart.flags[0].contains(
                "exercise 4 has two different attempts at 2026-01-02T00:00:00Z: graded apart"
            ),
            "{:?}",
            apart.flags
        );
        let statuses: Vec<(&str, &FileStatus)> = grade
            .files
            .iter()
            .map(|given| (given.file.as_str(), &given.status))
            .collect();
        assert_eq!(
            statuses.len(),
            5,
            "every file given, the unreadable one too"
        );
        assert_eq!(statuses[0].1, &FileStatus::Graded { row: 0 });
        assert_eq!(statuses[1].1, &FileStatus::MergedInto { row: 0 });
        assert_eq!(statuses[2], ("laptop.json", &FileStatus::GivenTwice));
        assert!(matches!(
            statuses[3].1,
            FileStatus::NotMerged { row: 1, .. }
        ));
        assert_eq!(
            statuses[4],
            (
                "bad.json",
                &FileStatus::Unreadable {
                    reason: "not a progress file".into()
                }
            )
        );
    }
}

/// Merging keeps the most hints either file saw, the later reflection,
/// one copy of an attempt both files hold, and the order one file gave
/// attempts made in the same second.
#[test]
fn merging_keeps_the_most_hints_the_later_reflection_and_one_copy() {
    let mut first = timed(
        "a.json",
        "4",
        &[
            ("2026-01-01T00:00:00Z", &["x"]),
            ("2026-01-01T00:00:00Z", &["a"]),
        ],
    );
    first.progress.exercise("4").hints_seen = 3;
    first.progress.reflection = Some(Reflection {
        at: "2026-01-05T00:00:00Z".into(),
        why_tests_are_kept: "later".into(),
        not_guaranteed: "later".into(),
    });
    let mut second = first.clone();
    second.file = "b.json".into();
    second.progress.exercise("4").hints_seen = 1;
    second.progress.reflection = Some(Reflection {
        at: "2026-01-04T00:00:00Z".into(),
        why_tests_are_kept: "earlier".into(),
        not_guaranteed: "earlier".into(),
    });
    let grade = grade(&[second, first], Vec::new(), &killers("4", &["a"]));
    assert_eq!(grade.students.len(), 1);
    let four = grade.students[0].exercise("4").unwrap();
    assert_eq!(four.attempts, 2, "the attempts both hold, once");
    assert_eq!((four.first.shown(), four.latest.shown()), (0, 100));
    assert_eq!(grade.reflections[0].why_tests_are_kept, "later");
}

/// Two reflections given at the same second: the first file given keeps
/// its own, whichever order the files' names have.
#[test]
fn merging_two_reflections_of_one_second_keeps_the_first_file_s() {
    let reflected = |file: &str, words: &str| {
        let mut made = timed(file, "4", &[("2026-01-01T00:00:00Z", &["a"])]);
        made.progress.reflection = Some(Reflection {
            at: "2026-01-05T00:00:00Z".into(),
            why_tests_are_kept: words.into(),
            not_guaranteed: words.into(),
        });
        made
    };
    let (b, a) = (reflected("b.json", "b's"), reflected("a.json", "a's"));
    let b_first = grade(&[b.clone(), a.clone()], Vec::new(), &killers("4", &["a"]));
    assert_eq!(b_first.students.len(), 1);
    assert_eq!(b_first.reflections[0].why_tests_are_kept, "b's");
    let a_first = grade(&[a, b], Vec::new(), &killers("4", &["a"]));
    assert_eq!(a_first.reflections[0].why_tests_are_kept, "a's");
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
    let grade = grade(&class, Vec::new(), &killers("6", &["a"]));
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

/// The item statistics of a class of three, computed by hand. Exercise 4
/// is caught by `a`, 6 by `b`.
///
/// | student | 4 first | 4 latest | 4 hints | 6 first | first total |
/// |---------|---------|----------|---------|---------|-------------|
/// | s1      | a: 100  | -        | 1       | b: 100  | 200         |
/// | s2      | x: 0    | a: 100   | 3       | z: 0    | 0           |
/// | s3      | a,x: 50 | -        | 0       | -       | 50          |
///
/// Exercise 4: 3 attempted; 2 first attempts named a killer (difficulty
/// 2/3); first mean 50, latest mean 250/3, shown 83; attempts 4/3, hints 4/3; `x`
/// the wrong first guess of 2. Discrimination: the pairs (score at 4, the
/// rest of the first total) are (100, 100), (0, 0), (50, 0); their
/// deviations from the means (50, 100/3) are (50, 200/3), (-50, -100/3),
/// (0, -100/3); so the correlation is 5000 / sqrt(5000 × 20000/3) = √3/2.
/// Exercise 6: 2 attempted, difficulty 1/2, under two varying pairs: the
/// rest of the totals (100, 0) and scores (100, 0) do vary, r = 1.
#[test]
fn the_item_statistics_are_those_computed_by_hand() {
    let with = |file: &str, four: &[(&[&str], u8, &str)], six: &[(&[&str], u8, &str)], hints| {
        let mut made = student(file, "4", four, false);
        let six = student(file, "6", six, false);
        made.progress.exercises.extend(six.progress.exercises);
        made.progress
            .exercises
            .retain(|_, entry| !entry.attempts.is_empty());
        if let Some(four) = made.progress.exercises.get_mut("4") {
            four.hints_seen = hints;
        }
        made
    };
    let class = [
        with("s1", &[(&["a"], 100, "")], &[(&["b"], 100, "")], 1),
        with(
            "s2",
            &[(&["x"], 0, ""), (&["a"], 100, "")],
            &[(&["z"], 0, "")],
            3,
        ),
        with("s3", &[(&["a", "x"], 50, "")], &[], 0),
    ];
    let mut killers = killers("4", &["a"]);
    killers.add_mutant("6", vec![("b".into(), 1)]);
    let grade = grade(&class, Vec::new(), &killers);
    let four = entry(&grade, "4");
    let stats = &four.statistics;
    assert_eq!(
        (four.attempted, four.predicted_a_killer, four.mean_score),
        (3, 3, 83)
    );
    assert_eq!(stats.first_predicted_a_killer, 2);
    let close = |value: Option<f64>, expected: f64| {
        assert!(
            (value.unwrap() - expected).abs() < 1e-9,
            "{value:?} != {expected}"
        );
    };
    close(stats.difficulty, 2.0 / 3.0);
    close(stats.first_mean_score, 50.0);
    close(stats.mean_attempts, 4.0 / 3.0);
    close(stats.mean_hints, 4.0 / 3.0);
    close(stats.discrimination, 3f64.sqrt() / 2.0);
    assert_eq!(stats.wrong_first_guesses, [("x".to_string(), 2)]);
    let six = &entry(&grade, "6").statistics;
    close(six.difficulty, 0.5);
    close(six.discrimination, 1.0);
    assert_eq!(six.wrong_first_guesses, [("z".to_string(), 1)]);
    let seven = &entry(&grade, "7").statistics;
    assert_eq!(
        (seven.difficulty, seven.discrimination, seven.mean_hints),
        (None, None, None)
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

/// Each attempt names the store of its mutant: `rust` for a compiled
/// mutant, `python` for one of the Python store's, none for an id that is
/// neither.
#[test]
fn an_attempt_names_the_store_of_its_mutant() {
    let attempt = |mutant: &str| {
        let mut file = student("s", "4", &[(&["a"], 0, "")], false);
        file.progress.exercise("4").attempts[0].mutant = mutant.into();
        AttemptGrade::of(
            &file.progress.exercises["4"].attempts[0],
            4,
            &killers("4", &["a"]),
        )
    };
    let stores = ["04", "py04", "zz9"].map(|id| {
        let graded = attempt(id);
        (graded.store.clone(), graded.on_python())
    });
    assert_eq!(
        stores,
        [
            (Some("rust".to_string()), false),
            (Some("python".to_string()), true),
            (None, false),
        ]
    );
}

/// A reflection in the second file given only is kept in the merged row.
#[test]
fn merging_keeps_a_reflection_only_the_second_file_has() {
    let first = timed("a.json", "4", &[("2026-01-01T00:00:00Z", &["a"])]);
    let mut second = timed("b.json", "6", &[("2026-01-02T00:00:00Z", &["b"])]);
    second.progress.reflection = Some(Reflection {
        at: "2026-01-05T00:00:00Z".into(),
        why_tests_are_kept: "regressions".into(),
        not_guaranteed: "clocks".into(),
    });
    let graded = grade(&[first, second], Vec::new(), &killers("4", &["a"]));
    assert_eq!(graded.students.len(), 1);
    assert_eq!(graded.reflected, 1);
    let kept: Vec<&str> = graded
        .reflections
        .iter()
        .map(|answers| answers.why_tests_are_kept.as_str())
        .collect();
    assert_eq!(kept, ["regressions"]);
}

/// The files of a class are read in the order given; one that cannot be
/// read is kept with why, in words that say which of the three it is.
#[test]
fn a_class_s_files_are_read_in_order_and_the_unreadable_say_why() {
    let folder = tempfile::tempdir().unwrap();
    let good = folder.path().join("ada.json");
    crate::course::progress::save(&good, &Progress::default()).unwrap();
    let missing = folder.path().join("missing.json");
    let broken = folder.path().join("broken.json");
    std::fs::write(&broken, "{ not json").unwrap();
    let files = [
        missing.clone(),
        good.clone(),
        broken.clone(),
        folder.path().to_path_buf(),
    ];
    let (class, skipped) = read_class(&files);
    let read: Vec<&str> = class.iter().map(|file| file.file.as_str()).collect();
    assert_eq!(read, [good.display().to_string()]);
    let named: Vec<String> = skipped.iter().map(|file| file.file.clone()).collect();
    assert_eq!(
        named,
        [
            missing.display().to_string(),
            broken.display().to_string(),
            folder.path().display().to_string()
        ]
    );
    assert_eq!(skipped[0].reason, "there is no such file");
    assert!(
        !skipped[1].reason.starts_with("it cannot be read"),
        "{}",
        skipped[1].reason
    );
    assert_ne!(skipped[1].reason, "there is no such file");
    assert!(
        skipped[2].reason.starts_with("it cannot be read ("),
        "{}",
        skipped[2].reason
    );
}

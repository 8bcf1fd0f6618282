//! The student's path end to end, walked as a student walks it: through the
//! real `lab` binary, in a folder of its own, one exercise after another.
//!
//! - On the Rust store (`--impl rust`) and on the Python store (`--impl
//!   python`), a student who names at every exercise exactly the tests that
//!   kill its mutant scores 100% at every one, sees no warning, and finds in
//!   the progress file, as the tests that caught the mutant, the very tests
//!   the kill matrix says kill it.
//! - A student's own Python store (`lab new --lang python`, then written
//!   correctly) passes `lab check`, and walks the exercises of its language
//!   the same way without `--impl`, its own check passing after each.
//! - A prediction half right scores exactly the precision the README
//!   defines, the tests named rightly among the tests named, with the
//!   killer found and the survivor explained in its own words.
//!
//! Nothing the lab decides is written down here: the exercises, their
//! mutants and the tests that kill each come from the lab's own outputs
//! (`lab matrix --format json --kind worksheet`, `lab tests --variants`), so
//! these tests follow the lab when an exercise or a test is added.

use serde_json::Value;
use std::fmt::Write as _;

mod common;

use common::{Ran, Sandbox};

/// The student's answer to the first closing question after step 8: why
/// the tests of the earlier steps are kept.
const WHY_KEPT: &str = "each step relies on what the earlier steps promise";
/// The answer to the second: a condition the lab does not guarantee.
const NOT_GUARANTEED: &str = "the callers' clocks are not synchronised";

/// What a step's screen shows, read from how `lab` ended.
trait Screen {
    /// The lines of either stream that start with `warning`.
    fn warnings(&self) -> Vec<&str>;

    /// The precision the step's comparison shows (`precision: 50%, 1 of
    /// the 2 you named caught it`).
    fn shown_score(&self) -> Option<u64>;

    /// The part of a step's screen after the prediction: the run, the
    /// verdicts and the comparison (the whole output when it has none).
    fn run_and_comparison(&self) -> String;
}

impl Screen for Ran {
    fn warnings(&self) -> Vec<&str> {
        self.stdout
            .lines()
            .chain(self.stderr.lines())
            .filter(|line| line.trim_start().starts_with("warning"))
            .collect()
    }

    fn shown_score(&self) -> Option<u64> {
        self.stdout.lines().find_map(|line| {
            line.trim()
                .strip_prefix("precision:")?
                .trim()
                .split_once('%')?
                .0
                .parse()
                .ok()
        })
    }

    fn run_and_comparison(&self) -> String {
        let lines: Vec<&str> = self.stdout.lines().collect();
        let start = lines
            .iter()
            .position(|line| line.starts_with("Running the"));
        let end = lines
            .iter()
            .position(|line| line.trim_start().starts_with("score:"));
        match (start, end) {
            (Some(start), Some(end)) if start <= end => lines[start..=end].join("\n"),
            _ => self.stdout.clone(),
        }
    }
}

/// `lab ARGS --color never` in a sandbox, with its own progress file, and
/// the progress file as `lab` shows it.
trait Student {
    /// `lab ARGS --color never`.
    fn plain_lab(&self, args: &[&str]) -> Ran;

    /// The progress file, as `lab progress --format json` shows it.
    fn progress(&self) -> Value;
}

impl Student for Sandbox {
    fn plain_lab(&self, args: &[&str]) -> Ran {
        self.lab(&[args, &["--color", "never"]].concat())
    }

    fn progress(&self) -> Value {
        self.plain_lab(&["progress", "--format", "json"]).json()
    }
}

/// One exercise as the kill matrix gives it.
#[derive(Debug, Clone)]
struct Exercise {
    /// What the student types: `4`, `8b`.
    key: String,
    /// Its mutant's id: `04`, `py04`.
    mutant: String,
    /// Its step: the tests of steps 1 to this one are in force.
    step: u64,
    /// The tests in force that kill the mutant, in the suite's order: the
    /// matrix's `killed_by`, less the tests of later steps, which the
    /// exercise does not run.
    killers: Vec<String>,
    /// The tests in force that pass on the mutant, in the suite's order.
    survivors: Vec<String>,
}

/// The exercise key a student types for a mutant: its id without its
/// letters and leading zero (`py04` and `04` are exercise `4`, `08b` is
/// `8b`), as the README keys the exercises.
fn key_of(mutant: &str) -> String {
    mutant
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_start_matches('0')
        .to_string()
}

/// The kill matrix of `family` (`rust`, `python`) over its reference and
/// the worksheet's mutants, as JSON.
fn worksheet_matrix(sandbox: &Sandbox, family: &str) -> Value {
    sandbox
        .plain_lab(&[
            "matrix",
            "--impl",
            family,
            "--format",
            "json",
            "--kind",
            "worksheet",
        ])
        .json()
}

/// The last step of the suite: `lab check` checks steps 1 to this one.
fn last_step(matrix: &Value) -> u64 {
    tests_of(matrix)
        .into_iter()
        .map(|(_, step)| step)
        .max()
        .expect("the matrix has tests")
}

/// The matrix's tests with their steps, in the suite's order.
fn tests_of(matrix: &Value) -> Vec<(String, u64)> {
    matrix["tests"]
        .as_array()
        .unwrap_or_else(|| panic!("no tests in the matrix: {matrix:#}"))
        .iter()
        .map(|test| {
            (
                test["name"].as_str().expect("a test's name").to_string(),
                test["step"].as_u64().expect("a test's step"),
            )
        })
        .collect()
}

/// The exercises of the matrix: one per worksheet mutant, in its order.
fn exercises_of(matrix: &Value) -> Vec<Exercise> {
    let tests = tests_of(matrix);
    let exercises: Vec<Exercise> = matrix["variants"]
        .as_array()
        .unwrap_or_else(|| panic!("no variants in the matrix: {matrix:#}"))
        .iter()
        .filter(|variant| variant["kind"] == "worksheet")
        .map(|variant| {
            let mutant = variant["id"].as_str().expect("an id").to_string();
            let step = variant["step"].as_u64().expect("a mutant's step");
            let in_force = || {
                tests
                    .iter()
                    .filter(move |(_, of)| *of <= step)
                    .map(|(name, _)| name)
            };
            let killed_by = strings(&variant["killed_by"]);
            let killers: Vec<String> = in_force()
                .filter(|name| killed_by.contains(name))
                .cloned()
                .collect();
            assert!(
                !killers.is_empty(),
                "the matrix says no test of steps 1 to {step} kills {mutant}: {variant:#}"
            );
            let survivors = in_force()
                .filter(|name| variant["outcomes"][name.as_str()] == "pass")
                .cloned()
                .collect();
            Exercise {
                key: key_of(&mutant),
                mutant,
                step,
                killers,
                survivors,
            }
        })
        .collect();
    assert!(!exercises.is_empty(), "no worksheet mutants: {matrix:#}");
    exercises
}

/// The exercise keys of the Rust store, from `lab tests --variants --impl
/// rust` (without `--impl`, it lists the student's current
/// implementation): its worksheet mutants, in order.
fn rust_exercise_keys(sandbox: &Sandbox) -> Vec<String> {
    let listed = sandbox.plain_lab(&["tests", "--variants", "--impl", "rust"]);
    listed.assert_success();
    let keys: Vec<String> = listed
        .stdout
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            (words.get(1) == Some(&"step") && words.get(3) == Some(&"worksheet"))
                .then(|| key_of(words[0]))
        })
        .collect();
    assert!(
        !keys.is_empty(),
        "no worksheet mutants:\n{}",
        listed.shown()
    );
    keys
}

/// The problem, if the exercises of the matrix are not `expected` (the
/// Rust store's): a student in either language has the same exercises.
fn differing_exercises(exercises: &[Exercise], expected: &[String]) -> Option<String> {
    let keys: Vec<&str> = exercises.iter().map(|e| e.key.as_str()).collect();
    (keys != expected).then(|| {
        format!("the exercises are {keys:?}, but the Rust store's are {expected:?}: a student in either language walks the same exercises")
    })
}

/// The attempt the progress file recorded last at exercise `key`.
fn last_attempt<'a>(progress: &'a Value, key: &str) -> Option<&'a Value> {
    progress["exercises"][key]["attempts"]
        .as_array()
        .and_then(|attempts| attempts.last())
}

/// A JSON array of strings as a vector.
fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item.as_str().unwrap_or("<not a string>").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `lab step KEY` (with `--impl FAMILY` when given) predicting `predicted`,
/// with the closing reflection at step 8.
fn step(sandbox: &Sandbox, exercise: &Exercise, family: Option<&str>, predicted: &[String]) -> Ran {
    let predict = predicted.join(",");
    let why = format!(
        "the tests aimed at what mutant {} changes in step {}",
        exercise.mutant, exercise.step
    );
    let mut args = vec!["step", exercise.key.as_str()];
    if let Some(family) = family {
        args.extend(["--impl", family]);
    }
    args.extend(["--predict", &predict, "--why", &why]);
    if exercise.key == "8b" {
        args.extend(["--why-kept", WHY_KEPT, "--not-guaranteed", NOT_GUARANTEED]);
    }
    sandbox.plain_lab(&args)
}

/// The first 100 characters of `line`, for a summary (the screen shown
/// after it has the whole line).
fn beginning(line: &str) -> String {
    match line.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// What went wrong at one exercise: the problems and the step's screen.
struct Failed {
    exercise: Exercise,
    problems: Vec<String>,
    ran: Ran,
}

/// Walks every exercise in order, predicting exactly its killers, and
/// fails listing every exercise where the step did not exit 0, showed a
/// warning, scored less than 100%, or recorded other tests as caught than
/// the matrix's killers; `also` adds the problems of its own.
fn walk_naming_every_killer(
    sandbox: &Sandbox,
    exercises: &[Exercise],
    family: Option<&str>,
    mut problems: Vec<String>,
    also: impl Fn(&Exercise, &Ran) -> Vec<String>,
) {
    let mut failed = Vec::new();
    for exercise in exercises {
        let ran = step(sandbox, exercise, family, &exercise.killers);
        let mut wrong = Vec::new();
        if ran.code != Some(0) {
            wrong.push(format!("exit code {:?}, not 0", ran.code));
        }
        for warning in ran.warnings() {
            wrong.push(format!("it printed {:?}", beginning(warning)));
        }
        match ran.shown_score() {
            Some(100) => {}
            Some(score) => wrong.push(format!("the screen shows score {score}%, not 100%")),
            None => wrong.push("the screen shows no score".to_string()),
        }
        let progress = sandbox.progress();
        match last_attempt(&progress, &exercise.key) {
            None => wrong.push(format!(
                "no attempt recorded at exercise {}: {progress:#}",
                exercise.key
            )),
            Some(attempt) => {
                if attempt["mutant"] != exercise.mutant.as_str() {
                    wrong.push(format!(
                        "the attempt is about mutant {}, not {}",
                        attempt["mutant"], exercise.mutant
                    ));
                }
                let caught = strings(&attempt["caught_by"]);
                if caught != exercise.killers {
                    let beside = |of: &[String], not_in: &[String]| -> Vec<String> {
                        of.iter().filter(|t| !not_in.contains(t)).cloned().collect()
                    };
                    wrong.push(format!(
                        "recorded as caught by {} tests, but the matrix's killers of steps 1 to {} are {:?}; caught besides them: {:?}; not caught of them: {:?}",
                        caught.len(),
                        exercise.step,
                        exercise.killers,
                        beside(&caught, &exercise.killers),
                        beside(&exercise.killers, &caught),
                    ));
                }
                if attempt["score"]["percent"] != 100 {
                    wrong.push(format!(
                        "recorded score {}%, not 100%",
                        attempt["score"]["percent"]
                    ));
                }
            }
        }
        wrong.extend(also(exercise, &ran));
        if !wrong.is_empty() {
            failed.push(Failed {
                exercise: exercise.clone(),
                problems: wrong,
                ran,
            });
        }
    }
    let progress = sandbox.progress();
    if exercises.iter().any(|exercise| exercise.step == 8)
        && progress["reflection"]["why_tests_are_kept"] != WHY_KEPT
    {
        problems.push(format!(
            "the closing reflection given at step 8 is not recorded: {:#}",
            progress["reflection"]
        ));
    }
    if problems.is_empty() && failed.is_empty() {
        return;
    }
    let mut message = String::new();
    for problem in &problems {
        writeln!(message, "- {problem}").unwrap();
    }
    for failure in &failed {
        let exercise = &failure.exercise;
        writeln!(
            message,
            "- exercise {} (mutant {}), predicting {:?}:",
            exercise.key, exercise.mutant, exercise.killers
        )
        .unwrap();
        for problem in &failure.problems {
            writeln!(message, "    {problem}").unwrap();
        }
    }
    for failure in &failed {
        writeln!(
            message,
            "\n===== exercise {}: {}\n{}",
            failure.exercise.key,
            failure.ran.command,
            failure.ran.run_and_comparison()
        )
        .unwrap();
        if !failure.ran.stderr.is_empty() {
            writeln!(message, "--- stderr ---\n{}", failure.ran.stderr).unwrap();
        }
    }
    panic!(
        "a student who named every killer: {} of {} exercises went wrong\n{message}",
        failed.len(),
        exercises.len()
    );
}

/// A student of `family` (`rust`, `python`) who names at every exercise
/// exactly the tests that kill its mutant.
fn a_student_names_every_killer(family: &str) {
    let sandbox = Sandbox::new();
    let exercises = exercises_of(&worksheet_matrix(&sandbox, family));
    let problems = differing_exercises(&exercises, &rust_exercise_keys(&sandbox))
        .into_iter()
        .collect();
    walk_naming_every_killer(&sandbox, &exercises, Some(family), problems, |_, _| {
        Vec::new()
    });
}

#[test]
fn a_rust_student_who_names_every_killer_scores_full_marks_on_every_exercise() {
    a_student_names_every_killer("rust");
}

#[test]
fn a_python_student_who_names_every_killer_scores_full_marks_on_every_exercise() {
    a_student_names_every_killer("python");
}

/// The lines of a check that report steps (`step 4  passed ...`), trimmed.
fn step_lines(text: &str) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|line| line.starts_with("step "))
        .collect()
}

/// What is wrong with a check's step lines, if they are not steps 1 to
/// `through`, each passed.
fn not_all_passed(lines: &[&str], through: u64) -> Option<String> {
    let expected: Vec<String> = (1..=through)
        .map(|step| format!("step {step}  passed"))
        .collect();
    let all_passed = lines.len() == expected.len()
        && lines
            .iter()
            .zip(&expected)
            .all(|(line, expected)| line.starts_with(expected.as_str()));
    (!all_passed)
        .then(|| format!("expected steps 1 to {through} passed, the check shows {lines:?}"))
}

/// The worksheet's last instruction, then the exercises again: a student
/// writes the store in Python (here the lab's own Python store, which is
/// correct), checks it, and walks the exercises of its language, the
/// Python store's mutants, without naming a family; after each exercise the
/// lab checks the student's store against the steps in force.
///
/// Its name sorts before the other tests' names on purpose: the test
/// harness starts tests in the order of their names, and this one, by far
/// the longest, then runs beside the other four instead of after them.
#[test]
fn a_correct_python_store_of_the_student_s_own_walks_the_python_exercises_with_full_marks() {
    let sandbox = Sandbox::new();
    let new = sandbox.plain_lab(&["new", "--lang", "python", "mine"]);
    new.assert_success();
    let file = sandbox.path("mine").join("store.py");
    assert!(file.is_file(), "no mine/store.py:\n{}", new.shown());
    assert_eq!(
        sandbox.progress()["implementation"]["kind"],
        "python",
        "lab new records the student's Python store"
    );
    std::fs::write(&file, include_str!("../src/store.py")).unwrap();

    let matrix = worksheet_matrix(&sandbox, "python");
    let check = sandbox.plain_lab(&["check"]);
    check.assert_success();
    let through = last_step(&matrix);
    if let Some(problem) = not_all_passed(&step_lines(&check.stdout), through) {
        panic!("lab check of a correct store: {problem}\n{}", check.shown());
    }
    assert!(check.warnings().is_empty(), "{}", check.shown());

    let exercises = exercises_of(&matrix);
    let problems = differing_exercises(&exercises, &rust_exercise_keys(&sandbox))
        .into_iter()
        .collect();
    walk_naming_every_killer(&sandbox, &exercises, None, problems, |exercise, ran| {
        let header = format!(
            "On the lab's Python store; then your current implementation, python3 {},",
            file.display()
        );
        if !ran.text().contains(&header) {
            return vec![format!("the step's header does not name it: {header:?}")];
        }
        let heading = "Your implementation, ";
        let Some(at) = ran.stdout.find(heading) else {
            return vec!["the screen shows no check of the student's implementation".to_string()];
        };
        not_all_passed(&step_lines(&ran.stdout[at..]), exercise.step)
            .map(|problem| format!("the student's implementation after the step: {problem}"))
            .into_iter()
            .collect()
    });
}

/// The precision the README defines, as the lab computes it: the tests
/// named rightly, in percent of the tests named, rounded down.
fn share_named_rightly(right: usize, named: usize) -> u64 {
    u64::try_from(right * 100 / named).expect("a percentage")
}

/// At exercise 4 of `family`, a student predicts one test that kills the
/// mutant and one that does not: a killer found, one of the two named
/// rightly, and the survivor explained in its own words.
fn one_killer_and_one_survivor_at_exercise_4(family: &str) {
    let sandbox = Sandbox::new();
    let exercises = exercises_of(&worksheet_matrix(&sandbox, family));
    let exercise = exercises
        .iter()
        .find(|exercise| exercise.key == "4")
        .unwrap_or_else(|| panic!("no exercise 4 among {exercises:?}"));
    let killer = exercise.killers[0].clone();
    let survivor = exercise
        .survivors
        .first()
        .unwrap_or_else(|| panic!("no test of steps 1 to 4 passes on {}", exercise.mutant))
        .clone();
    let expected = share_named_rightly(1, 2);

    let ran = step(
        &sandbox,
        exercise,
        Some(family),
        &[killer.clone(), survivor.clone()],
    );
    ran.assert_success();
    let context = format!(
        "exercise 4 (mutant {}), predicting the killer {killer} and the survivor {survivor}; the matrix's killers are {:?}, so the precision is 1 of 2 = {expected}%:\n{}",
        exercise.mutant,
        exercise.killers,
        ran.run_and_comparison()
    );
    assert_eq!(ran.shown_score(), Some(expected), "{context}");
    let found = format!(
        "found a killer:              yes, 1 of the {} that catch it",
        exercise.killers.len()
    );
    assert!(ran.stdout.contains(&found), "{found:?} in {context}");
    let why = lease_lab::suite::description(&survivor).expect("every test has its description");
    // The screen wraps the description to the terminal: compare the words.
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words(&ran.stdout).contains(&words(why)),
        "the survivor explained: {why:?} in {context}"
    );
    let progress = sandbox.progress();
    let attempt = last_attempt(&progress, "4")
        .unwrap_or_else(|| panic!("no attempt recorded: {progress:#}\n{context}"));
    assert_eq!(attempt["mutant"], exercise.mutant.as_str(), "{context}");
    assert_eq!(
        strings(&attempt["caught_by"]),
        exercise.killers,
        "{context}"
    );
    let score = &attempt["score"];
    assert_eq!(
        strings(&score["predicted_and_caught"]),
        [killer],
        "{context}"
    );
    assert_eq!(
        strings(&score["predicted_but_survived"]),
        [survivor],
        "{context}"
    );
    assert_eq!(
        strings(&score["caught_not_predicted"]),
        exercise.killers[1..],
        "{context}"
    );
    assert_eq!(score["percent"], expected, "{context}");
    assert_eq!(ran.warnings(), Vec::<&str>::new(), "{context}");
}

#[test]
fn a_rust_student_who_names_one_killer_and_one_survivor_scores_the_share_named_rightly() {
    one_killer_and_one_survivor_at_exercise_4("rust");
}

#[test]
fn a_python_student_who_names_one_killer_and_one_survivor_scores_the_share_named_rightly() {
    one_killer_and_one_survivor_at_exercise_4("python");
}

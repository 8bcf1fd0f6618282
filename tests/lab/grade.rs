//! `lab grade` as an instructor runs it: a class of 200 progress files
//! (first attempts wrong, later ones right, one score edited by hand,
//! reasons with commas and quotes) and one unreadable file, graded as
//! CSV and checked against the kill matrix `lab matrix` prints; the
//! student's name; the misconceptions.

use crate::common::{rust_matrix, Sandbox};
use lease_lab::course::prediction::Score;
use lease_lab::course::progress::{Attempt, Progress};
use lease_lab::exercise;
use lease_lab::suite::CASES;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Per mutant id, its killers with their steps, as `lab matrix`'s JSON
/// report gives them (the run shared with the other tests of this binary):
/// what the grade must recompute against.
fn killers() -> BTreeMap<String, Vec<(String, u8)>> {
    let matrix = &rust_matrix().json;
    let step_of = |name: &str| CASES.iter().find(|case| case.name == name).unwrap().step;
    matrix["variants"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|variant| variant["id"] != "reference")
        .map(|variant| {
            let killed: Vec<(String, u8)> = variant["killed_by"]
                .as_array()
                .unwrap()
                .iter()
                .map(|name| {
                    let name = name.as_str().unwrap();
                    (name.to_string(), step_of(name))
                })
                .collect();
            (variant["id"].as_str().unwrap().to_string(), killed)
        })
        .collect()
}

/// What a prediction earns at `step` against `killers`.
fn earned(predicted: &[String], killers: &[(String, u8)], step: u8) -> Score {
    let caught: Vec<String> = killers
        .iter()
        .filter(|(_, at)| *at <= step)
        .map(|(name, _)| name.clone())
        .collect();
    Score::of(predicted, &caught)
}

/// Student `index`'s name: some with a comma, quotes or a line break.
fn name_of(index: usize) -> String {
    match index % 10 {
        3 => format!("O'Neil, \"Pat\" {index}"),
        6 => format!("Line\nBreak {index}"),
        _ => format!("Student {index}"),
    }
}

/// The class: 200 files, each with a few exercises, a first attempt that
/// names a test which does not catch the mutant, and (for most) a later
/// one that names a killer. Student 7's first attempt at its first
/// exercise claims 100%, which it does not earn. Answers each file's
/// path and its expected first-attempt scores per exercise.
fn write_class(
    folder: &Path,
    killers: &BTreeMap<String, Vec<(String, u8)>>,
) -> Vec<(String, BTreeMap<String, u8>)> {
    let mut rng = fastrand::Rng::with_seed(42);
    let exercises = exercise::exercises();
    (0..200)
        .map(|index| {
            let mut progress = Progress {
                student: Some(name_of(index)),
                ..Progress::default()
            };
            let mut expected = BTreeMap::new();
            for exercise in &exercises {
                if rng.u8(0..3) == 0 {
                    continue;
                }
                let step = exercise.step();
                let mutant = exercise.mutant().spec.id.clone();
                let killers = &killers[&mutant];
                let in_force: Vec<&str> = CASES
                    .iter()
                    .filter(|case| case.step <= step)
                    .map(|case| case.name)
                    .collect();
                let misses: Vec<&str> = in_force
                    .iter()
                    .copied()
                    .filter(|name| !killers.iter().any(|(killer, _)| killer == name))
                    .collect();
                let wrong = vec![misses[rng.usize(..misses.len())].to_string()];
                let mut first = attempt(&mutant, wrong, killers, step, index);
                if index == 7 && expected.is_empty() {
                    first.score.percent = 100;
                }
                expected.insert(
                    exercise.key.clone(),
                    earned(&first.predicted, killers, step).percent,
                );
                let record = progress.exercise(&exercise.key);
                record.attempts.push(first);
                let own_step: Vec<&(String, u8)> =
                    killers.iter().filter(|(_, at)| *at <= step).collect();
                if rng.bool() && !own_step.is_empty() {
                    let right = vec![own_step[rng.usize(..own_step.len())].0.clone()];
                    record
                        .attempts
                        .push(attempt(&mutant, right, killers, step, index));
                }
            }
            let path = folder.join(format!("student-{index:03}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&progress).unwrap()).unwrap();
            (path.display().to_string(), expected)
        })
        .collect()
}

/// An attempt as `lab step` records it, its score honest.
fn attempt(
    mutant: &str,
    predicted: Vec<String>,
    killers: &[(String, u8)],
    step: u8,
    index: usize,
) -> Attempt {
    let score = earned(&predicted, killers, step);
    Attempt {
        at: "2026-01-01T00:00:00Z".into(),
        mutant: mutant.into(),
        predicted,
        why: if index.is_multiple_of(4) {
            format!("the fence, \"surely\", {index}")
        } else {
            String::new()
        },
        probe: None,
        caught_by: Vec::new(),
        score,
    }
}

#[test]
fn a_class_of_200_is_graded_as_csv_with_every_score_recomputed() {
    let lab = Sandbox::new();
    let killers = killers();
    let class = write_class(lab.dir.path(), &killers);
    let bad = lab.path("broken.json");
    std::fs::write(&bad, "{ \"version\": 1, ").unwrap();
    let mut args: Vec<&str> = vec!["grade", "--format", "csv"];
    args.extend(class.iter().map(|(path, _)| path.as_str()));
    let bad_arg = bad.display().to_string();
    args.push(&bad_arg);
    let output = lab.command(&args).output().unwrap();
    let errors = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{errors}");
    assert!(
        errors.contains(&format!(
            "warning: {bad_arg} skipped: it is not a progress file"
        )),
        "{errors}"
    );
    let mut reader = csv::Reader::from_reader(output.stdout.as_slice());
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|title| title == name)
            .unwrap_or_else(|| panic!("no column {name:?} in {header:?}"))
    };
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(
        rows.len(),
        201,
        "a row for every file given, the broken one too"
    );
    let broken = &rows[200];
    assert_eq!(&broken[column("file")], bad_arg.as_str());
    assert!(
        broken[column("status")].starts_with("unreadable: it is not a progress file"),
        "{broken:?}"
    );
    assert_eq!(&broken[column("first total")], "");
    for (index, (row, (path, expected))) in rows.iter().zip(&class).enumerate() {
        // A line break in a name is shown as `\n`: each row is one line.
        assert_eq!(&row[column("student")], name_of(index).replace('\n', "\\n"));
        assert_eq!(&row[column("file")], path.as_str());
        assert_eq!(&row[column("status")], "graded");
        assert!(row[column("stores")].starts_with("rust: "), "{row:?}");
        for exercise in exercise::exercises() {
            let shown = &row[column(&format!("{} first", exercise.key))];
            match expected.get(&exercise.key) {
                Some(score) => assert_eq!(shown, score.to_string(), "{index} {}", exercise.key),
                None => assert_eq!(shown, "", "{index} {}", exercise.key),
            }
        }
        let flags = &row[column("flags")];
        if index == 7 {
            assert!(
                flags.contains("first: the file says 100%, the prediction earns 0%"),
                "{flags}"
            );
        } else {
            assert_eq!(flags, "", "student {index}");
        }
    }
    let total: u32 = class[0].1.values().map(|score| u32::from(*score)).sum();
    assert_eq!(rows[0][column("first total")], total.to_string());
}

/// The name is set with --student, refused when empty, and changed only
/// by another --student, which says so; a name twice is graded once.
#[test]
fn the_student_is_named_once_and_renamed_only_by_the_flag() {
    let lab = Sandbox::new();
    let empty = lab
        .command(&["--student", " \t", "hint", "4"])
        .output()
        .unwrap();
    assert_eq!(empty.status.code(), Some(2));
    assert!(text(&empty.stderr).contains("the student's name is empty"));
    assert!(!lab.path("lease-lab-progress.json").exists());
    let named = lab
        .command(&["--student", "Ada", "hint", "4"])
        .output()
        .unwrap();
    assert!(named.status.success(), "{}", text(&named.stderr));
    let read = || -> Value {
        serde_json::from_slice(&std::fs::read(lab.path("lease-lab-progress.json")).unwrap())
            .unwrap()
    };
    assert_eq!(read()["student"], "Ada");
    // Commands without the flag, and the overview off a terminal, keep it.
    lab.command(&["hint", "4"]).output().unwrap();
    let overview = text(&lab.command(&[]).output().unwrap().stdout);
    assert!(
        overview.contains("of Ada (lab --student NAME changes the name)"),
        "{overview}"
    );
    assert_eq!(read()["student"], "Ada");
    assert_eq!(read()["exercises"]["4"]["hints_seen"], 2);
    let renamed = lab.command(&["--student", "Grace"]).output().unwrap();
    assert!(renamed.status.success());
    assert!(
        text(&renamed.stderr).contains("was \"Ada\"; it is now \"Grace\""),
        "{}",
        text(&renamed.stderr)
    );
    assert_eq!(read()["student"], "Grace");
    let refused = lab.command(&["--student", "X", "matrix"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let copy = lab.path("copy.json");
    std::fs::copy(lab.path("lease-lab-progress.json"), &copy).unwrap();
    let graded = lab
        .command(&[
            "grade",
            "--format",
            "json",
            "lease-lab-progress.json",
            "copy.json",
        ])
        .output()
        .unwrap();
    assert!(graded.status.success(), "{}", text(&graded.stderr));
    assert!(
        text(&graded.stderr)
            .contains("copy.json is Grace's too: merged into the row of lease-lab-progress.json"),
        "{}",
        text(&graded.stderr)
    );
    let class: Value = serde_json::from_slice(&graded.stdout).unwrap();
    assert_eq!(class["students"].as_array().unwrap().len(), 1);
    assert_eq!(class["students"][0]["student"], "Grace");
    assert_eq!(class["students"][0]["merged"][0], "copy.json");
    assert_eq!(class["files"][1]["status"], "merged_into");
}

/// The misconceptions of a class made with `lab step`: the wrong guess,
/// how many named it, and their words, in text, JSON and Markdown.
#[test]
fn the_misconceptions_group_wrong_guesses_with_the_reasons() {
    let lab = Sandbox::new();
    for (file, why) in [("a.json", "the fence, \"surely\""), ("b.json", "")] {
        let output = lab
            .command(&[
                "--progress",
                file,
                "step",
                "4",
                "--predict",
                "init_db_creates_the_jobs_table",
                "--why",
                why,
            ])
            .output()
            .unwrap();
        assert!(output.status.code().is_some(), "{}", text(&output.stderr));
    }
    let shown = text(
        &lab.command(&["grade", "--misconceptions", "a.json", "b.json"])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(
        shown.contains(
            "Exercise 4\n  init_db_creates_the_jobs_table (2 students) did not catch it\n    - a.json: \"the fence, \"surely\"\"\n"
        ),
        "{shown}"
    );
    let json: Value = serde_json::from_slice(
        &lab.command(&["grade", "--format", "json", "a.json", "b.json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let wrong = &json["misconceptions"][0]["wrong"][0];
    assert_eq!(wrong["students"], 2);
    assert_eq!(wrong["reasons"][0]["why"], "the fence, \"surely\"");
    let markdown = text(
        &lab.command(&[
            "grade",
            "--misconceptions",
            "--format",
            "markdown",
            "a.json",
            "b.json",
        ])
        .output()
        .unwrap()
        .stdout,
    );
    assert!(
        markdown.contains(
            "| `init_db_creates_the_jobs_table` | 2 | a.json: \"the fence, \"surely\"\" |"
        ),
        "{markdown}"
    );
}

/// Without python3 the Python store's attempts keep their stored scores,
/// marked as not recomputed, and the reason is said.
#[test]
fn without_python_the_python_scores_are_shown_as_stored_and_said_so() {
    let lab = Sandbox::new();
    let mut progress = Progress::default();
    let predicted = vec!["init_db_creates_the_jobs_table".to_string()];
    let mut score = Score::of(&predicted, &[]);
    score.percent = 100;
    progress.exercise("4").attempts.push(Attempt {
        at: String::new(),
        mutant: "py04".into(),
        predicted,
        why: String::new(),
        probe: None,
        caught_by: Vec::new(),
        score,
    });
    std::fs::write(
        lab.path("py.json"),
        serde_json::to_string(&progress).unwrap(),
    )
    .unwrap();
    let output = lab
        .command(&["grade", "py.json"])
        .env("PATH", lab.dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    assert!(
        shown.contains("The python store's scores are not recomputed: python3 cannot be started"),
        "{shown}"
    );
    let row = shown
        .lines()
        .find(|line| line.starts_with("py.json"))
        .unwrap();
    assert!(row.contains(" 100?"), "{shown}");
    assert!(shown.contains("stored 100%, not recomputed"), "{shown}");
    // With python3, the same attempt is recomputed against the Python
    // store's matrix: the test named does not catch py04.
    let output = lab.command(&["grade", "py.json"]).output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    let row = shown
        .lines()
        .find(|line| line.starts_with("py.json"))
        .unwrap();
    assert!(row.contains("   0!"), "{shown}");
    assert!(
        shown.contains("exercise 4 first: the file says 100%, the prediction earns 0%"),
        "{shown}"
    );
}

/// `lab check --format json`: each step with its tests and failures, and
/// every test with its outcome, for the Python store and a broken copy.
#[test]
fn a_check_as_json_gives_each_step_and_each_test() {
    let lab = Sandbox::new();
    let output = lab
        .command(&["check", "--impl", "python", "--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let check: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(check["all_pass"], true);
    assert_eq!(check["steps_passed"], 8);
    let steps = check["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 8);
    let contract = CASES
        .iter()
        .filter(|case| case.tag == lease_lab::suite::Tag::Contract)
        .count();
    let tests = check["tests"].as_array().unwrap();
    assert_eq!(
        tests.iter().filter(|test| test["contract"] == true).count(),
        contract
    );
    assert!(tests
        .iter()
        .filter(|test| test["contract"] == true)
        .all(|test| test["outcome"] == "pass"));
    let counted: u64 = steps
        .iter()
        .map(|step| step["tests"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, contract as u64);

    let broken = lab.path("broken.py");
    std::fs::write(&broken, broken_python_store()).unwrap();
    let output = lab
        .command(&["check", "--impl", "broken.py", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let check: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(check["all_pass"], false);
    assert_eq!(check["steps"][0]["status"], "failing");
    let failure = &check["steps"][0]["failures"][0];
    assert_eq!(failure["test"], "init_db_twice_keeps_jobs_and_fences");
    assert_eq!(failure["result"]["outcome"], "fail");
    assert!(
        failure["reason"]
            .as_str()
            .unwrap()
            .contains("table jobs already exists"),
        "{failure}"
    );
}

/// The Python store with its table created without IF NOT EXISTS: the
/// worksheet's first mutant, as a student's file.
fn broken_python_store() -> String {
    let fragment = "CREATE TABLE IF NOT EXISTS jobs";
    assert_eq!(
        lease_lab::subject::PYTHON_SOURCE.matches(fragment).count(),
        1
    );
    lease_lab::subject::PYTHON_SOURCE.replace(fragment, "CREATE TABLE jobs")
}

/// The folder `class` of four submissions: ada.py the Python store,
/// bob.py a copy broken at step 1, carl.py a program that hangs, dora.py
/// one that exits at once. Answers the folder.
fn submissions(lab: &Sandbox) -> std::path::PathBuf {
    let folder = lab.path("class");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("ada.py"), lease_lab::subject::PYTHON_SOURCE).unwrap();
    std::fs::write(folder.join("bob.py"), broken_python_store()).unwrap();
    std::fs::write(folder.join("carl.py"), "import time\ntime.sleep(600)\n").unwrap();
    std::fs::write(
        folder.join("dora.py"),
        "raise SystemExit('no store here')\n",
    )
    .unwrap();
    folder
}

/// `lab grade --impl-dir`: the Python store passes every step, a broken
/// copy fails step 1, a program that hangs is stopped at the time limit
/// and one that exits at once is a row saying it could not start; none
/// stops the others. (The limit leaves a real check room on a busy
/// machine, where the tests run side by side, and is shorter than the
/// wait for a program's greeting, so that the silent one times out.)
#[test]
fn every_implementation_of_a_folder_is_checked_within_a_time_limit() {
    let lab = Sandbox::new();
    let folder = submissions(&lab);
    let started = std::time::Instant::now();
    let output = lab
        .command(&[
            "grade",
            "--impl-dir",
            "class",
            "--time-limit-s",
            "8",
            "--format",
            "csv",
            // The grading's rows; the sandbox is tests/lab/hostile.rs's.
            "--no-sandbox",
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the hanging program was not stopped"
    );
    let mut reader = csv::Reader::from_reader(output.stdout.as_slice());
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|row| row.unwrap().iter().map(String::from).collect())
        .collect();
    let row = |student: &str| {
        rows.iter()
            .find(|row| row[0] == student)
            .unwrap_or_else(|| panic!("no row for {student}: {rows:?}"))
            .clone()
    };
    assert_eq!(row("ada")[2..], ["8", "8", "every step passes"]);
    assert_eq!(row("bob")[2..], ["7", "8", "open: step 1"]);
    assert_eq!(row("carl")[2..], ["", "", "timed out: stopped after 8 s"]);
    let dora = row("dora");
    assert!(dora[4].starts_with("could not start: "), "{dora:?}");
    assert_eq!(rows.len(), 4);
    // As text, at 80 columns: the broken copy and the one that cannot start.
    for silent in ["ada.py", "carl.py"] {
        std::fs::remove_file(folder.join(silent)).unwrap();
    }
    let shown = text(
        &lab.command(&[
            "grade",
            "--impl-dir",
            "class",
            "--time-limit-s",
            "30",
            "--no-sandbox",
        ])
        .env("COLUMNS", "80")
        .output()
        .unwrap()
        .stdout,
    );
    assert!(
        shown.lines().all(|line| line.chars().count() <= 80),
        "{shown}"
    );
    assert!(
        shown.contains("\nbob               7 of 8        open: step 1\n"),
        "{shown}"
    );
    assert!(
        shown.contains("\ndora              -             could not start: "),
        "{shown}"
    );
}

/// What the instructor met, walked again: a student with two files (steps
/// done on two machines), a name that is a spreadsheet formula, and a name
/// in CJK characters. The two files are one row whichever comes first,
/// with both files' attempts; the CSV has a row for every file, says what
/// became of each, and neutralises the formula; the text keeps its
/// columns at 80.
#[test]
fn two_files_of_one_student_a_formula_and_a_wide_name_are_graded_right() {
    let lab = Sandbox::new();
    let step = |file: &str, student: &str, exercise: &str, predict: &str| {
        let ran = lab.lab(&[
            "--progress",
            file,
            "--student",
            student,
            "step",
            exercise,
            "--predict",
            predict,
            "--why",
            "a reason",
        ]);
        ran.assert_success();
    };
    step(
        "s01.json",
        "Ada",
        "4",
        "claim_at_exact_expiry_is_reassigned",
    );
    step(
        "s24.json",
        "Ada",
        "6",
        "second_completion_is_refused_and_keeps_the_result",
    );
    step("evil.json", "=HYPERLINK(\"http://x\",\"click\")", "4", "1");
    step(
        "wide.json",
        "李小龙",
        "4",
        "claim_at_exact_expiry_is_reassigned",
    );
    for files in [["s01.json", "s24.json"], ["s24.json", "s01.json"]] {
        let ran = lab.lab(&["grade", "--format", "json", files[0], files[1]]);
        let class = ran.json();
        let students = class["students"].as_array().unwrap();
        assert_eq!(students.len(), 1, "{}", ran.shown());
        let done: Vec<&str> = students[0]["exercises"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["exercise"].as_str().unwrap())
            .collect();
        assert_eq!(done, ["4", "6"], "both files' attempts, in either order");
        ran.assert_says(&[&format!(
            "{} is Ada's too: merged into the row of {}",
            files[1], files[0]
        )]);
    }
    let ran = lab.lab(&[
        "grade",
        "--format",
        "csv",
        "s01.json",
        "s24.json",
        "evil.json",
        "wide.json",
    ]);
    ran.assert_success();
    let mut reader = csv::Reader::from_reader(ran.stdout.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let cells =
        |row: &csv::StringRecord| (row[0].to_string(), row[1].to_string(), row[2].to_string());
    assert_eq!(
        rows.iter().map(cells).collect::<Vec<_>>(),
        [
            ("Ada".into(), "s01.json".into(), "graded".into()),
            (
                "Ada".into(),
                "s24.json".into(),
                "merged into the row of s01.json".into()
            ),
            (
                "'=HYPERLINK(\"http://x\",\"click\")".into(),
                "evil.json".into(),
                "graded".into()
            ),
            ("李小龙".into(), "wide.json".into(), "graded".into()),
        ]
    );
    let mut text = lab.command(&["grade", "s01.json", "s24.json", "evil.json", "wide.json"]);
    text.env("COLUMNS", "80");
    let text = crate::common::run_bounded(&mut text, crate::common::NO_HANG);
    text.assert_success();
    let widths: Vec<usize> = text
        .stdout
        .lines()
        .filter(|line| !line.starts_with(' '))
        .filter(|line| line.contains(" first  ") || line.contains(" latest  "))
        .map(unicode_width::UnicodeWidthStr::width)
        .collect();
    assert_eq!(widths.len(), 6, "{}", text.shown());
    assert!(
        widths.windows(2).all(|pair| pair[0] == pair[1]),
        "{widths:?}\n{}",
        text.stdout
    );
}

/// `lab grade --per-exercise`: a row per exercise with the first attempts
/// beside the latest and the item statistics, as CSV and text; JSON holds
/// them with the rest. Three students at exercise 4: two first named a
/// test that survives the mutant, then one of them the killer.
#[test]
fn the_class_per_exercise_gives_first_attempts_and_item_statistics() {
    let lab = Sandbox::new();
    let step = |file: &str, predict: &str| {
        lab.lab(&[
            "--progress",
            file,
            "--student",
            file,
            "step",
            "4",
            "--predict",
            predict,
            "--why",
            "because",
        ])
        .assert_success();
    };
    step("a.json", "claim_of_a_held_job_is_refused");
    step("a.json", "claim_at_exact_expiry_is_reassigned");
    step("b.json", "claim_of_a_held_job_is_refused");
    step("c.json", "claim_at_exact_expiry_is_reassigned");
    let files = ["a.json", "b.json", "c.json"];
    let csv_run = lab.lab(&[&["grade", "--per-exercise", "--format", "csv"][..], &files].concat());
    csv_run.assert_success();
    let mut reader = csv::Reader::from_reader(csv_run.stdout.as_bytes());
    let header = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let four = rows
        .iter()
        .find(|row| &row[0] == "4")
        .expect("a row for exercise 4");
    let cell =
        |name: &str| four[header.iter().position(|title| title == name).unwrap()].to_string();
    assert_eq!(cell("attempted"), "3");
    assert_eq!(cell("first named a killer"), "1");
    assert_eq!(cell("latest named a killer"), "2");
    assert_eq!(cell("difficulty"), "0.333");
    assert_eq!(cell("mean attempts"), "1.333");
    assert_eq!(
        cell("wrong first guesses"),
        "claim_of_a_held_job_is_refused (2)"
    );
    let text = lab.lab(&[&["grade", "--per-exercise"][..], &files].concat());
    text.assert_says(&["1 -> 2", "33% -> 66%", "claim_of_a_held_job_is_refused (2)"]);
    let json = lab
        .lab(&[&["grade", "--format", "json"][..], &files].concat())
        .json();
    let four = json["exercises"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["exercise"] == "4")
        .unwrap();
    assert_eq!(four["first_predicted_a_killer"], 1);
    let refused = lab.lab(&["grade", "--per-exercise", "--misconceptions", "a.json"]);
    refused.assert_code(2);
}

/// `lab check --format gradescope` writes Gradescope's results.json (valid
/// against the published format: `pages`'s tests):
/// a test per contract test, one point each, the failing one with the call,
/// the answers and what the program wrote on standard error; the score is
/// the points of the tests that pass.
#[test]
fn a_check_for_gradescope_follows_its_published_format() {
    let lab = Sandbox::new();
    let results = a_check_for_gradescope(&lab);
    let tests = results["tests"].as_array().unwrap();
    let contract = lease_lab::suite::CASES
        .iter()
        .filter(|case| case.step <= 2 && case.judges_programs())
        .count();
    assert_eq!(
        tests.len(),
        contract,
        "a test per contract test of steps 1 and 2"
    );
    let failed: Vec<&Value> = tests
        .iter()
        .filter(|test| test["status"] == "failed")
        .collect();
    assert!(!failed.is_empty());
    let passed = tests
        .iter()
        .filter(|test| test["status"] == "passed")
        .count();
    assert_eq!(results["score"].as_f64(), Some(passed as f64));
    let existing = failed
        .iter()
        .find(|test| test["name"] == "step 2: enqueue_of_an_existing_job_answers_false")
        .expect("the break is caught");
    let output = existing["output"].as_str().unwrap();
    assert!(output.contains("enqueue"), "{output}");
    assert!(
        output.contains("enqueue: always true"),
        "the program's standard error: {output}"
    );
    assert_eq!(existing["score"].as_f64(), Some(0.0));
}

/// The exercise-4 guess that misses its mutant, which the small class
/// makes first.
#[cfg(feature = "page-checks")]
const HELD: &str = "claim_of_a_held_job_is_refused";

/// A small class in `lab`'s folder, made with `lab step` as students make
/// it: Ada's two files (s01.json: exercise 4 first wrong then right;
/// s24.json: exercise 6), `<b>Bob</b>` (bob.json) and Eve (eve.json, her
/// 0% first attempt edited to claim 100%) each wrong first at 4, with
/// reasons from Ada and Bob. Answers the files, and a missing one last.
#[cfg(feature = "page-checks")]
pub(crate) fn small_class(lab: &Sandbox) -> [&'static str; 5] {
    let step = |file: &str, student: &str, exercise: &str, predict: &str, why: &str| {
        let ran = lab.lab(&[
            "--progress",
            file,
            "--student",
            student,
            "step",
            exercise,
            "--predict",
            predict,
            "--why",
            why,
        ]);
        ran.assert_success();
    };
    step("s01.json", "Ada", "4", HELD, "held means refused");
    step(
        "s01.json",
        "Ada",
        "4",
        "claim_at_exact_expiry_is_reassigned",
        "",
    );
    step(
        "s24.json",
        "Ada",
        "6",
        "second_completion_is_refused_and_keeps_the_result",
        "",
    );
    step("bob.json", "<b>Bob</b>", "4", HELD, "a lease is a lock");
    step("eve.json", "Eve", "4", HELD, "");
    let eve = lab.path("eve.json");
    let mut edited: Value = serde_json::from_str(&std::fs::read_to_string(&eve).unwrap()).unwrap();
    edited["exercises"]["4"]["attempts"][0]["score"]["percent"] = 100.into();
    std::fs::write(&eve, edited.to_string()).unwrap();
    ["s01.json", "s24.json", "bob.json", "eve.json", "gone.json"]
}

/// `lab check --format gradescope` of the steps 1 and 2 of a Python store
/// whose `enqueue` always answers true: its results, failing.
fn a_check_for_gradescope(lab: &Sandbox) -> Value {
    write_a_store_whose_enqueue_always_says_yes(lab);
    let ran = lab.lab(&[
        "check",
        "--impl",
        "mine.py",
        "--step",
        "2",
        "--format",
        "gradescope",
        "--no-sandbox",
    ]);
    ran.assert_code(1);
    let results: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    results
}

/// Writes `mine.py`, the Python store whose `enqueue` always answers true
/// and says so on standard error, for a check of steps 1 and 2.
fn write_a_store_whose_enqueue_always_says_yes(lab: &Sandbox) {
    let broken = lease_lab::subject::PYTHON_SOURCE.replace(
        "        return cursor.rowcount == 1",
        "        print(\"enqueue: always true\", file=__import__(\"sys\").stderr)\n        return True",
    );
    assert_ne!(
        broken,
        lease_lab::subject::PYTHON_SOURCE,
        "the break applies"
    );
    std::fs::write(lab.path("mine.py"), broken).unwrap();
}

/// `lab check --format prairielearn` writes PrairieLearn's external
/// grading results.json: gradable, a score between 0 and 1 (the share of
/// contract tests passed), and a test per contract test with its points,
/// its maximum, a message and the failure with the program's standard
/// error, as its `<pl-external-grader-results>` element reads them.
#[test]
fn a_check_for_prairielearn_gives_its_grading_results() {
    let lab = Sandbox::new();
    write_a_store_whose_enqueue_always_says_yes(&lab);
    let ran = lab.lab(&[
        "check",
        "--impl",
        "mine.py",
        "--step",
        "2",
        "--format",
        "prairielearn",
        "--no-sandbox",
    ]);
    ran.assert_code(1);
    let results: Value = serde_json::from_str(&ran.stdout).expect("JSON");
    assert_eq!(results["gradable"], true);
    let tests = results["tests"].as_array().unwrap();
    let contract = lease_lab::suite::CASES
        .iter()
        .filter(|case| case.step <= 2 && case.judges_programs())
        .count();
    assert_eq!(tests.len(), contract);
    for test in tests {
        let (points, most) = (test["points"].as_u64(), test["max_points"].as_u64());
        assert!(matches!((points, most), (Some(0 | 1), Some(1))), "{test}");
        assert!(test["name"]
            .as_str()
            .is_some_and(|name| name.starts_with("step ")));
        assert!(
            test["message"].is_string() && test["output"].is_string(),
            "{test}"
        );
    }
    let earned: u64 = tests
        .iter()
        .filter_map(|test| test["points"].as_u64())
        .sum();
    assert!(earned < contract as u64);
    let score = results["score"].as_f64().unwrap();
    assert!(
        (score - earned as f64 / contract as f64).abs() < 1e-12,
        "{score}"
    );
    let existing = tests
        .iter()
        .find(|test| test["name"] == "step 2: enqueue_of_an_existing_job_answers_false")
        .expect("the break is caught");
    assert_eq!(existing["points"], 0);
    let output = existing["output"].as_str().unwrap();
    assert!(output.contains("enqueue: always true"), "{output}");
    assert!(results["message"]
        .as_str()
        .unwrap()
        .ends_with("against the contract tests of steps 1 to 2: 1 of 2 steps pass."));
}

/// `lab grade` of the folder `class` for Gradescope, without the folder
/// of results it needs.
const FOLDER_FOR_GRADESCOPE: [&str; 8] = [
    "grade",
    "--impl-dir",
    "class",
    "--time-limit-s",
    "8",
    "--format",
    "gradescope",
    "--no-sandbox",
];

/// [`FOLDER_FOR_GRADESCOPE`] of [`submissions`], its results written in
/// `out`.
fn grade_the_folder_for_gradescope(lab: &Sandbox) -> crate::common::Ran {
    let ran = lab.lab(&[&FOLDER_FOR_GRADESCOPE[..], &["--results-dir", "out"]].concat());
    ran.assert_success();
    ran
}

/// The results.json written in `out` for `student`.
fn results_of(lab: &Sandbox, student: &str) -> Value {
    let file = lab.path("out").join(student).join("results.json");
    let text = std::fs::read_to_string(&file).unwrap_or_else(|_| panic!("{file:?}"));
    serde_json::from_str(&text).unwrap()
}

/// `lab grade --impl-dir --format gradescope --results-dir OUT`: a
/// results.json per submission (each valid against the published format:
/// `pages`'s tests): the Python store's with every contract test passed, a broken copy's
/// with step 1's test failed, and one for a program that hangs and one
/// that cannot start, scored 0 with why. Without --results-dir, or with
/// progress files, it is a usage error that says what to give.
#[test]
fn a_folder_of_submissions_gives_a_gradescope_results_file_each() {
    let lab = Sandbox::new();
    submissions(&lab);
    let refused = lab.lab(&FOLDER_FOR_GRADESCOPE);
    refused.assert_code(2);
    refused.assert_says(&["give --impl-dir DIR and --results-dir OUT"]);
    let ran = grade_the_folder_for_gradescope(&lab);
    ran.assert_says(&["bob               7 of 8        open: step 1"]);
    let results = |student: &str| results_of(&lab, student);
    let contract = lease_lab::suite::CASES
        .iter()
        .filter(|case| case.judges_programs())
        .count();
    let ada = results("ada");
    assert_eq!(ada["tests"].as_array().unwrap().len(), contract);
    assert_eq!(ada["score"].as_f64(), Some(contract as f64));
    let bob = results("bob");
    let failed: Vec<&str> = bob["tests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|test| test["status"] == "failed")
        .map(|test| test["name"].as_str().unwrap())
        .collect();
    assert!(
        !failed.is_empty() && failed.iter().all(|name| name.starts_with("step 1: ")),
        "{failed:?}"
    );
    assert_eq!(
        bob["score"].as_f64(),
        Some((contract - failed.len()) as f64)
    );
    for (student, says) in [
        ("carl", "did not end within the time limit of 8 s"),
        ("dora", "could not start: "),
    ] {
        let results = results(student);
        assert_eq!(results["score"].as_f64(), Some(0.0));
        let output = results["output"].as_str().unwrap();
        assert!(output.contains(says), "{student}: {output}");
    }
    let with_files = lab.lab(
        &[
            &FOLDER_FOR_GRADESCOPE[..],
            &["--results-dir", "out", "a.json"],
        ]
        .concat(),
    );
    with_files.assert_code(2);
}

/// The pages and results as a browser and a schema validator read them (the
/// `page-checks` feature).
#[cfg(feature = "page-checks")]
mod pages {
    use super::*;

    /// A validator of Gradescope's published results.json format, from the
    /// copy kept in tests/data.
    fn gradescope_validator() -> jsonschema::Validator {
        let schema: Value =
            serde_json::from_str(include_str!("../data/gradescope-results.schema.json"))
                .expect("the schema");
        jsonschema::validator_for(&schema).expect("the schema compiles")
    }

    /// The schema's complaints about `results`; none when valid.
    fn errors(validator: &jsonschema::Validator, results: &Value) -> Vec<String> {
        validator
            .iter_errors(results)
            .map(|error| format!("{}: {error}", error.instance_path))
            .collect()
    }

    /// `lab check --format gradescope`'s results.json is valid against the
    /// published format, which does fail a misspelt status and score.
    #[test]
    fn a_check_for_gradescope_is_valid_against_its_published_format() {
        let lab = Sandbox::new();
        let results = a_check_for_gradescope(&lab);
        let validator = gradescope_validator();
        assert_eq!(errors(&validator, &results), Vec::<String>::new());
        let mut misspelt = results.clone();
        misspelt["tests"][0]["status"] = "pass".into();
        misspelt["tests"][0]["maxscore"] = 1.into();
        assert_eq!(
            errors(&validator, &misspelt).len(),
            2,
            "the schema can fail"
        );
    }

    /// Each results.json that `lab grade --impl-dir` writes for
    /// Gradescope is valid against the published format: a passing
    /// submission's, a failing one's, a hanging one's and one that cannot
    /// start.
    #[test]
    fn a_folder_graded_for_gradescope_writes_valid_results() {
        let lab = Sandbox::new();
        submissions(&lab);
        grade_the_folder_for_gradescope(&lab);
        let validator = gradescope_validator();
        for student in ["ada", "bob", "carl", "dora"] {
            let results = results_of(&lab, student);
            assert_eq!(
                errors(&validator, &results),
                Vec::<String>::new(),
                "{student}"
            );
        }
    }

    /// `lab grade --format html`, the class page: every student's row (Ada's
    /// two files merged and marked, Eve's edited score marked), every file
    /// given with what became of it (a missing one among them), a row per
    /// exercise with its statistics, and each wrong guess with the students'
    /// reasons; a name that looks like markup is shown as text.
    #[test]
    fn the_class_page_shows_every_row_file_statistic_and_reason() {
        let lab = Sandbox::new();
        let held = HELD;
        let files = small_class(&lab);
        let ran = lab.lab(&[&["grade", "--format", "html"][..], &files].concat());
        ran.assert_code(3);
        ran.assert_says(&["gone.json skipped: there is no such file"]);
        let page = scraper::Html::parse_document(&ran.stdout);
        assert!(
            page.errors.is_empty(),
            "the page parses as HTML with no error: {:?}",
            page.errors
        );
        let all = |selector: &str| -> Vec<String> {
            page.select(&scraper::Selector::parse(selector).unwrap())
                .map(|element| element.text().collect::<String>())
                .collect()
        };
        let students = all("table.students tbody tr:not(.flag) th");
        assert_eq!(
            students,
            ["Adas01.json, s24.json", "<b>Bob</b>bob.json", "Eveeve.json"],
            "{}",
            ran.stdout
        );
        assert!(ran.stdout.contains("&lt;b&gt;Bob&lt;/b&gt;"), "escaped");
        let flags = all("table.students tr.flag td");
        assert!(
            flags
                .iter()
                .any(|flag| flag.starts_with("merged from s01.json and s24.json")),
            "{flags:?}"
        );
        assert!(
            flags
                .iter()
                .any(|flag| flag.contains("the file says 100%, the prediction earns 0%")),
            "Eve's edited score is flagged: {flags:?}"
        );
        assert_eq!(all("tr.merged").len(), 1);
        let files = all("#files li");
        assert_eq!(
            files,
            [
                "s01.json: graded",
                "s24.json: merged into the row of s01.json",
                "bob.json: graded",
                "eve.json: graded",
                "gone.json: unreadable: there is no such file",
            ]
        );
        let exercises = all("table.exercises tbody tr");
        assert_eq!(exercises.len(), exercise::exercises().len());
        let four = all("table.exercises tbody tr")
            .into_iter()
            .find(|row| row.starts_with('4'))
            .unwrap();
        assert!(four.contains(&format!("{held}\u{a0}(3)")), "{four}");
        let reasons = all("#misconceptions li li");
        assert!(
            reasons.contains(&"Ada: “held means refused”".to_string())
                && reasons.contains(&"<b>Bob</b>: “a lease is a lock”".to_string()),
            "{reasons:?}"
        );
    }
}

//! The lab's own logic, through its public API: mutant files, exercises
//! and their texts, predictions and scores, the progress file, outcomes,
//! the matrix's judgement, the demo, `lab db`'s answers and the tour.

use lease_lab::db_command;
use lease_lab::exercise;
use lease_lab::matrix::Matrix;
use lease_lab::mutant::{MutantKind, MutantSpec};
use lease_lab::operation::{Field, Operation};
use lease_lab::outcome::{MutantStatus, Outcome, TestRun};
use lease_lab::prediction::{parse_selection, Score};
use lease_lab::progress::{self, Progress};
use lease_lab::runner::{RunOptions, VariantRun, WorkerCommand};
use lease_lab::suite::{self, Case};
use lease_lab::tour::{self, Console, Given};
use lease_lab::variant::{self, JobStore, Variant};
use lease_lab::StoreError;
use serde_json::json;
use std::io::Cursor;
use std::time::Duration;

// ----- mutant files -----

const VALID: &str = r#"
id = "x1"
step = 4
kind = "own"
title = "a test mutant"
file = "src/store.rs"
fragment = "if done || held_until > now {"
replacement = "if done || held_until >= now {"
explanation = "why"
"#;

#[test]
fn a_valid_mutant_file_parses_and_applies_once() {
    let spec = MutantSpec::parse("x1-boundary.toml", VALID).unwrap();
    assert_eq!(
        (spec.id.as_str(), spec.step, spec.kind),
        ("x1", 4, MutantKind::Own)
    );
    assert_eq!(spec.feature(), "mutant-x1");
    let mutated = spec
        .apply("x1-boundary.toml", variant::REFERENCE_SOURCE)
        .unwrap();
    assert!(mutated.contains("held_until >= now"));
    assert_eq!(mutated.len(), variant::REFERENCE_SOURCE.len() + 1);
}

#[test]
fn mutant_files_with_mistakes_are_refused_with_the_reason() {
    let cases = [
        (
            "x1-a.toml",
            VALID.replace("step = 4", "step = 9"),
            "steps 1 to 8",
        ),
        (
            "x1-a.toml",
            VALID.replace("step = 4", "step = 0"),
            "steps 1 to 8",
        ),
        ("x2-a.toml", VALID.to_string(), "name the file x1-slug.toml"),
        ("x1-a.txt", VALID.to_string(), "must be named ID-slug.toml"),
        (
            "X1-a.toml",
            VALID.replace("\"x1\"", "\"X1\""),
            "lowercase letters and digits",
        ),
        (
            "x1-a.toml",
            VALID.replace("src/store.rs", "src/main.rs"),
            "only src/store.rs and src/store.py",
        ),
        (
            "x1-a.toml",
            VALID.replace(">= now {\"", "> now {\""),
            "would change nothing",
        ),
        (
            "x1-a.toml",
            VALID.replace("kind = \"own\"", "kind = \"other\""),
            "not a valid mutant file",
        ),
        (
            "x1-a.toml",
            format!("{VALID}\nextra = 1"),
            "not a valid mutant file",
        ),
    ];
    for (name, text, reason) in cases {
        let error = MutantSpec::parse(name, &text).expect_err(name);
        assert_eq!(error.file_name, name);
        assert!(error.to_string().contains(reason), "{name}: {error}");
        assert!(
            error.to_string().starts_with(&format!("mutant {name}: ")),
            "{error}"
        );
    }
}

#[test]
fn a_fragment_must_occur_exactly_once() {
    let missing = MutantSpec::parse(
        "x1-a.toml",
        &VALID.replace("held_until > now {", "no such text {"),
    )
    .unwrap();
    let error = missing
        .apply("x1-a.toml", variant::REFERENCE_SOURCE)
        .unwrap_err();
    assert!(error.reason.contains("does not occur"), "{error}");
    let twice = MutantSpec::parse(
        "x1-a.toml",
        &VALID.replace("if done || held_until > now {", "Ok("),
    )
    .unwrap();
    let error = twice
        .apply("x1-a.toml", variant::REFERENCE_SOURCE)
        .unwrap_err();
    assert!(
        error.reason.contains("occurs ") && error.reason.contains(" times"),
        "{error}"
    );
}

#[test]
fn every_compiled_mutant_is_its_fragment_applied_to_the_reference() {
    assert!(variant::MUTANTS.len() >= 9);
    for mutant in variant::MUTANTS {
        assert_eq!(
            variant::REFERENCE_SOURCE.replacen(mutant.fragment, mutant.replacement, 1),
            mutant.source,
            "mutant {}",
            mutant.id
        );
        assert!(mutant.file_name.starts_with(&format!("{}-", mutant.id)));
        assert_eq!(MutantKind::Worksheet.name(), "worksheet");
    }
    assert_eq!(
        variant::ACTIVE_MUTANT,
        None,
        "plain cargo test runs the reference"
    );
    assert_eq!(variant::mutant("08b").unwrap().kind, MutantKind::Worksheet);
    assert_eq!(variant::mutant("h06h").unwrap().kind.name(), "hardening");
    assert!(variant::mutant("nope").is_none());
}

#[test]
fn variants_are_found_by_id_with_the_reference_first() {
    let all = Variant::all();
    assert_eq!(all.len(), variant::MUTANTS.len() + 1);
    assert_eq!(all[0], Variant::Reference);
    assert_eq!(all[0].id(), "correct");
    assert!(all[0].mutant().is_none());
    assert_eq!(Variant::find("04").unwrap().mutant().unwrap().step, 4);
    assert_eq!(Variant::find("correct"), Some(Variant::Reference));
    assert_eq!(Variant::find("99"), None);
    assert_eq!(format!("{:?}", Variant::find("04").unwrap()), "Variant(04)");
}

// ----- exercises and their texts -----

#[test]
fn exercises_are_the_worksheet_mutants_keyed_without_leading_zeros() {
    let keys: Vec<&str> = exercise::exercises().iter().map(|e| e.key).collect();
    assert_eq!(keys, ["1", "2", "3", "4", "5", "6", "7", "8", "8b"]);
    assert_eq!(exercise::find("04").unwrap().mutant.id, "04");
    assert_eq!(exercise::find(" 8B ").unwrap().mutant.id, "08b");
    assert!(exercise::find("9").is_none());
    assert!(
        exercise::find("h04a").is_none(),
        "hardening mutants are not exercises"
    );
    assert_eq!(exercise::find("4").unwrap().step(), 4);
    assert_eq!(
        exercise::find("4").unwrap().label(),
        "Take an expired lease atomically"
    );
    assert_eq!(
        exercise::find("8b").unwrap().label(),
        variant::mutant("08b").unwrap().title
    );
}

#[test]
fn step_titles_cover_one_to_eight() {
    assert_eq!(exercise::step_title(1), "Create the lease state table");
    assert_eq!(
        exercise::step_title(8),
        "There is one winner among concurrent claims"
    );
    assert_eq!(exercise::step_title(0), "");
    assert_eq!(exercise::step_title(9), "");
}

#[test]
fn a_lab_text_splits_into_its_sections() {
    let text = "# Step 9: Title\n\nIntro line.\n\n## Contract\nC\n\n## Why it matters\nW\n\n## Predict before you run\nP\n\n## Hint 1\nH1\n## Hint 2\nH2\n\n## Aside\nA\n\n## After the run\nAfter\n";
    let lab = exercise::parse_lab(text);
    assert_eq!(lab.title, "Step 9: Title");
    assert_eq!(lab.contract, "C");
    assert_eq!(lab.why, "W");
    assert_eq!(lab.predict, "P");
    assert_eq!(lab.hints, ["H1", "H2"]);
    assert_eq!(lab.after, "After");
    assert_eq!(
        lab.introduction, "Intro line.\n\nAside\n\nA",
        "unknown sections are kept"
    );
}

#[test]
fn every_step_has_a_complete_text() {
    for step in 1..=8 {
        let lab =
            exercise::lab(step).unwrap_or_else(|| panic!("labs/ has no text for step {step}"));
        assert!(
            lab.title.starts_with(&format!("Step {step}")),
            "{}",
            lab.title
        );
        for (name, section) in [
            ("contract", &lab.contract),
            ("why", &lab.why),
            ("predict", &lab.predict),
            ("after", &lab.after),
        ] {
            assert!(!section.is_empty(), "step {step} has no {name}");
        }
        assert_eq!(lab.hints.len(), 3, "step {step}");
    }
    assert!(exercise::lab(9).is_none());
}

// ----- predictions -----

fn menu(step: u8) -> Vec<&'static Case> {
    suite::cases_through(step).collect()
}

#[test]
fn a_selection_takes_numbers_and_names_in_any_mix() {
    let menu = menu(2);
    let chosen = parse_selection("1, enqueue_of_an_existing_job_answers_false 3,1", &menu).unwrap();
    assert_eq!(
        chosen,
        [
            menu[0].name,
            "enqueue_of_an_existing_job_answers_false",
            menu[2].name
        ]
    );
    assert_eq!(parse_selection("", &menu).unwrap(), Vec::<&str>::new());
    let last = menu.len();
    assert_eq!(
        parse_selection(&last.to_string(), &menu).unwrap(),
        [menu[last - 1].name]
    );
}

#[test]
fn a_selection_refuses_what_is_not_on_the_menu() {
    let menu = menu(2);
    let error = parse_selection("0", &menu).unwrap_err();
    assert!(
        error.contains("no test number 0") && error.contains(&format!("1 to {}", menu.len())),
        "{error}"
    );
    let error = parse_selection(&(menu.len() + 1).to_string(), &menu).unwrap_err();
    assert!(
        error.contains(&format!("no test number {}", menu.len() + 1)),
        "{error}"
    );
    let error = parse_selection("claim_at_exact_expiry_is_reassigned", &menu).unwrap_err();
    assert!(
        error.contains("not a test in force"),
        "tests of later steps are not on the menu: {error}"
    );
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|name| name.to_string()).collect()
}

#[test]
fn a_score_sets_the_prediction_beside_the_result() {
    let score = Score::of(&names(&["a", "b", "c"]), &names(&["b", "c", "d"]));
    assert_eq!(score.predicted_and_caught, names(&["b", "c"]));
    assert_eq!(score.predicted_but_survived, names(&["a"]));
    assert_eq!(score.caught_not_predicted, names(&["d"]));
    assert_eq!(score.percent, 50);
    assert!(score.found_a_killer());
    let exact = Score::of(&names(&["a"]), &names(&["a"]));
    assert_eq!(exact.percent, 100);
    let wrong = Score::of(&names(&["a"]), &names(&["b"]));
    assert_eq!(wrong.percent, 0);
    assert!(!wrong.found_a_killer());
    assert_eq!(
        Score::of(&[], &[]).percent,
        100,
        "nothing predicted, nothing caught"
    );
    assert_eq!(
        Score::of(&names(&["a", "b"]), &names(&["a", "b", "c"])).percent,
        66
    );
}

// ----- the progress file -----

#[test]
fn progress_round_trips_and_a_missing_file_is_empty() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("progress.json");
    let loaded = progress::load(&path).unwrap();
    assert_eq!(loaded.progress, Progress::default());
    assert!(loaded.set_aside.is_none());
    let mut record = Progress::default();
    record.exercise("4").hints_seen = 2;
    progress::save(&path, &record).unwrap();
    let loaded = progress::load(&path).unwrap();
    assert_eq!(loaded.progress, record);
    assert!(loaded.progress.latest("4").is_none());
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("}\n"));
}

#[test]
fn unreadable_progress_is_moved_aside_with_the_reason() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("progress.json");
    for (content, reason) in [
        (b"not json".to_vec(), "not a progress file"),
        (vec![0xff, 0xfe, 0x00], "not a progress file"),
        (
            br#"{"version": 7, "exercises": {}}"#.to_vec(),
            "format version 7",
        ),
    ] {
        std::fs::write(&path, &content).unwrap();
        let loaded = progress::load(&path).unwrap();
        let (aside, why) = loaded.set_aside.expect("set aside");
        assert!(why.contains(reason), "{why}");
        assert_eq!(std::fs::read(&aside).unwrap(), content);
        assert!(!path.exists());
        assert_eq!(loaded.progress, Progress::default());
        std::fs::remove_file(aside).unwrap();
    }
}

#[test]
fn progress_in_a_missing_folder_is_an_error_not_a_loss() {
    let path = std::path::Path::new("/no/such/folder/progress.json");
    assert!(progress::save(path, &Progress::default()).is_err());
    let folder = tempfile::tempdir().unwrap();
    assert!(
        progress::load(folder.path()).is_err(),
        "a folder is not a progress file"
    );
}

#[test]
fn the_progress_location_prefers_the_flag() {
    let given = std::path::Path::new("given.json");
    assert_eq!(progress::location(Some(given)), given);
    if std::env::var_os(progress::FILE_VARIABLE).is_none() {
        assert_eq!(
            progress::location(None),
            std::path::Path::new(progress::DEFAULT_FILE)
        );
    }
    let stamp = progress::now_stamp();
    assert!(
        stamp.len() == 20 && stamp.ends_with('Z') && stamp.starts_with("20"),
        "{stamp}"
    );
}

// ----- outcomes -----

#[test]
fn outcomes_have_labels_and_reasons() {
    let fail = Outcome::Fail {
        check: "c".into(),
        expected: "Some(\n    1,\n)".into(),
        actual: "None".into(),
    };
    assert_eq!(fail.label(), "fail");
    assert_eq!(fail.reason().unwrap(), "c: expected Some( 1, ), got None");
    assert_eq!(Outcome::Pass.label(), "pass");
    assert_eq!(Outcome::Pass.reason(), None);
    assert!(!Outcome::Pass.catches());
    let timeout = Outcome::Timeout { limit_ms: 5 };
    assert_eq!(
        (timeout.label(), timeout.reason().unwrap()),
        ("timeout", "did not finish within 5 ms".to_string())
    );
    let crash = Outcome::Crash {
        message: "boom".into(),
    };
    assert_eq!(
        (crash.label(), crash.reason().unwrap()),
        ("crash", "crashed: boom".to_string())
    );
    assert!(fail.catches() && timeout.catches() && crash.catches());
    let run = TestRun::new("t", Outcome::Pass, Duration::from_micros(1500));
    assert_eq!(run.micros, 1500);
    assert_eq!(
        serde_json::to_value(&run).unwrap(),
        json!({"test": "t", "outcome": "pass", "micros": 1500})
    );
}

#[test]
fn a_mutant_status_follows_its_strongest_outcome() {
    let fail = Outcome::Fail {
        check: String::new(),
        expected: String::new(),
        actual: String::new(),
    };
    let timeout = Outcome::Timeout { limit_ms: 1 };
    let crash = Outcome::Crash {
        message: String::new(),
    };
    assert_eq!(
        MutantStatus::of([&Outcome::Pass, &crash, &timeout, &fail]),
        MutantStatus::Killed
    );
    assert_eq!(
        MutantStatus::of([&Outcome::Pass, &crash, &timeout]),
        MutantStatus::Timeout
    );
    assert_eq!(
        MutantStatus::of([&crash, &Outcome::Pass]),
        MutantStatus::Crashed
    );
    assert_eq!(MutantStatus::of([&Outcome::Pass]), MutantStatus::Survived);
    assert_eq!(MutantStatus::of([]), MutantStatus::Survived);
    assert!(
        MutantStatus::Killed.detected()
            && MutantStatus::Timeout.detected()
            && MutantStatus::Crashed.detected()
    );
    assert!(!MutantStatus::Survived.detected());
    let labels: Vec<&str> = [
        MutantStatus::Killed,
        MutantStatus::Timeout,
        MutantStatus::Crashed,
        MutantStatus::Survived,
    ]
    .iter()
    .map(|status| status.label())
    .collect();
    assert_eq!(labels, ["killed", "timeout", "crashed", "survived"]);
}

// ----- the matrix's judgement, on made-up runs -----

fn run(test: &str, outcome: Outcome) -> TestRun {
    TestRun::new(test, outcome, Duration::ZERO)
}

fn failed() -> Outcome {
    Outcome::Fail {
        check: "c".into(),
        expected: "e".into(),
        actual: "a".into(),
    }
}

/// Steps 1 and 4's first tests against the reference, mutant 04 and mutant 01.
fn small_matrix(reference_first: Outcome, m04: [Outcome; 2], m01: [Outcome; 2]) -> Matrix {
    let first = &suite::CASES[0];
    let boundary = suite::case("claim_at_exact_expiry_is_reassigned").unwrap();
    let [a, b] = m04;
    let [c, d] = m01;
    Matrix {
        tests: vec![first, boundary],
        runs: vec![
            VariantRun {
                variant: Variant::Reference,
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
    assert_eq!(matrix.reference().unwrap().variant, Variant::Reference);
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
        problems[1].contains("mutant 04 is caught only by tests of other steps"),
        "{}",
        problems[1]
    );
    assert!(
        problems[2].contains("mutant 01 survives"),
        "{}",
        problems[2]
    );
    assert_eq!(matrix.idle_tests(), ["claim_at_exact_expiry_is_reassigned"]);
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
        [Outcome::Pass, Outcome::Timeout { limit_ms: 1 }],
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

#[test]
fn the_matrix_json_has_the_documented_shape() {
    let matrix = small_matrix(
        Outcome::Pass,
        [Outcome::Pass, failed()],
        [failed(), Outcome::Pass],
    );
    let value = matrix.to_json();
    assert_eq!(
        value["tests"][1],
        json!({"name": "claim_at_exact_expiry_is_reassigned", "step": 4})
    );
    assert_eq!(value["variants"][0]["id"], "correct");
    assert_eq!(value["variants"][0]["step"], json!(null));
    assert_eq!(value["variants"][0]["kind"], "reference");
    let m04 = &value["variants"][1];
    assert_eq!(
        (
            m04["id"].as_str(),
            m04["step"].as_u64(),
            m04["kind"].as_str()
        ),
        (Some("04"), Some(4), Some("worksheet"))
    );
    assert_eq!(m04["status"], "killed");
    assert_eq!(
        m04["killed_by"],
        json!(["claim_at_exact_expiry_is_reassigned"])
    );
    assert_eq!(
        m04["outcomes"]["claim_at_exact_expiry_is_reassigned"],
        "fail"
    );
    assert_eq!(m04["outcomes"][suite::CASES[0].name], "pass");
    assert_eq!(
        m04["details"]["claim_at_exact_expiry_is_reassigned"],
        "c: expected e, got a"
    );
    assert_eq!(m04["fragment"], variant::mutant("04").unwrap().fragment);
    assert_eq!(value["problems"], json!([]));
    assert_eq!(value["idle_tests"], json!([]));
}

#[test]
fn the_matrix_markdown_has_a_row_per_test_and_a_column_per_variant() {
    let matrix = small_matrix(
        Outcome::Pass,
        [Outcome::Pass, failed()],
        [
            Outcome::Crash {
                message: "x".into(),
            },
            Outcome::Timeout { limit_ms: 1 },
        ],
    );
    let markdown = matrix.to_markdown();
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(lines[0], "| step | test | correct | 04 | 01 |");
    assert_eq!(lines[1], "|---:|---|:---:|:---:|:---:|");
    assert_eq!(
        lines[2],
        format!("| 1 | `{}` | pass |  | crash |", suite::CASES[0].name)
    );
    assert_eq!(
        lines[3],
        "| 4 | `claim_at_exact_expiry_is_reassigned` | pass | **killed** | timeout |"
    );
    assert!(
        markdown.contains("| 04 | 4 | killed | 1 tests (1 of step 4) |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| 01 | 1 | timeout | 2 tests (1 of step 1) |"),
        "{markdown}"
    );
}

#[test]
fn a_real_matrix_catches_every_worksheet_mutant() {
    let command = WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    };
    let variants: Vec<Variant> = Variant::all()
        .into_iter()
        .filter(|variant| {
            variant
                .mutant()
                .is_none_or(|mutant| mutant.kind == MutantKind::Worksheet)
        })
        .collect();
    let matrix = Matrix::build(
        &command,
        &variants,
        suite::CASES.iter().collect(),
        &RunOptions::default(),
    );
    assert_eq!(matrix.problems(), Vec::<String>::new());
    assert_eq!(matrix.runs.len(), 10);
}

// ----- the demo -----

#[test]
fn the_demo_tells_the_story_and_judges_it() {
    let folder = tempfile::tempdir().unwrap();
    let story = lease_lab::demo::play(&variant::REFERENCE, &folder.path().join("a.db")).unwrap();
    let answers: Vec<&str> = story
        .events
        .iter()
        .map(|event| event.answer.as_str())
        .collect();
    assert_eq!(
        answers,
        ["true", "fence 1", "", "", "fence 2", "accepted", "refused"]
    );
    assert_eq!(story.events[6].actor, "A");
    assert_eq!(story.events[6].time, 113.0);
    assert!(!story.stale_write_landed);
    assert_eq!(
        story.final_row.unwrap().result.as_deref(),
        Some("B's result")
    );
    let lease_alone = Variant::find("h06h").unwrap();
    let story =
        lease_lab::demo::play(lease_alone.operations(), &folder.path().join("b.db")).unwrap();
    assert!(story.stale_write_landed);
    assert_eq!(story.events[6].answer, "accepted");
    let boundary = Variant::find("04").unwrap();
    let story = lease_lab::demo::play(boundary.operations(), &folder.path().join("c.db")).unwrap();
    assert_eq!(
        story.events[4].answer, "none",
        "mutant 04 refuses B's claim at the boundary"
    );
    assert_eq!(story.events[5].answer, "refused");
    assert!(!story.stale_write_landed);
    let error = lease_lab::demo::play(&variant::REFERENCE, &folder.path().join("missing/x.db"))
        .unwrap_err();
    assert!(matches!(error, StoreError::MissingFolder { .. }));
}

// ----- lab db -----

#[test]
fn db_answers_are_json_and_exit_codes_follow_the_outcome() {
    let folder = tempfile::tempdir().unwrap();
    let db = folder.path().join("jobs.db");
    let store: &dyn JobStore = &variant::REFERENCE;
    let run = |operation: Operation| db_command::run(store, &db, &operation);
    assert_eq!(run(Operation::Init).unwrap(), json!(true));
    assert_eq!(
        run(Operation::Enqueue { job: "j".into() }).unwrap(),
        json!(true)
    );
    let claim = Operation::Claim {
        job: "j".into(),
        owner: "A".into(),
        now: 100.0,
        ttl: 10.0,
    };
    assert_eq!(run(claim.clone()).unwrap(), json!(1));
    assert_eq!(run(claim).unwrap(), json!(null));
    assert_eq!(
        run(Operation::Renew {
            job: "j".into(),
            owner: "A".into(),
            fence: 1,
            now: 101.0,
            ttl: 10.0
        })
        .unwrap(),
        json!(true)
    );
    assert_eq!(
        run(Operation::Complete {
            job: "j".into(),
            owner: "A".into(),
            fence: 1,
            now: 102.0,
            result: "r".into()
        })
        .unwrap(),
        json!(true)
    );
    assert_eq!(
        run(Operation::Release {
            job: "j".into(),
            owner: "A".into(),
            fence: 1
        })
        .unwrap(),
        json!(false)
    );
    let state = run(Operation::State {
        job: "j".into(),
        field: None,
    })
    .unwrap();
    assert_eq!(
        state,
        json!({"id": "j", "owner": "A", "until": 111.0, "fence": 1, "result": "r", "done": true})
    );
    let keys: Vec<&String> = state.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["id", "owner", "until", "fence", "result", "done"],
        "the schema's order"
    );
    assert_eq!(
        run(Operation::State {
            job: "x".into(),
            field: None
        })
        .unwrap(),
        json!(null)
    );
    run(Operation::Enqueue { job: "k".into() }).unwrap();
    let many = run(Operation::ClaimMany {
        job: "k".into(),
        owners: vec!["A".into(), "B".into()],
        now: 1.0,
        ttl: 1.0,
        hold_lock: None,
    });
    let many = many.unwrap();
    assert_eq!(many.as_array().unwrap().len(), 2);
    let held = run(Operation::ClaimMany {
        job: "k".into(),
        owners: vec!["A".into()],
        now: 1.0,
        ttl: 1.0,
        hold_lock: Some(Duration::from_millis(1)),
    });
    assert_eq!(db_command::exit_code(&held), 2, "only probes hold the lock");
    assert_eq!(
        run(Operation::State {
            job: "j".into(),
            field: Some(Field::Fence)
        })
        .unwrap(),
        json!(1)
    );
    assert_eq!(
        run(Operation::State {
            job: "x".into(),
            field: Some(Field::Owner)
        })
        .unwrap(),
        json!(null)
    );
    assert_eq!(db_command::exit_code(&Ok(json!(false))), 0);
    let invalid = run(Operation::Claim {
        job: "j".into(),
        owner: "A".into(),
        now: 1.0,
        ttl: 0.0,
    });
    assert_eq!(db_command::exit_code(&invalid), 2);
    let missing = db_command::run(store, &folder.path().join("nope/x.db"), &Operation::Init);
    assert_eq!(db_command::exit_code(&missing), 1);
}

// ----- the tour, with a scripted console -----

fn worker() -> WorkerCommand {
    WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    }
}

fn tour_in(
    folder: &std::path::Path,
    key: &str,
    given: Given,
    typed: &str,
    interactive: bool,
) -> (Result<progress::Attempt, tour::TourError>, String) {
    let mut input = Cursor::new(typed.as_bytes().to_vec());
    let mut output = Vec::new();
    let mut console = Console {
        input: &mut input,
        interactive,
        output: &mut output,
    };
    let result = tour::run(
        exercise::find(key).unwrap(),
        given,
        &mut console,
        &worker(),
        &RunOptions::default(),
        &folder.join("progress.json"),
    );
    (result, String::from_utf8(output).unwrap())
}

#[test]
fn the_tour_asks_when_interactive_and_records_the_answers() {
    let folder = tempfile::tempdir().unwrap();
    let typed = "99\n\n2, 3\ntwo enqueues of one id\n";
    let (result, shown) = tour_in(folder.path(), "2", Given::default(), typed, true);
    let attempt = result.unwrap();
    assert!(shown.contains("there is no test number 99"), "{shown}");
    assert!(shown.contains("Name at least one test."), "{shown}");
    assert_eq!(
        attempt.predicted,
        [suite::CASES[1].name, suite::CASES[2].name]
    );
    assert_eq!(attempt.why, "two enqueues of one id");
    assert_eq!(attempt.mutant, "02");
    assert!(attempt
        .caught_by
        .contains(&"enqueue_of_an_existing_job_answers_false".to_string()));
    assert_eq!(
        attempt.score,
        Score::of(&attempt.predicted, &attempt.caught_by)
    );
    assert!(
        shown.contains("Step 2 of 8: Register only the first job"),
        "{shown}"
    );
    assert!(
        shown.contains("+                \"INSERT OR REPLACE INTO jobs (id)"),
        "{shown}"
    );
    assert!(shown.contains("Next: lab step 1"), "{shown}");
    let saved = progress::load(&folder.path().join("progress.json"))
        .unwrap()
        .progress;
    assert_eq!(saved.latest("2"), Some(&attempt));
}

#[test]
fn the_tour_stops_cleanly_when_input_ends_or_cannot_come() {
    let folder = tempfile::tempdir().unwrap();
    let (result, _) = tour_in(folder.path(), "3", Given::default(), "", true);
    assert!(matches!(result, Err(tour::TourError::InputEnded)));
    let (result, shown) = tour_in(folder.path(), "3", Given::default(), "", false);
    assert!(matches!(result, Err(tour::TourError::NoPrediction)));
    assert!(shown.is_empty(), "nothing is shown before the refusal");
    let given = Given {
        predict: Some("nope".into()),
        ..Given::default()
    };
    let (result, _) = tour_in(folder.path(), "3", given, "", false);
    assert!(
        matches!(result, Err(tour::TourError::BadPrediction(message)) if message.contains("\"nope\""))
    );
    assert!(
        !folder.path().join("progress.json").exists(),
        "nothing is recorded"
    );
}

#[test]
fn the_tour_asks_for_the_reflection_after_step_8_and_then_says_all_is_done() {
    let folder = tempfile::tempdir().unwrap();
    let mut record = Progress::default();
    for exercise in exercise::exercises().into_iter().filter(|e| e.key != "8") {
        record
            .exercise(exercise.key)
            .attempts
            .push(progress::Attempt {
                at: progress::now_stamp(),
                mutant: exercise.mutant.id.into(),
                predicted: vec![],
                why: String::new(),
                probe: None,
                caught_by: vec![],
                score: Score::of(&[], &[]),
            });
    }
    progress::save(&folder.path().join("progress.json"), &record).unwrap();
    assert_eq!(tour::next_exercise(&record).unwrap().key, "8");
    let given = Given {
        predict: Some("claim_many_answers_every_owner_in_order".into()),
        ..Given::default()
    };
    let (result, shown) = tour_in(folder.path(), "8", given, "kept because\nclocks\n", true);
    result.unwrap();
    assert!(
        shown.contains("Every exercise has a recorded prediction."),
        "{shown}"
    );
    let saved = progress::load(&folder.path().join("progress.json"))
        .unwrap()
        .progress;
    let reflection = saved.reflection.clone().expect("the reflection is kept");
    assert_eq!(
        (
            reflection.why_tests_are_kept.as_str(),
            reflection.not_guaranteed.as_str()
        ),
        ("kept because", "clocks")
    );
    assert!(tour::next_exercise(&saved).is_none());
}

#[test]
fn the_tour_without_a_terminal_points_to_lab_reflect() {
    let folder = tempfile::tempdir().unwrap();
    let given = Given {
        predict: Some("1".into()),
        ..Given::default()
    };
    let (result, shown) = tour_in(folder.path(), "8", given, "", false);
    result.unwrap();
    assert!(shown.contains("lab reflect --why-kept"), "{shown}");
    let saved = progress::load(&folder.path().join("progress.json"))
        .unwrap()
        .progress;
    assert!(saved.reflection.is_none());
}

#[test]
fn the_busy_timeout_reaches_the_store_of_each_variant() {
    // A thread's setting must not leak to other threads or tests.
    let handle = std::thread::spawn(|| {
        let store = Variant::find("04").unwrap().operations();
        store.set_thread_busy_timeout(Some(Duration::from_millis(7)));
        let error = lease_lab::store::busy_timeout();
        (error, variant::mutant("04").is_some())
    });
    let (reference_timeout, _) = handle.join().unwrap();
    assert_eq!(
        reference_timeout,
        lease_lab::store::busy_timeout(),
        "the reference's own setting is untouched"
    );
    lease_lab::store::set_thread_busy_timeout(Some(Duration::from_millis(9)));
    assert_eq!(lease_lab::store::busy_timeout(), Duration::from_millis(9));
    lease_lab::store::set_thread_busy_timeout(None);
}

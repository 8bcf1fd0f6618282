//! The progress file's own tests.

use super::*;

/// A name is recorded once, trimmed; an empty one is refused; another
/// name replaces it only when asked; files without one still load.
#[test]
fn a_student_is_recorded_once_and_changed_only_when_asked() {
    let mut progress = Progress::default();
    assert_eq!(
        progress.record_student("  ", true),
        Err(StudentError::Empty)
    );
    assert_eq!(progress.student, None);
    assert_eq!(
        progress.record_student(" Ada ", false),
        Ok(StudentChange::Recorded)
    );
    assert_eq!(progress.student.as_deref(), Some("Ada"));
    assert_eq!(
        progress.record_student("Ada", false),
        Ok(StudentChange::Unchanged)
    );
    assert_eq!(
        progress.record_student("Grace", false),
        Err(StudentError::AlreadyRecorded {
            recorded: "Ada".into()
        })
    );
    assert_eq!(
        progress.record_student("Grace", true),
        Ok(StudentChange::Replaced {
            previous: "Ada".into()
        })
    );
    assert_eq!(progress.student.as_deref(), Some("Grace"));
    let old = parse(br#"{"version": 1, "exercises": {}}"#).unwrap();
    assert_eq!(old.student, None);
    let text = serde_json::to_string(&progress).unwrap();
    assert_eq!(parse(text.as_bytes()).unwrap(), progress);
}

#[test]
fn progress_round_trips_and_a_missing_file_is_empty() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("progress.json");
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.progress, Progress::default());
    assert!(loaded.set_aside.is_none());
    let mut record = Progress::default();
    record.exercise("4").hints_seen = 2;
    save(&path, &record).unwrap();
    let loaded = load(&path).unwrap();
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
        let loaded = load(&path).unwrap();
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
    assert!(save(path, &Progress::default()).is_err());
    let folder = tempfile::tempdir().unwrap();
    assert!(
        load(folder.path()).is_err(),
        "a folder is not a progress file"
    );
}

#[test]
fn the_progress_file_of_the_nearest_folder_above_is_found() {
    let top = tempfile::tempdir().unwrap();
    let inner = top.path().join("mystore").join("src");
    std::fs::create_dir_all(&inner).unwrap();
    assert_eq!(found_above(&inner), None);
    std::fs::write(top.path().join(DEFAULT_FILE), "{}").unwrap();
    assert_eq!(found_above(&inner), Some(top.path().join(DEFAULT_FILE)));
    let nearer = top.path().join("mystore").join(DEFAULT_FILE);
    std::fs::write(&nearer, "{}").unwrap();
    assert_eq!(found_above(&inner), Some(nearer));
    assert_eq!(
        found_above(&top.path().join("mystore")),
        Some(top.path().join(DEFAULT_FILE)),
        "a folder's own file is not one above it"
    );
    std::fs::create_dir(inner.join(DEFAULT_FILE)).unwrap();
    assert_eq!(
        found_above(&inner.join(DEFAULT_FILE).join("x")),
        Some(top.path().join("mystore").join(DEFAULT_FILE)),
        "a folder of that name is not a progress file"
    );
}

#[test]
fn the_progress_location_prefers_the_flag() {
    let given = std::path::Path::new("given.json");
    assert_eq!(location(Some(given)), given);
    if std::env::var_os(FILE_VARIABLE).is_none() {
        assert_eq!(location(None), Path::new(DEFAULT_FILE));
    }
    let stamp = now_stamp();
    assert!(
        stamp.len() == 20 && stamp.ends_with('Z') && stamp.starts_with("20"),
        "{stamp}"
    );
}

/// A check of `statuses.len()` steps, step 1 first, each with its status.
fn checked(statuses: &[StepStatus]) -> Progress {
    let mut progress = Progress::default();
    for (step, status) in (1..).zip(statuses) {
        progress.checks.insert(
            format!("{step}"),
            StepCheck {
                at: String::new(),
                status: *status,
                failing: Vec::new(),
            },
        );
    }
    progress
}

/// The worksheet passes only when every one of its steps was checked
/// and passed: not before any check, not with a step left unchecked,
/// not with a step failing.
#[test]
fn the_worksheet_passes_only_when_every_step_was_checked_and_passed() {
    let steps = crate::operation::NAMES.len();
    let passed = vec![StepStatus::Passed; steps];
    assert!(checked(&passed).all_steps_pass());
    assert!(!Progress::default().all_steps_pass());
    assert!(!checked(&passed[1..]).all_steps_pass());
    for other in [StepStatus::Failing, StepStatus::NotImplemented] {
        let mut statuses = passed.clone();
        statuses[steps - 1] = other;
        assert!(!checked(&statuses).all_steps_pass(), "{other:?}");
    }
}

/// One check of `status` per step, 1 to `steps`, at `at`.
fn steps_checked(steps: u8, status: StepStatus, at: &str) -> BTreeMap<String, StepCheck> {
    (1..=steps)
        .map(|step| {
            let check = StepCheck {
                at: at.into(),
                status,
                failing: Vec::new(),
            };
            (step.to_string(), check)
        })
        .collect()
}

/// Making another implementation current keeps the one it replaces,
/// first among the others, with its checks; making that one current
/// again brings its checks back, and the same one again changes
/// nothing.
#[test]
fn each_implementation_keeps_its_checks_apart_and_one_is_current() {
    let python = Implementation::Python {
        file: "/work/py/store.py".into(),
    };
    let rust = Implementation::Rust {
        project: "/work/rs".into(),
    };
    let command = Implementation::Command {
        line: "./mine".into(),
    };
    let mut progress = Progress::default();
    assert_eq!(progress.make_current(&python), Became::Current);
    progress.checks = steps_checked(3, StepStatus::Passed, "python's");
    let python_checks = progress.checks.clone();
    assert_eq!(
        progress.make_current(&rust),
        Became::CurrentInstead {
            previous: python.clone()
        }
    );
    assert_eq!(progress.implementation.as_ref(), Some(&rust));
    assert!(progress.checks.is_empty(), "a new one has no check yet");
    assert_eq!(
        progress.other_implementations,
        [OwnRecord {
            implementation: python.clone(),
            checks: python_checks.clone()
        }]
    );
    progress.checks = steps_checked(8, StepStatus::NotImplemented, "rust's");
    let rust_checks = progress.checks.clone();
    progress.make_current(&command);
    let others: Vec<&Implementation> = progress
        .other_implementations
        .iter()
        .map(|other| &other.implementation)
        .collect();
    assert_eq!(others, [&rust, &python], "the one current last first");
    assert_eq!(progress.make_current(&command), Became::AlreadyCurrent);
    assert_eq!(
        progress.make_current(&python),
        Became::CurrentInstead {
            previous: command.clone()
        }
    );
    assert_eq!(progress.checks, python_checks, "its own checks back");
    assert_eq!(progress.other_implementations.len(), 2, "none twice");
    progress.make_current(&rust);
    assert_eq!(progress.checks, rust_checks);
    let text = serde_json::to_string(&progress).unwrap();
    assert_eq!(parse(text.as_bytes()).unwrap(), progress);
}

/// A file written when the progress held one implementation (one
/// `implementation` and its `checks`) loads with it as the current
/// one, its checks its own, and no other.
#[test]
fn a_file_with_one_implementation_loads_it_as_the_current_one() {
    let old = br#"{
  "version": 1,
  "exercises": {},
  "reflection": null,
  "implementation": {
"kind": "python",
"file": "/home/ada/lab/mine/store.py"
  },
  "checks": {
"1": {
  "at": "2026-11-30T09:12:44Z",
  "status": "passed",
  "failing": []
},
"2": {
  "at": "2026-11-30T09:12:44Z",
  "status": "failing",
  "failing": ["enqueue_of_an_existing_job_answers_false"]
}
  }
}"#;
    let mut progress = parse(old).unwrap();
    let python = Implementation::Python {
        file: "/home/ada/lab/mine/store.py".into(),
    };
    assert_eq!(progress.implementation.as_ref(), Some(&python));
    assert_eq!(progress.checks["2"].status, StepStatus::Failing);
    assert!(progress.other_implementations.is_empty());
    let rust = Implementation::Rust {
        project: "/home/ada/lab/mine-rs".into(),
    };
    progress.make_current(&rust);
    assert_eq!(progress.other_implementations[0].implementation, python);
    assert_eq!(
        progress.other_implementations[0].checks["2"].failing,
        ["enqueue_of_an_existing_job_answers_false"]
    );
}

/// Grading reads another student's file as it is, and refuses one that
/// is not progress, leaving it where it was.
#[test]
fn a_file_to_grade_is_read_as_recorded_and_an_unreadable_one_is_refused_in_place() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("ada.json");
    let mut record = Progress::default();
    record.record_student("Ada", false).unwrap();
    record.exercise("4").hints_seen = 1;
    save(&path, &record).unwrap();
    assert_eq!(read_for_grading(&path).unwrap(), record);
    std::fs::write(&path, b"not json").unwrap();
    let error = read_for_grading(&path).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    assert!(error.to_string().contains("not a progress file"), "{error}");
    assert_eq!(std::fs::read(&path).unwrap(), b"not json");
}

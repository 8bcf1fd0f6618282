//! Probes: the example probes of `labs/probes/` kill their steps' mutants,
//! and the lab tells a good prediction, a wrong reading and a probe that
//! does not distinguish apart, names parse errors by file and line, and
//! survives a store that crashes or hangs.

use lease_lab::error::Result as StoreResult;
use lease_lab::job::{Fence, Job};
use lease_lab::mutant::MutantKind;
use lease_lab::probe::{self, Answer, CheckOptions, ProbeError, Verdict};
use lease_lab::variant::{self, CompiledMutant, JobStore, Variant, REFERENCE};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn probes_folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/probes")
}

/// Every example probe, as (step, file name, path), in file-name order.
fn example_probes() -> Vec<(u8, String, PathBuf)> {
    let mut probes: Vec<(u8, String, PathBuf)> = std::fs::read_dir(probes_folder())
        .expect("labs/probes exists")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "probe"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let step = name[..2]
                .parse()
                .expect("probe files are named NN-slug.probe");
            (step, name, path)
        })
        .collect();
    probes.sort();
    probes
}

fn worksheet_mutants(step: u8) -> Vec<&'static CompiledMutant> {
    variant::MUTANTS
        .iter()
        .filter(|mutant| mutant.step == step && mutant.kind == MutantKind::Worksheet)
        .collect()
}

fn parse(text: &str) -> probe::Probe {
    probe::parse("test.probe", text).unwrap_or_else(|error| panic!("{error}"))
}

#[test]
fn there_is_one_example_probe_per_step_named_after_its_lab() {
    let probes = example_probes();
    let steps: Vec<u8> = probes.iter().map(|(step, _, _)| *step).collect();
    assert_eq!(steps, (1..=8).collect::<Vec<u8>>());
    for (step, name, _) in &probes {
        let lab = variant::lab_text(*step).expect("every step has a lab text");
        assert_eq!(
            name.trim_end_matches(".probe"),
            lab.file_name.trim_end_matches(".md"),
            "the probe of step {step} is named after its lab"
        );
    }
}

#[test]
fn every_example_probe_holds_on_the_reference_and_kills_its_steps_mutants() {
    for (step, name, path) in example_probes() {
        let probe = probe::load(&path).unwrap_or_else(|error| panic!("{error}"));
        let mutants = worksheet_mutants(step);
        assert!(!mutants.is_empty(), "step {step} has a worksheet mutant");
        let check = probe::check(&probe, &mutants, &CheckOptions::default()).unwrap();
        assert!(
            check.kills_all(),
            "{name} must hold on the reference and kill {:?}:\n{}",
            mutants.iter().map(|m| m.id).collect::<Vec<_>>(),
            probe::check_text(&probe, &check)
        );
    }
}

/// The race of step 8 is a matter of timing; the example probe queues its
/// claims behind a held write lock so that it catches the check-then-act
/// mutant every time, not one time in five.
#[test]
fn the_step_8_probe_kills_the_racing_mutant_on_every_run() {
    let probe = probe::load(&probes_folder().join("08-one-winner.probe")).unwrap();
    let racing = Variant::Mutant(variant::mutant("08b").expect("mutant 08b exists")).operations();
    let scratch = lease_lab::runner::default_scratch();
    let runs = 50;
    let survived = (0..runs)
        .filter(|_| {
            let run = probe::run(&probe, racing, &scratch, Duration::from_secs(10)).unwrap();
            run.failure().is_none()
        })
        .count();
    assert_eq!(survived, 0, "08b survived {survived} of {runs} runs");
}

#[test]
fn a_good_prediction_names_the_first_line_that_differs_and_both_answers() {
    let probe = parse(
        "enqueue j1 -> true\n\
         claim j1 A now=100 ttl=10 -> 1\n\
         # the boundary\n\
         claim j1 B now=110 ttl=5 -> 2\n\
         state j1 fence -> 2\n",
    );
    let mutant = variant::mutant("04").unwrap();
    let check = probe::check(&probe, &[mutant], &CheckOptions::default()).unwrap();
    assert_eq!(check.killed(), ["04"]);
    let Verdict::GoodPrediction(difference) = &check.mutants[0].verdict else {
        panic!("a good prediction, not {:?}", check.mutants[0].verdict);
    };
    assert_eq!(difference.line, 4);
    assert_eq!(difference.reference, Answer::Fence(Some(2)));
    assert_eq!(difference.mutant, Answer::Fence(None));
    let text = probe::check_text(&probe, &check);
    assert!(
        text.contains("line 4 `claim j1 B now=110 ttl=5` tells mutant 04 from the reference"),
        "{text}"
    );
    assert!(
        text.contains("reference: 2") && text.contains("mutant 04: none"),
        "{text}"
    );
}

#[test]
fn a_probe_that_fails_on_the_reference_is_a_wrong_reading() {
    let probe = parse(
        "enqueue j1 -> true\n\
         claim j1 A now=0 ttl=10 -> 1\n\
         claim j1 B now=10 ttl=5 -> none   # wrong: the lease is over at now == until\n",
    );
    let check = probe::check(&probe, &worksheet_mutants(4), &CheckOptions::default()).unwrap();
    assert_eq!(
        check.wrong_reading(),
        Some(Verdict::WrongReading {
            line: 3,
            reference: Answer::Fence(Some(2)),
        })
    );
    assert!(check.mutants.is_empty(), "a wrong reading predicts nothing");
    assert!(!check.kills_all());
    let text = probe::check_text(&probe, &check);
    assert!(text.contains("wrong reading"), "{text}");
    assert!(text.contains("line 3 `claim j1 B now=10 ttl=5`"), "{text}");
}

#[test]
fn a_probe_that_holds_on_both_does_not_distinguish_and_points_at_unchecked_answers() {
    let probe = parse(
        "enqueue j1\n\
         claim j1 A now=100 ttl=10\n\
         claim j1 B now=110 ttl=5\n",
    );
    let check = probe::check(&probe, &worksheet_mutants(4), &CheckOptions::default()).unwrap();
    assert!(check.wrong_reading().is_none());
    let Verdict::NotDistinguishing {
        unchecked: Some(difference),
    } = &check.mutants[0].verdict
    else {
        panic!("not distinguishing, not {:?}", check.mutants[0].verdict);
    };
    assert_eq!(
        (difference.line, &difference.reference, &difference.mutant),
        (3, &Answer::Fence(Some(2)), &Answer::Fence(None))
    );
    let unrelated = parse("enqueue j1 -> true\nstate j1 fence -> 0\n");
    let check = probe::check(&unrelated, &worksheet_mutants(4), &CheckOptions::default()).unwrap();
    assert_eq!(
        check.mutants[0].verdict,
        Verdict::NotDistinguishing { unchecked: None }
    );
}

#[test]
fn parse_errors_name_the_file_the_line_and_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.probe");
    std::fs::write(
        &path,
        "# my prediction\nenqueue j1 -> true\nclaim j1 A now=0 -> 1\n",
    )
    .unwrap();
    let error = probe::load(&path).unwrap_err();
    assert_eq!(
        error,
        ProbeError::Syntax {
            file: path.display().to_string(),
            line: 3,
            expected: "`ttl=`".into(),
            found: "the end of the line".into(),
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "{}:3: expected `ttl=`, but found the end of the line",
            path.display()
        )
    );
    let missing = probe::load(&dir.path().join("absent.probe")).unwrap_err();
    assert!(
        matches!(&missing, ProbeError::Unreadable { file, .. } if file.ends_with("absent.probe")),
        "{missing:?}"
    );
}

#[test]
fn a_mutant_that_breaks_init_db_is_caught_before_line_1() {
    let probe = parse("init -> ok\n");
    let check = probe::check(&probe, &worksheet_mutants(1), &CheckOptions::default()).unwrap();
    let Verdict::GoodPrediction(difference) = &check.mutants[0].verdict else {
        panic!("a good prediction");
    };
    assert_eq!(
        difference.line, 1,
        "the implicit init_db passes; the second fails"
    );
    assert!(
        matches!(&difference.mutant, Answer::Error { message, .. } if message.contains("already exists")),
        "{:?}",
        difference.mutant
    );
}

/// The reference, except that `claim` panics or sleeps.
struct Misbehaving {
    sleep: Option<Duration>,
}

static PANICKING: Misbehaving = Misbehaving { sleep: None };
static HANGING: Misbehaving = Misbehaving {
    sleep: Some(Duration::from_secs(3)),
};

impl JobStore for Misbehaving {
    fn init_db(&self, path: &Path) -> StoreResult<()> {
        REFERENCE.init_db(path)
    }
    fn enqueue(&self, path: &Path, job_id: &str) -> StoreResult<bool> {
        REFERENCE.enqueue(path, job_id)
    }
    fn state(&self, path: &Path, job_id: &str) -> StoreResult<Option<Job>> {
        REFERENCE.state(path, job_id)
    }
    fn claim(&self, _: &Path, _: &str, _: &str, _: f64, _: f64) -> StoreResult<Option<Fence>> {
        match self.sleep {
            None => panic!("claim fell over"),
            Some(pause) => {
                std::thread::sleep(pause);
                Ok(None)
            }
        }
    }
    fn renew(&self, p: &Path, j: &str, o: &str, f: Fence, n: f64, t: f64) -> StoreResult<bool> {
        REFERENCE.renew(p, j, o, f, n, t)
    }
    fn complete(&self, p: &Path, j: &str, o: &str, f: Fence, n: f64, r: &str) -> StoreResult<bool> {
        REFERENCE.complete(p, j, o, f, n, r)
    }
    fn release(&self, path: &Path, job_id: &str, owner: &str, fence: Fence) -> StoreResult<bool> {
        REFERENCE.release(path, job_id, owner, fence)
    }
    fn claim_many(
        &self,
        path: &Path,
        job_id: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> StoreResult<Vec<Option<Fence>>> {
        REFERENCE.claim_many(path, job_id, owners, now, ttl)
    }
    fn set_thread_busy_timeout(&self, timeout: Option<Duration>) {
        REFERENCE.set_thread_busy_timeout(timeout)
    }
}

#[test]
fn a_store_that_panics_is_reported_as_a_crash_and_killed() {
    let probe = parse("enqueue j1 -> true\nclaim j1 A now=0 ttl=10 -> 1\nstate j1 fence -> 1\n");
    let scratch = lease_lab::runner::default_scratch();
    let timeout = Duration::from_secs(10);
    let reference = probe::run(&probe, &REFERENCE, &scratch, timeout).unwrap();
    let crashed = probe::run(&probe, &PANICKING, &scratch, timeout).unwrap();
    assert_eq!(crashed.lines.len(), 3, "the run stops at the crash");
    assert_eq!(
        crashed.lines[2].answer,
        Answer::Crash {
            message: "claim fell over".into()
        }
    );
    assert!(probe::judge(&reference, &crashed).kills());
}

#[test]
fn a_store_that_hangs_is_reported_as_a_timeout() {
    let probe = parse("enqueue j1 -> true\nclaim j1 A now=0 ttl=10 -> 1\n");
    let scratch = lease_lab::runner::default_scratch();
    let run = probe::run(&probe, &HANGING, &scratch, Duration::from_millis(200)).unwrap();
    let failure = run.failure().expect("the hanging line fails");
    assert_eq!(failure.line, 2);
    assert_eq!(failure.answer, Answer::Timeout { limit_ms: 200 });
}

#[test]
fn a_check_reads_as_json_with_its_verdicts() {
    let probe = probe::load(&probes_folder().join("07-release-current.probe")).unwrap();
    let check = probe::check(&probe, &worksheet_mutants(7), &CheckOptions::default()).unwrap();
    let json = serde_json::to_value(&check).unwrap();
    assert_eq!(json["mutants"][0]["id"], "07");
    assert_eq!(json["mutants"][0]["verdict"]["verdict"], "good-prediction");
    assert_eq!(json["mutants"][0]["verdict"]["line"], 6);
}

/// A probe that races runs up to `attempts` times on a variant it does not
/// fail on; a deterministic probe runs once whatever the setting.
#[test]
fn only_a_racing_probe_is_retried() {
    let options = CheckOptions {
        attempts: 3,
        ..CheckOptions::default()
    };
    let racing = parse("enqueue j1 -> true\nclaim-many j1 A B now=100 ttl=10 -> one-winner\n");
    let steady = parse("enqueue j1 -> true\nclaim j1 A now=100 ttl=10 -> 1\n");
    let unaffected = variant::mutant("07").unwrap();
    let check = probe::check(&racing, &[unaffected], &options).unwrap();
    assert_eq!(check.mutants[0].attempts, 3);
    let check = probe::check(&steady, &[unaffected], &options).unwrap();
    assert_eq!(check.mutants[0].attempts, 1);
    let first_owner_only = variant::mutant("08").unwrap();
    let check = probe::check(&racing, &[first_owner_only], &options).unwrap();
    assert_eq!(check.mutants[0].attempts, 1, "a kill ends the attempts");
    assert!(check.kills_all());
}

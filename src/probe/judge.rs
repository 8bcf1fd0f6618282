//! Judging a probe: its runs on the reference and on mutants, and what
//! they say about the prediction it writes down.

use super::line::Probe;
use super::reply::Reply;
use super::run::{run, LineRun, ProbeRun};
use crate::runner::{default_scratch, DEFAULT_TIMEOUT};
use crate::variant::Variant;
use colored::Colorize;
use serde::Serialize;
use std::fmt::Write as _;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// One line on which the reference and a mutant answered differently.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The line's number (0 for the implicit `init_db`).
    pub line: usize,
    /// The reference's reply.
    pub reference: Reply,
    /// The mutant's reply.
    pub mutant: Reply,
}

/// What a probe's runs on the reference and on a mutant say about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// Every line holds on the reference and one fails on the mutant: the
    /// prediction is right and kills the mutant. `line` is the first line
    /// that failed on the mutant.
    GoodPrediction(Difference),
    /// A line fails on the reference: the probe reads the contract wrongly.
    WrongReading {
        /// The first line that failed on the reference.
        line: usize,
        /// What the reference replied there.
        reference: Reply,
    },
    /// Every line holds on both: the probe does not tell them apart.
    /// `unchecked` is the first line whose answers differed although its
    /// expectation accepted both, if any: a hint at a sharper expectation.
    NotDistinguishing {
        /// The first difference the expectations let through.
        unchecked: Option<Difference>,
    },
}

impl Verdict {
    /// `good prediction`, `wrong reading` or `not distinguishing`.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::GoodPrediction(_) => "good prediction",
            Verdict::WrongReading { .. } => "wrong reading",
            Verdict::NotDistinguishing { .. } => "not distinguishing",
        }
    }

    /// Whether the probe kills the mutant.
    pub fn kills(&self) -> bool {
        matches!(self, Verdict::GoodPrediction(_))
    }

    /// What the verdict means, in sentences that quote the probe's lines,
    /// with the expected and actual answers below.
    pub fn explain(&self, probe: &Probe, mutant_id: &str) -> String {
        let quote = |number: usize| {
            probe.line(number).map_or_else(
                || format!("line {number}"),
                |line| format!("{} `{}`", line.place(), line.call),
            )
        };
        let answers = |number: usize, reference: &Reply, mutant: Option<&Reply>| {
            let Some(line) = probe.line(number) else {
                return String::new();
            };
            let mut rows = vec![
                ("expected:".to_string(), line.expectation.to_string()),
                ("reference:".to_string(), line.show(reference)),
            ];
            if let Some(mutant) = mutant {
                rows.push((format!("mutant {mutant_id}:"), line.show(mutant)));
            }
            let width = rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
            rows.iter()
                .map(|(label, value)| format!("\n  {label:<width$} {value}"))
                .collect()
        };
        match self {
            Verdict::GoodPrediction(difference) => format!(
                "{} tells mutant {mutant_id} from the reference:{}",
                quote(difference.line),
                answers(difference.line, &difference.reference, Some(&difference.mutant)),
            ),
            Verdict::WrongReading { line, reference } => format!(
                "{} fails on the reference implementation, which is the contract: the probe reads the contract wrongly.{}",
                quote(*line),
                answers(*line, reference, None),
            ),
            Verdict::NotDistinguishing { unchecked: None } => format!(
                "every line holds on mutant {mutant_id} as on the reference: the probe does not tell them apart."
            ),
            Verdict::NotDistinguishing {
                unchecked: Some(difference),
            } => format!(
                "every line holds on mutant {mutant_id} as on the reference, but {} answered differently and its expectation accepts both:{}\n  Expect the reference's answer there, and the probe kills the mutant.",
                quote(difference.line),
                answers(difference.line, &difference.reference, Some(&difference.mutant)),
            ),
        }
    }
}

/// Judges a probe by its run on the reference and its run on a mutant.
pub fn judge(reference: &ProbeRun, mutant: &ProbeRun) -> Verdict {
    if let Some(failed) = reference.failure() {
        return Verdict::WrongReading {
            line: failed.line,
            reference: failed.answer.clone(),
        };
    }
    let difference = |line: &LineRun| Difference {
        line: line.line,
        reference: reference
            .answer(line.line)
            .cloned()
            .expect("a passing run answers every line"),
        mutant: line.answer.clone(),
    };
    if let Some(failed) = mutant.failure() {
        return Verdict::GoodPrediction(difference(failed));
    }
    let unchecked = mutant
        .lines
        .iter()
        .find(|line| {
            reference
                .answer(line.line)
                .is_some_and(|answer| !answer.agrees_with(&line.answer))
        })
        .map(difference);
    Verdict::NotDistinguishing { unchecked }
}

/// How [`check`] runs a probe.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Where the probes' temporary databases go.
    pub scratch: PathBuf,
    /// The longest one run of the probe may take.
    pub timeout: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            scratch: default_scratch(),
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// One mutant's part of a [`ProbeCheck`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MutantCheck {
    /// The mutant's id.
    pub id: String,
    /// The probe's run on the mutant.
    pub run: ProbeRun,
    /// The verdict.
    pub verdict: Verdict,
}

/// A probe checked against the reference and some mutants.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeCheck {
    /// The probe's file name.
    pub probe: String,
    /// The reference's run: the first failing one, or the last.
    pub reference: ProbeRun,
    /// The verdict on every mutant, in the order given; empty when the
    /// probe fails on the reference, since then it predicts nothing.
    pub mutants: Vec<MutantCheck>,
}

impl ProbeCheck {
    /// The line that failed on the reference, if the probe reads the contract wrongly.
    pub fn wrong_reading(&self) -> Option<Verdict> {
        self.reference
            .failure()
            .map(|failed| Verdict::WrongReading {
                line: failed.line,
                reference: failed.answer.clone(),
            })
    }

    /// The ids of the mutants the probe kills.
    pub fn killed(&self) -> Vec<&str> {
        self.mutants
            .iter()
            .filter(|mutant| mutant.verdict.kills())
            .map(|mutant| mutant.id.as_str())
            .collect()
    }

    /// Whether the probe holds on the reference and kills every mutant checked.
    pub fn kills_all(&self) -> bool {
        self.wrong_reading().is_none() && self.mutants.iter().all(|m| m.verdict.kills())
    }
}

/// Runs `probe` against `reference` and then against each of `mutants`,
/// and judges it on each.
///
/// When the probe fails on the reference, the mutants are not run: a wrong
/// reading of the contract predicts nothing about them.
///
/// Errors: only when a temporary folder or thread cannot be made.
pub fn check(
    probe: &Probe,
    reference: &Variant,
    mutants: &[Variant],
    options: &CheckOptions,
) -> io::Result<ProbeCheck> {
    let run_on = |variant: &Variant| {
        run(
            probe,
            variant.open(options.timeout),
            &options.scratch,
            options.timeout,
        )
    };
    let reference = run_on(reference)?;
    let mut checks = Vec::new();
    if reference.failure().is_none() {
        for mutant in mutants {
            let run = run_on(mutant)?;
            checks.push(MutantCheck {
                id: mutant.id.clone(),
                verdict: judge(&reference, &run),
                run,
            });
        }
    }
    Ok(ProbeCheck {
        probe: probe.file_name.clone(),
        reference,
        mutants: checks,
    })
}

/// The check as text for the terminal: the reference's verdict, then one
/// paragraph per mutant, filled to `width`; coloured when colour is on.
pub fn check_text(probe: &Probe, check: &ProbeCheck, width: usize) -> String {
    crate::terminal::fill_lines(&check_paragraphs(probe, check), width)
}

/// The paragraphs of [`check_text`], unfilled.
fn check_paragraphs(probe: &Probe, check: &ProbeCheck) -> String {
    let mut out = String::new();
    writeln!(out, "{}", format!("probe {}", probe.file_name).bold()).unwrap();
    if let Some(verdict) = check.wrong_reading() {
        writeln!(
            out,
            "{} {}",
            "wrong reading:".red().bold(),
            verdict.explain(probe, "")
        )
        .unwrap();
        return out;
    }
    let lines = match probe.lines.len() - 1 {
        1 => "the one line holds".to_string(),
        count => format!("all {count} lines hold"),
    };
    writeln!(out, "{} {lines}", "reference:".green().bold()).unwrap();
    for mutant in &check.mutants {
        let label = if mutant.verdict.kills() {
            format!("mutant {} killed:", mutant.id).green().bold()
        } else {
            format!("mutant {} survives:", mutant.id).yellow().bold()
        };
        writeln!(out, "{label} {}", mutant.verdict.explain(probe, &mutant.id)).unwrap();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result as StoreResult;
    use crate::job::Fence;
    use crate::job_store::JobStore;
    use crate::mutant::MutantKind;
    use crate::operation::{Answer, Operation};
    use crate::probe::ProbeError;
    use crate::variant::{MUTANTS, REFERENCE};
    use std::path::Path;
    use std::sync::Arc;

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

    fn worksheet_mutants(step: u8) -> Vec<Variant> {
        MUTANTS
            .iter()
            .filter(|mutant| mutant.step == step && mutant.kind == MutantKind::Worksheet)
            .map(Variant::compiled)
            .collect()
    }

    fn mutant(id: &str) -> Variant {
        Variant::find(id).expect("a compiled mutant")
    }

    fn check_against(probe: &Probe, mutants: &[Variant], options: &CheckOptions) -> ProbeCheck {
        check(probe, &Variant::reference(), mutants, options).unwrap()
    }

    fn parse(text: &str) -> Probe {
        crate::probe::parse("test.probe", text).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn there_is_one_example_probe_per_step_named_after_its_lab() {
        let probes = example_probes();
        let steps: Vec<u8> = probes.iter().map(|(step, _, _)| *step).collect();
        assert_eq!(steps, (1..=8).collect::<Vec<u8>>());
        for (step, name, _) in &probes {
            let lab = crate::exercise::lab_text(*step).expect("every step has a lab text");
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
            let probe = crate::probe::load(&path).unwrap_or_else(|error| panic!("{error}"));
            let mutants = worksheet_mutants(step);
            assert!(!mutants.is_empty(), "step {step} has a worksheet mutant");
            let check = check_against(&probe, &mutants, &CheckOptions::default());
            assert!(
                check.kills_all(),
                "{name} must hold on the reference and kill {:?}:\n{}",
                mutants.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
                check_text(&probe, &check, 200)
            );
        }
    }

    /// The race of step 8 is a matter of timing; the example probe queues its
    /// claims behind a held write lock so that it catches the check-then-act
    /// mutant every time, not one time in five.
    #[test]
    fn the_step_8_probe_kills_the_racing_mutant_on_every_run() {
        let probe = crate::probe::load(&probes_folder().join("08-one-winner.probe")).unwrap();
        let racing = mutant("08b");
        let scratch = default_scratch();
        let runs = 50;
        let survived = (0..runs)
            .filter(|_| {
                let run = run(
                    &probe,
                    racing.open(Duration::from_secs(10)),
                    &scratch,
                    Duration::from_secs(10),
                )
                .unwrap();
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
        let check = check_against(&probe, &[mutant("04")], &CheckOptions::default());
        assert_eq!(check.killed(), ["04"]);
        let Verdict::GoodPrediction(difference) = &check.mutants[0].verdict else {
            panic!("a good prediction, not {:?}", check.mutants[0].verdict);
        };
        assert_eq!(difference.line, 4);
        assert_eq!(
            difference.reference,
            Reply::Answer(Answer::Fence(Some(Fence(2))))
        );
        assert_eq!(difference.mutant, Reply::Answer(Answer::Fence(None)));
        let text = check_text(&probe, &check, 200);
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
        let check = check_against(&probe, &worksheet_mutants(4), &CheckOptions::default());
        assert_eq!(
            check.wrong_reading(),
            Some(Verdict::WrongReading {
                line: 3,
                reference: Reply::Answer(Answer::Fence(Some(Fence(2)))),
            })
        );
        assert!(check.mutants.is_empty(), "a wrong reading predicts nothing");
        assert!(!check.kills_all());
        let text = check_text(&probe, &check, 200);
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
        let check = check_against(&probe, &worksheet_mutants(4), &CheckOptions::default());
        assert!(check.wrong_reading().is_none());
        let Verdict::NotDistinguishing {
            unchecked: Some(difference),
        } = &check.mutants[0].verdict
        else {
            panic!("not distinguishing, not {:?}", check.mutants[0].verdict);
        };
        assert_eq!(
            (difference.line, &difference.reference, &difference.mutant),
            (
                3,
                &Reply::Answer(Answer::Fence(Some(Fence(2)))),
                &Reply::Answer(Answer::Fence(None))
            )
        );
        let unrelated = parse("enqueue j1 -> true\nstate j1 fence -> 0\n");
        let check = check_against(&unrelated, &worksheet_mutants(4), &CheckOptions::default());
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
        let error = crate::probe::load(&path).unwrap_err();
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
        let missing = crate::probe::load(&dir.path().join("absent.probe")).unwrap_err();
        assert!(
            matches!(&missing, ProbeError::Unreadable { file, .. } if file.ends_with("absent.probe")),
            "{missing:?}"
        );
    }

    #[test]
    fn a_mutant_that_breaks_init_db_is_caught_before_line_1() {
        let probe = parse("init -> ok\n");
        let check = check_against(&probe, &worksheet_mutants(1), &CheckOptions::default());
        let Verdict::GoodPrediction(difference) = &check.mutants[0].verdict else {
            panic!("a good prediction");
        };
        assert_eq!(
            difference.line, 1,
            "the implicit init_db passes; the second fails"
        );
        assert!(
            matches!(&difference.mutant, Reply::Error { message, .. } if message.contains("already exists")),
            "{:?}",
            difference.mutant
        );
    }

    /// The reference, except that `claim` panics or sleeps.
    struct Misbehaving {
        sleep: Option<Duration>,
    }

    impl JobStore for Misbehaving {
        fn call(&self, db: &Path, operation: &Operation) -> StoreResult<Answer> {
            match (operation, self.sleep) {
                (Operation::Claim { .. }, None) => panic!("claim fell over"),
                (Operation::Claim { .. }, Some(pause)) => {
                    std::thread::sleep(pause);
                    Ok(Answer::Fence(None))
                }
                _ => REFERENCE.call(db, operation),
            }
        }
    }

    #[test]
    fn a_store_that_panics_is_reported_as_a_crash_and_killed() {
        let probe =
            parse("enqueue j1 -> true\nclaim j1 A now=0 ttl=10 -> 1\nstate j1 fence -> 1\n");
        let scratch = default_scratch();
        let timeout = Duration::from_secs(10);
        let reference = run(
            &probe,
            Variant::reference().open(timeout),
            &scratch,
            timeout,
        )
        .unwrap();
        let crashed = run(
            &probe,
            Arc::new(Misbehaving { sleep: None }),
            &scratch,
            timeout,
        )
        .unwrap();
        assert_eq!(crashed.lines.len(), 3, "the run stops at the crash");
        assert_eq!(
            crashed.lines[2].answer,
            Reply::Crash {
                message: "claim fell over".into()
            }
        );
        assert!(judge(&reference, &crashed).kills());
    }

    #[test]
    fn a_store_that_hangs_is_reported_as_a_timeout() {
        let probe = parse("enqueue j1 -> true\nclaim j1 A now=0 ttl=10 -> 1\n");
        let scratch = default_scratch();
        let hanging = Arc::new(Misbehaving {
            sleep: Some(Duration::from_secs(3)),
        });
        let run = run(&probe, hanging, &scratch, Duration::from_millis(200)).unwrap();
        let failure = run.failure().expect("the hanging line fails");
        assert_eq!(failure.line, 2);
        assert_eq!(failure.answer, Reply::Timeout { limit_ms: 200 });
    }

    #[test]
    fn a_check_reads_as_json_with_its_verdicts() {
        let probe = crate::probe::load(&probes_folder().join("07-release-current.probe")).unwrap();
        let check = check_against(&probe, &worksheet_mutants(7), &CheckOptions::default());
        let json = serde_json::to_value(&check).unwrap();
        assert_eq!(json["mutants"][0]["id"], "07");
        assert_eq!(json["mutants"][0]["verdict"]["verdict"], "good-prediction");
        assert_eq!(json["mutants"][0]["verdict"]["line"], 6);
    }

    /// A probe's race is queued behind a held lock, so its verdict on the
    /// check-then-act mutant is the same on every run, with four racers as
    /// with many.
    #[test]
    fn a_racing_probe_gives_the_same_verdict_every_time() {
        let racing =
            parse("enqueue j1 -> true\nclaim-many j1 A B C D now=100 ttl=10 -> one-winner\n");
        for _ in 0..10 {
            let check = check_against(
                &racing,
                &[mutant("08b"), mutant("07")],
                &CheckOptions::default(),
            );
            assert_eq!(check.killed(), ["08b"]);
        }
    }
}

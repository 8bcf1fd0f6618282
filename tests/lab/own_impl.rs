//! A student's own implementation, as the real `lab` binary treats it.
//!
//! - A program that misbehaves (crashes, exits, hangs, writes a line that is
//!   not JSON, an answer of the wrong shape or type, stray output, a wrong
//!   greeting) gets a clear verdict: `lab check` ends, exits 1, quotes the
//!   offending line and the program's last line of standard error, and says
//!   what happened.
//! - The Python starter of `lab new` reports every step as not written; the
//!   same starter with each stub filled in from the lab's own `src/store.py`
//!   passes every step; a deliberate break of it is scored against a
//!   prediction (`lab check --predict`) and recorded.
//! - `lab watch` checks again when the file is saved, and only then.
//! - The Rust starter goes the same way (ignored by default: it builds
//!   rusqlite with cargo).
//! - A student's own mutant runs without rebuilding `lab`: one of the Python
//!   store at once, one of the Rust store as a worker built into the cache,
//!   even by a copy of `lab` installed outside the crate (ignored by
//!   default: it builds with cargo).
//!
//! Every command runs in a temporary folder of its own, with its own
//! progress file, under a watchdog: a command that does not end within a
//! generous bound is killed and the test fails, saying so.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// The longest a command that runs `cargo build` may take: a cold build of
/// rusqlite on a small machine takes minutes.
pub(crate) const BUILD_BOUND: Duration = Duration::from_secs(20 * 60);

/// The functions the Python starter leaves to the student, and their stubs.
use lease_lab::course::starter::{python_stub, PYTHON_STUBS};

use crate::common::{run_bounded, Ran, Sandbox, NO_HANG};

/// The progress file `lab` keeps in a sandbox. (A trait of this module's
/// own: the other modules of this binary give `Sandbox` methods of theirs.)
pub(crate) trait Watched {
    /// The progress file `lab` keeps in the sandbox, as JSON.
    fn progress(&self) -> Value;
}

impl Watched for Sandbox {
    fn progress(&self) -> Value {
        let path = self.path("lease-lab-progress.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }
}

/// `text` quoted for a POSIX shell (and for `lab`'s reading of a command
/// line, which splits it as a shell would).
pub(crate) fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

// ---------------------------------------------------------------------------
// Implementations that break the protocol
// ---------------------------------------------------------------------------

/// The protocol's greeting, as a shell command.
const GREETING: &str = r#"echo '{"protocol":"lease-lab","version":1,"name":"bad store"}'"#;

/// Reads requests and never answers them: what a script does after it
/// misbehaved, so that it is still running when the lab judges it.
const KEEP_READING: &str = "while read line; do :; done";

/// Each script writes this to standard error just before it misbehaves:
/// the verdict must quote it.
const LAST_WORDS: &str = "my last words";

/// One broken implementation: the shell script it runs, and the words the
/// verdict must hold beside the last words of its standard error.
struct Broken {
    script: String,
    says: &'static [&'static str],
}

/// Runs `lab check --step 1` against `sh -c SCRIPT` with a one-second time
/// limit per test, and asserts the verdict: the command ends within
/// [`NO_HANG`], exits 1, says each of `says`, and quotes the script's last
/// line of standard error.
fn assert_clear_verdict(broken: Broken) -> Ran {
    let sandbox = Sandbox::new();
    let implementation = format!("sh -c {}", shell_quote(&broken.script));
    let ran = sandbox.lab(&[
        "check",
        "--impl",
        &implementation,
        "--step",
        "1",
        "--timeout-ms",
        "1000",
    ]);
    ran.assert_code(1);
    ran.assert_says(broken.says);
    // The command line quotes the script (and its `echo 'my last words'`),
    // so only the verdict's own quoting counts here: the line of standard
    // error on a line of its own.
    let text = format!("{}\n{}", ran.stdout, ran.stderr);
    let tail_quoted = text.lines().any(|line| line.trim() == LAST_WORDS);
    assert!(
        tail_quoted,
        "the verdict does not quote the last line of standard error ({LAST_WORDS:?}):\n{}",
        ran.shown()
    );
    ran
}

/// A script that greets, reads one request, writes its last words on
/// standard error and then does `misbehave`.
fn after_one_request(misbehave: &str) -> String {
    format!("{GREETING}; read line; echo '{LAST_WORDS}' >&2; {misbehave}")
}

#[test]
fn a_crash_is_a_verdict_that_names_the_signal() {
    assert_clear_verdict(Broken {
        script: after_one_request("kill -SEGV $$"),
        says: &[
            "step 1 crashes",
            "in init_db: ",
            "killed by signal 11 in the middle of the run",
        ],
    });
}

#[test]
fn an_exit_in_the_middle_of_a_run_is_a_verdict_that_gives_the_exit_code() {
    assert_clear_verdict(Broken {
        script: after_one_request("exit 3"),
        says: &[
            "step 1 crashes",
            "in init_db: ",
            "exited with code 3 in the middle of the run",
        ],
    });
}

/// The per-call limit is a little under `--timeout-ms`, so the verdict
/// names a limit without saying which; the step hangs, on the operation
/// left unanswered.
#[test]
fn a_hang_is_a_timeout_and_the_check_still_ends() {
    assert_clear_verdict(Broken {
        script: after_one_request(KEEP_READING),
        says: &["step 1 hangs", "init_db gave no answer within"],
    });
}

/// A program that hangs at every call costs the time limit once, not once
/// per test: after the first test that ran out of time the check runs no
/// more, and the steps after it say why (step 1 hangs, so step 2's tests
/// are not run, and step 2 is `not run`, since step 1 hangs).
#[test]
fn a_check_stops_running_tests_after_the_first_timeout_and_says_why() {
    let sandbox = Sandbox::new();
    let implementation = format!("sh -c {}", shell_quote(&after_one_request(KEEP_READING)));
    let ran = sandbox.lab(&[
        "check",
        "--impl",
        &implementation,
        "--step",
        "2",
        "--timeout-ms",
        "1000",
    ]);
    ran.assert_code(1);
    ran.assert_says(&[
        "step 1 hangs",
        "init_db gave no answer within",
        "step 2 not run Register only the first job: step 1 hangs",
    ]);
    let steps = step_lines(&ran.stdout);
    assert_eq!(
        steps.len(),
        2,
        "steps 1 and 2 are reported:\n{}",
        ran.shown()
    );
    assert!(
        !ran.stdout.contains("crashed"),
        "a test not run is no crash:\n{}",
        ran.shown()
    );
}

#[test]
fn a_line_that_is_not_json_is_quoted_as_such() {
    assert_clear_verdict(Broken {
        script: after_one_request(&format!("echo 'not json'; {KEEP_READING}")),
        says: &["broke the protocol: a line that is not JSON: `not json`"],
    });
}

#[test]
fn json_of_the_wrong_shape_is_quoted_with_the_shapes_an_answer_has() {
    assert_clear_verdict(Broken {
        script: after_one_request(&format!(r#"echo '{{"answer":1}}'; {KEEP_READING}"#)),
        says: &[r#"`{"answer":1}` is neither {"ok": VALUE} nor {"error": KIND, "message": TEXT}"#],
    });
}

#[test]
fn an_answer_of_the_wrong_type_is_quoted_with_the_type_expected() {
    assert_clear_verdict(Broken {
        script: after_one_request(&format!(r#"echo '{{"ok":"yes"}}'; {KEEP_READING}"#)),
        says: &[
            r#"answered with a value of the wrong type: `{"ok":"yes"}` (init_db answers expected true)"#,
        ],
    });
}

/// A debugging print on standard output after a right answer. The lab
/// cannot know whether the program wrote it before or after reading the
/// next request, so the verdict quotes the line as one that is not JSON,
/// says when it came, and gives the advice to print on standard error.
#[test]
fn a_debugging_print_after_an_answer_is_quoted_with_the_advice_to_print_on_standard_error() {
    assert_clear_verdict(Broken {
        script: format!(
            r#"{GREETING}; while read line; do echo '{{"ok":true}}'; echo '{LAST_WORDS}' >&2; echo 'debug!'; done"#
        ),
        says: &[
            "a line that is not JSON: `debug!`",
            "print traces on standard error",
        ],
    });
}

/// An answer line with an `id` to a program that did not greet as
/// concurrent: whenever it arrives, it answers no request.
#[test]
fn an_answer_to_no_request_is_stray_output() {
    assert_clear_verdict(Broken {
        script: format!(
            r#"{GREETING}; read line; echo '{{"ok":true}}'; echo '{LAST_WORDS}' >&2; echo '{{"id":999,"ok":true}}'; {KEEP_READING}"#
        ),
        says: &[
            r#"wrote a line that answers no request: `{"id":999,"ok":true}`"#,
            "print traces on standard error, not standard output",
        ],
    });
}

/// `lab check` hears the greeting before it runs any test, so a program
/// that greets wrongly is refused at once, with one message.
#[test]
fn a_wrong_greeting_is_refused_before_any_test_runs() {
    let ran = assert_clear_verdict(Broken {
        script: format!("echo '{LAST_WORDS}' >&2; echo 'hello there'; {KEEP_READING}"),
        says: &[
            "did not greet the lab with the protocol's first line",
            "it wrote `hello there`; is it the right program?",
        ],
    });
    assert!(
        step_lines(&ran.stdout).is_empty(),
        "no test ran, so no step is reported:\n{}",
        ran.shown()
    );
}

/// `lab probe --impl` runs the probe on the program as its reference: what
/// the program did wrong is the answer shown, in the program's limit.
#[test]
fn a_probe_on_a_broken_program_shows_what_the_program_did() {
    let sandbox = Sandbox::new();
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("labs/probes/01-create-table.probe");
    let probe = probe.to_str().expect("a UTF-8 path");
    let probe_on = |script: String, timeout_ms: &str| {
        let implementation = format!("sh -c {}", shell_quote(&script));
        let ran = sandbox.lab(&[
            "probe",
            probe,
            "--impl",
            &implementation,
            "--timeout-ms",
            timeout_ms,
        ]);
        ran.assert_code(1);
        ran
    };
    probe_on(format!("echo 'hello there'; {KEEP_READING}"), "5000").assert_says(&[
        "did not greet the lab with the protocol's first line",
        "it wrote `hello there`",
    ]);
    probe_on(format!("{GREETING}; {KEEP_READING}"), "400")
        .assert_says(&["no answer within 400 ms"]);
}

// ---------------------------------------------------------------------------
// The Python starter
// ---------------------------------------------------------------------------

/// The lab's own Python store, a correct implementation.
fn reference_python() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store.py");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The body of the top-level function `name` in Python `source`: the lines
/// after its docstring up to the next line at the file's top level,
/// without the blank lines that end it.
fn python_body(source: &str, name: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let def = lines
        .iter()
        .position(|line| line.starts_with(&format!("def {name}(")))
        .unwrap_or_else(|| panic!("no `def {name}(` in the source"));
    let opening = lines[def + 1].trim();
    assert!(
        opening.starts_with(r#"""""#),
        "{name} has no docstring: {opening}"
    );
    let mut last = def + 1;
    if !(opening.len() > 3 && opening.ends_with(r#"""""#)) {
        last += 1;
        while !lines[last].trim_end().ends_with(r#"""""#) {
            last += 1;
        }
    }
    let start = last + 1;
    let end = (start..lines.len())
        .find(|&at| !lines[at].is_empty() && !lines[at].starts_with(char::is_whitespace))
        .unwrap_or(lines.len());
    let mut body = lines[start..end].to_vec();
    while body.last().is_some_and(|line| line.trim().is_empty()) {
        body.pop();
    }
    assert!(!body.is_empty(), "{name} has an empty body");
    body.join("\n")
}

/// The starter `starter` with the stubs of the functions `names` replaced
/// by the bodies of the same functions in the lab's own Python store.
pub(crate) fn fill_in<'a>(starter: &str, names: impl IntoIterator<Item = &'a str>) -> String {
    let reference = reference_python();
    let mut text = starter.to_string();
    for name in names {
        let (_, step) = PYTHON_STUBS
            .into_iter()
            .find(|(stub, _)| *stub == name)
            .unwrap_or_else(|| panic!("{name} is not one of the starter's stubs"));
        let stub = python_stub(name, step);
        assert_eq!(
            text.matches(&stub).count(),
            1,
            "the starter has one stub for {name}: {stub}"
        );
        text = text.replacen(&stub, &python_body(&reference, name), 1);
    }
    text
}

/// The names of every stub of the Python starter but `left`.
pub(crate) fn every_stub_but<'a>(left: &'a [&'a str]) -> impl Iterator<Item = &'static str> + 'a {
    PYTHON_STUBS
        .into_iter()
        .map(|(name, _)| name)
        .filter(move |name| !left.contains(name))
}

/// `lab new --lang python mine` in the sandbox; the starter's path.
pub(crate) fn python_starter(sandbox: &Sandbox) -> PathBuf {
    let ran = sandbox.lab(&["new", "--lang", "python", "mine"]);
    ran.assert_code(0);
    let file = sandbox.path("mine").join("store.py");
    assert!(file.is_file(), "{}", ran.shown());
    file
}

/// Writes the starter of `sandbox` with every stub filled in; its path.
pub(crate) fn filled_in_python_starter(sandbox: &Sandbox) -> PathBuf {
    let file = python_starter(sandbox);
    let starter = std::fs::read_to_string(&file).unwrap();
    let filled = fill_in(&starter, every_stub_but(&[]));
    assert!(
        !filled.contains("raise NotImplementedError("),
        "every stub is filled in"
    );
    assert_ne!(
        filled,
        reference_python(),
        "the starter filled in, not a copy"
    );
    std::fs::write(&file, filled).unwrap();
    file
}

/// The lines of a check's output that report steps, trimmed.
fn step_lines(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("step "))
        .map(str::to_string)
        .collect()
}

/// Asserts that the check's output reports each of steps 1 to `through`
/// with `status` (`passed`, `not written`).
fn assert_every_step(ran: &Ran, through: usize, status: &str) {
    let lines = step_lines(&ran.stdout);
    assert_eq!(lines.len(), through, "one line a step:\n{}", ran.shown());
    for (index, line) in lines.iter().enumerate() {
        let expected = format!("step {}  {status}", index + 1);
        assert!(
            line.starts_with(&expected),
            "expected {expected:?}, got {line:?} in:\n{}",
            ran.shown()
        );
    }
}

/// Asserts that the progress file records `status` for steps 1 to 8.
fn assert_recorded_checks(progress: &Value, status: &str) {
    let checks = progress["checks"]
        .as_object()
        .unwrap_or_else(|| panic!("no checks recorded: {progress:#}"));
    let steps: Vec<&str> = checks.keys().map(String::as_str).collect();
    assert_eq!(
        steps,
        ["1", "2", "3", "4", "5", "6", "7", "8"],
        "{progress:#}"
    );
    for (step, check) in checks {
        assert_eq!(check["status"], status, "step {step}: {progress:#}");
    }
}

#[test]
fn the_python_starter_as_generated_reports_every_step_as_not_written() {
    let sandbox = Sandbox::new();
    let file = python_starter(&sandbox);
    let ran = sandbox.lab(&["check"]);
    ran.assert_code(1);
    assert_every_step(&ran, 8, "not written");
    ran.assert_says(&[
        "it answers: step 1: init_db is not written yet",
        "Next: write step 1, init_db",
        &format!(
            "0 of {} of the Rust store's stricter promises hold",
            beyond_the_worksheet()
        ),
    ]);
    let progress = sandbox.progress();
    assert_eq!(progress["implementation"]["kind"], "python", "{progress:#}");
    let recorded = progress["implementation"]["file"].as_str().unwrap_or("");
    assert_eq!(
        std::fs::canonicalize(recorded).ok(),
        std::fs::canonicalize(&file).ok(),
        "{progress:#}"
    );
    assert_recorded_checks(&progress, "not-implemented");
}

#[test]
fn the_python_starter_filled_in_with_a_correct_implementation_passes_lab_check() {
    let sandbox = Sandbox::new();
    filled_in_python_starter(&sandbox);
    let ran = sandbox.lab(&["check"]);
    ran.assert_code(0);
    assert_every_step(&ran, 8, "passed");
    ran.assert_says(&["All eight steps pass."]);
    // The given error mapping carries every kind the suite expects: every
    // promise beyond the worksheet it is asked holds; the one no program
    // can be asked (its current folder is its own) is not asked, nor said.
    let beyond = beyond_the_worksheet();
    ran.assert_says(&[&format!(
        "{beyond} of {beyond} of the Rust store's stricter promises hold"
    )]);
    let all = sandbox.lab(&["check", "--all"]);
    all.assert_code(0);
    assert!(
        !all.shown().contains("\n  fails ")
            && !all
                .shown()
                .contains("init_db_with_a_bare_file_name_uses_the_current_folder"),
        "every promise asked holds, and the one not asked is not listed:\n{}",
        all.shown()
    );
    assert_recorded_checks(&sandbox.progress(), "passed");
    // The tests' databases live in the lab's scratch folders: the student's
    // folder holds what it held, and the progress file.
    let mut left: Vec<String> = std::fs::read_dir(sandbox.dir.path())
        .unwrap()
        .chain(std::fs::read_dir(sandbox.path("mine")).unwrap())
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["lease-lab-progress.json", "mine", "store.py"]);
}

/// How many of the suite's tests a program is asked check promises beyond
/// the worksheet (not those only a store in the lab's process can be asked).
fn beyond_the_worksheet() -> usize {
    lease_lab::suite::for_programs()
        .iter()
        .filter(|case| case.tag == lease_lab::suite::Tag::Reference)
        .count()
}

/// The argument checks are the student's: with every operation written
/// but `check_args` a stub, steps 2 to 8 (their invalid-argument tests
/// among them) are not written, and no invalid argument is refused.
#[test]
fn a_python_starter_without_its_argument_checks_has_steps_2_to_8_not_written() {
    let sandbox = Sandbox::new();
    let file = python_starter(&sandbox);
    let starter = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, fill_in(&starter, every_stub_but(&["check_args"]))).unwrap();
    let ran = sandbox.lab(&["check"]);
    ran.assert_code(1);
    let lines = step_lines(&ran.stdout);
    assert!(lines[0].starts_with("step 1  passed"), "{}", ran.shown());
    assert_eq!(lines.len(), 8, "{}", ran.shown());
    for (index, line) in lines.iter().enumerate().skip(1) {
        let expected = format!("step {}  not written", index + 1);
        assert!(
            line.starts_with(&expected),
            "{expected:?}:\n{}",
            ran.shown()
        );
    }
    ran.assert_says(&[
        "it answers: step 2: check_args is not written yet",
        "Next: write step 2, check_args",
    ]);
    // Test by test: no invalid-argument test of steps 2 to 8 passes, the
    // worksheet's or beyond it (step 1's empty path is connect's, given).
    let run = sandbox.lab(&[
        "run",
        "yours",
        "--impl",
        "mine/store.py",
        "--color",
        "never",
    ]);
    let invalid: Vec<&str> = lease_lab::suite::CASES
        .iter()
        .filter(|case| case.step >= 2 && case.name.contains("_invalid"))
        .map(|case| case.name)
        .collect();
    assert!(invalid.len() >= 10, "{invalid:?}");
    for name in invalid {
        let line = run
            .stdout
            .lines()
            .find(|line| line.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no line for {name}:\n{}", run.shown()));
        assert!(
            !line.trim_start().starts_with("pass"),
            "{line}\n{}",
            run.shown()
        );
    }
}

/// The schema is the student's: with everything written but
/// `check_schema` a stub, which every connection calls, no step is.
#[test]
fn a_python_starter_without_its_schema_check_has_every_step_not_written() {
    let sandbox = Sandbox::new();
    let file = python_starter(&sandbox);
    let starter = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, fill_in(&starter, every_stub_but(&["check_schema"]))).unwrap();
    let ran = sandbox.lab(&["check"]);
    ran.assert_code(1);
    assert_every_step(&ran, 8, "not written");
    ran.assert_says(&[
        "it answers: step 1: check_schema is not written yet",
        "Next: write step 1, check_schema",
    ]);
}

/// The worksheet's last instruction: break your code on purpose, predict
/// which tests fail, and let the lab score it.
#[test]
fn lab_check_predict_scores_a_deliberate_break_and_records_it() {
    let sandbox = Sandbox::new();
    let file = filled_in_python_starter(&sandbox);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.matches("row[0] > now").count(), 1, "claim's boundary");
    std::fs::write(&file, text.replace("row[0] > now", "row[0] >= now")).unwrap();
    let why = "a claim at now == until finds the lease still held";
    let ran = sandbox.lab(&[
        "check",
        "--step",
        "4",
        "--predict",
        "claim_at_exact_expiry_is_reassigned",
        "--why",
        why,
    ]);
    ran.assert_code(1);
    ran.assert_says(&[
        "step 4 failing",
        "predicted and caught: claim_at_exact_expiry_is_reassigned",
        "predicted but it survived: none",
        "caught but not predicted: none",
        "found a killer: yes, 1 of the 1 that catch it",
        "precision: 100%, 1 of the 1 you named caught it",
        "Recorded in lease-lab-progress.json",
    ]);
    let progress = sandbox.progress();
    let predictions = progress["own_predictions"]
        .as_array()
        .unwrap_or_else(|| panic!("no own_predictions: {progress:#}"));
    assert_eq!(predictions.len(), 1, "{progress:#}");
    let recorded = &predictions[0];
    assert_eq!(recorded["through"], 4, "{progress:#}");
    assert_eq!(
        recorded["predicted"],
        serde_json::json!(["claim_at_exact_expiry_is_reassigned"])
    );
    assert_eq!(
        recorded["failed"],
        serde_json::json!(["claim_at_exact_expiry_is_reassigned"])
    );
    assert_eq!(recorded["why"], why);
    assert_eq!(recorded["score"]["percent"], 100, "{progress:#}");

    let unknown = sandbox.lab(&["check", "--step", "4", "--predict", "no_such_test"]);
    unknown.assert_code(2);
    unknown.assert_says(&["\"no_such_test\" is not a test"]);
    assert_eq!(
        sandbox.progress()["own_predictions"]
            .as_array()
            .map(Vec::len),
        Some(1),
        "a usage error records nothing"
    );
}

// ---------------------------------------------------------------------------
// lab watch
// ---------------------------------------------------------------------------

/// A running `lab watch`, killed when dropped; its output read by lines on
/// threads of their own.
pub(crate) struct Watching {
    child: Child,
    lines: Receiver<String>,
    /// Every line read so far, for failure messages.
    seen: Vec<String>,
}

impl Watching {
    pub(crate) fn start(sandbox: &Sandbox, args: &[&str]) -> Watching {
        let mut child = sandbox
            .command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("lab watch starts");
        let (sender, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        for (stream, prefix) in [
            (Box::new(stdout) as Box<dyn Read + Send>, ""),
            (Box::new(stderr), "stderr: "),
        ] {
            let sender = sender.clone();
            thread::spawn(move || {
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { break };
                    if sender.send(format!("{prefix}{line}")).is_err() {
                        break;
                    }
                }
            });
        }
        Watching {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The lines up to and including the next one that holds `Next:` (the
    /// end of a check), which must come within `bound`.
    pub(crate) fn next_check(&mut self, bound: Duration) -> Vec<String> {
        let deadline = Instant::now() + bound;
        let mut check = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    let done = line.contains("Next:");
                    check.push(line);
                    if done {
                        return check;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "lab watch finished no check within {} s; it wrote:\n{}",
                    bound.as_secs(),
                    self.seen.join("\n")
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "lab watch ended ({:?}); it wrote:\n{}",
                    self.child.try_wait(),
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// The lines written within `quiet`, which is waited out in full.
    fn lines_within(&mut self, quiet: Duration) -> Vec<String> {
        let deadline = Instant::now() + quiet;
        let mut lines = Vec::new();
        while let Ok(line) = self
            .lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            self.seen.push(line.clone());
            lines.push(line);
        }
        lines
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether a check's lines report step 1 with `status`.
fn reports_step_1(check: &[String], status: &str) -> bool {
    check
        .iter()
        .any(|line| line.trim().starts_with(&format!("step 1  {status}")))
}

/// The save fills in every operation, not only step 1's: step 1's tests
/// call `enqueue` and `claim` too (a second `init_db` must keep a claimed
/// job's fence), so step 1 passes only once those are written as well.
#[test]
fn lab_watch_checks_again_on_a_save() {
    let sandbox = Sandbox::new();
    let file = python_starter(&sandbox);
    let mut watch = Watching::start(
        &sandbox,
        &["watch", "--impl", "mine/store.py", "--step", "1"],
    );
    let first = watch.next_check(NO_HANG);
    assert!(
        reports_step_1(&first, "not written"),
        "the starter as generated:\n{}",
        first.join("\n")
    );
    let starter = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, fill_in(&starter, every_stub_but(&[]))).unwrap();
    let second = watch.next_check(Duration::from_secs(30));
    assert!(
        second.iter().any(|line| line.contains("changed")),
        "a save is announced:\n{}",
        second.join("\n")
    );
    assert!(
        reports_step_1(&second, "passed"),
        "the check after the save sees the saved file:\n{}",
        watch.seen.join("\n")
    );
}

/// Nothing is saved while the watch waits, so nothing may be checked
/// again. The wait cannot fail a watch that works, however slow the
/// machine: it only gives a spurious check the time to show itself.
#[test]
fn lab_watch_does_not_check_again_without_a_save() {
    let sandbox = Sandbox::new();
    python_starter(&sandbox);
    let mut watch = Watching::start(
        &sandbox,
        &["watch", "--impl", "mine/store.py", "--step", "1"],
    );
    watch.next_check(NO_HANG);
    let after = watch.lines_within(Duration::from_secs(3));
    assert!(
        !after.iter().any(|line| line.contains("changed")),
        "lab watch checked again although no file was saved (running the check must not count as a change):\n{}",
        watch.seen.join("\n")
    );
}

// ---------------------------------------------------------------------------
// The Rust starter
// ---------------------------------------------------------------------------

/// A build folder shared by every run of these tests, so that rusqlite is
/// compiled once.
pub(crate) fn shared_target() -> PathBuf {
    test_cache().join("target")
}

/// The cache of the workers built for students' Rust mutants in these
/// tests. Its `target/` is the shared build folder above too, so that
/// rusqlite is built once for every test that builds a Rust project.
fn test_cache() -> PathBuf {
    std::env::temp_dir().join("lease-lab-test-cache")
}

#[test]
#[ignore = "builds rusqlite with cargo, a minute when cold; .ci/run runs it"]
fn the_rust_starter_is_not_written_and_passes_with_the_lab_s_store() {
    let sandbox = Sandbox::new();
    let ran = sandbox.lab(&["new", "--lang", "rust", "mine"]);
    ran.assert_code(0);
    let store = sandbox.path("mine").join("src").join("store.rs");
    assert!(store.is_file(), "{}", ran.shown());
    let check = || {
        run_bounded(
            sandbox
                .command(&["check"])
                .env("CARGO_TARGET_DIR", shared_target()),
            BUILD_BOUND,
        )
    };
    let stubs = check();
    stubs.assert_code(1);
    assert_every_step(&stubs, 8, "not written");
    assert_recorded_checks(&sandbox.progress(), "not-implemented");

    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/store/src/store.rs");
    std::fs::copy(&reference, &store).unwrap();
    let written = check();
    written.assert_code(0);
    assert_every_step(&written, 8, "passed");
    assert_recorded_checks(&sandbox.progress(), "passed");
}

// ---------------------------------------------------------------------------
// A student's own mutants
// ---------------------------------------------------------------------------

/// What `lab matrix` says of mutant `id` in its summary: the words after
/// the id and its step, up to the number of tests that kill it (`killed 1
/// test`); `None` when it does not list the mutant.
/// Asserts that the student's mutant `own` is killed, by the same tests as
/// the built-in mutant `builtin` whose change it makes.
fn assert_killed_like(matrix: &Ran, own: &str, builtin: &str) {
    let verdict = matrix_verdict(matrix, own);
    assert!(
        verdict.as_deref().is_some_and(|v| v.starts_with("killed")),
        "{own} is killed:\n{}",
        matrix.shown()
    );
    assert_eq!(
        verdict,
        matrix_verdict(matrix, builtin),
        "{own} makes the change of built-in mutant {builtin}, so the same tests kill it:\n{}",
        matrix.shown()
    );
}

fn matrix_verdict(matrix: &Ran, id: &str) -> Option<String> {
    matrix.stdout.lines().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        (words.first() == Some(&id) && words.get(1) == Some(&"step"))
            .then(|| words.get(3..6).map(|verdict| verdict.join(" ")))
            .flatten()
    })
}

/// The tests that `lab mutant check` says kill mutant `id`, as it lists
/// them (`ID is killed: N tests catch it (M of step S): TEST, TEST`).
fn killers(check: &Ran, id: &str) -> String {
    let start = format!("{id} is killed:");
    let line = check
        .stdout
        .lines()
        .find(|line| line.starts_with(&start))
        .unwrap_or_else(|| panic!("no line starts with {start:?}:\n{}", check.shown()));
    line.rsplit_once("): ")
        .map(|(_, tests)| tests.to_string())
        .unwrap_or_else(|| panic!("no list of tests in {line:?}"))
}

/// Makes the template that `lab mutant new --step 4` wrote in `sandbox` a
/// real mutant (the change of built-in mutant 04: `>` becomes `>=`) and
/// gives its path.
fn own_rust_mutant_at_step_4s_boundary(sandbox: &Sandbox) -> PathBuf {
    let file = sandbox.path("mutants").join("o04a-own.toml");
    let template = std::fs::read_to_string(&file).unwrap();
    let edited: Vec<String> = template
        .lines()
        .map(|line| {
            if line.starts_with("replacement = ") {
                line.replace("held_until > now", "held_until >= now")
            } else {
                line.to_string()
            }
        })
        .collect();
    let edited = edited.join("\n") + "\n";
    assert_ne!(
        edited, template,
        "the template's replacement is step 4's comparison:\n{template}"
    );
    std::fs::write(&file, edited).unwrap();
    file
}

/// `lab` sees a mutant file at run time: the workers of Rust mutants are
/// built into its cache (`LEASE_LAB_CACHE`, kept under the temporary
/// folder so that the build is reused from run to run), never into `lab`
/// itself, so a copy of `lab` outside the crate, with no `CARGO_TARGET_DIR`,
/// runs one.
#[test]
#[ignore = "builds rusqlite with cargo, a minute when cold; .ci/run runs it"]
fn an_installed_lab_sees_a_students_rust_mutant_without_being_rebuilt() {
    let installed = tempfile::tempdir().unwrap();
    let lab = installed.path().join("lab");
    std::fs::copy(env!("CARGO_BIN_EXE_lab"), &lab).unwrap();
    let cache = test_cache();
    let sandbox = Sandbox::new();
    let run = |args: &[&str], bound: Duration| {
        run_bounded(
            sandbox
                .command_of(&lab, args)
                .env("LEASE_LAB_CACHE", &cache)
                .env_remove("CARGO_TARGET_DIR"),
            bound,
        )
    };

    let new = run(&["mutant", "new", "--step", "4"], NO_HANG);
    new.assert_code(0);
    new.assert_says(&["wrote mutants/o04a-own.toml"]);
    let file = own_rust_mutant_at_step_4s_boundary(&sandbox);

    let check = run(&["mutant", "check", "mutants/o04a-own.toml"], BUILD_BOUND);
    check.assert_code(0);
    check.assert_says(&[
        "the fragment occurs once and the change is real",
        "o04a is killed",
        "claim_at_exact_expiry_is_reassigned",
    ]);
    assert_eq!(
        killers(&check, "o04a"),
        "claim_at_exact_expiry_is_reassigned",
        "the change of built-in mutant 04 is killed by 04's test alone:\n{}",
        check.shown()
    );

    let matrix = run(&["matrix"], BUILD_BOUND);
    matrix.assert_code(0);
    assert_killed_like(&matrix, "o04a", "04");

    std::fs::remove_file(&file).unwrap();
    let without = run(&["matrix"], BUILD_BOUND);
    without.assert_code(0);
    assert!(
        !without.text().contains("o04a"),
        "a deleted file takes its mutant away:\n{}",
        without.shown()
    );
}

/// A student's Rust mutant runs as a worker that `lab` builds with the
/// cargo that runs it (`CARGO`) into its cache, once. Here a stand-in
/// cargo "builds" a worker that runs the lab's Python store, a correct
/// implementation, so the mutant survives: what matters is that the
/// worker was built where the lab said, and run.
#[test]
fn a_students_rust_mutant_runs_as_the_worker_built_into_the_cache() {
    let sandbox = Sandbox::new();
    sandbox
        .lab(&["mutant", "new", "--step", "4"])
        .assert_code(0);
    own_rust_mutant_at_step_4s_boundary(&sandbox);
    let cache = tempfile::tempdir().unwrap();
    let store_py = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store.py");
    let cargo = cache.path().join("stand-in-cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\nmkdir -p \"$CARGO_TARGET_DIR/debug\"\necho built >> \"$CARGO_TARGET_DIR/builds\"\nprintf '#!/bin/sh\\nexec python3 %s\\n' {} > \"$CARGO_TARGET_DIR/debug/my-lease-store\"\nchmod +x \"$CARGO_TARGET_DIR/debug/my-lease-store\"\n",
            shell_quote(&store_py.display().to_string())
        ),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&cargo).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&cargo, permissions).unwrap();
    let check = || {
        run_bounded(
            sandbox
                .command(&["mutant", "check", "mutants/o04a-own.toml"])
                .env("LEASE_LAB_CACHE", cache.path())
                .env("CARGO", &cargo),
            NO_HANG,
        )
    };
    let first = check();
    first.assert_says(&["building a worker for mutant o04a in", "o04a survives"]);
    let again = check();
    again.assert_says(&["o04a survives"]);
    assert!(
        !again.text().contains("building a worker"),
        "{}",
        again.shown()
    );
    let builds = std::fs::read_to_string(cache.path().join("target/builds")).unwrap();
    assert_eq!(
        builds.lines().count(),
        1,
        "built once, then taken from the cache"
    );
}

/// A mutant of the Python store is applied to a copy of it when `lab`
/// runs: no build, no toolchain.
#[test]
fn a_students_python_mutant_needs_no_build() {
    let sandbox = Sandbox::new();
    std::fs::create_dir(sandbox.path("mutants")).unwrap();
    std::fs::write(
        sandbox.path("mutants").join("o04p-mine.toml"),
        r#"id = "o04p"
step = 4
kind = "own"
title = "claim refuses a lease that ends exactly now"
file = "src/store.py"
fragment = '''row[0] > now'''
replacement = '''row[0] >= now'''
explanation = """
At now == until the lease is over by contract, but this claim still finds it held.
"""
"#,
    )
    .unwrap();
    let matrix = sandbox.lab(&["matrix", "--impl", "python"]);
    matrix.assert_code(0);
    assert_killed_like(&matrix, "o04p", "py04");

    let check = sandbox.lab(&["mutant", "check", "mutants/o04p-mine.toml"]);
    check.assert_code(0);
    check.assert_says(&[
        "the fragment occurs once and the change is real",
        "o04p is killed",
        "claim_at_exact_expiry_is_reassigned",
    ]);
    assert_eq!(
        killers(&check, "o04p"),
        "claim_at_exact_expiry_is_reassigned",
        "{}",
        check.shown()
    );
}

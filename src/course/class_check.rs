//! Every student's own implementation checked (`lab grade --impl-dir`):
//! each entry of the class's folder is a row. Each `.py` file and each
//! folder is checked by a `lab check --format json` of its own
//! (`gradescope` when the instructor asks for Gradescope's results), the
//! judge, which runs as the instructor, outside every sandbox, and runs
//! the submission's programs in sandboxes of their own ([`crate::sandbox`],
//! unless `--no-sandbox`); several at once, each within a time limit, so
//! that one that hangs or cannot start is a row saying so and never stops
//! the others. Any other entry (a link, a FIFO, a hidden file) is a row
//! saying what it is, never followed nor opened.

use super::submission::{self, EntryKind};
use serde::Serialize;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How one student's check ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum CheckResult {
    /// The check ran: how many of the steps passed.
    Checked {
        /// Steps passed.
        steps_passed: usize,
        /// Steps checked (1 to this).
        through: usize,
        /// The steps that did not pass.
        open_steps: Vec<u8>,
    },
    /// It did not end within the time limit and was stopped.
    TimedOut {
        /// The limit, in seconds.
        limit_s: u64,
    },
    /// It could not start or did not answer (not a store, a build that
    /// fails, a program that never greets).
    CouldNotStart {
        /// Why, as the check said it.
        reason: String,
    },
}

/// One student's implementation and its check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImplCheck {
    /// Who: the entry's name without its `.py`.
    pub student: String,
    /// The entry, as found in the folder.
    pub entry: String,
    /// How the check ended.
    #[serde(flatten)]
    pub result: CheckResult,
    /// The sandbox's limit the submission met, when what it said shows one
    /// (see [`crate::sandbox::limit_met`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    /// What the check wrote in the format asked of it, when it ran and was
    /// asked for Gradescope's results (see [`check_all`]).
    #[serde(skip)]
    pub report: Option<Vec<u8>>,
}

/// An entry of a class's folder, with why it is not checked when it is
/// not: a link, a FIFO, a socket or a device (never followed nor opened),
/// a hidden entry, a file that is not a `.py`, one that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its path.
    pub path: PathBuf,
    /// Why it gets a row but no check.
    pub refusal: Option<String>,
}

/// Every entry of `dir`, in name order, hidden ones included: each gets a
/// row (see [`Entry`]).
///
/// Errors: the folder cannot be read.
pub fn entries(dir: &Path) -> std::io::Result<Vec<Entry>> {
    Ok(submission::entries(dir)?
        .into_iter()
        .map(|(path, kind)| {
            let hidden = path
                .file_name()
                .is_some_and(|name| name.as_encoded_bytes().starts_with(b"."));
            let is_python = path.extension().is_some_and(|extension| extension == "py");
            let refusal = match kind {
                Err(error) => Some(format!("cannot be read: {error}")),
                Ok(kind) => kind.refusal().map(String::from).or_else(|| {
                    if hidden {
                        Some("hidden (its name begins with a dot): not checked; rename it without the dot to have it checked".into())
                    } else if kind == EntryKind::File && !is_python {
                        Some("neither a .py file nor a Rust project's folder".into())
                    } else {
                        None
                    }
                }),
            };
            Entry { path, refusal }
        })
        .collect())
}

/// Who an entry belongs to: its name without `.py`.
fn student_of(entry: &Path) -> String {
    let name = entry
        .file_name()
        .unwrap_or(entry.as_os_str())
        .to_string_lossy()
        .into_owned();
    name.strip_suffix(".py").map_or(name.clone(), String::from)
}

/// How a class's checks are made: each entry by a `lab check` of its own
/// (the judge, run as the instructor), at most `jobs` at once, each
/// stopped with every process it started after `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judging {
    /// The lab binary that checks.
    pub lab: PathBuf,
    /// The longest one check may take, the copy of its submission and a
    /// Rust project's build included.
    pub limit: Duration,
    /// Checks at once.
    pub jobs: usize,
    /// Whether each check reports in Gradescope's format, kept in its row
    /// ([`ImplCheck::report`]) for
    /// [`crate::report::class::gradescope::write_class`].
    pub gradescope: bool,
    /// Whether each submission's programs run in sandboxes
    /// ([`crate::sandbox`]), as they do unless `--no-sandbox` says.
    pub sandboxed: bool,
    /// The suite's options each check is given (`--timeout-ms`).
    pub check_args: Vec<String>,
}

/// Checks every entry as `judging` says, each recording into a progress
/// file of its own in `scratch`, never the student's. Answers one row per
/// entry, in the order given: an entry refused is a row that says why.
pub fn check_all(judging: &Judging, entries: &[Entry], scratch: &Path) -> Vec<ImplCheck> {
    let next = Mutex::new(0..entries.len());
    let results = Mutex::new(vec![None; entries.len()]);
    let limits = crate::sandbox::Limits::default();
    std::thread::scope(|scope| {
        for _ in 0..judging.jobs.clamp(1, entries.len().max(1)) {
            scope.spawn(|| loop {
                let Some(index) = next.lock().expect("the queue").next() else {
                    break;
                };
                let entry = &entries[index];
                let folder = scratch.join(index.to_string());
                let (result, limit_met) = match &entry.refusal {
                    Some(reason) => (
                        CheckResult::CouldNotStart {
                            reason: reason.clone(),
                        },
                        None,
                    ),
                    None => {
                        let result = check_one(judging, &entry.path, &folder);
                        // What it said, read for a limit it met in its sandbox.
                        let said = ["check.json", "stderr.txt"]
                            .map(|file| {
                                std::fs::read_to_string(folder.join(file)).unwrap_or_default()
                            })
                            .join("\n");
                        let limit = judging
                            .sandboxed
                            .then(|| crate::sandbox::limit_met(&said, &limits))
                            .flatten();
                        (result, limit)
                    }
                };
                // The check's own report, in the format asked: Gradescope's
                // results.json is written from it.
                let report = (judging.gradescope && matches!(result, CheckResult::Checked { .. }))
                    .then(|| std::fs::read(folder.join("check.json")).ok())
                    .flatten();
                results.lock().expect("the results")[index] = Some((result, limit_met, report));
            });
        }
    });
    results
        .into_inner()
        .expect("the results")
        .into_iter()
        .map(|checked| checked.expect("every entry checked"))
        .zip(entries)
        .map(|((result, limit, report), entry)| ImplCheck {
            student: student_of(&entry.path),
            entry: entry.path.display().to_string(),
            result,
            limit,
            report,
        })
        .collect()
}

/// How `lab check` reports to the class check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// The lab's JSON: the steps, each with its status.
    Json,
    /// Gradescope's results.json: a test per contract test, tagged with
    /// its step.
    Gradescope,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Gradescope => "gradescope",
        }
    }

    /// Each step checked, with whether it passed, from a check's report
    /// in this format.
    fn steps(self, report: &serde_json::Value) -> Vec<(u8, bool)> {
        let step_of = |value: &serde_json::Value| value.as_u64().and_then(|n| u8::try_from(n).ok());
        match self {
            Format::Json => report["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|step| Some((step_of(&step["step"])?, step["status"] == "passed")))
                .collect(),
            Format::Gradescope => {
                let mut steps: Vec<(u8, bool)> = Vec::new();
                for test in report["tests"].as_array().into_iter().flatten() {
                    let Some(step) = test["tags"][0]
                        .as_str()
                        .and_then(|tag| tag.strip_prefix("step "))
                        .and_then(|n| n.parse().ok())
                    else {
                        continue;
                    };
                    let passed = test["status"] == "passed";
                    match steps.iter_mut().find(|(seen, _)| *seen == step) {
                        Some((_, all)) => *all &= passed,
                        None => steps.push((step, passed)),
                    }
                }
                steps
            }
        }
    }
}

/// One entry's check: `lab check` of the entry as the instructor, in its
/// own process group (a stop reaches every process it started), its
/// report and what it said kept in `folder`, where its progress file is.
fn check_one(judging: &Judging, entry: &Path, folder: &Path) -> CheckResult {
    let could_not = |what: &str, error: std::io::Error| CheckResult::CouldNotStart {
        reason: format!("{what}: {error}"),
    };
    if let Err(error) = std::fs::create_dir_all(folder) {
        return could_not("cannot make a folder for its check", error);
    }
    let (out_path, err_path) = (folder.join("check.json"), folder.join("stderr.txt"));
    let (Ok(out), Ok(err)) = (
        std::fs::File::create(&out_path),
        std::fs::File::create(&err_path),
    ) else {
        return CheckResult::CouldNotStart {
            reason: "cannot write the check's output".into(),
        };
    };
    let format = if judging.gradescope {
        Format::Gradescope
    } else {
        Format::Json
    };
    // Named for this grading and this entry, so that a check stopped
    // leaves no control group behind.
    let cgroup = format!(
        "grade-{}-{}",
        std::process::id(),
        folder.file_name().unwrap_or_default().to_string_lossy()
    );
    let started = Command::new(&judging.lab)
        .arg("--progress")
        .arg(folder.join("progress.json"))
        .arg("check")
        .arg("--impl")
        .arg(entry)
        .args(["--format", format.name(), "--color", "never"])
        .arg(if judging.sandboxed {
            "--sandbox"
        } else {
            "--no-sandbox"
        })
        .args(&judging.check_args)
        .args(["--cgroup-name", &cgroup])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(error) => return could_not("cannot start lab check", error),
    };
    let status = wait_within(&mut child, judging.limit);
    // A check stopped leaves the control groups it made behind.
    crate::sandbox::cgroup::remove_named(&cgroup);
    let Some(status) = status else {
        return CheckResult::TimedOut {
            limit_s: judging.limit.as_secs(),
        };
    };
    checked(format, status, &out_path, &err_path)
}

/// How `child` ended, or `None` when it was still running after `limit`
/// (or could not be waited for): then its process group is stopped and it
/// is reaped.
fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                stop_group(child.id());
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// What a check that ended with `status` found: the steps passed of the
/// report it wrote to `out_path` in `format`, when it wrote one and ended
/// with 0 or 1; otherwise why it could not, from what it said on
/// `err_path` (without the `lab check: ` it starts with), or from how it
/// ended when it said nothing.
fn checked(format: Format, status: ExitStatus, out_path: &Path, err_path: &Path) -> CheckResult {
    let output = std::fs::read(out_path).unwrap_or_default();
    match serde_json::from_slice::<serde_json::Value>(&output) {
        // Gradescope's results of a check that could not run: no test,
        // and why.
        Ok(check)
            if format == Format::Gradescope
                && check["tests"].as_array().is_some_and(Vec::is_empty) =>
        {
            let said = check["output"].as_str().unwrap_or_default();
            CheckResult::CouldNotStart {
                reason: said
                    .lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty())
                    .collect::<Vec<_>>()
                    .join(" "),
            }
        }
        Ok(check) if matches!(status.code(), Some(0 | 1)) => {
            let steps = format.steps(&check);
            CheckResult::Checked {
                steps_passed: steps.iter().filter(|(_, passed)| *passed).count(),
                through: steps.len(),
                open_steps: steps
                    .iter()
                    .filter(|(_, passed)| !passed)
                    .map(|(step, _)| *step)
                    .collect(),
            }
        }
        _ => {
            let said = std::fs::read_to_string(err_path).unwrap_or_default();
            let reason = said
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            CheckResult::CouldNotStart {
                reason: match reason.strip_prefix("lab check: ") {
                    Some(reason) => reason.to_string(),
                    None if reason.is_empty() => format!("lab check ended: {status}"),
                    None => reason,
                },
            }
        }
    }
}

/// Stops a process group and everything in it.
fn stop_group(leader: u32) {
    if let Ok(group) = libc::pid_t::try_from(leader) {
        // SAFETY: kill(2) with a negative pid signals the group; it touches
        // no memory of this process.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_gets_a_row_and_only_files_and_folders_are_checked() {
        let folder = tempfile::tempdir().unwrap();
        for name in ["b.py", ".sneaky.py", "notes.txt"] {
            std::fs::write(folder.path().join(name), "").unwrap();
        }
        std::fs::create_dir(folder.path().join("a-project")).unwrap();
        std::os::unix::fs::symlink("b.py", folder.path().join("c.py")).unwrap();
        let found = entries(folder.path()).unwrap();
        let rows: Vec<(String, Option<&str>)> = found
            .iter()
            .map(|entry| (student_of(&entry.path), entry.refusal.as_deref()))
            .collect();
        assert_eq!(
            rows,
            [
                (".sneaky".into(), Some("hidden (its name begins with a dot): not checked; rename it without the dot to have it checked")),
                ("a-project".into(), None),
                ("b".into(), None),
                ("c".into(), Some("a symbolic link, not followed: submit the file or the folder itself")),
                ("notes.txt".into(), Some("neither a .py file nor a Rust project's folder")),
            ]
        );
        // A refused entry is a row that says why, with no check started.
        let judging = Judging {
            lab: PathBuf::from("/no/such/lab"),
            limit: Duration::from_secs(1),
            jobs: 2,
            gradescope: false,
            sandboxed: true,
            check_args: Vec::new(),
        };
        let refused: Vec<Entry> = found
            .into_iter()
            .filter(|entry| entry.refusal.is_some())
            .collect();
        let checks = check_all(&judging, &refused, &folder.path().join("scratch"));
        assert_eq!(checks.len(), 3);
        assert_eq!(
            checks[1].result,
            CheckResult::CouldNotStart {
                reason: "a symbolic link, not followed: submit the file or the folder itself"
                    .into()
            }
        );
        assert!(!folder.path().join("scratch").exists(), "no check started");
    }
}

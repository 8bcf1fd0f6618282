//! Every student's own implementation checked (`lab grade --impl-dir`):
//! each one by a `lab check --format json` of its own (`gradescope` when
//! the instructor asks for Gradescope's results), several at once, each
//! within a time limit, so that one that hangs or cannot start is a row
//! saying so and never stops the others.

use crate::sandbox::Sandbox;
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

/// The entries of `dir` to check, in name order: each `.py` file and each
/// folder (a Rust project, as `--impl` takes it). Hidden entries are left
/// out; any other file is answered as one that cannot start, so that it is
/// seen.
///
/// Errors: the folder cannot be read.
pub fn entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<Result<_, _>>()?;
    found.retain(|path| {
        !path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'))
    });
    found.sort();
    Ok(found)
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

/// How each submission's check is isolated from the machine and from the
/// other submissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// In a sandbox of its own ([`crate::sandbox`]), as a user of its own:
    /// `hidden` covered, `shown` (the lab, the tools on the `PATH`) shown
    /// read-only, a copy of the submission shown where it was, and a
    /// folder of its own to write.
    Sandboxed {
        /// Folders it must not see: the submissions' folder, the
        /// instructor's home, the grading's scratch folder.
        hidden: Vec<PathBuf>,
        /// Files and folders it needs, inside a hidden folder or not.
        shown: Vec<PathBuf>,
    },
    /// As the instructor, with everything the instructor has
    /// (`--no-sandbox`).
    Unisolated,
}

/// The first of the users the sandboxes run as: the entry at index `i`
/// runs as this plus `i`, a user no account has, so that the submissions'
/// processes are counted apart against [`crate::sandbox::PROCESS_LIMIT`].
pub const FIRST_SANDBOX_USER: u32 = 1_000_000;

/// Checks every entry with `lab` (the binary at `lab`), at most `jobs` at
/// once, each stopped (with every process it started) after `limit`, and
/// isolated as `isolation` says.
/// Each check records into a progress file of its own in `scratch`, never
/// the student's. With `gradescope`, each entry's check reports in
/// Gradescope's format, kept in its row ([`ImplCheck::report`]) for
/// [`crate::report::gradescope::write_class`]. Answers one row per entry,
/// in the order given.
pub fn check_all(
    lab: &Path,
    entries: &[PathBuf],
    limit: Duration,
    jobs: usize,
    scratch: &Path,
    gradescope: bool,
    isolation: &Isolation,
) -> Vec<ImplCheck> {
    let next = Mutex::new(0..entries.len());
    let results = Mutex::new(vec![None; entries.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, entries.len().max(1)) {
            scope.spawn(|| loop {
                let Some(index) = next.lock().expect("the queue").next() else {
                    break;
                };
                let format = if gradescope {
                    Format::Gradescope
                } else {
                    Format::Json
                };
                let user = u32::try_from(index).map_or(FIRST_SANDBOX_USER, |index| {
                    FIRST_SANDBOX_USER.saturating_add(index)
                });
                let folder = scratch.join(index.to_string());
                let sandbox = isolation.sandboxed_as(user);
                let result = check_one(lab, &entries[index], limit, &folder, format, &sandbox);
                // What it said, read for a limit it met in its sandbox.
                let said = sandbox.is_some().then(|| {
                    ["check.json", "stderr.txt"]
                        .map(|file| std::fs::read_to_string(folder.join(file)).unwrap_or_default())
                        .join("\n")
                });
                let limit_met = said.as_deref().and_then(crate::sandbox::limit_met);
                // The check's own report, in the format asked: Gradescope's
                // results.json is written from it.
                let report = (gradescope && matches!(result, CheckResult::Checked { .. }))
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
            student: student_of(entry),
            entry: entry.display().to_string(),
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

impl Isolation {
    /// The sandbox of each submission of `dir`: the submissions, the homes
    /// (the instructor's and root's), `/home`, the grading's `scratch`
    /// folder and the `results` folder hidden; the lab (`lab`) and the
    /// tools on the `PATH` that live in a hidden folder shown
    /// ([`crate::sandbox::tools_on_the_path`]).
    pub fn for_class(dir: &Path, lab: &Path, scratch: &Path, results: Option<&Path>) -> Isolation {
        let existing = |paths: Vec<PathBuf>| -> Vec<PathBuf> {
            let mut paths: Vec<PathBuf> = paths
                .into_iter()
                .filter_map(|path| path.canonicalize().ok())
                .filter(|path| path.parent().is_some())
                .collect();
            paths.sort();
            paths.dedup();
            paths
        };
        let homes = existing(
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .into_iter()
                .chain([PathBuf::from("/root")])
                .collect(),
        );
        let covered = existing(
            [Some(dir), Some(scratch), results, Some(Path::new("/home"))]
                .into_iter()
                .flatten()
                .map(Path::to_path_buf)
                .collect(),
        );
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut shown: Vec<PathBuf> = lab.canonicalize().into_iter().collect();
        for tool in crate::sandbox::tools_on_the_path(&path, &homes, &covered) {
            if !shown.contains(&tool) {
                shown.push(tool);
            }
        }
        let mut hidden = homes;
        hidden.extend(covered);
        Isolation::Sandboxed { hidden, shown }
    }

    /// Makes a sandbox as a submission's will be and runs `true` in it
    /// with `lab`, so that grading stops before it starts when none can be
    /// made here.
    ///
    /// Errors: why none can be made, and what to do, in words.
    pub fn probe(&self, lab: &Path) -> Result<(), String> {
        let what_to_do = "run lab grade as root (as an autograder's container does), or pass --no-sandbox to run every submission as yourself, with your files and network";
        Sandbox::probe()
            .map_err(|error| format!("cannot sandbox the submissions: {error}; {what_to_do}"))?;
        let Some(sandbox) = self.sandboxed_as(FIRST_SANDBOX_USER) else {
            return Ok(());
        };
        let tried = Command::new(lab)
            .args(["__sandbox", "--sandbox", &sandbox.to_arg(), "--", "true"])
            .stdin(Stdio::null())
            .output();
        match tried {
            Ok(output) if output.status.success() => Ok(()),
            Ok(output) => Err(format!(
                "cannot sandbox the submissions: {}; in a container, give it the right to make namespaces and mounts (e.g. docker run --privileged), or {what_to_do}",
                String::from_utf8_lossy(&output.stderr)
                    .trim()
                    .trim_start_matches("lab __sandbox: ")
            )),
            Err(error) => Err(format!(
                "cannot sandbox the submissions: cannot start {}: {error}",
                lab.display()
            )),
        }
    }

    /// The sandbox of one entry, run as `user`, when sandboxed.
    pub fn sandboxed_as(&self, user: u32) -> Option<Sandbox> {
        match self {
            Isolation::Sandboxed { hidden, shown } => Some(Sandbox {
                uid: user,
                hidden: hidden.clone(),
                writable: Vec::new(),
                shown: shown
                    .iter()
                    .map(|path| (path.clone(), path.clone()))
                    .collect(),
            }),
            Isolation::Unisolated => None,
        }
    }
}

/// Makes `sandbox` ready for `entry`, checked in `folder`: a folder it may
/// write (`folder/work`, where its progress file is) and a copy of the
/// entry (`folder/submission`), both its user's, the copy where the entry
/// is, to write as it likes (cargo updates a project's `Cargo.lock`) while
/// the original stays as it was. Answers the entry's absolute path and the
/// progress file.
fn ready_sandbox(
    sandbox: &mut Sandbox,
    entry: &Path,
    folder: &Path,
) -> std::io::Result<(PathBuf, PathBuf)> {
    let entry = entry.canonicalize()?;
    let (work, copies) = (folder.join("work"), folder.join("submission"));
    std::fs::create_dir_all(&work)?;
    std::fs::create_dir_all(&copies)?;
    let copy = copies.join(entry.file_name().unwrap_or_default());
    copy_entry(&entry, &copy)?;
    for mine in [&work, &copies] {
        chown_all(mine, sandbox.uid)?;
    }
    sandbox.writable.push((work.clone(), work.clone()));
    sandbox.writable.push((copy, entry.clone()));
    Ok((entry, work.join("progress.json")))
}

/// Copies a submission, a file or a folder (without a Rust build's
/// `target/`, which its check makes again).
fn copy_entry(from: &Path, to: &Path) -> std::io::Result<()> {
    if !from.is_dir() {
        return std::fs::copy(from, to).map(drop);
    }
    std::fs::create_dir_all(to)?;
    for item in std::fs::read_dir(from)? {
        let item = item?;
        let kind = item.file_type()?;
        if kind.is_symlink() || (kind.is_dir() && item.file_name() == "target") {
            continue;
        }
        copy_entry(&item.path(), &to.join(item.file_name()))?;
    }
    Ok(())
}

/// Gives `path` and everything in it to `user`.
fn chown_all(path: &Path, user: u32) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(user), Some(user))?;
    if path.is_dir() && !path.is_symlink() {
        for item in std::fs::read_dir(path)? {
            chown_all(&item?.path(), user)?;
        }
    }
    Ok(())
}

/// One entry's check, in its own process group so that a stop reaches the
/// program it started too; in `sandbox` when given.
fn check_one(
    lab: &Path,
    entry: &Path,
    limit: Duration,
    folder: &Path,
    format: Format,
    sandbox: &Option<Sandbox>,
) -> CheckResult {
    let is_python = entry.extension().is_some_and(|extension| extension == "py");
    if !(entry.is_dir() || is_python && entry.is_file()) {
        return CheckResult::CouldNotStart {
            reason: "neither a .py file nor a Rust project's folder".into(),
        };
    }
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
    let mut command = Command::new(lab);
    let (entry, progress) = match sandbox {
        None => (entry.to_path_buf(), folder.join("progress.json")),
        Some(sandbox) => match in_sandbox(&mut command, sandbox, lab, entry, folder) {
            Ok(ready) => ready,
            Err(error) => return could_not("cannot make its sandbox ready", error),
        },
    };
    let started = command
        .arg("--progress")
        .arg(progress)
        .arg("check")
        .arg("--impl")
        .arg(entry)
        .args(["--format", format.name(), "--color", "never"])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(error) => return could_not("cannot start lab check", error),
    };
    let Some(status) = wait_within(&mut child, limit) else {
        return CheckResult::TimedOut {
            limit_s: limit.as_secs(),
        };
    };
    checked(format, status, &out_path, &err_path)
}

/// Makes `command` (`lab`, not yet given its arguments) run `lab` in a copy
/// of `sandbox` made ready for `entry`, with its check's files in `folder`:
/// answers the entry and the progress file as the sandbox sees them.
///
/// Errors: the sandbox's folders could not be made ready.
fn in_sandbox(
    command: &mut Command,
    sandbox: &Sandbox,
    lab: &Path,
    entry: &Path,
    folder: &Path,
) -> std::io::Result<(PathBuf, PathBuf)> {
    let mut sandbox = sandbox.clone();
    let (entry, progress) = ready_sandbox(&mut sandbox, entry, folder)?;
    // Its tests' databases, and a Rust project's build, in the
    // sandbox's private /tmp; no download (there is no network).
    command
        .arg("__sandbox")
        .arg("--sandbox")
        .arg(sandbox.to_arg())
        .arg("--")
        .arg(lab)
        .env("TMPDIR", "/tmp")
        .env("CARGO_TARGET_DIR", "/tmp/target")
        .env("CARGO_NET_OFFLINE", "true")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    Ok((entry, progress))
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
    fn an_entry_is_named_for_its_student_and_hidden_ones_are_left_out() {
        let folder = tempfile::tempdir().unwrap();
        for name in ["b.py", ".hidden", "a-project", "notes.txt"] {
            let path = folder.path().join(name);
            if name.contains('.') {
                std::fs::write(&path, "").unwrap();
            } else {
                std::fs::create_dir(&path).unwrap();
            }
        }
        let found = entries(folder.path()).unwrap();
        let names: Vec<String> = found.iter().map(|path| student_of(path)).collect();
        assert_eq!(names, ["a-project", "b", "notes.txt"]);
        let text = check_one(
            Path::new("/no/such/lab"),
            &found[2],
            Duration::from_secs(1),
            &folder.path().join("scratch"),
            Format::Json,
            &None,
        );
        assert_eq!(
            text,
            CheckResult::CouldNotStart {
                reason: "neither a .py file nor a Rust project's folder".into()
            }
        );
    }
}

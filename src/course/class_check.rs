//! Every student's own implementation checked (`lab grade --impl-dir`):
//! each one by a `lab check --format json` of its own, several at once,
//! each within a time limit, so that one that hangs or cannot start is a
//! row saying so and never stops the others.

use serde::Serialize;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
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

/// Checks every entry with `lab` (the binary at `lab`), at most `jobs` at
/// once, each stopped (with every process it started) after `limit`.
/// Each check records into a progress file of its own in `scratch`, never
/// the student's. Answers one row per entry, in the order given.
pub fn check_all(
    lab: &Path,
    entries: &[PathBuf],
    limit: Duration,
    jobs: usize,
    scratch: &Path,
) -> Vec<ImplCheck> {
    let next = Mutex::new(0..entries.len());
    let results = Mutex::new(vec![None; entries.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, entries.len().max(1)) {
            scope.spawn(|| loop {
                let Some(index) = next.lock().expect("the queue").next() else {
                    break;
                };
                let result = check_one(
                    lab,
                    &entries[index],
                    limit,
                    &scratch.join(index.to_string()),
                );
                results.lock().expect("the results")[index] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .expect("the results")
        .into_iter()
        .zip(entries)
        .map(|(result, entry)| ImplCheck {
            student: student_of(entry),
            entry: entry.display().to_string(),
            result: result.expect("every entry checked"),
        })
        .collect()
}

/// One entry's check, in its own process group so that a stop reaches the
/// program it started too.
fn check_one(lab: &Path, entry: &Path, limit: Duration, folder: &Path) -> CheckResult {
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
    let started = Command::new(lab)
        .arg("--progress")
        .arg(folder.join("progress.json"))
        .arg("check")
        .arg("--impl")
        .arg(entry)
        .args(["--format", "json", "--color", "never"])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn();
    let mut child = match started {
        Ok(child) => child,
        Err(error) => return could_not("cannot start lab check", error),
    };
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                stop_group(child.id());
                let _ = child.wait();
                return CheckResult::TimedOut {
                    limit_s: limit.as_secs(),
                };
            }
        }
    };
    let output = std::fs::read(&out_path).unwrap_or_default();
    match serde_json::from_slice::<serde_json::Value>(&output) {
        Ok(check) if matches!(status.code(), Some(0 | 1)) => {
            let steps = check["steps"].as_array().cloned().unwrap_or_default();
            CheckResult::Checked {
                steps_passed: check["steps_passed"].as_u64().unwrap_or(0) as usize,
                through: steps.len(),
                open_steps: steps
                    .iter()
                    .filter(|step| step["status"] != "passed")
                    .filter_map(|step| step["step"].as_u64())
                    .filter_map(|step| u8::try_from(step).ok())
                    .collect(),
            }
        }
        _ => {
            let said = std::fs::read_to_string(&err_path).unwrap_or_default();
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
        );
        assert_eq!(
            text,
            CheckResult::CouldNotStart {
                reason: "neither a .py file nor a Rust project's folder".into()
            }
        );
    }
}

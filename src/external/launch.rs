//! How a program is started, and started again.
//!
//! A command's program is often a launcher: pyenv's `python3` is a shell
//! script that picks a version and ends by replacing itself with the real
//! interpreter (`exec`), at a cost of a tenth of a second or more each
//! time. The lab starts a program more than once in a run (one process per
//! lane of a check, each variant of a matrix, each round of `lab watch`,
//! after a fault), so once a started program has greeted, the lab looks at
//! what it became (Linux's `/proc`: its executable, arguments and
//! environment) and, when that is the same command run by another program,
//! starts that program directly for as long as it runs, in the same
//! folder, with the same arguments and environment the launcher gave it.

use super::ImplCommand;
use crate::sandbox::Prepared;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, PoisonError};

/// What a launcher turned a command's program into: the executable, the
/// name it was given as its first argument, and its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Launched {
    exe: PathBuf,
    arg0: OsString,
    env: Vec<(OsString, OsString)>,
}

/// A command's program and the folder it starts in: a launcher such as
/// pyenv's chooses by folder.
type Named = (String, Option<PathBuf>);

/// The launchers seen in this run, by what they were named as.
static LAUNCHED: Mutex<Option<HashMap<Named, Launched>>> = Mutex::new(None);

/// The command that starts `command`: in this process's sandbox when its
/// programs are confined ([`crate::sandbox::confine`]: there, in its
/// folder or the sandbox's first writable one); else its program directly
/// when a launcher's choice is known (see the module's documentation),
/// else as given.
///
/// Errors: the sandbox cannot start it (bubblewrap missing, the filters
/// not made).
pub(super) fn command(command: &ImplCommand) -> std::io::Result<Prepared> {
    if let Some(sandbox) = crate::sandbox::confined() {
        let dir = (command.dir.clone())
            .or_else(|| sandbox.writable.first().cloned())
            .unwrap_or_else(|| PathBuf::from("/"));
        return sandbox
            .command(&command.argv, &dir, &command.env)
            .map_err(std::io::Error::other);
    }
    Ok(Prepared::plain(plain(command)))
}

/// The command that starts `command` outside any sandbox.
fn plain(command: &ImplCommand) -> Command {
    let known = LAUNCHED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
        .and_then(|launched| launched.get(&key(command)).cloned());
    let mut process = match known {
        Some(launched) => {
            let mut process = Command::new(&launched.exe);
            set_arg0(&mut process, &launched.arg0);
            process.env_clear().envs(launched.env);
            process
        }
        None => Command::new(&command.argv[0]),
    };
    process.args(&command.argv[1..]);
    process.envs(command.env.iter().map(|(name, value)| (name, value)));
    if let Some(dir) = &command.dir {
        process.current_dir(dir);
    }
    process
}

/// Learns from process `pid`, started for `command` and greeting, what a
/// launcher turned it into, when one did: it runs another executable than
/// the one its program names, with the command's own arguments.
pub(super) fn learn(command: &ImplCommand, pid: u32) {
    // A sandbox's program is bubblewrap's child, in namespaces of its own:
    // what it became is the sandbox's business (it names its interpreter
    // itself, see Sandbox::programs).
    if crate::sandbox::confined().is_some() {
        return;
    }
    let Some(launched) = launched_as(command, pid) else {
        return;
    };
    LAUNCHED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(key(command), launched);
}

fn key(command: &ImplCommand) -> Named {
    (command.argv[0].clone(), command.dir.clone())
}

#[cfg(target_os = "linux")]
fn launched_as(command: &ImplCommand, pid: u32) -> Option<Launched> {
    use std::os::unix::ffi::OsStrExt;
    let proc = PathBuf::from(format!("/proc/{pid}"));
    let exe = std::fs::read_link(proc.join("exe")).ok()?;
    let named = program_path(&command.argv[0], command.dir.as_deref())?;
    if std::fs::canonicalize(&named).ok()? == exe {
        // No launcher: the program named is the one that runs.
        return None;
    }
    let split = |bytes: Vec<u8>| -> Vec<OsString> {
        bytes
            .split(|&byte| byte == 0)
            .filter(|part| !part.is_empty())
            .map(|part| std::ffi::OsStr::from_bytes(part).to_os_string())
            .collect()
    };
    let args = split(std::fs::read(proc.join("cmdline")).ok()?);
    let given: Vec<OsString> = command.argv[1..].iter().map(OsString::from).collect();
    if args.len() != command.argv.len() || args[1..] != given[..] {
        // It became something else than the command with other words: not
        // a launcher the lab can skip.
        return None;
    }
    let env = split(std::fs::read(proc.join("environ")).ok()?)
        .into_iter()
        .filter_map(|pair| {
            let bytes = pair.as_bytes();
            let at = bytes.iter().position(|&byte| byte == b'=')?;
            Some((
                std::ffi::OsStr::from_bytes(&bytes[..at]).to_os_string(),
                std::ffi::OsStr::from_bytes(&bytes[at + 1..]).to_os_string(),
            ))
        })
        .collect();
    Some(Launched {
        exe,
        arg0: args[0].clone(),
        env,
    })
}

#[cfg(not(target_os = "linux"))]
fn launched_as(_command: &ImplCommand, _pid: u32) -> Option<Launched> {
    None
}

/// Where `program` is, as a start of it would find it: a path (from
/// `dir`, if relative), else the first match on `PATH`.
fn program_path(program: &str, dir: Option<&Path>) -> Option<PathBuf> {
    let program = Path::new(program);
    if program.components().count() > 1 {
        return Some(match dir {
            Some(dir) if program.is_relative() => dir.join(program),
            _ => program.to_path_buf(),
        });
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|folder| folder.join(program))
        .find(|path| path.is_file())
}

#[cfg(unix)]
fn set_arg0(process: &mut Command, arg0: &OsString) {
    std::os::unix::process::CommandExt::arg0(process, arg0);
}

#[cfg(not(unix))]
fn set_arg0(_process: &mut Command, _arg0: &OsString) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::external::ExternalStore;
    use std::time::Duration;

    /// A launcher that counts its runs in a file, sets a variable and
    /// becomes `sh` with the command's own arguments, as pyenv's shim
    /// becomes the interpreter.
    #[test]
    fn a_launcher_is_run_once_and_its_choice_reused_with_its_environment() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        let launcher = dir.path().join("launch-sh");
        std::fs::write(
            &launcher,
            format!(
                "#!/bin/sh\necho run >> '{}'\nexport CHOSEN_BY_LAUNCHER=yes\nexec /bin/sh \"$@\"\n",
                runs.display()
            ),
        )
        .unwrap();
        let mut permissions = std::fs::metadata(&launcher).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
        std::fs::set_permissions(&launcher, permissions).unwrap();
        let script = r#"echo "{\"protocol\":\"lease-lab\",\"version\":1,\"name\":\"$CHOSEN_BY_LAUNCHER\"}"; while read line; do :; done"#;
        let command = ImplCommand {
            argv: vec![launcher.display().to_string(), "-c".into(), script.into()],
            dir: None,
            env: Vec::new(),
        };
        for _ in 0..3 {
            let store = ExternalStore::new(command.clone(), Duration::from_secs(10));
            assert_eq!(store.name().unwrap(), "yes", "the launcher's environment");
        }
        let launched = std::fs::read_to_string(&runs).unwrap();
        assert_eq!(launched.lines().count(), 1, "the launcher ran once");
    }

    #[test]
    fn a_program_that_is_no_launcher_is_started_as_named() {
        let command = ImplCommand::parse("sh -c 'exit 0'").unwrap();
        let child = Command::new("sleep").arg("5").spawn().unwrap();
        let mut child = child;
        // `sleep` is not what `sh` names, but its arguments are not the
        // command's either: nothing is learned.
        assert_eq!(launched_as(&command, child.id()), None);
        child.kill().unwrap();
        let _ = child.wait();
        assert_eq!(
            program_path("/bin/sh", None),
            Some(PathBuf::from("/bin/sh"))
        );
        assert!(program_path("sh", None).is_some_and(|path| path.is_file()));
    }
}

//! What the tests that run the `lab` binary share: a folder of their own to
//! run it in, with nothing of the caller's environment that would change
//! its output (colours, another progress file, the terminal's width).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A folder to run `lab` in, with its own progress file.
pub struct Sandbox {
    /// The folder, removed with the sandbox.
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    /// A new, empty folder.
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("a temporary folder"),
        }
    }

    /// A path in the folder.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `lab ARGS` in the sandbox, run by the binary under test.
    pub fn command(&self, args: &[&str]) -> Command {
        self.command_of(Path::new(env!("CARGO_BIN_EXE_lab")), args)
    }

    /// `ARGS` run by the `lab` binary at `program`, in the sandbox.
    pub fn command_of(&self, program: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(program);
        command
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("NO_COLOR")
            .env_remove("LEASE_LAB_PROGRESS")
            // A terminal wide enough that no message is wrapped, so that a
            // test reads each on one line; the layout at 80 columns is
            // tested apart (tests/lab/widths.rs).
            .env("COLUMNS", "1000")
            .stdin(Stdio::null());
        command
    }
}

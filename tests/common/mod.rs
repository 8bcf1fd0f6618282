//! What the tests that run the `lab` binary share: a folder of their own to
//! run it in, with nothing of the caller's environment that would change
//! its output (colours, another progress file, the terminal's width); one
//! way to run a command under a watchdog, and how it ended ([`Ran`]).
//!
//! Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// The longest a command of [`Sandbox::lab`] may take. Each needs a second
/// or a few; the bound only proves that it ends.
pub const NO_HANG: Duration = Duration::from_secs(60);

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

    /// `lab ARGS` in the sandbox, which must end within [`NO_HANG`].
    pub fn lab(&self, args: &[&str]) -> Ran {
        run_bounded(&mut self.command(args), NO_HANG)
    }

    /// `lab ARGS` as a student runs it at a terminal 80 columns wide (a
    /// pseudo-terminal, made by util-linux's `script`), with no colours,
    /// `typed` being what the student types; the input ends after it.
    /// Its standard output holds the terminal's screen: what was typed,
    /// echoed, and everything `lab` wrote, lines ending in `\n`.
    pub fn lab_at_terminal(&self, args: &[&str], typed: &str) -> Ran {
        let quoted = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
        let line: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_lab"))
            .chain(args.iter().copied())
            .map(quoted)
            .collect();
        let typed_file = self.path(".typed");
        std::fs::write(&typed_file, typed).expect("the typed input is written");
        let mut command = self.command_of(
            Path::new("script"),
            &[
                "--quiet",
                "--return",
                "--command",
                &line.join(" "),
                "/dev/null",
            ],
        );
        command
            .env("COLUMNS", "80")
            .env("NO_COLOR", "1")
            .stdin(std::fs::File::open(&typed_file).expect("the typed input"));
        let mut ran = run_bounded(&mut command, NO_HANG);
        ran.stdout = ran.stdout.replace("\r\n", "\n");
        ran
    }
}

/// How a command ended and what it wrote.
pub struct Ran {
    /// The command's program and arguments, for failure messages.
    pub command: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// Whether the command exited with 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// Standard output and error together, every run of spaces and line
    /// breaks made one space: `lab` fills its messages to the terminal's
    /// width, breaking lines only at spaces.
    pub fn text(&self) -> String {
        words(&format!("{}\n{}", self.stdout, self.stderr))
    }

    /// The command and both streams as written, for failure messages.
    pub fn shown(&self) -> String {
        format!(
            "{}\nexit code {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }

    /// Asserts the exit code, showing the output if it differs.
    pub fn assert_code(&self, expected: i32) {
        assert_eq!(self.code, Some(expected), "{}", self.shown());
    }

    /// Asserts that the command exited with 0, showing it if not.
    pub fn assert_success(&self) {
        self.assert_code(0);
    }

    /// Asserts that the output holds each of `expected`, spacing aside.
    pub fn assert_says(&self, expected: &[&str]) {
        let text = self.text();
        for words_expected in expected {
            assert!(
                text.contains(&words(words_expected)),
                "missing {words_expected:?} in:\n{}",
                self.shown()
            );
        }
    }

    /// Standard output parsed as JSON, of a command that exited with 0.
    pub fn json(&self) -> serde_json::Value {
        self.assert_success();
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|error| panic!("not JSON ({error}):\n{}", self.shown()))
    }
}

/// `text` with every run of whitespace made one space.
pub fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads all of `stream` on a thread of its own; the bytes arrive on the
/// receiver when the stream closes.
fn read_all(mut stream: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        let _ = sender.send(bytes);
    });
    receiver
}

/// `command` as a line for failure messages: its program's file name and
/// its arguments.
fn command_line(command: &Command) -> String {
    let program = Path::new(command.get_program());
    let name = program.file_name().unwrap_or(program.as_os_str());
    std::iter::once(name)
        .chain(command.get_args())
        .map(|word| word.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `command` to its end, which must come within `bound`: if it does
/// not, the command is killed and the test fails with what it wrote so far.
/// Both streams must be UTF-8.
pub fn run_bounded(command: &mut Command, bound: Duration) -> Ran {
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lab starts");
    let stdout = read_all(child.stdout.take().expect("piped"));
    let stderr = read_all(child.stderr.take().expect("piped"));
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break status;
        }
        if started.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            let partial = |receiver: &Receiver<Vec<u8>>| {
                String::from_utf8_lossy(
                    &receiver
                        .recv_timeout(Duration::from_secs(5))
                        .unwrap_or_default(),
                )
                .into_owned()
            };
            panic!(
                "{command:?} did not end within {} s (killed)\n--- stdout ---\n{}\n--- stderr ---\n{}",
                bound.as_secs(),
                partial(&stdout),
                partial(&stderr)
            );
        }
        thread::sleep(Duration::from_millis(20));
    };
    // Its output closes with it, unless a process it started outlives it
    // holding the streams: that too is a hang.
    let rest = bound.saturating_sub(started.elapsed()) + Duration::from_secs(5);
    let collect = |receiver: Receiver<Vec<u8>>, name: &str| {
        let bytes = receiver.recv_timeout(rest).unwrap_or_else(|_| {
            panic!("{command:?} ended but its {name} stayed open: a process it started still runs")
        });
        String::from_utf8(bytes).unwrap_or_else(|error| {
            panic!(
                "{command:?}: its {name} is not UTF-8 ({error}):\n{}",
                String::from_utf8_lossy(error.as_bytes())
            )
        })
    };
    Ran {
        command: command_line(command),
        code: status.code(),
        stdout: collect(stdout, "standard output"),
        stderr: collect(stderr, "standard error"),
    }
}

/// One run of `lab matrix --output json=matrix.json` over the Rust store,
/// on a terminal 80 columns wide: what it printed (the text report, laid
/// out for 80 columns) and the JSON report it wrote, from the same run.
pub struct RustMatrix {
    /// The run: the text report on standard output.
    pub ran: Ran,
    /// The JSON report, as `lab matrix --format json` prints it.
    pub json: serde_json::Value,
}

impl RustMatrix {
    /// The command line the run was made with, after `lab`.
    pub const ARGS: [&'static str; 3] = ["matrix", "--output", "json=matrix.json"];
}

/// The Rust store's kill matrix as `lab matrix` reports it, run once for
/// every test of a binary that reads it: the widths of the text report
/// (tests/lab/widths.rs), the killers the grade recomputes scores against
/// (tests/lab/grade.rs).
pub fn rust_matrix() -> &'static RustMatrix {
    static MATRIX: OnceLock<RustMatrix> = OnceLock::new();
    MATRIX.get_or_init(|| {
        let sandbox = Sandbox::new();
        let mut command = sandbox.command(&RustMatrix::ARGS);
        command.env("COLUMNS", "80");
        // A bound that only proves the run ends: it takes seconds.
        let ran = run_bounded(&mut command, Duration::from_secs(300));
        ran.assert_success();
        let written = std::fs::read_to_string(sandbox.path("matrix.json"))
            .unwrap_or_else(|e| panic!("no matrix.json ({e}):\n{}", ran.shown()));
        let json = serde_json::from_str(&written)
            .unwrap_or_else(|e| panic!("matrix.json is not JSON ({e}):\n{written}"));
        RustMatrix { ran, json }
    })
}

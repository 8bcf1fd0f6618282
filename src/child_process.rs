//! A child process the lab talks to by lines: a worker running the suite,
//! or an implementation speaking the lab's protocol. Its standard output
//! arrives line by line with a time limit, and the last lines of its
//! standard error are kept for the messages that explain what went wrong.
//!
//! Neither pipe is ever waited on for good: after a kill, a process the
//! child started may hold them open, so the threads that read them are
//! left to end with it.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, PipeWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

/// How many lines of standard error [`LineChild::stderr_tail`] gives.
const STDERR_LINES: usize = 20;

/// How many lines of standard error are kept for the windows of
/// [`LineChild::stderr_window`]: the last lines of a window are among them
/// unless the child wrote more than this since the window closed.
const KEPT_LINES: usize = 200;

/// The longest [`LineChild::dump_stacks`] waits for a dump.
const DUMP_WAIT: Duration = Duration::from_millis(500);

/// How many dumps of its stacks a program that hung is asked for.
const DUMPS: usize = 3;

/// How long a dump's lines must stop coming for it to be whole.
const DUMP_QUIET: Duration = Duration::from_millis(40);

/// The start of the line the lab writes into the child's standard error
/// pipe itself to mark a moment (see [`LineChild::mark_stderr`]); a
/// control character no program's trace begins with.
const MARK: &str = "\u{1}lease-lab mark ";

/// The longest the lab waits for its own mark to come through the pipe.
/// It comes at once unless the machine is stalled: this only keeps a
/// reader that is gone from stopping the lab.
const MARK_WAIT: Duration = Duration::from_secs(2);

/// A moment in a child's standard error, from [`LineChild::mark_stderr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark(usize);

/// The lines a child wrote on standard error between two marks: the last
/// of them (blank lines left out), and how many came before those.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StderrWindow {
    /// The last lines, oldest first.
    pub last: Vec<String>,
    /// How many lines came before them within the window.
    pub earlier: usize,
}

impl StderrWindow {
    /// Whether no line was written in it.
    pub fn is_empty(&self) -> bool {
        self.last.is_empty() && self.earlier == 0
    }

    /// This window followed by `later` (of another run of the program),
    /// keeping the last `at_most` lines of both.
    pub fn then(mut self, later: StderrWindow, at_most: usize) -> StderrWindow {
        let total = self.earlier + self.last.len() + later.earlier + later.last.len();
        if later.earlier > 0 {
            self.last.clear();
        }
        self.last.extend(later.last);
        let cut = self.last.len().saturating_sub(at_most);
        self.last.drain(..cut);
        StderrWindow {
            earlier: total - self.last.len(),
            last: self.last,
        }
    }
}

/// What the reader of standard error has seen.
#[derive(Default)]
struct StderrLog {
    /// The last [`KEPT_LINES`] lines the child wrote, blank lines left out.
    kept: VecDeque<String>,
    /// How many such lines it wrote in all.
    written: usize,
    /// For each mark, in order, how many lines had been written before it.
    marks: Vec<usize>,
}

impl StderrLog {
    /// Takes in one line read from the pipe: the child's, the lab's mark,
    /// or the start of an unfinished line of the child's followed by the
    /// mark.
    fn take(&mut self, line: &str) {
        let (child_part, mark) = match line.find(MARK) {
            Some(at) => (&line[..at], true),
            None => (line, false),
        };
        if !child_part.trim().is_empty() {
            if self.kept.len() == KEPT_LINES {
                self.kept.pop_front();
            }
            self.kept.push_back(child_part.to_string());
            self.written += 1;
        }
        if mark {
            self.marks.push(self.written);
        }
    }

    /// The lines from `from` (the start, for `None`) to `to`: the last
    /// `at_most` of them still kept, and how many came before.
    fn window(&self, from: Option<Mark>, to: Mark, at_most: usize) -> StderrWindow {
        let start = from.map_or(0, |Mark(mark)| self.marks[mark]);
        let end = self.marks[to.0];
        let first_kept = self.written - self.kept.len();
        let shown_from = end.saturating_sub(at_most).max(start).max(first_kept);
        // Lines no longer kept leave nothing to show: an empty range.
        let shown_to = end.max(shown_from);
        let last: Vec<String> = self
            .kept
            .range(shown_from - first_kept..shown_to - first_kept)
            .cloned()
            .collect();
        StderrWindow {
            earlier: end - start - last.len(),
            last,
        }
    }
}

/// The reader's log, and the signal that it has taken in another line.
type SharedLog = Arc<(Mutex<StderrLog>, Condvar)>;

/// A running child process with its output read line by line.
pub struct LineChild {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: SharedLog,
    /// The lab's own end of the child's standard error pipe, for marks.
    marker: Option<PipeWriter>,
    /// How many marks were written.
    marks_written: usize,
    /// The program's own process, when the child only wraps it (a
    /// sandbox): signals for the program go there.
    program: Option<u32>,
    /// What its pipes' readers have read, within its caps.
    counted: Arc<Counted>,
}

/// Why no line came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoLine {
    /// Nothing arrived within the time limit.
    Timeout,
    /// The child closed its standard output (it has ended, as a rule).
    Closed,
}

/// What the lab reads of a child's output at most: the longest line, and
/// everything it writes on both pipes together. A child that writes more
/// has its output cut off there and is told apart as one whose output was
/// too large ([`LineChild::too_large`]), never read into the lab's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputCaps {
    /// The longest line, in bytes.
    pub line: usize,
    /// Everything, in bytes.
    pub total: u64,
}

impl OutputCaps {
    /// No cap that a child of the lab's own would meet.
    pub const NONE: OutputCaps = OutputCaps {
        line: usize::MAX,
        total: u64::MAX,
    };
}

/// What the readers of a child's pipes share: what they have read, and
/// how the child's output passed its caps, once it did.
struct Counted {
    caps: OutputCaps,
    read: std::sync::atomic::AtomicU64,
    too_large: Mutex<Option<String>>,
}

impl Counted {
    /// Reads the next line of `reader` into `bytes` (emptied first),
    /// within the caps; `false` at the end of the pipe, or when the caps
    /// were passed (said in [`Counted::too_large`]), after which nothing
    /// more is read.
    fn next_line(&self, reader: &mut impl BufRead, bytes: &mut Vec<u8>, pipe: &str) -> bool {
        use std::sync::atomic::Ordering;
        bytes.clear();
        let limit = u64::try_from(self.caps.line)
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        let read = match reader.take(limit).read_until(b'\n', bytes) {
            Ok(0) | Err(_) => return false,
            Ok(read) => read as u64,
        };
        let total = self.read.fetch_add(read, Ordering::Relaxed) + read;
        let passed = if bytes.len() > self.caps.line {
            Some(format!(
                "a line of more than {} on its {pipe}",
                crate::sandbox::size(self.caps.line as u64)
            ))
        } else if total > self.caps.total {
            Some(format!(
                "more than {} of output in all",
                crate::sandbox::size(self.caps.total)
            ))
        } else {
            None
        };
        match passed {
            Some(why) => {
                self.too_large
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(why);
                false
            }
            None => true,
        }
    }
}

impl LineChild {
    /// Starts `command` with its standard input piped (or closed when
    /// `with_stdin` is false) and its output read by threads of its own.
    pub fn spawn(command: &mut Command, with_stdin: bool) -> io::Result<LineChild> {
        let spawned = LineChild::spawn_with(command, with_stdin, OutputCaps::NONE, Command::spawn);
        // The command keeps no copy of the writing end of the child's
        // standard error.
        command.stderr(Stdio::null());
        spawned
    }

    /// [`LineChild::spawn`], reading at most `caps` of the child's output,
    /// and starting it with `start` (which may start it on another thread).
    pub fn spawn_with(
        command: &mut Command,
        with_stdin: bool,
        caps: OutputCaps,
        start: impl FnOnce(&mut Command) -> io::Result<Child>,
    ) -> io::Result<LineChild> {
        let stdin = if with_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        // The lab keeps a writing end of the child's standard error pipe:
        // a mark it writes there comes after everything the child wrote
        // before, so that what the child wrote between two moments is
        // known exactly, without waiting on the clock.
        let (stderr, marker) = std::io::pipe()?;
        command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(marker.try_clone()?);
        let started = start(command);
        // The command keeps its copy of the writing end; the child has its own.
        command.stderr(Stdio::null());
        let mut child = started?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let counted = Arc::new(Counted {
            caps,
            read: std::sync::atomic::AtomicU64::new(0),
            too_large: Mutex::new(None),
        });
        let (sender, lines) = mpsc::channel();
        let on_stdout = Arc::clone(&counted);
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut bytes = Vec::new();
            while on_stdout.next_line(&mut reader, &mut bytes, "standard output") {
                let line = String::from_utf8_lossy(&bytes);
                let line = line.trim_end_matches(['\n', '\r']).to_string();
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let log: SharedLog = Arc::default();
        let kept = Arc::clone(&log);
        let on_stderr = Arc::clone(&counted);
        thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut bytes = Vec::new();
            // A line that is not UTF-8 is still a line: it is read lossily.
            while on_stderr.next_line(&mut reader, &mut bytes, "standard error") {
                let line = String::from_utf8_lossy(&bytes);
                let (log, taken) = &*kept;
                log.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take(line.trim_end_matches(['\n', '\r']));
                taken.notify_all();
            }
        });
        Ok(LineChild {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: log,
            marker: Some(marker),
            marks_written: 0,
            program: None,
            counted,
        })
    }

    /// How the child's output passed its caps, once it did: its output is
    /// no longer read, and its standard output has ended for the lab.
    pub fn too_large(&self) -> Option<String> {
        self.counted
            .too_large
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Tells the child's program apart from the child, when the child
    /// wraps it (a sandbox's bubblewrap): its process id.
    pub fn set_program(&mut self, program: Option<u32>) {
        self.program = program;
    }

    /// The process id of the program: the child's own, or the one it
    /// wraps ([`LineChild::set_program`]).
    pub fn program_id(&self) -> u32 {
        self.program.unwrap_or_else(|| self.child.id())
    }

    /// The next line of standard output, waiting at most `limit`.
    pub fn next_line(&self, limit: Duration) -> Result<String, NoLine> {
        self.lines.recv_timeout(limit).map_err(|error| match error {
            RecvTimeoutError::Timeout => NoLine::Timeout,
            RecvTimeoutError::Disconnected => NoLine::Closed,
        })
    }

    /// Hands over the lines of standard output, for a reader of its own;
    /// [`LineChild::next_line`] then answers [`NoLine::Closed`].
    pub fn take_lines(&mut self) -> Receiver<String> {
        let (_, closed) = mpsc::channel();
        std::mem::replace(&mut self.lines, closed)
    }

    /// Writes `line` and a line break to the child's standard input.
    pub fn send_line(&mut self, line: &str) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "standard input is closed"))?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// Closes the child's standard input, which tells a protocol speaker to end.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Marks this moment in the child's standard error: a window from or
    /// to it ([`LineChild::stderr_window`]) holds exactly the lines the
    /// child wrote before or after it. `None` if the mark could not be
    /// written.
    pub fn mark_stderr(&mut self) -> Option<Mark> {
        let marker = self.marker.as_mut()?;
        marker
            .write_all(format!("{MARK}{}\n", self.marks_written).as_bytes())
            .ok()?;
        self.marks_written += 1;
        Some(Mark(self.marks_written - 1))
    }

    /// The lines the child wrote on standard error between `from` (its
    /// start, for `None`) and `to`: the last `at_most` of them and how many
    /// came before. Waits for the mark `to` to come through the pipe, which
    /// it does at once; empty if it never comes.
    pub fn stderr_window(&self, from: Option<Mark>, to: Mark, at_most: usize) -> StderrWindow {
        let (log, taken) = &*self.stderr;
        let log = log.lock().unwrap_or_else(PoisonError::into_inner);
        let (log, _) = taken
            .wait_timeout_while(log, MARK_WAIT, |log| log.marks.get(to.0).is_none())
            .unwrap_or_else(PoisonError::into_inner);
        if log.marks.get(to.0).is_none() {
            return StderrWindow::default();
        }
        log.window(from, to, at_most)
    }

    /// The last lines the child wrote on standard error until now, oldest
    /// first (blank lines left out): everything it wrote before this call,
    /// even just before it was killed, is there.
    pub fn stderr_tail(&mut self) -> Vec<String> {
        match self.mark_stderr() {
            Some(now) => self.stderr_window(None, now, STDERR_LINES).last,
            None => Vec::new(),
        }
    }

    /// Asks a child that stopped answering where it is: sends it `SIGUSR1`,
    /// on which the Python starter dumps the stack of each of its threads
    /// on standard error (`faulthandler`), three times, one dump after
    /// the other has come (a loop is met on one line or another: several
    /// dumps see its lines), and gives back the mark taken before (the
    /// child's own lines end there) and the lines written after it, each
    /// dump waited for until its lines stopped coming, within half a
    /// second. A program without a handler for the signal ends, as the kill
    /// that follows would end it, and writes nothing.
    pub fn dump_stacks(&mut self) -> (Option<Mark>, Vec<String>) {
        let Some(before) = self.mark_stderr() else {
            return (None, Vec::new());
        };
        let mut lines = Vec::new();
        for _ in 0..DUMPS {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            if let Ok(pid) = libc::pid_t::try_from(self.program_id()) {
                // SAFETY: kill(2) sends a signal; it touches no memory of
                // this process.
                unsafe {
                    libc::kill(pid, libc::SIGUSR1);
                }
            }
            let had = lines.len();
            let deadline = std::time::Instant::now() + DUMP_WAIT;
            let mut seen = had;
            while std::time::Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None))
            {
                thread::sleep(DUMP_QUIET);
                let Some(now) = self.mark_stderr() else { break };
                lines = self.stderr_window(Some(before), now, KEPT_LINES).last;
                if lines.len() > had && lines.len() == seen {
                    break;
                }
                seen = lines.len();
            }
            if lines.len() == had {
                // No dump came: the program has no handler, or ended.
                break;
            }
        }
        (Some(before), lines)
    }

    /// The last lines the child wrote on standard error before `to`, oldest
    /// first, as [`LineChild::stderr_tail`] gives them up to now.
    pub fn stderr_tail_until(&self, to: Mark) -> Vec<String> {
        self.stderr_window(None, to, STDERR_LINES).last
    }

    /// Kills the child (if it still runs) and every process it started
    /// that still runs (on Linux), and reaps the child.
    ///
    /// A program may be a shell, a launcher or a build tool that starts the
    /// real one: killing only the process the lab started would leave the
    /// rest running, holding the pipes and the store's file, after the lab
    /// has given up on them.
    pub fn kill(&mut self) {
        // Only while the child is not reaped is its id still its own; its
        // family is read before it is killed, as orphans leave its tree.
        let started = match self.child.try_wait() {
            Ok(None) => crate::program_threads::family(self.child.id()),
            _ => Vec::new(),
        };
        let _ = self.child.kill();
        for pid in started.into_iter().skip(1) {
            if let Ok(pid) = libc::pid_t::try_from(pid) {
                // SAFETY: kill(2) sends a signal; it touches no memory of
                // this process.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
        let _ = self.child.wait();
    }

    /// Waits for the child to end and says how it ended.
    pub fn wait(&mut self) -> String {
        match self.child.wait() {
            Ok(status) => describe_exit(status),
            Err(error) => format!("could not be waited for: {error}"),
        }
    }

    /// How the child ended, waiting at most `limit` for it to end: a child
    /// that closes its output as it exits may not be reaped yet when the
    /// lab reads the end of its output. `None` if it still runs.
    pub fn ended_within(&mut self, limit: Duration) -> Option<String> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Some(how) = self.ended() {
                return Some(how);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            thread::sleep(Duration::from_millis(1));
        }
    }

    /// How the child ended, if it has: `None` while it runs.
    pub fn ended(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(describe_exit(status)),
            Ok(None) => None,
            Err(error) => Some(format!("could not be waited for: {error}")),
        }
    }
}

/// How long a child is given to end by itself once its standard input
/// closes, before it is killed: a program that speaks the lab's protocol
/// then writes its last answers and exits (`labs/protocol.md`), and
/// whatever it does at exit (a log flushed, its time counted by a wrapper
/// such as `/usr/bin/time`) is done.
const EXIT_GRACE: Duration = Duration::from_millis(200);

impl Drop for LineChild {
    fn drop(&mut self) {
        let was_open = self.stdin.is_some();
        self.close_stdin();
        // The pipe's reader ends once the child's end closes too.
        self.marker = None;
        let grace = if was_open { EXIT_GRACE } else { Duration::ZERO };
        if self.ended_within(grace).is_none() {
            self.kill();
        }
    }
}

/// How a process ended, in words: `exited with code 3`, `was killed by signal 9`.
pub fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => "ended".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> LineChild {
        LineChild::spawn(Command::new("sh").args(["-c", script]), true).unwrap()
    }

    #[test]
    fn lines_arrive_in_order_and_then_the_pipe_closes() {
        let mut child = shell("echo one; echo two >&2; echo three; exit 3");
        let second = Duration::from_secs(5);
        assert_eq!(child.next_line(second), Ok("one".into()));
        assert_eq!(child.next_line(second), Ok("three".into()));
        assert_eq!(child.next_line(second), Err(NoLine::Closed));
        assert_eq!(child.wait(), "exited with code 3");
        assert_eq!(child.stderr_tail(), ["two"]);
    }

    #[test]
    fn a_silent_child_times_out_and_can_be_killed() {
        let mut child = shell("sleep 30");
        assert_eq!(
            child.next_line(Duration::from_millis(50)),
            Err(NoLine::Timeout)
        );
        assert_eq!(child.ended(), None);
        child.kill();
        assert_eq!(child.ended().as_deref(), Some("was killed by signal 9"));
    }

    /// Whether process `pid` runs: it is neither gone nor a zombie left
    /// to be reaped.
    fn runs(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
            !state.starts_with('Z')
        })
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn killing_a_child_kills_the_processes_it_started() {
        // A shell that starts a long sleep in the background, says its id
        // and waits: the lab kills the shell, and the sleep must end too.
        let mut child = shell("sleep 30 & echo $!; wait");
        let started: u32 = child
            .next_line(Duration::from_secs(5))
            .expect("the shell says the id")
            .parse()
            .expect("an id");
        assert!(runs(started));
        child.kill();
        assert_eq!(child.ended().as_deref(), Some("was killed by signal 9"));
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while runs(started) && std::time::Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        assert!(!runs(started), "process {started} still runs");
    }

    #[test]
    fn what_is_sent_comes_back_and_closing_stdin_ends_a_reader() {
        let mut child = shell("while read line; do echo \"got $line\"; done; echo bye");
        child.send_line("a").unwrap();
        assert_eq!(child.next_line(Duration::from_secs(5)), Ok("got a".into()));
        child.close_stdin();
        assert_eq!(child.next_line(Duration::from_secs(5)), Ok("bye".into()));
        assert!(child.send_line("b").is_err());
    }

    #[test]
    fn only_the_last_lines_of_standard_error_are_kept() {
        let mut child = shell("for i in $(seq 1 30); do echo \"e$i\" >&2; done");
        assert_eq!(child.next_line(Duration::from_secs(5)), Err(NoLine::Closed));
        child.wait();
        let tail = child.stderr_tail();
        assert_eq!(tail.len(), STDERR_LINES);
        assert_eq!(tail.last().map(String::as_str), Some("e30"));
    }

    /// The lines between two marks are exactly those written between them,
    /// however the reading of the pipe is timed: each answer on standard
    /// output comes after the child wrote its trace, and the mark after
    /// the answer.
    #[test]
    fn a_window_of_standard_error_holds_what_was_written_between_its_marks() {
        let mut child = shell(
            "read a; echo one >&2; echo two >&2; echo >&2; echo a; read b; printf 'half' >&2; echo b; read c; echo c",
        );
        let second = Duration::from_secs(5);
        let start = child.mark_stderr().unwrap();
        child.send_line("x").unwrap();
        assert_eq!(child.next_line(second), Ok("a".into()));
        let first = child.mark_stderr().unwrap();
        child.send_line("x").unwrap();
        assert_eq!(child.next_line(second), Ok("b".into()));
        let half = child.mark_stderr().unwrap();
        child.send_line("x").unwrap();
        assert_eq!(child.next_line(second), Ok("c".into()));
        let last = child.mark_stderr().unwrap();
        let window = |from, to, at_most| child.stderr_window(from, to, at_most);
        assert_eq!(
            window(Some(start), first, 5),
            StderrWindow {
                last: vec!["one".into(), "two".into()],
                earlier: 0
            }
        );
        assert_eq!(
            window(None, first, 1),
            StderrWindow {
                last: vec!["two".into()],
                earlier: 1
            }
        );
        // A line left unfinished when the mark came is the child's still.
        assert_eq!(window(Some(first), half, 5).last, ["half"]);
        assert_eq!(window(Some(half), last, 5), StderrWindow::default());
        assert_eq!(child.stderr_tail(), ["one", "two", "half"]);
    }

    #[test]
    fn a_window_whose_lines_are_no_longer_kept_counts_them() {
        let mut log = StderrLog::default();
        log.take(&format!("{MARK}0"));
        for n in 0..KEPT_LINES + 3 {
            log.take(&format!("e{n}"));
            if n == 1 {
                log.take(&format!("{MARK}1"));
            }
        }
        log.take(&format!("{MARK}2"));
        assert_eq!(
            log.window(Some(Mark(0)), Mark(1), 5),
            StderrWindow {
                last: Vec::new(),
                earlier: 2
            }
        );
        let recent = log.window(Some(Mark(1)), Mark(2), 2);
        assert_eq!(recent.earlier, KEPT_LINES - 1);
        assert_eq!(
            recent.last,
            [
                format!("e{}", KEPT_LINES + 1),
                format!("e{}", KEPT_LINES + 2)
            ]
        );
    }

    #[test]
    fn windows_of_two_runs_keep_the_last_lines_of_both() {
        let window = |last: &[&str], earlier| StderrWindow {
            last: last.iter().map(|line| line.to_string()).collect(),
            earlier,
        };
        assert_eq!(
            window(&["a", "b"], 1).then(window(&["c"], 0), 2),
            window(&["b", "c"], 2)
        );
        assert_eq!(
            window(&["a"], 0).then(window(&["c"], 4), 3),
            window(&["c"], 5),
            "the lines the later run left out came after the earlier's"
        );
        assert!(StderrWindow::default().is_empty());
        assert!(!window(&[], 1).is_empty());
        assert!(!window(&["a"], 0).is_empty());
    }

    #[test]
    fn what_a_killed_child_wrote_on_standard_error_before_the_kill_is_kept() {
        for _ in 0..20 {
            let mut child = shell("echo 'my last words' >&2; echo go; sleep 30");
            assert_eq!(child.next_line(Duration::from_secs(5)), Ok("go".into()));
            child.kill();
            assert_eq!(child.stderr_tail(), ["my last words"]);
        }
    }

    #[test]
    fn a_child_that_is_ending_is_waited_for_and_one_that_runs_is_not() {
        let mut ending = shell("sleep 0.2; exit 3");
        assert_eq!(
            ending.ended_within(Duration::from_secs(10)).as_deref(),
            Some("exited with code 3")
        );
        let mut running = shell("sleep 5");
        assert_eq!(running.ended_within(Duration::from_millis(50)), None);
    }

    #[test]
    fn dropping_a_child_that_runs_kills_and_reaps_it() {
        let child = shell("sleep 30");
        let proc_entry = std::path::PathBuf::from(format!("/proc/{}", child.child.id()));
        assert!(proc_entry.exists());
        drop(child);
        assert!(!proc_entry.exists(), "the child is gone, not left running");
    }
}

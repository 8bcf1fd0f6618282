//! A child process the lab talks to by lines: a worker running the suite,
//! or an implementation speaking the lab's protocol. Its standard output
//! arrives line by line with a time limit, and the last lines of its
//! standard error are kept for the messages that explain what went wrong.
//!
//! Neither pipe is ever waited on for good: after a kill, a process the
//! child started may hold them open, so the threads that read them are
//! left to end with it.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

/// How many lines of standard error are kept.
const STDERR_LINES: usize = 20;

/// How long the last lines of standard error are waited for once the
/// child ended by itself.
const ENDED_GRACE: Duration = Duration::from_millis(500);
/// How long they are waited for once the lab killed it.
const KILLED_GRACE: Duration = Duration::from_millis(100);

/// A running child process with its output read line by line.
pub struct LineChild {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Signalled when the child's standard error has been read to its end.
    stderr_read: Receiver<()>,
    /// Whether the lab killed it: it then has no last words to wait for.
    killed: bool,
}

/// Why no line came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoLine {
    /// Nothing arrived within the time limit.
    Timeout,
    /// The child closed its standard output (it has ended, as a rule).
    Closed,
}

impl LineChild {
    /// Starts `command` with its standard input piped (or closed when
    /// `with_stdin` is false) and its output read by threads of its own.
    pub fn spawn(command: &mut Command, with_stdin: bool) -> io::Result<LineChild> {
        let stdin = if with_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let mut child = command
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&tail);
        let (read_to_end, stderr_read) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let mut kept = kept.lock().unwrap_or_else(PoisonError::into_inner);
                if kept.len() == STDERR_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
            let _ = read_to_end.send(());
        });
        Ok(LineChild {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: tail,
            stderr_read,
            killed: false,
        })
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

    /// The last lines the child wrote on standard error, oldest first
    /// (blank lines left out). Once the child has ended by itself, what it
    /// wrote last is waited for, briefly: a process it started may hold the
    /// pipe open.
    pub fn stderr_tail(&mut self) -> Vec<String> {
        if let Some(grace) = self.last_words_grace() {
            let _ = self.stderr_read.recv_timeout(grace);
        }
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|line| !line.trim().is_empty())
            .cloned()
            .collect()
    }

    /// How long to wait for what the child wrote last on standard error:
    /// nothing while it runs; briefly once the lab killed it, since what it
    /// wrote before the kill may still be in the pipe, unread; longer once
    /// it ended by itself. Never for good: a process it started may hold the
    /// pipe open with nothing more to say.
    fn last_words_grace(&mut self) -> Option<Duration> {
        if self.killed {
            Some(KILLED_GRACE)
        } else {
            self.ended().map(|_| ENDED_GRACE)
        }
    }

    /// Kills the child (if it still runs) and reaps it.
    pub fn kill(&mut self) {
        self.killed = true;
        let _ = self.child.kill();
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
            thread::sleep(Duration::from_millis(5));
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

impl Drop for LineChild {
    fn drop(&mut self) {
        self.close_stdin();
        if self.ended().is_none() {
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

    #[test]
    fn last_words_are_waited_for_briefly_after_a_kill_and_not_while_it_runs() {
        let mut running = shell("sleep 5");
        assert_eq!(running.last_words_grace(), None, "it still runs");
        running.kill();
        assert_eq!(running.last_words_grace(), Some(KILLED_GRACE));
        let mut ended = shell("exit 3");
        assert_eq!(ended.wait(), "exited with code 3");
        assert_eq!(ended.last_words_grace(), Some(ENDED_GRACE));
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

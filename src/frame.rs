//! Where in a program's own code something happened: a frame of its
//! stack, as a file, a line, a function and the source line.
//!
//! Two things give frames. An error answer of the lab's protocol may carry
//! the frames of the exception or panic behind it (`"frames"`, see
//! `labs/protocol.md`), read by [`Frame::from_answer`]. And a program that
//! stops answering is asked where it is ([`crate::child_process::LineChild::dump_stacks`]):
//! the Python starter answers with a dump of its threads' stacks
//! (`faulthandler`'s), read by [`hung_in`].

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::path::Path;

/// A call a program never answered: it hung, or it ended (or broke the
/// protocol) in the middle of it. A check blames a hang or a crash on this
/// operation, and on where it hung.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unanswered {
    /// The operation called (`claim`).
    pub operation: String,
    /// Whether it hung (else it ended, or broke the protocol).
    pub hung: bool,
    /// How long the call waited for its answer, in milliseconds, when it
    /// hung.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
    /// Where it hung, innermost last, when the program could tell (the
    /// Python starter dumps its stacks when asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hung_in: Vec<Frame>,
}

/// One frame of a program's stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// The file, as the program named it (often an absolute path).
    pub file: String,
    /// The line, from 1.
    pub line: u64,
    /// The function, when the program said it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The source line, trimmed, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// An error a program answered, with the frames of its code that raised
/// it: kept beside a test's run, so that a failure that quotes the error
/// can say where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Raised {
    /// The error as a failure quotes it (see [`crate::suite::error_text`]).
    pub error: String,
    /// Its frames, outermost first.
    pub frames: Vec<Frame>,
}

/// How many frames an error shows at most: the innermost ones.
pub const SHOWN_FRAMES: usize = 3;

impl Frame {
    /// The frames of an error answer's `"frames"` field, outermost first,
    /// the last [`SHOWN_FRAMES`] of them; empty when the field is missing.
    /// A frame that is not an object with a string `file` and a positive
    /// integer `line` is left out: the frames explain an error, and a
    /// malformed one must not turn that error into a broken answer.
    pub fn from_answer(answer: &Value) -> Vec<Frame> {
        let Some(frames) = answer.get("frames").and_then(Value::as_array) else {
            return Vec::new();
        };
        let text = |frame: &Value, key: &str| {
            frame
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_string)
        };
        let read: Vec<Frame> = frames
            .iter()
            .filter_map(|frame| {
                Some(Frame {
                    file: text(frame, "file")?,
                    line: frame.get("line")?.as_u64().filter(|&line| line > 0)?,
                    function: text(frame, "function"),
                    code: text(frame, "code"),
                })
            })
            .collect();
        let skip = read.len().saturating_sub(SHOWN_FRAMES);
        read.into_iter().skip(skip).collect()
    }

    /// The frame with its source line read from its file when the program
    /// did not give it (a file the lab cannot read keeps none).
    pub fn with_code(mut self) -> Frame {
        if self.code.is_none() {
            self.code = std::fs::read_to_string(&self.file).ok().and_then(|text| {
                let line = usize::try_from(self.line).ok()?.checked_sub(1)?;
                let code = text.lines().nth(line)?.trim();
                (!code.is_empty()).then(|| code.to_string())
            });
        }
        self
    }

    /// The file as a person finds it: relative to the current folder when
    /// it is inside it, else as the program named it.
    pub fn file_shown(&self) -> String {
        let file = Path::new(&self.file);
        std::env::current_dir()
            .ok()
            .and_then(|here| file.strip_prefix(here).ok().map(Path::to_path_buf))
            .map_or_else(|| self.file.clone(), |file| file.display().to_string())
    }
}

impl fmt::Display for Frame {
    /// `in renew, line 265 of mine/store.py, at `while True:``, on one
    /// line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.function {
            Some(function) => write!(f, "in {function}, ")?,
            None => f.write_str("at ")?,
        }
        write!(f, "line {} of {}", self.line, self.file_shown())?;
        match &self.code {
            Some(code) => write!(f, ", at `{code}`"),
            None => Ok(()),
        }
    }
}

/// Where the calls of a Python program stood when it was asked, from the
/// dump of its threads' stacks that `faulthandler` writes (each thread a
/// line `Thread 0x… (most recent call first):`, then a line
/// `  File "PATH", line N in FUNCTION` per frame): for each thread that
/// was answering a request (a frame `answer` of the protocol loop), its
/// innermost frame in the file that runs the protocol loop, the student's
/// file, with the source line read from it. Empty when the lines hold no
/// such dump (a program in another language, one that ignored the signal).
///
/// The lines may hold several dumps, taken one after another: a call that
/// loops is met on one line of its loop or another, so the frames of one
/// function are one frame, its first line met (the loop's own line, as a
/// rule), and the place is the same whichever moments the dumps caught.
pub fn hung_in(dump: &[String]) -> Vec<Frame> {
    let mut found: Vec<Frame> = Vec::new();
    let mut thread: Vec<Frame> = Vec::new();
    let mut close = |thread: &mut Vec<Frame>| {
        // Most recent call first: what comes before `answer` is the call.
        if let Some(at) = thread
            .iter()
            .position(|frame| frame.function.as_deref() == Some("answer"))
        {
            let own = &thread[at].file;
            let inner = thread[..at].iter().find(|frame| &frame.file == own);
            if let Some(frame) = inner {
                match found
                    .iter_mut()
                    .find(|seen| seen.file == frame.file && seen.function == frame.function)
                {
                    Some(seen) => seen.line = seen.line.min(frame.line),
                    None => found.push(frame.clone()),
                }
            }
        }
        thread.clear();
    };
    for line in dump {
        if line.starts_with("Thread 0x") || line.starts_with("Current thread 0x") {
            close(&mut thread);
        } else if let Some(frame) = dump_frame(line) {
            thread.push(frame);
        }
    }
    close(&mut thread);
    found.truncate(SHOWN_FRAMES);
    found.into_iter().map(Frame::with_code).collect()
}

/// A frame line of `faulthandler`'s dump, `  File "PATH", line N in FUNCTION`.
fn dump_frame(line: &str) -> Option<Frame> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (file, rest) = rest.rsplit_once("\", line ")?;
    let (number, function) = rest.split_once(" in ")?;
    Some(Frame {
        file: file.to_string(),
        line: number.trim().parse().ok()?,
        function: Some(function.trim().to_string()),
        code: None,
    })
}

/// Whether `line` is a line of `faulthandler`'s dump, which the lab asked
/// for and which is not the program's own writing.
pub fn is_dump_line(line: &str) -> bool {
    line.starts_with("Thread 0x")
        || line.starts_with("Current thread 0x")
        || line.trim() == "<no Python frame>"
        || dump_frame(line).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_dump_gives_the_innermost_frame_of_the_file_answering_the_request() {
        let dump: Vec<String> = [
            "Thread 0x00007f3b2a5fe6c0 (most recent call first):",
            "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait",
            "  File \"/usr/lib/python3.11/concurrent/futures/thread.py\", line 81 in _worker",
            "Thread 0x00007f3b2adff6c0 (most recent call first):",
            "  File \"/no/such/store.py\", line 265 in renew",
            "  File \"/no/such/store.py\", line 431 in answer",
            "  File \"/usr/lib/python3.11/concurrent/futures/thread.py\", line 58 in run",
            "Current thread 0x00007f3b2b9d8740 (most recent call first):",
            "  File \"/no/such/store.py\", line 460 in <module>",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            hung_in(&dump),
            [Frame {
                file: "/no/such/store.py".into(),
                line: 265,
                function: Some("renew".into()),
                code: None,
            }]
        );
        assert!(dump.iter().all(|line| is_dump_line(line)));
        assert!(
            !is_dump_line("  File \"x.py\", line 3, in f"),
            "a traceback's line"
        );
        assert!(hung_in(&["my renew: A".into()]).is_empty());
    }

    #[test]
    fn an_answer_s_frames_are_read_and_a_malformed_one_left_out() {
        let answer = json!({"error": "other", "message": "NameError", "frames": [
            {"file": "a.py", "line": 1, "function": "f", "code": "g()"},
            {"file": "a.py", "line": 0},
            {"line": 3},
            {"file": "a.py", "line": 7, "function": "g", "code": "  resutl  "},
        ]});
        let frames = Frame::from_answer(&answer);
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(frames[1].code.as_deref(), Some("resutl"));
        assert_eq!(frames[1].to_string(), "in g, line 7 of a.py, at `resutl`");
        assert!(Frame::from_answer(&json!({"error": "other"})).is_empty());
    }

    #[test]
    fn a_thread_that_answers_no_request_is_not_where_the_call_hung() {
        // The main thread, listed first, stands in the student's file too,
        // but answers nothing: the call hung in the other thread's renew.
        let dump: Vec<String> = [
            "Current thread 0x00007f3b2b9d8740 (most recent call first):",
            "  File \"/no/such/store.py\", line 460 in <module>",
            "Thread 0x00007f3b2adff6c0 (most recent call first):",
            "  File \"/no/such/store.py\", line 265 in renew",
            "  File \"/no/such/store.py\", line 431 in answer",
        ]
        .map(String::from)
        .to_vec();
        let lines: Vec<u64> = hung_in(&dump).iter().map(|frame| frame.line).collect();
        assert_eq!(lines, [265]);
    }

    #[test]
    fn a_frame_s_code_is_read_from_its_file_when_not_given() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("store.py");
        std::fs::write(&file, "def renew():\n\n    while True:\n").unwrap();
        let at = |line, code: Option<&str>| Frame {
            file: file.display().to_string(),
            line,
            function: None,
            code: code.map(str::to_string),
        };
        let read = |frame: Frame| frame.with_code().code;
        assert_eq!(read(at(3, None)).as_deref(), Some("while True:"));
        assert_eq!(read(at(2, None)), None, "a blank line is no code");
        assert_eq!(read(at(9, None)), None, "past the end");
        assert_eq!(read(at(3, Some("given"))).as_deref(), Some("given"));
        let elsewhere = Frame {
            file: "/no/such/store.py".into(),
            ..at(3, None)
        };
        assert_eq!(read(elsewhere), None, "a file the lab cannot read");
    }
}

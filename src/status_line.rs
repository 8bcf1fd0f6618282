//! The status line: a line rewritten in place, for the commands that keep a
//! person waiting (`lab chaos` and its shrink): on standard error, and only
//! when standard error is a terminal, so that piped or captured output is
//! exactly the report.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use std::time::Duration;

/// How often the line is drawn again, even when nothing new was said: the
/// spinner shows that the command is alive through a long call.
const TICK: Duration = Duration::from_millis(100);

/// A status line, or nothing (not at a terminal, or not wanted).
///
/// It is cleared when dropped (indicatif's `AndClear`), so that the report
/// that follows starts on a clean line.
#[derive(Debug)]
pub struct StatusLine {
    bar: Option<ProgressBar>,
}

impl StatusLine {
    /// A line on standard error when it is a terminal, else nothing.
    pub fn at_terminal() -> StatusLine {
        let target = ProgressDrawTarget::stderr();
        if target.is_hidden() {
            return StatusLine::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, target)
            .with_style(
                ProgressStyle::with_template("{spinner} {wide_msg}")
                    .expect("the template is valid")
                    .tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ "),
            )
            .with_finish(ProgressFinish::AndClear);
        bar.enable_steady_tick(TICK);
        StatusLine { bar: Some(bar) }
    }

    /// No line at all: what every caller that is not a person's terminal
    /// gets (tests, pipes, the matrix's chaos column).
    pub fn hidden() -> StatusLine {
        StatusLine { bar: None }
    }

    /// Says what `message` makes on the line (cut to the terminal's
    /// width); without a line, `message` is not even made.
    pub fn say(&self, message: impl FnOnce() -> String) {
        if let Some(bar) = &self.bar {
            bar.set_message(message());
        }
    }
}

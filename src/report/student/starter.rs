//! What `lab new` says it did: the starter written and how it runs, that
//! it is now the student's current implementation (and how to switch back
//! to the one it replaces), and the commands to go on with.

use crate::course::progress::Became;
use crate::inert;
use crate::lab_text::Language;
use crate::operation::NAMES as OPERATIONS;
use crate::terminal::fill;
use colored::Colorize;
use std::path::Path;

/// A starter as `lab new` wrote it.
pub struct Written<'a> {
    /// Its language.
    pub language: Language,
    /// The folder it was written into, as the student named it.
    pub dir: &'a Path,
    /// The file where its first operation is written.
    pub start: &'a Path,
}

/// What `lab new` says: `written`, which `became` the current
/// implementation in the progress file at `progress_path`, and the
/// commands that check it; at most `width` columns.
pub fn new_text(written: &Written, became: &Became, progress_path: &Path, width: usize) -> String {
    // Each paragraph names folders and files the student chose.
    let paragraph = |text: String| fill(&inert::line(&text), width, "", "");
    let dir = written.dir.display();
    let what = match written.language {
        Language::Python => format!(
            "Wrote {}, your store in Python: the protocol is done, and the eight operations are yours to write, each with the worksheet's contract as its documentation. The lab runs it as `python3 {}`.",
            written.start.display(),
            written.start.display()
        ),
        Language::Rust => format!(
            "Wrote a cargo project in {dir}, your store in Rust: the protocol is done in {}, and the eight operations are yours to write in {}, each with the worksheet's contract as its documentation. The lab builds it with `cargo build` and runs the program built.",
            written.dir.join("src").join("main.rs").display(),
            written.start.display()
        ),
    };
    let now = match became {
        Became::CurrentInstead { .. } => "now ",
        Became::Current | Became::AlreadyCurrent => "",
    };
    let mut out = format!(
        "{}\n\n{}\n  {}   runs the contract tests of every step against it\n  {}   runs them again each time you save\n\n",
        paragraph(what),
        paragraph(format!(
            "It is {now}your current implementation, recorded in your progress file, {}, which lab finds from this folder and the folders below it (as {dir}), so:",
            progress_path.display(),
        )),
        "lab check".bold(),
        "lab watch".bold(),
    );
    if let Became::CurrentInstead { previous } = became {
        out.push_str(&paragraph(format!(
            "Your earlier implementation, {}, stays recorded with its checks: `lab check --impl {}` makes it current again.",
            previous.describe(),
            previous.impl_arg()
        )));
        out.push_str("\n\n");
    }
    out.push_str(&paragraph(format!(
        "Start with step 1, {}, in {}.",
        OPERATIONS[0],
        written.start.display()
    )));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::Implementation;

    fn python() -> Implementation {
        Implementation::Python {
            file: "/home/ada/lab/mine/store.py".into(),
        }
    }

    /// The file written is named as the student named it, with how the
    /// lab runs it; never `python3` before the name it was written as.
    #[test]
    fn it_names_the_file_written_and_how_it_runs() {
        colored::control::set_override(false);
        let written = Written {
            language: Language::Python,
            dir: Path::new("mine"),
            start: Path::new("mine/store.py"),
        };
        let text = new_text(
            &written,
            &Became::Current,
            Path::new("lease-lab-progress.json"),
            80,
        );
        assert!(
            text.starts_with("Wrote mine/store.py, your store in Python:"),
            "{text}"
        );
        assert!(!text.contains("Wrote python3"), "{text}");
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            flat.contains("The lab runs it as `python3 mine/store.py`."),
            "{text}"
        );
        assert!(
            flat.contains("It is your current implementation, recorded in your progress file, lease-lab-progress.json, which lab finds from this folder and the folders below it (as mine), so: lab check runs"),
            "{text}"
        );
        assert!(flat.contains("Start with step 1, init_db, in mine/store.py."));
        assert!(
            text.lines().all(|line| line.chars().count() <= 80),
            "{text}"
        );
    }

    /// A starter that takes another implementation's place says which,
    /// and how to make that one current again.
    #[test]
    fn a_starter_in_another_s_place_says_how_to_switch_back() {
        colored::control::set_override(false);
        let written = Written {
            language: Language::Rust,
            dir: Path::new("mine-rs"),
            start: Path::new("mine-rs/src/store.rs"),
        };
        let became = Became::CurrentInstead { previous: python() };
        let text = new_text(&written, &became, Path::new("p.json"), 80);
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.starts_with("Wrote a cargo project in mine-rs, your store in Rust: the protocol is done in mine-rs/src/main.rs"), "{text}");
        assert!(
            flat.contains("It is now your current implementation, recorded in your progress file"),
            "{text}"
        );
        assert!(
            flat.contains("Your earlier implementation, python3 /home/ada/lab/mine/store.py, stays recorded with its checks: `lab check --impl /home/ada/lab/mine/store.py` makes it current again. Start with step 1"),
            "{text}"
        );
    }
}

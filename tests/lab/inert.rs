//! Untrusted text made inert wherever `lab` shows it. A class whose
//! students' names, `--why` answers, named tests and file names carry
//! escape sequences (the window's title set, the cursor moved up, the line
//! cleared), a C1 control, a bidirectional override, a line break and a
//! formula after a `;` is graded in every format: nothing a terminal would
//! obey reaches standard output or error (`--color never`, so that the
//! lab's own colours are not there either), the lines fit 80 columns, the
//! CSV reads back with every column and its cells neutralised, the
//! Markdown keeps each text in its cell, the page parses with no element a
//! student made, and the JSON keeps every text exactly. A program whose
//! greeting, answers, frames and standard error carry the same is checked,
//! and the student's own screens show their progress file inert.

use crate::common::{run_bounded, Ran, Sandbox, NO_HANG};
use lease_lab::course::prediction::Score;
use lease_lab::course::progress::{Attempt, Progress, Reflection};
use lease_lab::inert;
use serde_json::Value;

/// Sets the terminal's window title.
const TITLE: &str = "\x1b]0;pwned\x07";
/// Moves the cursor up a line, then clears that line.
const OVER: &str = "\x1b[1A\x1b[2K";

/// Eve's name, in both of her files.
fn eve() -> String {
    format!("{TITLE}Eve{OVER}\u{202e}")
}

/// Eve's `--why`: a line break, an overwrite, and CSI as a C1 control.
fn eves_why() -> String {
    format!("a lease\nis a lock{OVER}\u{9b}2J <script>alert(1)</script>")
}

/// A wrong guess at exercise 4 that is a test the suite has.
const HELD: &str = "claim_of_a_held_job_is_refused";

/// A test Eve named, which no suite has.
fn eves_test() -> String {
    format!("claim{OVER}")
}

/// Each character in `text` that a terminal would obey, or that reorders
/// what it shows: the control characters but the line break, and the
/// bidirectional overrides and isolates.
fn obeyed(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
        })
        .collect()
}

/// Asserts that `ran` wrote nothing a terminal would obey.
fn assert_inert(ran: &Ran) {
    assert_eq!(
        obeyed(&ran.stdout),
        Vec::<char>::new(),
        "stdout: {}",
        ran.shown()
    );
    assert_eq!(
        obeyed(&ran.stderr),
        Vec::<char>::new(),
        "stderr: {}",
        ran.shown()
    );
}

/// Asserts that `ran`, a screen, wrote nothing a terminal would obey and
/// no line on standard output wider than 80 columns.
fn assert_screen(ran: &Ran) {
    assert_inert(ran);
    for line in ran.stdout.lines() {
        assert!(
            unicode_width::UnicodeWidthStr::width(line) <= 80,
            "wider than 80 columns: {line}\n{}",
            ran.shown()
        );
    }
}

/// One attempt at `exercise` (of mutant `mutant`), naming `predicted`.
fn attempt(mutant: &str, predicted: &[String], why: &str) -> Attempt {
    Attempt {
        at: "2026-01-01T00:00:00Z".into(),
        mutant: mutant.into(),
        predicted: predicted.to_vec(),
        why: why.into(),
        probe: None,
        caught_by: Vec::new(),
        score: Score::of(predicted, &[]),
    }
}

/// The class, written into the sandbox: Eve's two files (exercise 4 and
/// her reflection; exercise 6), which are merged into one row, each file
/// named with an escape sequence; Bob, named `Bob;=1+1`; and a file whose
/// name holds a line break, with no name in it. Answers the files.
fn write_class(lab: &Sandbox) -> Vec<String> {
    let mut first = Progress {
        student: Some(eve()),
        reflection: Some(Reflection {
            at: "2026-01-02T00:00:00Z".into(),
            why_tests_are_kept: format!("so that {TITLE}they stay"),
            not_guaranteed: "<img src=x onerror=alert(1)> [a](http://x) | new | row |".into(),
        }),
        ..Progress::default()
    };
    first
        .exercise("4")
        .attempts
        .push(attempt("04", &[eves_test(), HELD.into()], &eves_why()));
    let mut second = Progress {
        student: Some(eve()),
        ..Progress::default()
    };
    second.exercise("6").attempts.push(attempt(
        "06",
        &["second_completion_is_refused_and_keeps_the_result".into()],
        "",
    ));
    let mut bob = Progress {
        student: Some("Bob;=1+1".into()),
        ..Progress::default()
    };
    bob.exercise("4")
        .attempts
        .push(attempt("04", &[HELD.into()], "=1+1; @SUM(A1)"));
    let mut unnamed = Progress::default();
    unnamed
        .exercise("4")
        .attempts
        .push(attempt("04", &[HELD.into()], ""));
    let files = [
        (format!("eve{TITLE}.json"), first),
        (format!("eve{OVER}.json"), second),
        ("bob.json".to_string(), bob),
        ("line\nbreak.json".to_string(), unnamed),
    ];
    for (name, progress) in &files {
        std::fs::write(
            lab.path(name),
            serde_json::to_string_pretty(progress).unwrap(),
        )
        .unwrap();
    }
    files.into_iter().map(|(name, _)| name).collect()
}

/// `lab --color never grade ARGS FILES` at 80 columns.
fn grade(lab: &Sandbox, args: &[&str], files: &[String]) -> Ran {
    let mut line = vec!["--color", "never", "grade"];
    line.extend_from_slice(args);
    line.extend(files.iter().map(String::as_str));
    let mut command = lab.command(&line);
    command.env("COLUMNS", "80");
    let ran = run_bounded(&mut command, NO_HANG);
    ran.assert_success();
    ran
}

#[test]
fn a_hostile_class_is_graded_inert_in_text_csv_markdown_and_html_and_exact_in_json() {
    let lab = Sandbox::new();
    let files = write_class(&lab);
    let eve_shown = inert::line(&eve()).into_owned();

    let rows = grade(&lab, &[], &files);
    assert_screen(&rows);
    assert!(
        rows.stderr.contains(&format!(
            "eve\\x1b[1A\\x1b[2K.json is {eve_shown}'s too: merged into the row of eve\\x1b]0;pwned\\x07.json"
        )),
        "{}",
        rows.shown()
    );
    assert!(
        rows.stdout.contains("\n\\x1b]0;pwned\\x..  first "),
        "Eve's name cut to its column: {}",
        rows.stdout
    );
    assert!(
        rows.stdout.contains("\nline\\nbreak.json  first "),
        "{}",
        rows.stdout
    );
    assert!(
        rows.stdout.contains("\nBob;=1+1          first "),
        "{}",
        rows.stdout
    );

    let misconceptions = grade(&lab, &["--misconceptions"], &files);
    assert_screen(&misconceptions);
    let why_shown = inert::line(&eves_why()).into_owned();
    assert!(
        misconceptions
            .text()
            .contains(&crate::common::words(&format!(
                "{eve_shown}: \"{why_shown}\""
            ))),
        "{}",
        misconceptions.shown()
    );
    let per_exercise = grade(&lab, &["--per-exercise"], &files);
    assert_screen(&per_exercise);
    assert!(
        per_exercise.text().contains("claim\\x1b[1A\\x1b[2K (1)"),
        "{}",
        per_exercise.stdout
    );

    let csv = grade(&lab, &["--format", "csv"], &files);
    assert_inert(&csv);
    assert_csv_reads_back(&csv.stdout, &eve_shown);
    let exercises_csv = grade(&lab, &["--format", "csv", "--per-exercise"], &files);
    assert_inert(&exercises_csv);

    let markdown = grade(&lab, &["--misconceptions", "--format", "markdown"], &files);
    assert_inert(&markdown);
    assert_markdown_keeps_text_in_cells(&markdown.stdout, &eve_shown, &why_shown);

    let html = grade(&lab, &["--format", "html"], &files);
    assert_inert(&html);

    let json = grade(&lab, &["--format", "json"], &files);
    assert_json_is_exact(&json, &files);

    // A file given that is not there: its name is said inert, in the
    // warning and in the closing error, and the others are graded.
    let gone = "gone\x1b]0;x\x07.json".to_string();
    let mut line = vec!["--color", "never", "grade"];
    line.extend(files.iter().map(String::as_str));
    line.push(&gone);
    let mut command = lab.command(&line);
    command.env("COLUMNS", "80");
    let skipped = run_bounded(&mut command, NO_HANG);
    skipped.assert_code(3);
    assert_inert(&skipped);
    assert!(
        skipped.stderr.contains("gone\\x1b]0;x\\x07.json skipped"),
        "{}",
        skipped.shown()
    );
}

/// The CSV as a spreadsheet reads it: every column the lab writes, a row
/// per file, each one line, the cells made inert and neutralised; split
/// on `;` or `,` with no regard to quotes, no piece starts a formula.
fn assert_csv_reads_back(text: &str, eve_shown: &str) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let mut expected = vec!["student".to_string(), "file".into(), "status".into()];
    for exercise in lease_lab::exercise::exercises() {
        expected.push(format!("{} first", exercise.key));
        expected.push(format!("{} latest", exercise.key));
    }
    expected.extend(["first total", "latest total", "stores", "flags"].map(String::from));
    assert_eq!(header, expected);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 4, "a row per file given");
    assert_eq!(text.lines().count(), 5, "each row on one line:\n{text}");
    let cells = |row: &csv::StringRecord| (row[0].to_string(), row[1].to_string());
    assert_eq!(
        rows.iter().map(cells).collect::<Vec<_>>(),
        [
            (
                eve_shown.to_string(),
                "eve\\x1b]0;pwned\\x07.json".to_string()
            ),
            (
                eve_shown.to_string(),
                "eve\\x1b[1A\\x1b[2K.json".to_string()
            ),
            ("Bob;'=1+1".to_string(), "bob.json".to_string()),
            (
                "line\\nbreak.json".to_string(),
                "line\\nbreak.json".to_string()
            ),
        ]
    );
    assert!(rows[1][2].starts_with("merged into the row of eve\\x1b]0;pwned\\x07.json"));
    for piece in text.split(['\n', ';', ',']) {
        let start = piece.trim_start_matches([' ', '"']);
        assert!(
            !start.starts_with(['=', '+', '-', '@']),
            "{piece:?} would start a formula in:\n{text}"
        );
    }
}

/// The Markdown as a renderer of GitHub's tables reads it: the wrong
/// guesses' table has a row for each, Eve's reason is text in its cell,
/// and nothing a student wrote is HTML, a link, an image or emphasis.
fn assert_markdown_keeps_text_in_cells(markdown: &str, eve_shown: &str, why_shown: &str) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut in_cell = false;
    for event in Parser::new_ext(markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::TableHead | Tag::TableRow) => rows.push(Vec::new()),
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                rows.last_mut().unwrap().push(String::new());
            }
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::Text(text) | Event::Code(text) if in_cell => {
                rows.last_mut().unwrap().last_mut().unwrap().push_str(&text)
            }
            Event::Start(tag) if in_cell => panic!("{tag:?} in a cell of:\n{markdown}"),
            Event::Html(html) | Event::InlineHtml(html) => {
                panic!("raw HTML {html:?} in:\n{markdown}")
            }
            _ => {}
        }
    }
    let eves = rows
        .iter()
        .find(|row| row[0] == inert::line(&eves_test()))
        .unwrap_or_else(|| panic!("a row for Eve's test in {rows:?}"));
    assert_eq!(eves[2], format!("{eve_shown}: \"{why_shown}\""));
    let reflection = rows
        .iter()
        .find(|row| row[0] == eve_shown && row.len() == 3)
        .unwrap_or_else(|| panic!("Eve's reflection in {rows:?}"));
    assert_eq!(
        reflection[2],
        "<img src=x onerror=alert(1)> [a](http://x) | new | row |"
    );
}

/// The JSON keeps every text exactly as the students wrote it (JSON
/// escapes the C0 controls itself, so none is on standard output).
fn assert_json_is_exact(ran: &Ran, files: &[String]) {
    assert!(
        !ran.stdout
            .chars()
            .any(|c| c.is_ascii_control() && c != '\n'),
        "{}",
        ran.shown()
    );
    assert_eq!(obeyed(&ran.stderr), Vec::<char>::new(), "{}", ran.shown());
    let class: Value = serde_json::from_str(&ran.stdout).unwrap();
    let given: Vec<&str> = class["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["file"].as_str().unwrap())
        .collect();
    assert_eq!(given, files.iter().map(String::as_str).collect::<Vec<_>>());
    let students: Vec<&str> = class["students"]
        .as_array()
        .unwrap()
        .iter()
        .map(|student| student["student"].as_str().unwrap())
        .collect();
    assert_eq!(students, [eve().as_str(), "Bob;=1+1", "line\nbreak.json"]);
    let reasons = &class["misconceptions"][0]["wrong"];
    let eves = reasons
        .as_array()
        .unwrap()
        .iter()
        .find(|wrong| wrong["test"] == eves_test())
        .unwrap();
    assert_eq!(eves["reasons"][0]["why"], eves_why());
    assert_eq!(eves["reasons"][0]["student"], eve());
}

/// A program whose greeting, answers, frames and standard error carry
/// escape sequences and a bidirectional override, in a file whose name
/// carries one: `lab check` shows them inert, its JSON keeps them; then
/// `lab progress`, the overview and `lab reflect` show what the progress
/// file records inert. A program that greets wrongly fails inert too.
#[test]
fn a_hostile_program_and_progress_file_are_shown_inert() {
    let lab = Sandbox::new();
    let program = format!("store{TITLE}.py");
    std::fs::write(
        lab.path(&program),
        r#"import json, sys
print(json.dumps({"protocol": "lease-lab", "version": 1, "name": "\x1b]0;pwned\x07\u202e"}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    sys.stderr.write("\x1b[1A\x1b[2Kcalled " + request["op"] + "\u202e\n")
    sys.stderr.flush()
    if request["op"] == "init_db":
        answer = {"error": "other", "message": "\x1b]0;pwned\x07boom\x1b[1A\u202e", "frames": [{"file": "s\x1b[2K.py", "line": 3, "function": "init\u202edb", "code": "raise Boom(\"\x1b[31m\")"}]}
    else:
        answer = {"error": "not-implemented", "message": "step 2: \x1b[2Kenqueue is not written yet"}
    print(json.dumps(answer), flush=True)
"#,
    )
    .unwrap();
    let run = |args: &[&str]| {
        let mut line = vec!["--color", "never", "--progress", "p.json"];
        line.extend_from_slice(args);
        let mut command = lab.command(&line);
        command.env("COLUMNS", "80");
        run_bounded(&mut command, NO_HANG)
    };
    let name = eve();
    let checked = run(&["--student", &name, "check", "--impl", &program]);
    checked.assert_code(1);
    assert_screen(&checked);
    for shown in [
        "actual:   error other: \\x1b]0;pwned\\x07boom\\x1b[1A\\u{202e}",
        "raised in init\\u{202e}db, line 3 of s\\x1b[2K.py:",
        "raise Boom(\"\\x1b[31m\")",
        "\\x1b[1A\\x1b[2Kcalled init_db\\u{202e}",
        "store\\x1b]0;pwned\\x07.py",
    ] {
        assert!(
            checked.stdout.contains(shown),
            "{shown}\n{}",
            checked.shown()
        );
    }
    let json = run(&["check", "--impl", &program, "--format", "json"]);
    json.assert_code(1);
    assert!(!json
        .stdout
        .chars()
        .any(|c| c.is_ascii_control() && c != '\n'));
    let report: Value = serde_json::from_str(&json.stdout).unwrap();
    let failure = &report["steps"][0]["failures"][0];
    assert!(
        failure["reason"]
            .as_str()
            .unwrap()
            .contains("\x1b]0;pwned\x07boom\x1b[1A\u{202e}"),
        "the JSON keeps the exact text: {failure}"
    );
    assert_eq!(failure["stderr"][0], "\x1b[1A\x1b[2Kcalled init_db\u{202e}");

    let reflected = run(&[
        "reflect",
        "--why-kept",
        &format!("so that {TITLE}they stay"),
        "--not-guaranteed",
        "clocks\n\u{9b}2J",
    ]);
    reflected.assert_success();
    assert_screen(&reflected);
    let again = run(&["reflect", "--why-kept", "a", "--not-guaranteed", "b"]);
    again.assert_success();
    assert_screen(&again);
    assert!(
        again.stdout.contains("so that \\x1b]0;pwned\\x07they stay"),
        "the earlier answers, inert: {}",
        again.shown()
    );
    let progress = run(&["progress"]);
    progress.assert_success();
    assert_screen(&progress);
    let overview = run(&[]);
    overview.assert_success();
    assert_screen(&overview);
    assert!(
        overview
            .text()
            .contains(&format!("of {}", inert::line(&name))),
        "{}",
        overview.shown()
    );

    let wrong = format!("wrong{OVER}.py");
    std::fs::write(
        lab.path(&wrong),
        "import sys\nsys.stderr.write('\\x1b]0;pwned\\x07' + 'x' * 200 + '\\n')\nsys.stderr.flush()\nprint('\\x1b[1A\\x1b[2Khello\\u202e', flush=True)\nsys.stdin.read()\n",
    )
    .unwrap();
    let refused = run(&["check", "--impl", &wrong]);
    assert_ne!(refused.code, Some(0), "{}", refused.shown());
    assert_screen(&refused);
    assert!(
        refused
            .text()
            .contains("it wrote `\\x1b[1A\\x1b[2Khello\\u{202e}`"),
        "{}",
        refused.shown()
    );
}

/// The page as a browser parses it (the `page-checks` feature).
#[cfg(feature = "page-checks")]
mod pages {
    use super::*;

    /// The hostile class's page parses with no error, holds no element a
    /// student wrote, and shows Eve's name, inert, first.
    #[test]
    fn a_hostile_class_s_page_holds_no_element_a_student_wrote() {
        let lab = Sandbox::new();
        let files = write_class(&lab);
        let eve_shown = inert::line(&eve()).into_owned();
        let html = grade(&lab, &["--format", "html"], &files);
        let page = scraper::Html::parse_document(&html.stdout);
        assert!(page.errors.is_empty(), "{:?}", page.errors);
        for made_by_a_student in ["script", "img", "a"] {
            let selector = scraper::Selector::parse(made_by_a_student).unwrap();
            assert_eq!(page.select(&selector).count(), 0, "<{made_by_a_student}>");
        }
        let selector = scraper::Selector::parse("table.students tbody tr:not(.flag) th").unwrap();
        let named: Vec<String> = page
            .select(&selector)
            .map(|cell| cell.text().collect())
            .collect();
        assert!(named[0].starts_with(&eve_shown), "{named:?}");
    }
}

//! The tests of a graded class's renderings, on a class made by hand: CSV
//! quoting and neutralising, the rows' columns at 80 columns, and what a
//! student wrote shown inert in every view.

use super::*;
use crate::course::grade::{grade, Killers, StudentFile};
use crate::course::prediction::Score;
use crate::course::progress::{Attempt, Progress};

fn file(name: &str, student: Option<&str>, predicted: &[&str], claimed: u8) -> StudentFile {
    let mut progress = Progress {
        student: student.map(String::from),
        ..Progress::default()
    };
    let predicted: Vec<String> = predicted.iter().map(|t| t.to_string()).collect();
    let mut score = Score::of(&predicted, &[]);
    score.percent = claimed;
    progress.exercise("4").attempts.push(Attempt {
        at: String::new(),
        mutant: "04".into(),
        predicted,
        why: "a \"fence\", surely".into(),
        probe: None,
        caught_by: Vec::new(),
        score,
    });
    StudentFile {
        file: name.into(),
        progress,
    }
}

fn class() -> ClassGrade {
    let mut killers = Killers::default();
    killers.add_mutant("04", vec![("right".into(), 4)]);
    grade(
        &[
            file("ada.json", Some("Lovelace, \"Ada\"\nA."), &["right"], 100),
            file("b.json", None, &["wrong|test"], 100),
        ],
        Vec::new(),
        &killers,
    )
}

/// Every cell is quoted, as RFC 4180 says, and read back whole; a line
/// break in a name is shown as `\n`, so that each row is one line.
#[test]
fn csv_quotes_every_cell_and_shows_a_line_break() {
    let written = csv(&class());
    assert!(
        written.starts_with("\"student\",\"file\",\"status\",\"1 first\",\"1 latest\","),
        "{written}"
    );
    assert!(
        written.contains("\n\"Lovelace, \"\"Ada\"\"\\nA.\",\"ada.json\","),
        "{written}"
    );
    assert_eq!(written.lines().count(), 3, "a line per row: {written}");
    let mut reader = ::csv::Reader::from_reader(written.as_bytes());
    let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[0][0], "Lovelace, \"Ada\"\\nA.");
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    assert_eq!(&rows[0][column("4 first")], "100");
    assert_eq!(&rows[1][column("4 first")], "0");
    assert_eq!(&rows[1][column("5 first")], "");
    assert_eq!(
        &rows[1][column("flags")],
        "exercise 4 first: the file says 100%, the prediction earns 0%"
    );
}

/// A cell a spreadsheet would run as a formula gets a leading `'`, in
/// every CSV the lab writes, and so does one hidden after a `;`.
#[test]
fn csv_cells_that_a_spreadsheet_would_run_are_neutralised() {
    let mut class = class();
    class.students[0].student = "=HYPERLINK(\"http://x\",\"click\")".into();
    let written = csv(&class);
    let mut reader = ::csv::Reader::from_reader(written.as_bytes());
    let first = reader.records().next().unwrap().unwrap();
    assert_eq!(&first[0], "'=HYPERLINK(\"http://x\",\"click\")");
    let checks = checks_csv(&[ImplCheck {
        student: "@evil".into(),
        entry: "-rf".into(),
        result: CheckResult::TimedOut { limit_s: 5 },
        limit: Some("memory (3 GiB of address space)".into()),
        report: None,
    }]);
    assert!(checks.contains("\n\"'@evil\",\"'-rf\","), "{checks}");
    assert!(
        checks.contains("stopped after 5 s; met the sandbox's limit on memory (3 GiB"),
        "{checks}"
    );
}

/// Every line fits 80 columns; a flagged score is marked and explained.
#[test]
fn the_rows_fit_80_columns_and_mark_a_claimed_score() {
    let shown = text(&class(), 80);
    assert!(
        shown.lines().all(|line| line.chars().count() <= 80),
        "{shown}"
    );
    let row = shown
        .lines()
        .find(|line| line.starts_with("b.json"))
        .unwrap();
    assert!(row.contains("   0!"), "{shown}");
    assert!(
        shown.contains("    ! exercise 4 first: the file says 100%"),
        "{shown}"
    );
    let misconceptions = misconceptions_text(&class(), 80);
    assert!(
        misconceptions.contains(
            "  wrong|test (1 student) did not catch it\n    - b.json: \"a \"fence\", surely\"\n"
        ),
        "{misconceptions}"
    );
    assert!(misconceptions_markdown(&class()).contains("| `wrong\\|test` | 1 |"));
}

/// A name in CJK characters takes two columns a character on a
/// terminal: its row's scores stay under the header's, cut names too.
#[test]
fn wide_characters_keep_the_columns_in_line() {
    use unicode_width::UnicodeWidthStr;
    let mut killers = Killers::default();
    killers.add_mutant("04", vec![("right".into(), 4)]);
    let class = grade(
        &[
            file("a.json", Some("李小龙"), &["right"], 100),
            file("b.json", Some("Ada"), &["right"], 100),
            file("c.json", Some("李小龙李小龙李小龙李小龙"), &["right"], 100),
        ],
        Vec::new(),
        &killers,
    );
    let shown = text(&class, 80);
    let rows: Vec<&str> = shown
        .lines()
        .filter(|line| line.contains(" first  ") || line.starts_with("student "))
        .collect();
    assert_eq!(rows.len(), 4, "{shown}");
    // Every row ends with its total under the header's, right-aligned.
    let widths: Vec<usize> = rows.iter().map(|line| line.width()).collect();
    assert!(
        widths.windows(2).all(|pair| pair[0] == pair[1]),
        "{widths:?}\n{shown}"
    );
    assert_eq!(cut("李小龙李小龙李小龙李小龙", 16).width(), 16);
    assert!(cut("李小龙李小龙李小龙李小龙", 16).contains(".."));
    assert_eq!(cut("Ada", 5), "Ada  ");
}

/// Whether `text` holds a character a terminal would obey, or that
/// reorders what it shows, but for the line breaks of its layout.
fn obeyed(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        (c.is_control() && c != '\n')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    })
}

/// Eve's name, file, named test, `--why` and reflection carry escape
/// sequences (the window's title set, the cursor moved up, the line
/// cleared), a bidirectional override and line breaks; another student
/// is plain.
fn hostile_class() -> ClassGrade {
    let mut killers = Killers::default();
    killers.add_mutant("04", vec![("right".into(), 4)]);
    let mut eve = file(
        "eve\x1b[2K.json",
        Some("\x1b]0;pwned\x07Eve\u{202e}\nX"),
        &["wrong\x1b[1Atest"],
        0,
    );
    eve.progress.exercise("4").attempts[0].why = "it\x1b[1A\x1b[2Kbreaks\nrows".into();
    eve.progress.reflection = Some(crate::course::progress::Reflection {
        at: String::new(),
        why_tests_are_kept: "kept\x1b[31m".into(),
        not_guaranteed: "clocks\u{9b}2J".into(),
    });
    grade(
        &[eve, file("b.json", Some("Bob"), &["right"], 100)],
        Vec::new(),
        &killers,
    )
}

/// Every text view shows what Eve wrote made inert, nothing a terminal
/// would obey; her rows keep their columns, the inert text cut to fit.
#[test]
fn what_a_student_wrote_is_shown_inert_in_every_text_view() {
    let class = hostile_class();
    let rows = text(&class, 80);
    let misconceptions = misconceptions_text(&class, 80);
    let exercises = exercises_text(&class, 80);
    for shown in [&rows, &misconceptions, &exercises] {
        assert_eq!(obeyed(shown), None, "{shown}");
        assert!(
            shown.lines().all(|line| line.chars().count() <= 80),
            "{shown}"
        );
    }
    assert!(
        rows.contains("\n\\x1b]0;pwned\\x..  first"),
        "the name cut to its 16 columns: {rows}"
    );
    assert!(rows.contains("\neve\\x1b[2K.json  latest"), "{rows}");
    let widths: Vec<usize> = rows
        .lines()
        .filter(|line| line.contains(" first  ") || line.contains(" latest  "))
        .map(unicode_width::UnicodeWidthStr::width)
        .collect();
    assert_eq!(widths.len(), 4, "{rows}");
    assert!(widths.windows(2).all(|pair| pair[0] == pair[1]), "{rows}");
    assert!(
        misconceptions.contains(
            "  wrong\\x1b[1Atest (1 student) did not catch it\n    - \\x1b]0;pwned\\x07Eve\\u{202e}\\nX: \"it\\x1b[1A\\x1b[2Kbreaks\\nrows\"\n"
        ),
        "{misconceptions}"
    );
    assert!(
        misconceptions.contains(
            "    - why tests are kept: kept\\x1b[31m\n    - not guaranteed: clocks\\u{9b}2J\n"
        ),
        "{misconceptions}"
    );
    assert!(
        exercises.contains("exercise 4: first: wrong\\x1b[1Atest (1)"),
        "{exercises}"
    );
}

/// The warnings about files, and the rows of implementations checked,
/// name files and quote programs: inert too, a traceback keeping its
/// lines.
#[test]
fn file_warnings_and_checked_implementations_are_shown_inert() {
    let mut class = hostile_class();
    class.files.push(crate::course::grade::GivenFile {
        file: "twice\x1b]0;x\x07.json".into(),
        status: crate::course::grade::FileStatus::GivenTwice,
    });
    let warnings = file_warnings(&class);
    assert_eq!(
        warnings,
        ["warning: twice\\x1b]0;x\\x07.json is given twice: graded once"]
    );
    let skipped = skipped_warning(&crate::course::grade::Unreadable {
        file: "gone\n.json".into(),
        reason: "it holds \x1b[1A".into(),
    });
    assert_eq!(skipped, "warning: gone\\n.json skipped: it holds \\x1b[1A");
    let checks = [ImplCheck {
        student: "\x1b]0;pwned\x07mallory".into(),
        entry: "mallory.py".into(),
        result: CheckResult::CouldNotStart {
            reason: "it wrote:\n  Traceback\x1b[1A\x1b[2K\n  boom\u{202e}".into(),
        },
        limit: None,
        report: None,
    }];
    let shown = checks_text(&checks, 80);
    assert_eq!(obeyed(&shown), None, "{shown}");
    let long = [ImplCheck {
        result: CheckResult::CouldNotStart {
            reason: format!("it wrote:\n  {}", "\x1b".repeat(40)),
        },
        ..checks[0].clone()
    }];
    let cut = checks_text(&long, 80);
    assert!(cut.lines().all(|line| line.chars().count() <= 80), "{cut}");
    assert!(cut.ends_with("\\x1b\\x1b\\...\n"), "{cut}");
    assert!(
        shown.contains("\n\\x1b]0;pwned\\x..  -             could not start: it wrote:\n"),
        "{shown}"
    );
    assert!(
        shown.contains("\n                                  Traceback\\x1b[1A\\x1b[2K\n                                  boom\\u{202e}\n"),
        "{shown}"
    );
}

/// The Markdown of the misconceptions, read back as a renderer of GitHub's
/// tables reads it: Eve's name and `--why`, full of Markdown, HTML and
/// line breaks, stay text in their cells, in the rows the lab wrote.
#[test]
fn the_markdown_keeps_what_a_student_wrote_as_text_in_its_cell() {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let mut killers = Killers::default();
    killers.add_mutant("04", vec![("right".into(), 4)]);
    let name = "<b>Eve</b> | **bold**\n| forged | row |";
    let why = "[click](http://evil.example) ![img](x.png) _em_ `code` <script>&amp; www.evil.example a@b.example $x$ ~~no~~\\|";
    let mut eve = file("eve.json", Some(name), &["wrong|te`st"], 0);
    eve.progress.exercise("4").attempts[0].why = why.into();
    let class = grade(&[eve], Vec::new(), &killers);
    let markdown = misconceptions_markdown(&class);
    let row = markdown
        .lines()
        .find(|line| line.contains("wrong"))
        .unwrap();
    assert_eq!(
        row,
        "| ``wrong\\|te`st`` | 1 | &lt;b&gt;Eve&lt;/b&gt; \\| \\*\\*bold\\*\\*\\\\n\\| forged \\| row \\|: \"\\[click\\](http\\://evil.example) !\\[img\\](x.png) \\_em\\_ \\`code\\` &lt;script&gt;&amp;amp; www\\.evil.example a\\@b.example \\$x\\$ \\~\\~no\\~\\~\\\\\\|\" |"
    );
    let mut cells: Vec<String> = Vec::new();
    let mut rows = 0;
    let mut in_cell = false;
    for event in Parser::new_ext(&markdown, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::TableRow | Tag::TableHead) => rows += 1,
            Event::Start(Tag::TableCell) => {
                in_cell = true;
                cells.push(String::new());
            }
            Event::End(TagEnd::TableCell) => in_cell = false,
            Event::Text(text) | Event::Code(text) if in_cell => {
                cells.last_mut().unwrap().push_str(&text)
            }
            Event::Start(tag) if in_cell => panic!("{tag:?} made of what a student wrote"),
            Event::Html(html) | Event::InlineHtml(html) => panic!("raw HTML: {html}"),
            _ => {}
        }
    }
    assert_eq!(rows, 2, "the head and one row: {markdown}");
    assert_eq!(
        cells[3..],
        [
            "wrong|te`st".to_string(),
            "1".to_string(),
            format!("{}: \"{why}\"", name.replace('\n', "\\n"))
        ]
    );
}

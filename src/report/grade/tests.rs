//! The tests of a graded class's renderings, on a class made by hand: CSV
//! quoting and neutralising, and the rows' columns at 80 columns.

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

/// Names with commas, quotes and line breaks are quoted as RFC 4180
/// says, and read back whole.
#[test]
fn csv_quotes_commas_quotes_and_line_breaks() {
    let written = csv(&class());
    assert!(
        written.starts_with("student,file,status,1 first,1 latest,"),
        "{written}"
    );
    assert!(
        written.contains("\"Lovelace, \"\"Ada\"\"\nA.\",ada.json,"),
        "{written}"
    );
    let mut reader = ::csv::Reader::from_reader(written.as_bytes());
    let rows: Vec<::csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[0][0], "Lovelace, \"Ada\"\nA.");
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
/// every CSV the lab writes; other cells, and the marks inside a cell,
/// are kept.
#[test]
fn csv_cells_that_a_spreadsheet_would_run_are_neutralised() {
    for formula in [
        "=HYPERLINK(\"http://x\",\"click\")",
        "+1",
        "-1",
        "@SUM(A1)",
        "\tx",
        "\rx",
    ] {
        assert_eq!(neutralised(formula), format!("'{formula}"));
    }
    for plain in ["Ada", "a=b", "", "1-2", "'quoted"] {
        assert_eq!(neutralised(plain), plain);
    }
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
    assert!(checks.contains("\n'@evil,'-rf,"), "{checks}");
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

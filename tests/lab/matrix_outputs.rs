//! `lab matrix --output FORMAT=FILE`, repeated: one run of the matrix
//! writes a report of each format to its file, each the report that
//! `--format FORMAT` alone prints; `--format F --output FILE` works as
//! before; a bad `FORMAT=FILE` is a usage error that names what is wrong.

use crate::common::Sandbox;

/// Every format, with the file one run writes it to.
const REPORTS: [(&str, &str); 5] = [
    ("text", "matrix.txt"),
    ("json", "matrix.json"),
    ("markdown", "matrix.md"),
    ("stryker", "stryker.json"),
    ("html", "matrix.html"),
];

/// `report` less what differs from one run to the next: how long each
/// mutant took (Stryker's `duration`), what a failing test saw (`..., got
/// ...` to the end of its reason: under a mutant that lets a race go
/// wrong, which racers won, in which order they answered and which one the
/// row was left to change from run to run), and the random name of a
/// test's temporary folder, which failures that quote SQLite's own error
/// show (`lease-lab-1lsETL`). What each test expected, and every verdict,
/// stay.
fn steady(report: &str) -> String {
    let report = without_temporary_names(report);
    let mut out = String::with_capacity(report.len());
    for line in report.lines() {
        if line.trim_start().starts_with("\"duration\":") {
            continue;
        }
        out.push_str(&without_what_was_seen(line));
        out.push('\n');
    }
    out
}

/// `line` with what each failure saw, from `got ` to the end of its reason,
/// made `got ..`. The reason ends, in a line of HTML, at the next tag or at
/// the end of the attribute that holds it (`">`); elsewhere (JSON, where a
/// reason's own quotes are escaped, Markdown, text) at the next unescaped
/// `"` or at the end of the line.
fn without_what_was_seen(line: &str) -> String {
    const GOT: &str = "got ";
    let html = line.contains('<');
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(GOT) {
        out.push_str(&rest[..at + GOT.len()]);
        out.push_str("..");
        let after = &rest[at + GOT.len()..];
        let mut end = after.len();
        let mut escaped = false;
        for (index, character) in after.char_indices() {
            let ends = if html {
                character == '<' || (character == '"' && after[index + 1..].starts_with('>'))
            } else {
                character == '"' && !escaped
            };
            if ends {
                end = index;
                break;
            }
            escaped = character == '\\' && !escaped;
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// `report` with every `lease-lab-XXXXXX` folder name made `lease-lab-*`.
fn without_temporary_names(report: &str) -> String {
    const PREFIX: &str = "lease-lab-";
    let mut out = String::with_capacity(report.len());
    let mut rest = report;
    while let Some(at) = rest.find(PREFIX) {
        out.push_str(&rest[..at + PREFIX.len()]);
        out.push('*');
        let after = &rest[at + PREFIX.len()..];
        let end = after
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(after.len());
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn steadying_drops_durations_and_what_failures_saw_only() {
    assert_eq!(
        steady("  \"duration\": 3.5,\n  \"id\": \"08b\",\n"),
        "  \"id\": \"08b\",\n"
    );
    assert_eq!(
        steady("title=\"x: expected one, got 4 winners: A got 2\">x</td> got 3 winners<"),
        "title=\"x: expected one, got ..\">x</td> got ..<\n"
    );
    assert_eq!(
        steady(r#""t": "c: expected [none], got [fence 4]; stored: \"j\": owner \"X\"","#),
        "\"t\": \"c: expected [none], got ..\",\n"
    );
    assert_eq!(
        steady(r#"<span>c: expected [none], got [4]; stored: "j": owner "B"</span>"#),
        "<span>c: expected [none], got ..</span>\n"
    );
}

#[test]
fn one_run_writes_every_format_each_as_its_format_alone_prints_it() {
    let lab_folder = Sandbox::new();
    let mut args = vec!["matrix", "--kind", "hardening"];
    let outputs: Vec<String> = REPORTS
        .iter()
        .map(|(format, file)| format!("{format}={file}"))
        .collect();
    for output in &outputs {
        args.extend(["--output", output]);
    }
    let ran = lab_folder.lab(&args);
    assert!(ran.success(), "{}", ran.stderr);
    assert_eq!(ran.stdout, "", "every report went to its file");
    for (format, file) in REPORTS {
        assert!(
            ran.stderr.contains(&format!("lab matrix: wrote {file}")),
            "{}",
            ran.stderr
        );
        let written = std::fs::read_to_string(lab_folder.path(file)).expect("the report");
        let alone = lab_folder.lab(&["matrix", "--kind", "hardening", "--format", format]);
        assert!(alone.success(), "{}", alone.stderr);
        let (written, alone) = (steady(&written), steady(&alone.stdout));
        let first_difference = written
            .lines()
            .zip(alone.lines())
            .find(|(one, other)| one != other);
        assert!(
            written == alone,
            "{format}: {file} differs from --format {format}'s output, first at:\n{first_difference:?}"
        );
    }
    assert!(std::fs::read_to_string(lab_folder.path("stryker.json"))
        .unwrap()
        .contains("\"schemaVersion\": \"2\""));
}

#[test]
fn format_and_a_bare_output_file_work_as_before_beside_a_named_report() {
    let lab_folder = Sandbox::new();
    let ran = lab_folder.lab(&[
        "matrix",
        "--kind",
        "worksheet",
        "--format",
        "markdown",
        "--output",
        "m.md",
        "--output",
        "json=m.json",
    ]);
    assert!(ran.success(), "{}", ran.stderr);
    assert_eq!(ran.stdout, "");
    let markdown = std::fs::read_to_string(lab_folder.path("m.md")).unwrap();
    assert!(markdown.starts_with("| "), "{markdown}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(lab_folder.path("m.json")).unwrap()).unwrap();
    assert_eq!(json["variants"][0]["id"], "reference");
    let alone = lab_folder.lab(&[
        "matrix",
        "--kind",
        "worksheet",
        "--format",
        "markdown",
        "--output",
        "alone.md",
    ]);
    assert!(alone.success(), "{}", alone.stderr);
    assert_eq!(
        steady(&std::fs::read_to_string(lab_folder.path("alone.md")).unwrap()),
        steady(&markdown)
    );
}

#[test]
fn a_bad_format_equals_file_names_what_is_wrong_and_the_formats() {
    let lab_folder = Sandbox::new();
    for (output, says) in [
        (
            "pdf=m.pdf",
            "`pdf` is not a format; FORMAT=FILE takes one of text, json, markdown, stryker, html",
        ),
        (
            "json=",
            "no file after `json=`: write FORMAT=FILE, such as json=matrix.json",
        ),
    ] {
        let ran = lab_folder.lab(&[
            "matrix",
            "--kind",
            "worksheet",
            "--output",
            "html=m.html",
            "--output",
            output,
        ]);
        assert_eq!(ran.code, Some(2), "{}", ran.stderr);
        assert!(
            ran.stderr.contains(&format!("--output {output}: {says}")),
            "{}",
            ran.stderr
        );
        assert!(!lab_folder.path("m.html").exists(), "nothing is written");
    }
    let clash = lab_folder.lab(&[
        "matrix",
        "--output",
        "json=m.json",
        "--output",
        "stryker=m.json",
    ]);
    assert_eq!(clash.code, Some(2));
    assert!(clash.stderr.contains("two reports to one file, m.json"));
    let chaos = lab_folder.lab(&["matrix", "--chaos", "--output", "html=m.html"]);
    assert_eq!(chaos.code, Some(2));
    assert!(
        chaos
            .stderr
            .contains("--chaos adds its column to the text and json reports only, not to html"),
        "{}",
        chaos.stderr
    );
}

/// The Python store's page agrees with itself: the reference fails one
/// test beyond the worksheet, which does not count for a program, so the
/// summary says so, the banner says no problem for the tests that count,
/// and the test's cell is drawn as not counted, never as a broken
/// reference.
#[test]
fn the_python_matrix_page_says_one_thing_about_the_reference() {
    let matrix = crate::matrices::python_covered_matrix();
    assert!(matrix.reference_failures().is_empty(), "no counted failure");
    let page = lease_lab::report::matrix::html::page(matrix);
    let tests = lease_lab::suite::CASES.len();
    assert!(
        page.contains(&format!("The reference passes {} of {tests} tests; the one it fails is beyond the worksheet for this store and does not count.", tests - 1)),
        "{page}"
    );
    assert!(page.contains("No problems: the reference passes every test that counts"));
}

/// The page as a browser parses it (the `page-checks` feature).
#[cfg(feature = "page-checks")]
mod pages {
    /// The Python store's page draws no cell as a broken reference, and
    /// the test it fails beyond the worksheet as not counted.
    #[test]
    fn the_python_matrix_page_draws_no_broken_reference() {
        let matrix = crate::matrices::python_covered_matrix();
        let page = lease_lab::report::matrix::html::page(matrix);
        let document = scraper::Html::parse_document(&page);
        let broken = scraper::Selector::parse("td.cell.broken").unwrap();
        assert_eq!(
            document.select(&broken).count(),
            0,
            "no cell is drawn as a broken reference"
        );
        let not_counted = scraper::Selector::parse("td.cell.not-counted").unwrap();
        assert!(document.select(&not_counted).count() > 0);
    }
}

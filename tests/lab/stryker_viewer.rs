//! The Stryker report in Stryker's own viewer: the web component
//! `<mutation-test-report-app>` of the npm package mutation-testing-elements,
//! in headless chromium. Every mutant of the Rust store's report and of the
//! Python store's opens without an error, as a reader clicking its mark
//! opens it; a negative test shows that a mutant the viewer cannot open is
//! caught.
//!
//! They need chromium, npm and the package registry, so they are ignored by
//! a plain `cargo test`; `.ci/run` provides them and runs the ignored tests.

use crate::html_browser::{browse, console_messages, write_page};
use crate::matrices::{matrix, python_matrix};
use crate::stryker::npm;
use lease_lab::report::matrix::stryker;
use lease_lab::report::matrix::stryker_page::in_script;
use scraper::{Html, Selector};
use serde_json::{json, Value};
use std::path::Path;

/// The viewer's package and the version the tests pin.
const VIEWER_PACKAGE: &str = "mutation-testing-elements";
const VIEWER_VERSION: &str = "3.9.0";

/// The viewer's one-file bundle for browsers, in the installed package.
const VIEWER_BUNDLE: &str = "node_modules/mutation-testing-elements/dist/mutation-test-elements.js";

/// The script that opens every mutant and writes what happened into the DOM.
const OPEN_EVERY_MUTANT: &str = include_str!("stryker_viewer.js");

/// What opening every mutant of a report in the viewer gave.
#[derive(Debug)]
struct Viewed {
    /// The mutants whose mutated lines showed, in the report's order.
    opened: Vec<String>,
    /// Every error the page raised, each after the mutant being opened.
    errors: Vec<String>,
    /// The page's console messages.
    console: Vec<String>,
}

/// Installs the viewer into `folder` with npm.
fn install_viewer(folder: &Path) {
    npm(
        &[
            "install",
            "--no-audit",
            "--no-fund",
            "--silent",
            &format!("{VIEWER_PACKAGE}@{VIEWER_VERSION}"),
        ],
        folder,
    );
    assert!(
        folder.join(VIEWER_BUNDLE).is_file(),
        "npm installed {VIEWER_BUNDLE}"
    );
}

/// Opens every mutant of `report` in the viewer, in headless chromium.
///
/// The bundle goes into the page itself, not beside it: a script from
/// another file of a `file://` page reports its errors as a bare "Script
/// error.", and the test should say what the viewer said.
fn view(report: &Value) -> Viewed {
    let folder = tempfile::tempdir().expect("a temporary folder");
    install_viewer(folder.path());
    let bundle = std::fs::read_to_string(folder.path().join(VIEWER_BUNDLE)).expect("the bundle");
    let page = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>viewer</title>\
         <script>{}</script></head><body><div id=\"result\"></div>\
         <script>const REPORT = {};\n{}</script></body></html>",
        in_script(&bundle),
        in_script(&report.to_string()),
        in_script(OPEN_EVERY_MUTANT),
    );
    open_every_mutant(&write_page(folder.path(), "viewer.html", &page))
}

/// Opens every mutant of the page at `page` (a viewer with a report, and
/// [`OPEN_EVERY_MUTANT`] run after the report is `REPORT`), in headless
/// chromium.
fn open_every_mutant(page: &Path) -> Viewed {
    let output = browse(page, &["--virtual-time-budget=60000", "--dump-dom"]);
    let console = console_messages(&output);
    let dom = Html::parse_document(&String::from_utf8_lossy(&output.stdout));
    let result = dom
        .select(&Selector::parse("#result").unwrap())
        .next()
        .expect("the page keeps its result element");
    let data = |name: &str| -> Vec<String> {
        result
            .attr(name)
            .map(|json| serde_json::from_str(json).expect("a list in JSON"))
            .unwrap_or_default()
    };
    assert_eq!(
        result.attr("data-done"),
        Some("yes"),
        "the script finished: {console:?}"
    );
    Viewed {
        opened: data("data-opened"),
        errors: data("data-errors"),
        console,
    }
}

/// The ids of the mutants of `file` in `report`.
fn mutant_ids(report: &Value, file: &str) -> Vec<String> {
    report["files"][file]["mutants"]
        .as_array()
        .expect("the file's mutants")
        .iter()
        .map(|mutant| mutant["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
#[ignore = "needs chromium and npm"]
fn every_mutant_of_the_rust_store_opens_in_strykers_viewer() {
    let report = stryker::report(matrix());
    let viewed = view(&report);
    assert_eq!(viewed.errors, Vec::<String>::new());
    assert_eq!(viewed.console, Vec::<String>::new());
    assert_eq!(
        viewed.opened,
        mutant_ids(&report, "crates/store/src/store.rs")
    );
}

#[test]
#[ignore = "needs chromium and npm"]
fn every_mutant_of_the_python_store_opens_in_strykers_viewer() {
    let report = stryker::report(python_matrix());
    let viewed = view(&report);
    assert_eq!(viewed.errors, Vec::<String>::new());
    assert_eq!(viewed.console, Vec::<String>::new());
    assert_eq!(viewed.opened, mutant_ids(&report, "src/store.py"));
}

/// Mutant 08 as the report placed it before: its whole line, replaced by
/// itself and a line more. The viewer marks a change from its first
/// differing character, here a line break, and fails.
#[test]
#[ignore = "needs chromium and npm"]
fn a_line_added_at_the_end_of_the_location_s_line_fails_in_the_viewer() {
    let mut report = stryker::report(matrix());
    let source = report["files"]["crates/store/src/store.rs"]["source"]
        .as_str()
        .unwrap()
        .to_string();
    let mutants = report["files"]["crates/store/src/store.rs"]["mutants"]
        .as_array_mut()
        .unwrap();
    let claim_many = mutants
        .iter_mut()
        .find(|mutant| mutant["id"] == "08")
        .expect("mutant 08 is reported");
    let line = claim_many["location"]["start"]["line"].as_u64().unwrap() - 1;
    let before = source.lines().nth(line as usize - 1).unwrap();
    let code = before.trim_start();
    let indent = before.len() - code.len();
    claim_many["location"] = json!({
        "start": {"line": line, "column": indent + 1},
        "end": {"line": line, "column": before.len() + 1},
    });
    claim_many["replacement"] = json!(format!(
        "{code}\n{}{}",
        &before[..indent],
        claim_many["replacement"].as_str().unwrap().trim_end()
    ));
    let viewed = view(&report);
    assert_eq!(
        viewed.errors,
        ["08: Uncaught Error: Cannot find corresponding opening tag for </span>"]
    );
    assert!(!viewed.opened.contains(&"08".to_string()));
    assert_eq!(
        viewed.opened.len(),
        mutant_ids(&report, "crates/store/src/store.rs").len() - 1
    );
}

/// `lab matrix --format stryker-html --viewer` with the viewer installed
/// by npm: one page, opened from disk, in which every mutant of the Rust
/// store opens; it names the viewer's version and licence. Without
/// `--viewer`, or with a folder that is not the viewer, the command says
/// what to install and runs nothing.
#[test]
#[ignore = "needs chromium and npm"]
fn the_stryker_html_page_opens_every_mutant_from_disk() {
    let lab = crate::common::Sandbox::new();
    install_viewer(lab.dir.path());
    let viewer = format!("node_modules/{VIEWER_PACKAGE}");
    let ran = lab.lab(&[
        "matrix",
        "--format",
        "stryker-html",
        "--viewer",
        &viewer,
        "-o",
        "mutants.html",
    ]);
    ran.assert_success();
    let page = std::fs::read_to_string(lab.path("mutants.html")).unwrap();
    assert!(
        page.contains(&format!(
            "the npm package {VIEWER_PACKAGE} {VIEWER_VERSION}, licence Apache-2.0, inlined"
        )),
        "the page names the viewer and its licence"
    );
    let report = stryker::report(matrix());
    let opened = page.replace(
        "</body>",
        &format!(
            "<div id=\"result\"></div><script>const REPORT = document.querySelector(\"mutation-test-report-app\").report;\n{}</script></body>",
            in_script(OPEN_EVERY_MUTANT)
        ),
    );
    let viewed = open_every_mutant(&write_page(lab.dir.path(), "opened.html", &opened));
    assert_eq!(viewed.errors, Vec::<String>::new());
    assert_eq!(viewed.console, Vec::<String>::new());
    assert_eq!(
        viewed.opened,
        mutant_ids(&report, "crates/store/src/store.rs")
    );
    let without = lab.lab(&["matrix", "--format", "stryker-html"]);
    without.assert_code(2);
    without.assert_says(&["npm install mutation-testing-elements", "--viewer"]);
    let wrong = lab.lab(&["matrix", "--format", "stryker-html", "--viewer", "."]);
    wrong.assert_code(2);
    wrong.assert_says(&["is not Stryker's viewer"]);
}

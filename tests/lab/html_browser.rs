//! The HTML report in a real headless browser (Debian's `chromium`): it
//! loads without a console message, and the browser's DOM holds the kill
//! matrix with a row per test and a column per variant. Negative tests show
//! that a page that throws or logs an error is caught.
//!
//! They need chromium, which a machine with only Rust lacks, so they are
//! ignored by a plain `cargo test`; `.ci/run` installs chromium (`apt-get
//! install -y chromium`) and runs them with `cargo test -- --ignored`.

use lease_lab::matrix::Matrix;
use lease_lab::report::html;
use lease_lab::runner::{RunOptions, WorkerCommand};
use lease_lab::suite::CASES;
use lease_lab::variant::Variant;
use scraper::{Html, Selector};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one browser run may take before the test gives up on it.
const BROWSER_TIME_LIMIT: Duration = Duration::from_secs(120);

/// The browser: `chromium` on the path.
fn chromium() -> PathBuf {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|folder| folder.join("chromium"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!("these tests need a headless browser: install chromium (apt-get install -y chromium)")
        })
}

/// Runs headless chromium on the page `page` with `extra` arguments (such
/// as `--dump-dom`), its console messages logged to stderr.
pub(crate) fn browse(page: &Path, extra: &[&str]) -> Output {
    let profile = tempfile::tempdir().expect("a temporary profile folder");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    // Drain both pipes while waiting: a DOM dump is larger than a pipe
    // holds, and chromium would block writing it.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let mut pipe = pipe.expect("the pipe was asked for");
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes).map(|_| bytes)
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("chromium can be waited for") {
            break status;
        }
        if started.elapsed() > BROWSER_TIME_LIMIT {
            let _ = child.kill();
            panic!("chromium did not finish within {BROWSER_TIME_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = Output {
        status,
        stdout: stdout.join().unwrap().expect("chromium's output"),
        stderr: stderr.join().unwrap().expect("chromium's log"),
    };
    assert!(
        output.status.success(),
        "chromium failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The page's console messages, which chromium logs as `...:CONSOLE...]`
/// lines (`CONSOLE(12)` in older versions, `CONSOLE:12` in newer ones).
pub(crate) fn console_messages(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.contains(":CONSOLE"))
        .map(str::to_string)
        .collect()
}

pub(crate) fn write_page(folder: &Path, name: &str, html: &str) -> PathBuf {
    let path = folder.join(name);
    std::fs::write(&path, html).expect("the page can be written");
    path
}

fn matrix() -> Matrix {
    let command = WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    };
    Matrix::build(
        &command,
        &Variant::all_compiled(),
        CASES.iter().collect(),
        &RunOptions::default(),
    )
}

fn select(selector: &str) -> Selector {
    Selector::parse(selector).expect("a valid selector")
}

#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn the_report_loads_cleanly_with_a_row_per_test_and_a_column_per_variant() {
    let matrix = matrix();
    let folder = tempfile::tempdir().unwrap();
    let page = write_page(folder.path(), "report.html", &html::page(&matrix));
    let output = browse(&page, &["--dump-dom"]);
    assert_eq!(console_messages(&output), Vec::<String>::new());
    let dom = Html::parse_document(&String::from_utf8_lossy(&output.stdout));
    let columns: Vec<String> = dom
        .select(&select("table.matrix thead th.variant"))
        .map(|th| th.text().collect())
        .collect();
    let ids: Vec<&str> = matrix
        .runs
        .iter()
        .map(|run| run.variant.id.as_str())
        .collect();
    assert_eq!(columns, ids, "a column per variant, the reference first");
    let rows: Vec<_> = dom.select(&select("table.matrix tbody tr.test")).collect();
    let names: Vec<String> = rows
        .iter()
        .map(|row| row.select(&select("th")).next().unwrap().text().collect())
        .collect();
    let tests: Vec<&str> = matrix.tests.iter().map(|case| case.name).collect();
    assert_eq!(names, tests, "a row per test, in suite order");
    for row in &rows {
        assert_eq!(row.select(&select("td.cell")).count(), ids.len());
    }
    let step_groups = dom.select(&select("table.matrix tbody")).count();
    assert_eq!(step_groups, 8, "the tests are grouped by step");
    let mutants = dom.select(&select("section.mutant pre.diff")).count();
    assert_eq!(mutants, ids.len() - 1, "every mutant shows its diff");
}

#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn a_page_that_throws_or_logs_an_error_is_caught() {
    let folder = tempfile::tempdir().unwrap();
    let page = write_page(
        folder.path(),
        "broken.html",
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>broken</title></head><body><p>broken</p>\
         <script>console.error(\"logged-on-purpose\"); throw new Error(\"thrown-on-purpose\");</script></body></html>",
    );
    let messages = console_messages(&browse(&page, &["--dump-dom"]));
    assert!(
        messages.iter().any(|m| m.contains("logged-on-purpose")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Uncaught Error: thrown-on-purpose")),
        "{messages:?}"
    );
}

/// The README's screenshot command, run on the report: a 1400 × 1000 PNG.
#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn the_screenshot_command_makes_a_picture_of_the_report() {
    let folder = tempfile::tempdir().unwrap();
    let page = write_page(folder.path(), "report.html", &html::page(&matrix()));
    let picture = folder.path().join("report.png");
    let output = browse(
        &page,
        &[
            &format!("--screenshot={}", picture.display()),
            "--window-size=1400,1000",
            "--hide-scrollbars",
        ],
    );
    assert_eq!(console_messages(&output), Vec::<String>::new());
    let png = std::fs::read(&picture).expect("chromium wrote the screenshot");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG file");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (1400, 1000));
}

/// `lab chaos --format html` in the browser: the counterexample of mutant
/// 07 loads without a console message, with a lane per worker, a bar per
/// call of the table, and the calls that break the contract drawn apart.
#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn the_chaos_timeline_draws_each_call_on_its_worker_s_lane() {
    let folder = tempfile::tempdir().unwrap();
    let page = folder.path().join("chaos.html");
    let ran = Command::new(env!("CARGO_BIN_EXE_lab"))
        .args([
            "chaos",
            "--variant",
            "07",
            "--seed",
            "5",
            "--format",
            "html",
            "--output",
        ])
        .arg(&page)
        .output()
        .expect("lab chaos runs");
    assert_eq!(
        ran.status.code(),
        Some(1),
        "07 breaks the contract: {ran:?}"
    );
    let output = browse(&page, &["--dump-dom"]);
    assert_eq!(console_messages(&output), Vec::<String>::new());
    let dom = Html::parse_document(&String::from_utf8_lossy(&output.stdout));
    let bars = dom.select(&select("svg.lanes rect.call")).count();
    let rows = dom.select(&select("table.timeline tbody tr")).count();
    assert!(rows > 0, "the counterexample has calls");
    assert_eq!(bars, rows, "a bar per call of the table");
    let culprits = dom.select(&select("svg.lanes rect.culprit")).count();
    assert_eq!(
        culprits,
        dom.select(&select("table.timeline tr.culprit")).count()
    );
    assert!(culprits >= 2, "both claims handed fence 1 are marked");
    let verdict: String = dom
        .select(&select("p.verdict"))
        .next()
        .unwrap()
        .text()
        .collect();
    assert!(verdict.contains("a fence handed out twice"), "{verdict}");
}

/// The page scrolled down and to the right in a small window: the header
/// row still sits at the top and the test names at the left, above the
/// cells that scrolled under them. (The page runs no script of its own;
/// the test adds one that scrolls and notes what is at the window's edges.)
#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn the_header_row_and_the_test_names_stay_in_view_as_the_table_scrolls() {
    let folder = tempfile::tempdir().unwrap();
    let probe = r#"<div id="probe"></div><script>
const names = document.querySelector("table.matrix tbody th.test").getBoundingClientRect().width;
window.scrollTo(names + 40, 1500);
const probe = document.getElementById("probe");
const at = (x, y) => document.elementFromPoint(x, y);
probe.dataset.scrolled = String(window.scrollX > names && window.scrollY === 1500);
probe.dataset.top = at(300, 20)?.closest("thead") ? "header" : String(at(300, 20)?.outerHTML).slice(0, 80);
const kind = (element) =>
  element?.closest("th.test") ? "name" : element?.closest("td.cell") ? "cell" : "other";
const left = new Set();
for (let y = 100; y < window.innerHeight; y += 8) left.add(kind(at(10, y)));
probe.dataset.left = [...left].sort().join(",");
probe.dataset.corner = at(10, 10)?.closest("thead th:first-child") ? "corner" : String(at(10, 10)?.outerHTML).slice(0, 80);
</script></body>"#;
    let html = html::page(&matrix()).replace("</body>", probe);
    let page = write_page(folder.path(), "report.html", &html);
    let output = browse(&page, &["--window-size=600,600", "--dump-dom"]);
    assert_eq!(console_messages(&output), Vec::<String>::new());
    let dom = Html::parse_document(&String::from_utf8_lossy(&output.stdout));
    let probe = dom.select(&select("#probe")).next().expect("the probe ran");
    assert_eq!(
        probe.attr("data-scrolled"),
        Some("true"),
        "the page scrolled down, and right past the test names"
    );
    assert_eq!(probe.attr("data-top"), Some("header"));
    let left = probe.attr("data-left").unwrap();
    assert!(
        left.split(',').any(|kind| kind == "name") && !left.split(',').any(|kind| kind == "cell"),
        "at the left edge, test names and no cell: {left}"
    );
    assert_eq!(probe.attr("data-corner"), Some("corner"));
}

/// The class page (`lab grade --format html`) in a window 1,400 and 800
/// px wide: no console message, the page never scrolls sideways (a wide
/// table scrolls inside its own box), and the student names stay in view
/// with the table scrolled to its right end (at 600 px, where it is wider
/// than its box).
#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn the_class_page_fits_1400_px_and_reads_at_800_and_less() {
    let lab = crate::common::Sandbox::new();
    let files = crate::grade::small_class(&lab);
    let ran = lab.lab(&[&["grade", "--format", "html"][..], &files].concat());
    let probe = r##"<div id="probe"></div><script>
const probe = document.getElementById("probe");
const page = document.scrollingElement;
probe.dataset.sideways = String(page.scrollWidth > window.innerWidth);
const box = document.querySelector("#students .scroll");
box.scrollLeft = box.scrollWidth;
const name = document.querySelector("table.students tbody th").getBoundingClientRect();
const boxLeft = box.getBoundingClientRect().left;
// Within the row's marking border of the box's left edge.
probe.dataset.name = String(name.left - boxLeft >= -1 && name.left - boxLeft <= 6);
probe.dataset.overflows = String(box.scrollWidth > box.clientWidth);
const boxes = [...document.querySelectorAll(".scroll")];
probe.dataset.fits = String(boxes.every((each) => each.scrollWidth <= each.clientWidth));
</script></body>"##;
    let html = ran.stdout.replace("</body>", probe);
    let folder = tempfile::tempdir().unwrap();
    let page = write_page(folder.path(), "class.html", &html);
    for width in [1400, 800, 600] {
        let size = format!("--window-size={width},1000");
        let output = browse(&page, &[&size, "--dump-dom"]);
        assert_eq!(console_messages(&output), Vec::<String>::new());
        let dom = Html::parse_document(&String::from_utf8_lossy(&output.stdout));
        let probe = dom.select(&select("#probe")).next().expect("the probe ran");
        assert_eq!(
            probe.attr("data-sideways"),
            Some("false"),
            "at {width} px the page does not scroll sideways"
        );
        assert_eq!(
            probe.attr("data-name"),
            Some("true"),
            "at {width} px a student's name stays at the left of the table's box"
        );
        if width == 1400 {
            assert_eq!(
                probe.attr("data-fits"),
                Some("true"),
                "at 1400 px every table fits its box"
            );
        }
        if width == 600 {
            assert_eq!(
                probe.attr("data-overflows"),
                Some("true"),
                "at 600 px the table is wider than its box, and scrolled"
            );
        }
    }
}

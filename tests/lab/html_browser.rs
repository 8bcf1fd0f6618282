//! The HTML report in a real headless browser (Debian's `chromium`): it
//! loads without a console message, and the browser's DOM holds the kill
//! matrix with a row per test and a column per variant. Negative tests show
//! that a page that throws or logs an error is caught.
//!
//! They need chromium, which a machine with only Rust lacks, so they are
//! ignored by a plain `cargo test`; `.ci/run` installs chromium (`apt-get
//! install -y chromium`) and runs them with `cargo test -- --ignored`.

use lease_lab::matrix::Matrix;
use lease_lab::report::matrix::html;
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
    let rows = dom
        .select(&select(
            "table.timeline tbody tr.call, table.timeline tbody tr.culprit",
        ))
        .count();
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
    let said = |selector: &str| -> String {
        dom.select(&select(selector))
            .next()
            .unwrap_or_else(|| panic!("no {selector}"))
            .text()
            .collect()
    };
    assert_eq!(
        said("p.verdicts"),
        "Fencing broken; the worksheet's contract broken."
    );
    let drawn = said("p.drawn");
    assert!(
        drawn.starts_with("Drawn: the shrunk run (")
            && drawn.contains(&format!("its {rows} calls")),
        "the page says which run it draws, and how many calls: {drawn}"
    );
    assert!(said("p.legend").contains("red, a call the finding names"));
    assert!(said("p.sinks").contains("With the token: "));
}

/// The matrix page (all 60 variants) at 1,400, 800 and 600 px: the page
/// never scrolls sideways, the table scrolls in its own box; scrolled down
/// and right, the header row stays at the box's top and the test names at
/// its left, and no cell that shows is under a name: a cell right of the
/// names is what the browser finds at its centre, and unscrolled the first
/// cell starts where the names end. A step's title stays in view, the
/// names take at most a third of the window with the full name on hover,
/// and the filters hide a kind's columns and a step's rows. (The page runs
/// no script of its own; the test adds one that scrolls, clicks and notes
/// what it finds.)
#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn the_matrix_scrolls_in_its_box_with_its_header_and_names_in_view_and_filters() {
    let folder = tempfile::tempdir().unwrap();
    let probe = r#"<div id="probe"></div><script>
const probe = document.getElementById("probe");
const page = document.scrollingElement;
probe.dataset.sideways = String(page.scrollWidth > window.innerWidth);
const box = document.querySelector("div.scroller");
const name = () => document.querySelector("table.matrix tbody th.test").getBoundingClientRect();
const firstCell = document.querySelector("table.matrix tbody td.cell").getBoundingClientRect();
probe.dataset.unscrolled = String(firstCell.left >= name().right - 1);
probe.dataset.third = String(name().width <= window.innerWidth / 3 + 1);
const long = document.querySelector("table.matrix tbody th.test[title]");
probe.dataset.hover = String(long.title === long.textContent.replace("*", ""));
box.scrollIntoView({ block: "start" });
box.scrollTo(name().width + 200, 600);
const at = (x, y) => document.elementFromPoint(x, y);
const boxArea = box.getBoundingClientRect();
// The part of the box inside the window.
const area = { left: boxArea.left, top: boxArea.top, right: Math.min(boxArea.right, window.innerWidth), bottom: Math.min(boxArea.bottom, window.innerHeight) };
probe.dataset.scrolled = String(box.scrollLeft > name().width && box.scrollTop > 0);
const header = document.querySelector("table.matrix thead").getBoundingClientRect().height;
probe.dataset.top = at(area.left + name().width + 30, area.top + 10)?.closest("thead") ? "header" : String(at(area.left + name().width + 30, area.top + 10)?.outerHTML).slice(0, 80);
probe.dataset.corner = at(area.left + 10, area.top + 10)?.closest("thead th:first-child") ? "corner" : "other";
const kind = (element) =>
  element?.closest("th.test") ? "name" : element?.closest("td.cell") ? "cell" : "other";
const left = new Set();
for (let y = area.top + header + 10; y < area.bottom - 20; y += 8) left.add(kind(at(area.left + 10, y)));
probe.dataset.left = [...left].sort().join(",");
// Every cell of the rows in view, whose centre is right of the names and
// inside the box, is the element at its centre.
let covered = 0, seen = 0;
const namesRight = name().right;
for (const cell of document.querySelectorAll("table.matrix tbody td.cell")) {
  const r = cell.getBoundingClientRect();
  const x = (r.left + r.right) / 2, y = (r.top + r.bottom) / 2;
  if (x <= namesRight + 1 || x >= area.right - 20 || y <= area.top + header + 1 || y >= area.bottom - 20) continue;
  seen += 1;
  if (at(x, y) !== cell) { covered += 1; probe.dataset.cover = String(at(x, y)?.outerHTML).slice(0, 120); }
}
probe.dataset.cells = `${seen} seen, ${covered} covered`;
const title = [...document.querySelectorAll("table.matrix tr.step-title .pin")].find((pin) => {
  const r = pin.getBoundingClientRect();
  return r.top > area.top + header && r.bottom < area.bottom;
});
probe.dataset.title = title ? String(title.getBoundingClientRect().left >= area.left - 1 && title.getBoundingClientRect().left < area.left + 40) : "none in view";
box.scrollTo(0, 0);
document.getElementById("show-field").click();
document.getElementById("show-step-3").click();
const shown = (element) => element.getClientRects().length > 0;
probe.dataset.field = String([...document.querySelectorAll("table.matrix .kind-field")].some(shown));
probe.dataset.worksheet = String([...document.querySelectorAll("table.matrix thead .kind-worksheet, #step-4 .kind-worksheet")].every(shown));
probe.dataset.step3 = String(shown(document.getElementById("step-3")));
probe.dataset.step4 = String(shown(document.getElementById("step-4")));
</script></body>"#;
    let html = html::page(&matrix()).replace("</body>", probe);
    let page = write_page(folder.path(), "report.html", &html);
    for (width, height) in [(1400, 1000), (800, 600), (600, 600)] {
        let size = format!("--window-size={width},{height}");
        let output = browse(&page, &[&size, "--dump-dom"]);
        assert_eq!(console_messages(&output), Vec::<String>::new());
        let dom = Html::parse_document(&String::from_utf8_lossy(&output.stdout));
        let probe = dom.select(&select("#probe")).next().expect("the probe ran");
        let said = |key: &str| {
            probe
                .attr(&format!("data-{key}"))
                .unwrap_or("none")
                .to_string()
        };
        let at = format!("at {width}x{height}");
        assert_eq!(
            said("sideways"),
            "false",
            "{at} the page does not scroll sideways"
        );
        assert_eq!(
            said("unscrolled"),
            "true",
            "{at} the first cell starts where the names end"
        );
        assert_eq!(said("third"), "true", "{at} the names take at most a third");
        assert_eq!(
            said("hover"),
            "true",
            "{at} a name's full text is its title"
        );
        assert_eq!(
            said("scrolled"),
            "true",
            "{at} the box scrolled down and right"
        );
        assert_eq!(said("top"), "header", "{at}");
        assert_eq!(said("corner"), "corner", "{at}");
        let left = said("left");
        assert!(
            left.split(',').any(|kind| kind == "name")
                && !left.split(',').any(|kind| kind == "cell"),
            "{at}: at the box's left edge, test names and no cell: {left}"
        );
        let cells = said("cells");
        assert!(
            cells.ends_with(" 0 covered") && !cells.starts_with("0 seen"),
            "{at}: {cells}, one under {}",
            said("cover")
        );
        assert_eq!(
            said("title"),
            "true",
            "{at}: a step's title is pinned to the box's left"
        );
        assert_eq!(
            said("field"),
            "false",
            "{at}: unchecked, the field mutants' columns hide"
        );
        assert_eq!(said("worksheet"), "true", "{at}: the worksheet's stay");
        assert_eq!(
            said("step3"),
            "false",
            "{at}: unchecked, step 3's rows hide"
        );
        assert_eq!(said("step4"), "true", "{at}: step 4's stay");
    }
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

/// The analysis pages (the Rust store's and the Python store's) and a
/// chaos run's page in a window 1,400 and 800 px wide: no console
/// message, no page scrolls sideways as a whole, and every label of the
/// subsumption graph is drawn at 11 px or more (the graph scrolls in its
/// own box rather than shrink).
#[test]
#[ignore = "needs chromium; .ci/run installs it"]
fn the_analysis_and_chaos_pages_fit_and_the_graph_labels_read() {
    let lab = crate::common::Sandbox::new();
    for (file, args) in [
        ("analysis.html", &["analyze", "--format", "html"][..]),
        (
            "python-analysis.html",
            &["analyze", "--impl", "python", "--format", "html"][..],
        ),
        // A stale completion back from a stall: the page tells the story,
        // with the moments of the stall and the return on the lanes. (One
        // worker without kills takes the seed's course on every run.)
        (
            "chaos.html",
            &[
                "chaos",
                "--variant",
                "h06e",
                "--faults",
                "stalls,skew",
                "--seed",
                "1",
                "--workers",
                "1",
                "--operations",
                "181",
                "--format",
                "html",
            ][..],
        ),
    ] {
        let ran = lab.lab(&[args, &["-o", file][..]].concat());
        assert!(matches!(ran.code, Some(0 | 1)), "{}", ran.shown());
        let probe = r#"<div id="probe"></div><script>
const probe = document.getElementById("probe");
probe.dataset.sideways = String(document.scrollingElement.scrollWidth > window.innerWidth);
const sizes = [...document.querySelectorAll("svg.subsumption text")].map((label) =>
  parseFloat(getComputedStyle(label).fontSize) * label.getScreenCTM().a);
probe.dataset.labels = String(sizes.length);
probe.dataset.smallest = String(Math.min(...sizes));
const lanes = document.querySelector("svg.lanes");
if (lanes) {
  const box = lanes.parentElement;
  probe.dataset.lanesFit = String(box.scrollWidth <= box.clientWidth);
  const lanesSizes = [...lanes.querySelectorAll("text")].map((label) =>
    parseFloat(getComputedStyle(label).fontSize) * label.getScreenCTM().a);
  probe.dataset.lanesSmallest = String(Math.min(...lanesSizes));
}
</script></body>"#;
        let page = lab.path(file);
        let html = std::fs::read_to_string(&page)
            .unwrap()
            .replace("</body>", probe);
        std::fs::write(&page, html).unwrap();
        for (width, height) in [(1400, 1000), (800, 600)] {
            let size = format!("--window-size={width},{height}");
            let output = browse(&page, &[&size, "--dump-dom"]);
            assert_eq!(console_messages(&output), Vec::<String>::new(), "{file}");
            let dom = Html::parse_document(&String::from_utf8_lossy(&output.stdout));
            let probe = dom.select(&select("#probe")).next().expect("the probe ran");
            assert_eq!(
                probe.attr("data-sideways"),
                Some("false"),
                "{file} at {width} px scrolls sideways"
            );
            if file == "chaos.html" {
                assert_eq!(
                    probe.attr("data-lanes-fit"),
                    Some("true"),
                    "{file} at {width} px: the drawing is wider than its box"
                );
                let smallest: f64 = probe.attr("data-lanes-smallest").unwrap().parse().unwrap();
                assert!(
                    smallest >= 10.0,
                    "{file} at {width} px: a lane or axis label at {smallest} px"
                );
                let count = |selector: &str| dom.select(&select(selector)).count();
                assert_eq!(count("svg.lanes g.axis text"), 5, "the time axis's ticks");
                let moments = count("svg.lanes path.moment");
                assert!(moments >= 2, "the stall and the return are drawn");
                assert_eq!(moments, count("table.timeline tr.moment"));
                let story: String = dom
                    .select(&select("p.story"))
                    .next()
                    .expect("the story")
                    .text()
                    .collect();
                assert!(
                    story.contains("stalled holding fence") && story.contains("came back"),
                    "{story}"
                );
            }
            if file.contains("analysis") {
                let labels: usize = probe.attr("data-labels").unwrap().parse().unwrap();
                let smallest: f64 = probe.attr("data-smallest").unwrap().parse().unwrap();
                assert!(labels >= 9, "{file}: {labels} labels");
                assert!(
                    smallest >= 11.0,
                    "{file} at {width} px: a graph label at {smallest} px"
                );
            }
        }
    }
}

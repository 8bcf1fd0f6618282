//! The Stryker report in Stryker's own viewer, as one page that opens
//! from disk (`lab matrix --format stryker-html --viewer PATH`): the
//! viewer's published one-file bundle (the npm package
//! `mutation-testing-elements`) and the report, both inlined, so that it
//! needs no network and no server.
//!
//! The lab does not ship the viewer: it is another project's code, under
//! its own licence. The instructor installs it (`npm install
//! mutation-testing-elements`) and names it with `--viewer`; the page names
//! the package, its version and its licence, read from its `package.json`.

use html_escape::encode_text as text;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The viewer's npm package.
pub const PACKAGE: &str = "mutation-testing-elements";

/// Where the one-file bundle is inside the package.
pub const BUNDLE: &str = "dist/mutation-test-elements.js";

/// Stryker's viewer, read from an installed package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    /// The bundle's code.
    pub bundle: String,
    /// The package's version, as its `package.json` says.
    pub version: String,
    /// The package's licence, as its `package.json` says.
    pub licence: String,
}

/// Why the viewer could not be read: what was wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ViewerError(pub String);

impl Viewer {
    /// The viewer at `path`: the package's folder
    /// (`node_modules/mutation-testing-elements`) or its bundle
    /// ([`BUNDLE`] in it).
    ///
    /// Errors: no such package there, or its bundle or `package.json`
    /// unreadable, each said with the command that installs it.
    pub fn load(path: &Path) -> Result<Viewer, ViewerError> {
        let install = format!(
            "install it with `npm install {PACKAGE}` and give --viewer node_modules/{PACKAGE}"
        );
        let folder = package_folder(path).ok_or_else(|| {
            ViewerError(format!(
                "{} is not Stryker's viewer (no package.json of {PACKAGE} there or above it): {install}",
                path.display()
            ))
        })?;
        let bundle_path = folder.join(BUNDLE);
        let bundle = std::fs::read_to_string(&bundle_path).map_err(|error| {
            ViewerError(format!(
                "cannot read the viewer's bundle {}: {error}; {install}",
                bundle_path.display()
            ))
        })?;
        let package = read_package(&folder).unwrap_or(Value::Null);
        let field = |name: &str| package[name].as_str().unwrap_or("unknown").to_string();
        Ok(Viewer {
            bundle,
            version: field("version"),
            licence: field("license"),
        })
    }
}

/// The folder of the viewer's package: `path` or the nearest folder above
/// it whose `package.json` names [`PACKAGE`].
fn package_folder(path: &Path) -> Option<PathBuf> {
    let start = if path.is_dir() { path } else { path.parent()? };
    start
        .ancestors()
        .find(|folder| read_package(folder).is_some_and(|package| package["name"] == PACKAGE))
        .map(Path::to_path_buf)
}

fn read_package(folder: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(folder.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// `code` safe inside a `<script>` element: no `</script` ends it early
/// (`<\/` is `</` to JavaScript, in a string or a regular expression).
pub fn in_script(code: &str) -> String {
    // Lower case keeps every byte where it is: the matches' places hold in
    // `code` too.
    let lower = code.to_ascii_lowercase();
    let mut safe = String::with_capacity(code.len());
    let mut copied = 0;
    for (at, _) in lower.match_indices("</script") {
        safe.push_str(&code[copied..at]);
        safe.push_str("<\\/");
        copied = at + 2;
    }
    safe.push_str(&code[copied..]);
    safe
}

/// `value` as JSON safe inside a `<script>` element, whatever its strings
/// hold (a failure's reason quotes what a program wrote): every `<`, `>`
/// and `&` written as a JSON escape (`\u003c`), as Go's `json.Marshal`
/// writes them for HTML. Those characters can only be in a JSON string,
/// where the escape means the same character, and without `<` neither
/// `</script` (which would end the element) nor `<!--` (which would make
/// the parser miss the element's end) can appear.
pub fn json_in_script(value: &Value) -> String {
    let json = value.to_string();
    let mut safe = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => safe.push_str("\\u003c"),
            '>' => safe.push_str("\\u003e"),
            '&' => safe.push_str("\\u0026"),
            c => safe.push(c),
        }
    }
    safe
}

/// The page: `report` (Stryker's JSON) shown by `viewer`, one file, with
/// a line that names the viewer's package, version and licence.
pub fn page(report: &Value, viewer: &Viewer) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n<title>lease-lab mutation report</title>\n<script>{}</script>\n</head>\n<body>\n<mutation-test-report-app title-postfix=\"lease-lab\"></mutation-test-report-app>\n<script>document.querySelector(\"mutation-test-report-app\").report = {};</script>\n<footer><p style=\"font: 12px system-ui, sans-serif; color: #555; margin: 12px;\">Drawn by Stryker's viewer, the npm package {PACKAGE} {}, licence {}, inlined. Made by <code>lab matrix --format stryker-html</code>, lease-lab {}.</p></footer>\n</body>\n</html>\n",
        in_script(&viewer.bundle),
        json_in_script(report),
        text(&viewer.version),
        text(&viewer.licence),
        env!("CARGO_PKG_VERSION"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A package folder as npm installs it, with `bundle` for its code.
    fn installed(bundle: &str) -> tempfile::TempDir {
        let folder = tempfile::tempdir().unwrap();
        let package = folder.path().join("node_modules").join(PACKAGE);
        std::fs::create_dir_all(package.join("dist")).unwrap();
        std::fs::write(
            package.join("package.json"),
            format!(r#"{{"name": "{PACKAGE}", "version": "3.9.0", "license": "Apache-2.0"}}"#),
        )
        .unwrap();
        std::fs::write(package.join(BUNDLE), bundle).unwrap();
        folder
    }

    #[test]
    fn the_viewer_is_found_from_its_folder_or_its_bundle() {
        let folder = installed("customElements.define('x', class {});");
        let package = folder.path().join("node_modules").join(PACKAGE);
        let viewer = Viewer::load(&package).unwrap();
        assert_eq!(viewer.version, "3.9.0");
        assert_eq!(viewer.licence, "Apache-2.0");
        assert_eq!(viewer.bundle, "customElements.define('x', class {});");
        assert_eq!(Viewer::load(&package.join(BUNDLE)).unwrap(), viewer);
        let elsewhere = Viewer::load(folder.path()).unwrap_err().0;
        assert!(
            elsewhere.contains("is not Stryker's viewer")
                && elsewhere.contains("npm install mutation-testing-elements"),
            "{elsewhere}"
        );
        std::fs::remove_file(package.join(BUNDLE)).unwrap();
        let no_bundle = Viewer::load(&package).unwrap_err().0;
        assert!(
            no_bundle.starts_with("cannot read the viewer's bundle"),
            "{no_bundle}"
        );
    }

    #[test]
    fn the_page_inlines_the_viewer_and_the_report_and_names_the_licence() {
        let viewer = Viewer {
            bundle: "let end = '</script>';".into(),
            version: "3.9.0".into(),
            licence: "Apache-2.0".into(),
        };
        let report = serde_json::json!({"schemaVersion": "2", "note": "</SCRIPT><b>"});
        let page = page(&report, &viewer);
        assert_eq!(page.matches("</script>").count(), 2, "{page}");
        assert!(page.contains("let end = '<\\/script>';"), "{page}");
        assert!(
            page.contains(r#""note":"\u003c/SCRIPT\u003e\u003cb\u003e""#),
            "{page}"
        );
        assert!(page.contains("mutation-testing-elements 3.9.0, licence Apache-2.0"));
        assert!(!page.contains("src=\"http"), "nothing from outside");
    }

    /// A report whose strings would end the script element, or hide its
    /// end from the parser, is inlined with no `<` at all, and reads back
    /// as the same JSON.
    #[test]
    fn a_report_in_a_script_holds_no_markup_and_reads_back_the_same() {
        let report = serde_json::json!({
            "reason": "<!--<script> a </script> & <b>\u{1b}[1A",
            "name": "Eve & \"Bob\" </ScRiPt >",
        });
        let inlined = json_in_script(&report);
        assert!(!inlined.contains(['<', '>', '&']), "{inlined}");
        assert_eq!(
            serde_json::from_str::<Value>(&inlined).unwrap(),
            report,
            "the same report"
        );
        let viewer = Viewer {
            bundle: String::new(),
            version: "1".into(),
            licence: "MIT".into(),
        };
        let page = page(&report, &viewer);
        assert!(
            page.contains(&format!(".report = {inlined};</script>")),
            "{page}"
        );
    }

    #[test]
    fn only_a_closing_script_tag_is_escaped() {
        assert_eq!(in_script("a </b> </ScRiPt x"), "a </b> <\\/ScRiPt x");
        assert_eq!(in_script("plain"), "plain");
        assert_eq!(
            in_script("a</script>b</SCRIPT>"),
            "a<\\/script>b<\\/SCRIPT>"
        );
    }
}

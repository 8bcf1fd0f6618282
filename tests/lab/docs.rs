//! The maps of the code kept true: the library's module map names every
//! module, the layout of the sources names every top-level piece of the
//! library, and every path that the manifests, the build scripts and the
//! layout cite is there.

use std::collections::BTreeSet;
use std::path::Path;

/// The repository's root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The modules `src/lib.rs` declares, and those it re-exports from the
/// store's crate (`pub use lease_lab_store::{...}`).
fn library_modules() -> Vec<String> {
    let lib = read("src/lib.rs");
    let mut modules: Vec<String> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|rest| rest.trim_end_matches(';').to_string())
        .collect();
    let reexported = lib
        .lines()
        .find_map(|line| line.strip_prefix("pub use lease_lab_store::{"))
        .expect("lib.rs re-exports the store's crate's modules");
    modules.extend(
        reexported
            .trim_end_matches("};")
            .split(',')
            .map(|name| name.trim().to_string()),
    );
    modules
}

/// The crate documentation's module map names each module as a link
/// (`` [`name`] ``), which `cargo doc` then checks resolves.
#[test]
fn the_module_map_names_every_module_of_the_library() {
    let lib = read("src/lib.rs");
    let map: String = lib
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let missing: Vec<String> = library_modules()
        .into_iter()
        .filter(|module| !map.contains(&format!("[`{module}`]")))
        .collect();
    assert!(
        missing.is_empty(),
        "src/lib.rs's module map does not name {missing:?}"
    );
}

/// Every top-level module of the library, and of the store's crate, is
/// named in labs/layout.md.
#[test]
fn the_layout_names_every_module_of_the_library() {
    let layout = read("labs/layout.md");
    let words: BTreeSet<&str> = layout
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let missing: Vec<String> = library_modules()
        .into_iter()
        .filter(|module| !words.contains(module.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "labs/layout.md does not name {missing:?}"
    );
}

/// The paths a text cites: words that start with one of the repository's
/// folders and name a file or a folder (`src/cli/`, `tests/lab/docs.rs`).
fn cited_paths(text: &str) -> BTreeSet<String> {
    const FOLDERS: [&str; 8] = [
        "src/", "crates/", "tests/", "benches/", "labs/", "mutants/", ".ci/", ".cargo/",
    ];
    text.split(|c: char| c.is_whitespace() || "`'\"(),;:[]".contains(c))
        .map(|word| word.trim_end_matches('.'))
        .filter(|word| FOLDERS.iter().any(|folder| word.starts_with(folder)))
        // A pattern or a placeholder names no one file.
        .filter(|word| !word.contains(['*', '<', '{', '$', '…']) && !word.contains("..."))
        .map(str::to_string)
        .collect()
}

/// Every path cited in the manifests' and the build scripts' comments and
/// in labs/layout.md is there (a path in the store crate's files, or under
/// `crates/store/` in the layout, may be the crate's own).
#[test]
fn every_path_the_manifests_build_scripts_and_layout_cite_is_there() {
    let mut missing = Vec::new();
    for file in [
        "Cargo.toml",
        "build.rs",
        "crates/store/Cargo.toml",
        "crates/store/build.rs",
        "labs/layout.md",
    ] {
        for path in cited_paths(&read(file)) {
            let there =
                root().join(&path).exists() || root().join("crates/store").join(&path).exists();
            if !there {
                missing.push(format!("{file}: {path}"));
            }
        }
    }
    assert!(missing.is_empty(), "cited but not there: {missing:#?}");
}

/// The paths are found as they are cited, and a path that is not there
/// is told apart.
#[test]
fn cited_paths_are_read_from_the_text() {
    let cited =
        cited_paths("see `src/cli/` and tests/lab/docs.rs. Also (mutants/*.toml) and src/nope.rs");
    assert_eq!(
        cited.into_iter().collect::<Vec<_>>(),
        ["src/cli/", "src/nope.rs", "tests/lab/docs.rs"]
    );
    assert!(!root().join("src/nope.rs").exists());
}

/// No code is compiled only without a feature (`cfg(not(feature = ...))`):
/// the features add code and take none away, so the lints run once, with
/// them on (.ci/run), and see every line a plain build compiles.
#[test]
fn no_code_is_compiled_only_without_a_feature() {
    let mut files = Vec::new();
    for folder in ["src", "crates", "tests", "benches"] {
        crate::analyze::rust_files(&root().join(folder), &mut files);
    }
    let found: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.split_whitespace()
                .collect::<String>()
                .contains("not(feature")
        })
        .map(|path| path.strip_prefix(root()).unwrap().display().to_string())
        // This test names what it looks for.
        .filter(|file| file != "tests/lab/docs.rs")
        .collect();
    assert!(
        found.is_empty(),
        "code compiled only without a feature, which .ci/run's one lint pass (with the features on) would not see: {found:?}"
    );
}

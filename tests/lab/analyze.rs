//! `lab analyze`: what the real kill matrix of the Rust store means, and
//! the command in each of its formats.

use crate::common::Sandbox;
use lease_lab::analysis::Analysis;
use lease_lab::matrix::Matrix;
use lease_lab::mutant::MutantKind;
use lease_lab::runner::{RunOptions, WorkerCommand};
use lease_lab::suite::{Case, Tag, CASES};
use lease_lab::variant::Variant;
use serde_json::Value;
use std::process::Output;

/// The Rust store's matrix, built as `lab matrix` builds it (a mutant run
/// against the tests that can run its change), of the compiled variants
/// and the suite's tests that `keep` keeps.
fn rust_analysis(
    keep_variant: impl Fn(&Variant) -> bool,
    keep_test: impl Fn(&Case) -> bool,
) -> Analysis {
    let workers = WorkerCommand {
        program: env!("CARGO_BIN_EXE_lab").into(),
        args: vec!["__worker".into()],
    };
    let variants: Vec<Variant> = Variant::all_compiled()
        .into_iter()
        .filter(|variant| keep_variant(variant))
        .collect();
    let tests: Vec<&'static Case> = CASES.iter().filter(|case| keep_test(case)).collect();
    let matrix = Matrix::build_covered(&workers, &variants, tests, &RunOptions::default());
    Analysis::of(&matrix)
}

/// The test added with the field mutants, to catch f01a: it was not in the
/// suite whose matrix the figures below were computed from by hand.
const ADDED_FOR_F01A: &str = "init_db_twice_keeps_the_fence_of_a_job_nobody_holds";

/// The test added for the commonest real bug, a stale completion that comes
/// while the new owner still works: it was not in the suite whose matrix the
/// figures below were computed from by hand either.
const ADDED_FOR_THE_NEW_OWNER_AT_WORK: &str =
    "stale_completion_while_the_new_owner_works_is_refused";

/// The hardening mutants added later, each killed by a test that killed no
/// mutant before: they were not in the matrix the figures below were
/// computed from by hand.
const ADDED_FOR_IDLE_TESTS: [&str; 18] = [
    "h01a", "h01b", "h01c", "h01d", "h01e", "h01f", "h01g", "h02a", "h02b", "h02c", "h02d", "h02e",
    "h03b", "h04h", "h04i", "h04j", "h04k", "h05g",
];

/// The figures of the analysis as an instructor computed them by hand from
/// the matrix of the suite's 73 tests against the 37 worksheet and
/// hardening mutants of the Rust store: the same matrix is built again (the
/// field mutants, the hardening mutants added later, and the one test added
/// to catch f01a, left out), and
/// `lab analyze` must find what the instructor found.
///
/// One figure is stated by groups: 25 tests are dominated by no test, and
/// they fall in 21 groups of equivalent tests (the three enqueue tests that
/// kill only 02, and the three claim_many tests that kill 08, 08b, h04d and
/// h04e, are one group each); "21 tests dominated by none" counts the
/// groups, each of which one test stands for.
#[test]
fn the_rust_store_matrix_means_what_was_computed_by_hand() {
    let analysis = rust_analysis(
        |variant| {
            variant.mutant.as_ref().is_none_or(|mutant| {
                mutant.spec.kind != MutantKind::Field
                    && !ADDED_FOR_IDLE_TESTS.contains(&mutant.spec.id.as_str())
            })
        },
        |case| ![ADDED_FOR_F01A, ADDED_FOR_THE_NEW_OWNER_AT_WORK].contains(&case.name),
    );
    assert_eq!((analysis.tests, analysis.mutants), (73, 37));
    assert!(analysis.survived.is_empty(), "{:?}", analysis.survived);

    let idle: Vec<&str> = analysis.idle_tests.iter().map(|test| test.name).collect();
    assert_eq!(idle.len(), 25, "{idle:?}");
    let idle_contract: Vec<&str> = analysis
        .idle_tests
        .iter()
        .filter(|test| test.tag == Tag::Contract)
        .map(|test| test.name)
        .collect();
    assert_eq!(idle_contract.len(), 9, "{idle_contract:?}");
    for name in [
        "init_db_creates_the_jobs_table",
        "claim_with_ttl_zero_or_less_is_invalid",
    ] {
        assert!(idle_contract.contains(&name), "{name}: {idle_contract:?}");
    }
    let ttl = analysis
        .idle_tests
        .iter()
        .find(|test| test.name == "claim_with_ttl_zero_or_less_is_invalid")
        .unwrap();
    assert_eq!(ttl.operations, ["init_db", "enqueue", "claim"]);
    assert!(ttl.runs_the_change_of.iter().any(|id| id == "04"));
    assert!(ttl.guards.unwrap().contains("ttl of zero or less"));

    let equivalent: usize = analysis.equivalent_tests.iter().map(Vec::len).sum();
    assert_eq!((analysis.equivalent_tests.len(), equivalent), (5, 15));
    assert_eq!(analysis.dominated_tests.len(), 23);
    let undominated: usize = analysis.undominated_tests.iter().map(Vec::len).sum();
    assert_eq!((analysis.undominated_tests.len(), undominated), (21, 25));

    let indistinguishable: Vec<String> = analysis
        .indistinguishable()
        .map(|group| group.label())
        .collect();
    assert_eq!(indistinguishable, ["07=h07b"]);

    assert_eq!(analysis.subsumed_mutants.len(), 16);
    let subsumed_by = |id: &str| -> Vec<String> {
        analysis
            .subsumed_mutants
            .iter()
            .find(|mutant| mutant.id == id)
            .map(|mutant| mutant.subsumed_by.clone())
            .unwrap_or_default()
    };
    assert!(subsumed_by("01").contains(&"h04g".to_string()));
    assert!(subsumed_by("07").contains(&"h07c".to_string()));
    assert_eq!(analysis.dominators().len(), 21);

    assert_eq!(analysis.minimum_tests.len(), 20);
    let forced = analysis
        .minimum_tests
        .iter()
        .filter(|test| test.forced)
        .count();
    assert_eq!(forced, 17);

    let contract = &analysis.contract_minimum;
    assert_eq!(contract.contract_tests, 52);
    assert_eq!(contract.survivors, ["h04g"]);
    let h04g = analysis
        .mutant_groups
        .iter()
        .find(|group| group.mutants == ["h04g"])
        .unwrap();
    assert_eq!(h04g.killers, ["a_returned_fence_survives_a_power_cut"]);
}

/// The whole suite against every compiled mutant, the field mutants, the
/// hardening mutants added for the tests that killed nothing, the test
/// that catches f01a and the test of a stale completion while the new owner
/// works included. What moved from the figures computed by
/// hand, and why:
///
/// - the added test kills f01a alone, so it is a forced member of the
///   minimum set and a group of its own among the tests dominated by none;
///   f06a, f06b and f06c are each strictly subsumed by a hardening mutant
///   of step 6 (f06a by h06d, h06e, h06f and h06g: every test that kills
///   one of them kills f06a too);
/// - the 18 mutants added for the tests that killed nothing (h01a to h01g,
///   h02a to h02e, h03b, h04h to h04k, h05g) leave only the two documented
///   init_db contract tests idle (25 idle tests, 9 of them contract tests,
///   become 2, both contract tests); most of them are killed by one or two
///   tests alone, so 16 of them are new dominators (22 become 38; h01f is
///   subsumed by 08b and h05g by 05, so 19 subsumed mutants become 21), the
///   minimum set grows from 21 tests (18 forced) to 35 (28 forced), the
///   tests dominated by none from 22 groups of 26 tests to 38 of 41, and
///   the dominated ones from 23 to 31;
/// - the test of a stale completion while the new owner works kills
///   everything the worksheet's story (B completes first) kills, and f06a,
///   f06b, h06a and h06b besides: the story becomes dominated (31 dominated
///   tests become 32) and the new test takes its place among those
///   dominated by none; it is a contract test (53 become 54) but kills no
///   mutant alone, so the minimum sets keep their size;
/// - tests that kill the same new mutants and no other become equivalent
///   (the two tests of an empty id, which kill h02a alone): 5 groups of 15
///   tests become 7 of 17;
/// - the contract tests alone no longer catch h04g only: most new mutants
///   are of bad input, which the reference tests check.
#[test]
fn the_whole_suite_against_every_mutant_of_the_rust_store() {
    // The matrix of every compiled variant and every test, as
    // `rust_analysis(|_| true, |_| true)` builds it, shared with the
    // coverage test.
    let analysis = Analysis::of(crate::matrices::covered_matrix());
    assert_eq!(
        (analysis.tests, analysis.mutants),
        (CASES.len(), compiled_mutants())
    );
    assert!(analysis.survived.is_empty(), "{:?}", analysis.survived);
    let contract_idle = analysis
        .idle_tests
        .iter()
        .filter(|test| test.tag == Tag::Contract)
        .count();
    assert_eq!((analysis.idle_tests.len(), contract_idle), (2, 2));
    let equivalent: usize = analysis.equivalent_tests.iter().map(Vec::len).sum();
    assert_eq!((analysis.equivalent_tests.len(), equivalent), (7, 17));
    assert_eq!(analysis.dominated_tests.len(), 32);
    let worksheet_story = analysis
        .dominated_tests
        .iter()
        .find(|test| test.name == "stale_completion_after_takeover_is_refused")
        .expect("the worksheet's story is dominated");
    assert!(worksheet_story
        .dominated_by
        .contains(&ADDED_FOR_THE_NEW_OWNER_AT_WORK));
    let undominated: usize = analysis.undominated_tests.iter().map(Vec::len).sum();
    assert_eq!((analysis.undominated_tests.len(), undominated), (38, 41));
    assert_eq!(analysis.subsumed_mutants.len(), 21);
    assert_eq!(analysis.dominators().len(), 38);
    let forced = analysis.minimum_tests.iter().filter(|t| t.forced).count();
    assert_eq!((analysis.minimum_tests.len(), forced), (35, 28));
    let added = analysis
        .minimum_tests
        .iter()
        .find(|test| test.name == ADDED_FOR_F01A)
        .expect("the test that alone kills f01a is in every minimum set");
    assert!(added.forced);
    assert_eq!(analysis.contract_minimum.contract_tests, 54);
    assert_eq!(
        analysis.contract_minimum.survivors,
        [
            "h01a", "h01b", "h01c", "h01d", "h01e", "h01g", "h02a", "h02b", "h02c", "h02d", "h04g",
            "h04h", "h04j", "h04k"
        ]
    );
}

/// How many mutants of the Rust store are compiled in: every compiled
/// variant but the reference.
fn compiled_mutants() -> usize {
    Variant::all_compiled()
        .iter()
        .filter(|variant| !variant.is_reference())
        .count()
}

fn analyze(sandbox: &Sandbox, args: &[&str]) -> Output {
    let full = [&["analyze"], args].concat();
    let output = sandbox.command(&full).output().expect("lab runs");
    assert!(
        output.status.success(),
        "lab {full:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8")
}

/// `lab analyze` in text (at 80 columns), JSON, Markdown and HTML (written
/// with --output): each says the same findings (the page's drawing is
/// checked in `pages`).
#[test]
fn analyze_renders_the_same_findings_in_every_format() {
    let sandbox = Sandbox::new();
    let mut text = sandbox.command(&["analyze", "--color", "never"]);
    text.env("COLUMNS", "80");
    let text = text.output().expect("lab runs");
    assert!(text.status.success());
    let text = stdout(&text);
    let wide: Vec<&str> = text
        .lines()
        .filter(|line| line.chars().count() > 80)
        .collect();
    assert!(wide.is_empty(), "{wide:#?}");
    let heading = format!(
        "What the kill matrix means: {} tests against {} mutants",
        CASES.len(),
        compiled_mutants()
    );
    assert!(text.starts_with(&heading), "{text}");
    assert!(text.contains("The dominator set has 38 mutants"), "{text}");
    assert!(text.contains("\n  07=h07b: killed by "), "{text}");

    let json: Value =
        serde_json::from_str(&stdout(&analyze(&sandbox, &["--format", "json"]))).expect("JSON");
    let groups = json["mutant_groups"].as_array().unwrap();
    let dominators = groups.iter().filter(|g| g["dominator"] == true).count();
    assert_eq!(dominators, 38);
    assert_eq!(
        json["contract_minimum"]["survivors"],
        serde_json::json!([
            "h01a", "h01b", "h01c", "h01d", "h01e", "h01g", "h02a", "h02b", "h02c", "h02d", "h04g",
            "h04h", "h04j", "h04k"
        ])
    );
    assert_eq!(json["minimum_tests"].as_array().unwrap().len(), 35);
    assert_eq!(json["idle_tests"][0]["tag"], "contract");

    let markdown = stdout(&analyze(&sandbox, &["--format", "markdown"]));
    assert!(markdown.starts_with("# What the kill matrix means\n"));
    assert!(markdown.contains("\n## 2 tests kill nothing (2 of them contract tests)\n"));
    assert!(markdown.contains("| 01 | f01a, h04g |"), "{markdown}");

    let page = sandbox.path("analysis.html");
    let written = analyze(
        &sandbox,
        &["--format", "html", "--output", page.to_str().unwrap()],
    );
    assert!(written.stdout.is_empty());
    assert!(String::from_utf8_lossy(&written.stderr).contains("lab analyze: wrote "));
}

/// A format it does not have is a usage error naming the ones it has.
#[test]
fn analyze_refuses_an_unknown_format() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .command(&["analyze", "--format", "stryker"])
        .output()
        .expect("lab runs");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("text, json, markdown, html"), "{stderr}");
}

/// The figures the guides write down are the ones the lab counts: the
/// suite's tests and their tags, the Rust store's compiled mutants, the
/// cells of its matrix and how many of them are not run. A mutant or a test
/// added without the guides brought up to date fails here.
#[test]
fn the_guides_state_the_counts_the_lab_derives() {
    let tests = CASES.len();
    let contract = CASES
        .iter()
        .filter(|case| case.tag == Tag::Contract)
        .count();
    let mutants = compiled_mutants();
    let matrix = crate::matrices::covered_matrix();
    let cells = tests * (mutants + 1);
    let guide = |name: &str| {
        let path = format!("{}/labs/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path)
            .expect("the guide")
            .replace('\n', " ")
    };
    let (instructors, reference) = (guide("instructors.md"), guide("reference.md"));
    let stated = [
        (
            &instructors,
            format!("the suite's {tests} tests, the Rust store's {mutants} mutants"),
        ),
        (
            &instructors,
            format!("`lab check --impl python`, {tests} tests"),
        ),
        (
            &instructors,
            format!("the reference and all {mutants} mutants"),
        ),
        (
            &instructors,
            format!("Today ({tests} tests, {mutants} mutants,"),
        ),
        (&instructors, format!("the {contract} contract tests alone")),
        (&reference, format!("`contract` tests ({contract})")),
        (
            &reference,
            format!("`reference` tests ({})", tests - contract),
        ),
        (&reference, format!("Of the {cells} cells")),
        (
            &reference,
            format!("matrix, {} are not run", matrix.not_covered()),
        ),
        (&reference, format!("the kill matrix of {mutants} mutants")),
    ];
    let wrong: Vec<&String> = stated
        .iter()
        .filter(|(text, phrase)| !text.contains(phrase.as_str()))
        .map(|(_, phrase)| phrase)
        .collect();
    assert!(
        wrong.is_empty(),
        "the guides in labs/ do not say (update their figures): {wrong:#?}"
    );
}

/// The README is a front door of at most 300 lines, and each guide in
/// `labs/` stays under 400: a guide that grows past that is split, not
/// left to grow.
#[test]
fn the_readme_and_the_guides_stay_short() {
    let lines = |path: &str| {
        std::fs::read_to_string(format!("{}/{path}", env!("CARGO_MANIFEST_DIR")))
            .expect("the document")
            .lines()
            .count()
    };
    assert!(
        lines("README.md") <= 300,
        "README.md: {} lines",
        lines("README.md")
    );
    for guide in [
        "labs/students.md",
        "labs/instructors.md",
        "labs/reference.md",
        "labs/field.md",
    ] {
        assert!(lines(guide) < 400, "{guide}: {} lines", lines(guide));
    }
}

/// The longest a file in `src/` (the store's `crates/store/src/` too) may be, in lines.
const MAX_FILE_LINES: usize = 800;

/// The longest a function in `src/` may be, in lines, from its `fn` to its
/// closing brace (its doc comment and attributes not counted).
const MAX_FN_LINES: usize = 100;

/// Every `.rs` file under `dir`, recursively, in a stable order.
pub(crate) fn rust_files(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("a directory of the project")
        .map(|entry| entry.expect("an entry of a directory").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
}

/// The functions of one file longer than [`MAX_FN_LINES`]: free functions,
/// methods, trait methods with a body, and functions nested in any of them
/// (each counted on its own, and inside its parent's count too).
struct LongFunctions<'a> {
    file: &'a str,
    /// The type or trait whose `impl` or definition is being walked, to name
    /// a method `Type::method`.
    owner: Option<String>,
    found: Vec<String>,
}

impl LongFunctions<'_> {
    fn measure(&mut self, name: &str, sig: &syn::Signature, body: &syn::Block) {
        let start = sig.fn_token.span.start().line;
        let end = body.brace_token.span.close().end().line;
        let lines = end - start + 1;
        if lines > MAX_FN_LINES {
            let name = match &self.owner {
                Some(owner) => format!("{owner}::{name}"),
                None => name.to_string(),
            };
            self.found
                .push(format!("{}:{start}: fn {name}: {lines} lines", self.file));
        }
    }
}

impl<'ast> syn::visit::Visit<'ast> for LongFunctions<'_> {
    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.measure(&item.sig.ident.to_string(), &item.sig, &item.block);
        // A function nested in a method is not the method's type's.
        let owner = self.owner.take();
        syn::visit::visit_item_fn(self, item);
        self.owner = owner;
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        let owner = match &*item.self_ty {
            syn::Type::Path(path) => path.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        };
        let outer = std::mem::replace(&mut self.owner, owner);
        syn::visit::visit_item_impl(self, item);
        self.owner = outer;
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        let outer = self.owner.replace(item.ident.to_string());
        syn::visit::visit_item_trait(self, item);
        self.owner = outer;
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.measure(&item.sig.ident.to_string(), &item.sig, &item.block);
        let owner = self.owner.take();
        syn::visit::visit_impl_item_fn(self, item);
        self.owner = owner;
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if let Some(body) = &item.default {
            self.measure(&item.sig.ident.to_string(), &item.sig, body);
        }
        let owner = self.owner.take();
        syn::visit::visit_trait_item_fn(self, item);
        self.owner = owner;
    }
}

/// No file in `src/` or `crates/store/src/` is over [`MAX_FILE_LINES`] lines and no function over
/// [`MAX_FN_LINES`]: a file or a function that grows past that is split,
/// not left to grow.
#[test]
fn the_source_files_and_functions_stay_short() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 50, "src/ has its files: {files:?}");
    rust_files(&root.join("crates/store/src"), &mut files);
    let mut long = Vec::new();
    for path in &files {
        let relative = path.strip_prefix(root).expect("a file of the crate");
        let file = relative.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(path).expect("a source file");
        let lines = text.lines().count();
        if lines > MAX_FILE_LINES {
            long.push(format!("{file}: {lines} lines"));
        }
        let syntax =
            syn::parse_file(&text).unwrap_or_else(|error| panic!("{file} parses: {error}"));
        let mut visitor = LongFunctions {
            file: &file,
            owner: None,
            found: Vec::new(),
        };
        syn::visit::Visit::visit_file(&mut visitor, &syntax);
        long.extend(visitor.found);
    }
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines or functions over {MAX_FN_LINES} in src/; \
         split each into helpers (a file into modules named for what they hold):\n{}",
        long.join("\n")
    );
}

/// The top-level modules of the library one module's code names
/// (`crate::module...`), its tests left out, each with the first file
/// that names it.
struct NamedModules<'a> {
    modules: &'a [String],
    file: &'a str,
    named: &'a mut std::collections::BTreeMap<String, String>,
}

impl NamedModules<'_> {
    fn name(&mut self, first: &syn::Ident, second: Option<&syn::Ident>) {
        let Some(second) = second.filter(|_| first == "crate") else {
            return;
        };
        let module = second.to_string();
        if self.modules.contains(&module) {
            self.named
                .entry(module)
                .or_insert_with(|| self.file.to_string());
        }
    }
}

/// Whether `attrs` hold `#[cfg(test)]`.
fn only_for_tests(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

impl<'ast> syn::visit::Visit<'ast> for NamedModules<'_> {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if !only_for_tests(&item.attrs) {
            syn::visit::visit_item_mod(self, item);
        }
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        if !only_for_tests(&item.attrs) {
            syn::visit::visit_item_fn(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let mut segments = path.segments.iter().map(|segment| &segment.ident);
        if let Some(first) = segments.next() {
            self.name(first, segments.next());
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_use_path(&mut self, path: &'ast syn::UsePath) {
        let second = match &*path.tree {
            syn::UseTree::Path(next) => Some(&next.ident),
            syn::UseTree::Name(name) => Some(&name.ident),
            _ => None,
        };
        self.name(&path.ident, second);
        syn::visit::visit_use_path(self, path);
    }
}

/// A cycle among `uses` (module to the modules its code names), as
/// `a -> b -> a`, if there is one.
fn a_cycle(uses: &std::collections::BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn walk(
        module: &str,
        uses: &std::collections::BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|seen| seen == module) {
            let mut cycle = path[at..].to_vec();
            cycle.push(module.to_string());
            return Some(cycle);
        }
        if done.contains(module) {
            return None;
        }
        path.push(module.to_string());
        for next in uses.get(module).into_iter().flatten() {
            if let Some(cycle) = walk(next, uses, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(module.to_string());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    uses.keys()
        .find_map(|module| walk(module, uses, &mut Vec::new(), &mut done))
}

/// The library's top-level modules read top down: no module's code
/// (its tests aside) names a module that names it back, directly or
/// through others. (The course keeps the rules and the records, the report
/// draws them, the tutor drives the console with both.)
#[test]
fn the_library_s_modules_have_no_import_cycle() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let modules: Vec<String> = lib
        .lines()
        .filter_map(|line| line.strip_prefix("pub mod "))
        .map(|name| name.trim_end_matches(';').to_string())
        .collect();
    assert!(modules.len() > 30, "lib.rs's modules: {modules:?}");
    let mut uses = std::collections::BTreeMap::new();
    let mut named_in = std::collections::BTreeMap::new();
    for module in &modules {
        let single = root.join("src").join(format!("{module}.rs"));
        let mut files = Vec::new();
        if single.exists() {
            files.push(single);
        } else {
            rust_files(&root.join("src").join(module), &mut files);
        }
        let mut named = std::collections::BTreeMap::new();
        for path in files.iter().filter(|path| !path.ends_with("tests.rs")) {
            let file = path.strip_prefix(root).expect("a file of the crate");
            let file = file.to_string_lossy().replace('\\', "/");
            let text = std::fs::read_to_string(path).expect("a source file");
            let syntax =
                syn::parse_file(&text).unwrap_or_else(|error| panic!("{file} parses: {error}"));
            let mut visitor = NamedModules {
                modules: &modules,
                file: &file,
                named: &mut named,
            };
            syn::visit::Visit::visit_file(&mut visitor, &syntax);
        }
        named.remove(module);
        for (other, file) in &named {
            named_in.insert((module.clone(), other.clone()), file.clone());
        }
        uses.insert(module.clone(), named.into_keys().collect::<Vec<_>>());
    }
    assert!(
        uses["report"].contains(&"course".to_string()),
        "the report draws the course's records: {:?}",
        uses["report"]
    );
    if let Some(cycle) = a_cycle(&uses) {
        let links: Vec<String> = cycle
            .windows(2)
            .map(|pair| {
                format!(
                    "{} -> {} (in {})",
                    pair[0],
                    pair[1],
                    named_in[&(pair[0].clone(), pair[1].clone())]
                )
            })
            .collect();
        panic!(
            "an import cycle among the library's modules: {}; move what one side needs \
             below both, or the code that needs both above them",
            links.join(", ")
        );
    }
}

/// The cycle finder finds a cycle through three modules, and none in a
/// graph that only goes down.
#[test]
fn a_cycle_is_found_through_any_number_of_modules() {
    let graph = |edges: &[(&str, &str)]| {
        let mut uses = std::collections::BTreeMap::<String, Vec<String>>::new();
        for (from, to) in edges {
            uses.entry(from.to_string())
                .or_default()
                .push(to.to_string());
            uses.entry(to.to_string()).or_default();
        }
        uses
    };
    assert_eq!(
        a_cycle(&graph(&[("a", "b"), ("b", "c"), ("c", "a")])),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    assert_eq!(a_cycle(&graph(&[("a", "b"), ("a", "c"), ("b", "c")])), None);
}

/// The page as a browser parses it (the `page-checks` feature).
#[cfg(feature = "page-checks")]
mod pages {
    use super::{analyze, stdout};
    use crate::common::Sandbox;
    use scraper::{Html, Selector};
    use serde_json::Value;

    /// `lab analyze`'s page draws the subsumption graph with a node per
    /// group of the JSON, the dominators marked, an edge per subsumption,
    /// the minimum's forced tests, and loads nothing from elsewhere.
    #[test]
    fn the_analysis_page_draws_what_the_json_says() {
        let sandbox = Sandbox::new();
        let json: Value =
            serde_json::from_str(&stdout(&analyze(&sandbox, &["--format", "json"]))).expect("JSON");
        let groups = json["mutant_groups"].as_array().unwrap();
        let page = sandbox.path("analysis.html");
        analyze(
            &sandbox,
            &["--format", "html", "--output", page.to_str().unwrap()],
        );
        let html = Html::parse_document(&std::fs::read_to_string(&page).unwrap());
        let select = |css: &str| Selector::parse(css).unwrap();
        let nodes = html.select(&select("svg.subsumption g.node")).count();
        assert_eq!(nodes, groups.len());
        let drawn: Vec<String> = html
            .select(&select("svg.subsumption g.node.dominator"))
            .map(|node| node.value().attr("data-mutants").unwrap().to_string())
            .collect();
        let wanted: Vec<String> = groups
            .iter()
            .filter(|g| g["dominator"] == true)
            .map(|g| {
                let ids: Vec<&str> = g["mutants"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|id| id.as_str().unwrap())
                    .collect();
                ids.join(" ")
            })
            .collect();
        assert_eq!(drawn, wanted);
        let edges = html.select(&select("svg.subsumption line.edge")).count();
        assert_eq!(edges, json["subsumption"].as_array().unwrap().len());
        assert!(html
            .select(&select("link[href^='http'], script"))
            .next()
            .is_none());
        let forced = html.select(&select("section#minimum li.forced")).count();
        assert_eq!(forced, 28);
    }
}

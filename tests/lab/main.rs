//! The lab's own tests, which run the `lab` binary and the library's
//! machinery: what the kill matrix means (`analyze`), the command line
//! (`cli`), the kill matrix's skipping of the tests that cannot catch a
//! mutant (`coverage`), which implementation each command runs and the
//! student's several implementations (`current_impl`), a student's own
//! implementation (`own_impl`), the runner (`runner`), the Stryker report (`stryker`) and
//! the HTML report in a browser (`html_browser`, ignored by default),
//! the pages and results files parsed as a browser and a schema validator
//! read them (each file's `pages` module, and `html_browser` and
//! `stryker_viewer`: with the `page-checks` feature only),
//! untrusted text made inert in every format (`inert`),
//! the power-loss shim under the store (`power_loss`, which needs the
//! compiled mutant h04g), and the screens at 80 columns (`screens`, with
//! their snapshots, and `widths`).
//!
//! With the unit tests and the `contract` binary, they judge cargo-mutants'
//! mutants of the lab's own code (`LAB_TESTS` in `.ci/mutants`).

#[path = "../common/mod.rs"]
mod common;

mod analyze;
mod chaos;
mod check_feedback;
mod cli;
mod coverage;
mod current_impl;
mod docs;
mod first_hour;
mod grade;
mod hostile;
// The pages in a browser, read back with scraper: `page-checks`.
#[cfg(feature = "page-checks")]
mod html_browser;
mod inert;
mod matrices;
mod matrix_outputs;
mod own_impl;
mod power_loss;
mod runner;
mod screens;
mod stryker;
#[cfg(feature = "page-checks")]
mod stryker_viewer;
mod widths;

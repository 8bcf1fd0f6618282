//! lease-lab: a teaching lab for fencing tokens.
//!
//! The library holds a real job store on SQLite ([`store`]) whose lease and
//! fencing token stop a stalled worker from overwriting a newer result, the
//! contract suite that checks it ([`suite`]), and the machinery of the `lab`
//! binary that runs that suite against deliberately broken copies of the
//! store ([`variant`], [`runner`]) and shows what caught them ([`matrix`],
//! [`report`], [`probe`]). The command line itself lives in the binary.
//!
//! The store's functions are re-exported at the top level:
//!
//! ```
//! use lease_lab::{claim, complete, enqueue, init_db, state, Fence};
//!
//! let dir = tempfile::tempdir()?;
//! let db = dir.path().join("jobs.db");
//! init_db(&db)?;
//! enqueue(&db, "report")?;
//! let a = claim(&db, "report", "A", 100.0, 10.0)?; // A takes fence 1 and stalls
//! let b = claim(&db, "report", "B", 110.0, 10.0)?; // the lease ran out: B takes fence 2
//! assert_eq!((a, b), (Some(Fence(1)), Some(Fence(2))));
//! assert!(complete(&db, "report", "B", Fence(2), 112.0, "B's result")?);
//! assert!(!complete(&db, "report", "A", Fence(1), 113.0, "A's late result")?);
//! assert_eq!(state(&db, "report")?.unwrap().result.as_deref(), Some("B's result"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The rest of this page is the map for contributors: where each thing lives, the
//! path two commands take through the code, and what to touch, and what checks it,
//! to add an exercise, a mutant, a report format or a chaos fault. What the lab is
//! for is in `README.md`; `labs/instructors.md` and `labs/reference.md` say what it
//! does in detail.
//!
//! # Module map
//!
//! Outside the library:
//!
//! - `src/main.rs` and `src/cli/`: the `lab` binary's command line, a thin adapter:
//!   the clap types, and a file per command (`lab check` in `src/cli/check.rs`),
//!   whose function parses its arguments, calls one library function and renders
//!   what it returns. `src/main.rs` picks the
//!   command; the exit codes are decided in `src/cli/exit.rs`, and only there.
//! - `crates/store/`: the store's crate, `lease-lab-store`, which the library
//!   re-exports module by module ([`store`], [`store_postgres`], [`job`],
//!   [`error`], [`operation`], [`backend`], [`mutant`], [`reach`]), so that an
//!   edit of the lab recompiles none of its compiled mutants. Its `build.rs` turns every
//!   `mutants/*.toml` of `crates/store/src/store.rs` and of
//!   `crates/store/src/store_postgres.rs` into a compiled variant (a copy of the
//!   store with the fragment replaced, and what it reaches), listed in its module
//!   `variants`, which [`variant`] re-exports.
//! - `build.rs`: checks that each mutant of `src/store.py` applies, checks
//!   `labs/exercises.toml` against `mutants/`, `labs/` and `labs/probes/`, and
//!   compiles the table and the texts in. It includes [`mutant`] and
//!   [`exercise_table`] by path.
//! - `src/store.py`: the Python store, which speaks the lab's protocol when run;
//!   `src/bin/fault-worker.rs`: one worker process of the fault tests.
//!
//! The store:
//!
//! - [`store`]: the reference store, steps 1 to 8 in the worksheet's order.
//! - [`store_postgres`]: the same store on PostgreSQL, steps 1 to 8 in the same order.
//! - [`pg_server`]: a PostgreSQL server for the lab: one it is given, or a throwaway
//!   cluster (which a test or a chaos run may crash); the store on it as the suite and
//!   a chaos run's workers see it, the compiled operations of the reference on it and
//!   of its mutants, and hosts of their own for a chaos run ([`pg_server::Hosts`]:
//!   network namespaces, a link each, cut at will); what a run made removed on
//!   Ctrl-C too ([`pg_server::leftovers`]).
//! - [`job`]: the values the store hands out: a job's row and the [`Fence`].
//! - [`operation`]: a call described once: a protocol line, a `lab db` command.
//! - [`backend`]: the eight operations as a trait, and the one match that runs an
//!   [`operation::Operation`] on whatever implements it.
//! - [`mutant`]: mutant files: one broken fragment of a reference store, as data.
//!
//! The suite:
//!
//! - [`suite`]: the contract suite by step, one list of tests for `cargo test` and `lab`.
//!
//! What runs:
//!
//! - [`subject`]: what `--impl` names: the Rust store, the Python store, or one's own.
//! - [`variant`]: one column of the matrix: the reference or a mutant, and its engine.
//! - [`job_store`]: the eight operations as one trait, whatever carries them out.
//! - [`handle`]: the kept-connection [`Store`] handle seen through that trait.
//! - [`external`]: a program in any language, driven over the protocol.
//! - [`child_process`]: a child process read line by line, with a time limit.
//! - [`program_threads`]: which threads of another program wait on a lock.
//! - [`runner`]: the suite against variants: a worker process each, a thread a test.
//! - [`outcome`]: what a test did against a variant, and what that means for a mutant.
//!
//! The course:
//!
//! - [`course`]: what the student's and the instructor's commands need beyond the
//!   matrix: progress, prediction, checks, grading, demo, starters, one's own mutants.
//!   - [`course::session`]: the progress for one command, with a method for every
//!     change a command makes to it (rustlings' `AppState`, in the lab's words).
//!   - [`course::chosen`]: which implementation a command runs: `--impl`, else the
//!     student's current one, else the lab's Rust store; the one rule.
//!   - [`course::check`]: `lab check`, a student's own implementation step by step.
//!   - [`course::class_check`]: `lab grade --impl-dir`, a class's code, each entry a
//!     row, each checked by a `lab check` of its own (the judge, as the instructor).
//!   - [`course::submission`]: a class's entries read without trusting them: what
//!     each is, and a copy that never follows a link nor opens a FIFO.
//!   - [`course::confined`]: a check whose programs run in sandboxes: the copy, the
//!     prebuilt dependencies of a Rust project, the confinement.
//! - [`exercise`]: the exercises, one per worksheet mutant, with their texts.
//! - [`exercise_table`]: `labs/exercises.toml` and its check, shared with the build.
//! - [`lab_text`]: an exercise's text in both languages, split into its sections.
//! - [`probe`]: a prediction written as store operations, run on reference and mutants.
//!
//! Matrix and analysis:
//!
//! - [`matrix`]: the kill matrix, its one rule for "caught", what `--check` fails on.
//! - [`analysis`]: what a matrix means: idle tests, subsumption, a minimum test set.
//!
//! Report:
//!
//! - [`report`]: everything the lab shows, a module for each audience, and what
//!   they share: every report's formats ([`report::format`]), the one page shell
//!   ([`report::html_page`]), untrusted text made safe for a page
//!   ([`report::html_text`]).
//!   - [`report::matrix`]: the kill matrix as text, JSON, Markdown, a Stryker report
//!     (and its page in Stryker's viewer) and an HTML page; how an outcome looks.
//!   - [`report::analysis`]: what a matrix means, as text, Markdown, JSON and a page.
//!   - [`report::student`]: the student's screens: the step-through, the check of
//!     their own implementation, and:
//!     - [`report::student::progress`]: the overview, hints and progress screens.
//!     - [`report::student::starter`]: what `lab new` says it wrote.
//!     - [`report::student::demo`]: the demo stories as text.
//!   - [`report::class`]: a class graded, for its instructor: the rows, the CSV files,
//!     the class page, and a check as Gradescope's and PrairieLearn's graders read it.
//!   - [`report::chaos`]: a chaos run's timeline as a page.
//!
//! The tutor, above the course and its screens:
//!
//! - [`tutor`]: the commands a student works through at the console, which change
//!   the course's records and show report's screens as they go.
//!   - [`tutor::step`]: the step-through of `lab step`: prediction, run,
//!     comparison, record; [`tutor::step::prompt`]: the console that asks.
//!   - [`tutor::check`]: `lab check`: the student's implementation checked,
//!     recorded and shown, or set beside their prediction of a break; which
//!     implementation `lab check` and `lab watch` run.
//!   - [`tutor::watch`]: `lab watch`, a check on every save.
//!   - [`tutor::study`]: the changes at the console beyond the steps: the student's
//!     name, `lab reset`, `lab reflect`.
//!
//! Chaos and faults:
//!
//! - [`chaos`]: `lab chaos`: many workers and faults, judged from the history.
//! - [`fault`]: what a program can do wrong besides answering: end, hang, break protocol.
//! - [`frame`]: where in a program's code an error was raised or a call hung.
//! - [`vfs_shim`]: a shim under SQLite: power cuts, I/O errors, the write-lock watch.
//! - [`race`]: races that end the same way every time, queued behind a held lock.
//! - [`sandbox`]: code the lab does not trust (a class's submissions) run in
//!   bubblewrap with seccomp filters ([`sandbox::seccomp`]), a control group where one
//!   can be made ([`sandbox::cgroup`]) and caps; the judge's room beside it, a sized
//!   folder the two share ([`sandbox::room`]).
//! - [`reach`]: which operations can run a mutant's change: the matrix's coverage.
//! - [`serve`]: a compiled store served over the protocol (`lab __serve`, its
//!   arguments and body).
//!
//! Shared:
//!
//! - [`terminal`]: colour, width, and the text and diffs the screens share.
//! - [`inert`]: untrusted text (names, `--why`, file names, a program's output) made
//!   inert for a terminal: control characters and bidirectional overrides shown as escapes.
//! - [`status_line`]: a line rewritten in place at a terminal, saying how a long command goes.
//! - [`error`]: the store's errors, each naming what went wrong and what to do.
//! - [`command`]: why a command whose work is the library's stopped early, which
//!   the binary turns into its exit code.
//! - [`immutable`]: a file's immutable flag, which binds root too.
//! - [`shared_files`]: the lab's own reach into a test's files, which the
//!   implementation under test shares: never through a link it put there.
//!
//! # Trace: `lab matrix`
//!
//! 1. `src/main.rs` parses the command line, applies `--color`
//!    ([`terminal::apply_color`]) and dispatches `Command::Matrix` to
//!    `cli::matrix::matrix` (`src/cli/matrix.rs`).
//! 2. That function plans the reports, a format and a destination each, with their
//!    checks ([`report::format::plan_reports`]: each `--output`, `--chaos` with text
//!    and json only, Stryker's viewer read at once).
//! 3. `cli::args::worker_command` finds this binary to start workers
//!    ([`runner::WorkerCommand::current_lab`]); `ImplArgs::variants` asks
//!    [`subject::Subject::variants`]: for `rust`, [`variant::Variant::all_compiled`]
//!    (the reference, then [`variant::MUTANTS`], generated by the store's
//!    `build.rs`), then one's own mutants of `--mutants`; `--kind` filters them.
//! 4. [`matrix::Matrix::build_covered`] (or [`matrix::Matrix::build`] with
//!    `--every-test`) runs [`suite::CASES`]: the reference first, its tests spread
//!    over the workers, each noting the operations it called; then each mutant runs
//!    only the tests that called an operation its change reaches
//!    ([`variant::Mutant::covered_by`]), through [`runner::run_planned`]. Every other
//!    cell is the reference's run, marked not covered.
//! 5. [`runner::run_planned`] runs `--jobs` variants at once, each through
//!    [`runner::run_variant`]: a compiled variant in `lab __worker` processes
//!    ([`runner::WorkerArgs`]), whose [`runner::WorkerEvent`] lines it reads through
//!    [`child_process::LineChild`]; a worker that dies costs the running test (a
//!    crash) and a new worker takes the rest. A program (`--impl python`, one's own)
//!    runs from this process instead ([`runner::run_program`],
//!    [`external::ExternalStore`]).
//! 6. In each worker, `src/main.rs` dispatches to `cli::worker::worker`, then
//!    [`runner::serve`]: [`variant::Variant::find`] and [`variant::Variant::open`]
//!    give a [`job_store::JobStore`], [`runner::work`] runs the tests, and
//!    [`runner::run_case`] gives each a fresh database, a [`suite::Bench`] and a
//!    thread with a time limit; the result is an [`outcome::TestRun`].
//! 7. With `--chaos`, [`chaos::beside::judge_variants`] gives every variant a chaos
//!    run and [`chaos::beside::compare`] sets it beside the matrix.
//! 8. Each planned report is rendered ([`report::format::MatrixFormat::render`]):
//!    [`report::matrix::text::matrix`] with [`report::matrix::survivor_advice`],
//!    [`report::matrix::json::report`], [`report::matrix::markdown::report`],
//!    [`report::matrix::stryker::report`] or [`report::matrix::html::page`], and written to standard
//!    output or its file (`cli::exit::say_or_write`).
//! 9. With `--check`, [`matrix::Matrix::problems`] (and [`chaos::beside::problems`])
//!    are printed and the command fails; `src/main.rs` turns that into exit code 1.
//!
//! # Trace: `lab step 4`
//!
//! The command line parses and saves; the step-through itself is [`tutor::step`].
//!
//! 1. `src/main.rs` records `--student` if given, and dispatches `Command::Step` to
//!    `cli::step::run` (`src/cli/step.rs`).
//! 2. `cli::session` opens the progress file once, as a [`course::session::Session`].
//! 3. [`tutor::step::StepChoice::of`] follows the one rule of
//!    [`course::chosen::Chosen`] to the store whose mutants the exercises show
//!    (`--impl rust` or `python`, else the language of the student's current
//!    implementation, else Rust) and that implementation, if any;
//!    `StepChoice::exercise` finds `4` with [`exercise::exercises_of`] (the rows of
//!    `labs/exercises.toml`, compiled in) and [`exercise::find_among`].
//! 4. The prediction given on the command line (`--predict`, `--why`, a `--probe`
//!    file through [`probe::load`]) and the run's options ([`runner::RunOptions`])
//!    are gathered; the suite runs through [`matrix::Matrix::build`].
//! 5. `tutor::step::prompt::Console::with_terminal` wraps standard input and output,
//!    and `tutor::step::take` calls `tutor::step::step_through`:
//!    1. without a prediction and without a terminal it stops (a usage error);
//!    2. the menu is [`suite::cases_through`]`(4)`, the tests of steps 1 to 4;
//!    3. [`report::student::step::exercise`] shows the text and the broken fragment, what
//!       runs under the title ([`tutor::step::StepChoice::header`]);
//!    4. the prediction is parsed ([`course::prediction::parse_selection`]) or asked
//!       for after [`report::student::step::menu`], with hints on request (each saved at
//!       once), then the why;
//!    5. a probe, if any, runs against the reference and mutant `04`
//!       ([`probe::check`], [`probe::check_text`]);
//!    6. the tests run against the reference and mutant `04` ([`matrix::Matrix::build`],
//!       steps 5 and 6 of the `lab matrix` trace);
//!    7. [`report::student::step::verdicts`] shows which tests caught it; a
//!       [`course::prediction::Score`] and [`course::prediction::comparison`] set
//!       the prediction beside that; [`report::student::step::after_the_run`] explains;
//!    8. the attempt is recorded in the session, with the next exercise to take.
//! 6. With an implementation of the student's own, `tutor::step::yours` checks it
//!    against the tests of steps 1 to 4 ([`course::check::hear_greeting`],
//!    [`course::check::run_check`], [`report::student::check::check_text`]) and records it
//!    ([`course::session::Session::record_check`]).
//! 7. `cli::step::run` saves the session once, whatever that check gave; the error,
//!    if any, becomes a message and an exit code in `src/main.rs`.
//!
//! # Adding an exercise
//!
//! Steps run 1 to 8 and each has its exercise, so a new one is a second exercise of
//! a step, keyed as `8b` is.
//!
//! 1. A row in `labs/exercises.toml` (`key`, `step`, `mutant`, `python_mutant`,
//!    `text`, `probe`), in step order. Checked by the build: [`exercise_table::check`]
//!    refuses a duplicate key, one that does not fit its step, rows out of order, a
//!    text or probe that is not there, and a mutant that is not a worksheet mutant
//!    of the row's step and store.
//! 2. Its mutants: a `kind = "worksheet"` mutant of each store (see the next list),
//!    on `crates/store/src/store.rs` and on `src/store.py`. The build refuses a
//!    worksheet mutant that no row, or two rows, name; `lab matrix --check` and
//!    `lab matrix --check --impl python` judge them.
//! 3. Its text, `labs/NN-slug.md`: `# Step N: TITLE`, `## Contract`,
//!    `## Why it matters`, `## Predict before you run`, three `## Hint N`,
//!    `## After the run`, with `{rust: ... | python: ...}` where the languages differ
//!    ([`lab_text`]). The last row's text also holds `## Closing reflection`.
//!    Checked by the test
//!    `exercise::tests::every_exercise_has_its_own_complete_text_in_both_languages`.
//! 4. Its probe: the example probe of its step in `labs/probes/`, one per step and
//!    named after the step's text, so a second exercise names its step's probe, as
//!    `8b` does. Checked by the tests of `probe::judge`,
//!    `there_is_one_example_probe_per_step_named_after_its_lab` and
//!    `every_example_probe_holds_on_the_reference_and_kills_its_steps_mutants`: the
//!    probe must kill the new worksheet mutant too.
//! 5. What lists the exercises: the tests of `src/exercise.rs` (the keys, and `8b`
//!    as the last), `KEYS` and the snapshots of `tests/lab/screens.rs` (insta), the
//!    tests that take `8b` as the last (`tests/lab/cli.rs`, `tests/student_path.rs`),
//!    and the README's list of texts. Checked by `cargo test`; the README by hand.
//!
//! # Adding a mutant
//!
//! 1. A file `mutants/ID-slug.toml` holding the fields of [`mutant::MutantSpec`]:
//!    `id` (the name's part before the first `-`, lowercase letters and digits),
//!    `step` (1 to 8), `kind` ([`mutant::MutantKind`]: `worksheet`, `hardening`,
//!    `field`; `own` is never compiled in), `title`, `file`
//!    (`crates/store/src/store.rs`; `src/store.py`, whose mutants are `pyNN`; or
//!    `crates/store/src/store_postgres.rs`, whose mutants are `pgNN`, `pgfNN` and
//!    `pgsNN` and are no exercise's), `fragment` (it must occur exactly once),
//!    `replacement`, `explanation`, and optionally
//!    `worksheet` and `story` ([`mutant::DemoStory`]). Checked by the build:
//!    [`mutant::MutantSpec::parse`] and [`mutant::MutantSpec::apply`] fail it with
//!    the file's name, as does an id another compiled mutant has.
//! 2. For a mutant of `crates/store/src/store.rs`, `mutant-ID = []` under
//!    `[features]` in `crates/store/Cargo.toml`, and
//!    `mutant-ID = ["lease-lab-store/mutant-ID"]` in `Cargo.toml`, which forwards it
//!    (a mutant of `src/store.py` has none). The store's build only warns when
//!    either is missing; the test `variant::tests::the_cargo_features_are_the_compiled_mutants`
//!    fails on a missing or an extra feature.
//! 3. A test of its own step that kills it, in `src/suite/stepN.rs`, listed in
//!    `for_each_suite_step!` (`src/suite/mod.rs`) with its tag and documented
//!    (`suite::tests::every_test_says_what_it_checks`). Checked by
//!    `lab matrix --check` (`--impl python` for a Python mutant, `--engine postgres`
//!    for one of the store on PostgreSQL, whose tests are [`suite::on_a_server`]): a
//!    survivor, or a mutant only other steps' tests catch, fails it
//!    ([`matrix::Matrix::problems`]); `tests/store/postgres.rs` runs the latter.
//! 4. The counts. Nothing counts by hand: `tests/lab/analyze.rs` derives the
//!    number of tests and mutants from [`suite::CASES`] and the compiled variants,
//!    and `the_guides_state_the_counts_the_lab_derives` fails until
//!    `labs/instructors.md` and `labs/reference.md` state the new figures. What
//!    the matrix means (idle tests, dominators, the minimum set) is found by
//!    `lab analyze`; `the_whole_suite_against_every_mutant_of_the_rust_store`
//!    pins those findings, so a new mutant that changes them is seen and the
//!    guide's sentence on them rewritten. Checked by `cargo test`.
//!
//! # Adding a report format
//!
//! Every report's formats are listed once, in [`report::format`]: the matrix's
//! ([`report::format::MatrixFormat`]), the analysis's, a chaos run's, a grade's,
//! a check's ([`report::format::CheckFormat`]: text, JSON, Gradescope) and the
//! student's text-or-JSON. Each variant's doc comment is its `--format`
//! help, and each enum knows its file extension and its renderer; `--format
//! NAME`, `--output NAME=FILE` and the messages that list the formats all come
//! from it.
//!
//! 1. A module in the folder of `src/report/` whose audience reads it
//!    (`src/report/matrix/` for the matrix's) with a function of what it renders
//!    (for the matrix, a [`matrix::Matrix`], as [`report::matrix::markdown::report`]
//!    is), and its line in the `//!` list of that folder's `mod.rs`. Checked by
//!    clippy and `cargo doc` with warnings denied.
//! 2. A variant of the format's enum in `src/report/format.rs`, its extension in
//!    `extension` and its arm in `render` there. Checked by the build: both
//!    matches are exhaustive.
//! 3. The tests that list the formats: in `src/report/format.rs`,
//!    `an_output_is_format_equals_file_or_a_bare_file`; in
//!    `tests/lab/matrix_outputs.rs`, `REPORTS`, which
//!    `one_run_writes_every_format_each_as_its_format_alone_prints_it` runs. Checked
//!    by `cargo test`.
//!
//! # Adding a chaos fault
//!
//! A chaos fault is something done to the workers of a run: it lives in [`chaos`].
//! [`fault`] is another thing, what a program driven over the protocol did wrong
//! ([`fault::FaultKind`], turned into a verdict by [`runner::outcome_of_fault`]).
//!
//! 1. A field of [`chaos::plan::Faults`], in [`chaos::plan::Faults::all`],
//!    [`chaos::plan::Faults::none`] and [`chaos::plan::Faults::names`]. Checked by the
//!    build: every `Faults { .. }` literal must name it.
//! 2. Its injection: in a worker's plan ([`chaos::plan::Worker::step`]), as stalls
//!    and skew are, or in the run ([`chaos::run`]), as kills, restarts, power cuts
//!    (on [`vfs_shim`]'s shared disk), a server's crash and a cut link are; a count
//!    in [`chaos::run::Record`] and a line
//!    in [`chaos::timeline`] when it is counted; in [`chaos::judge`], whether a run
//!    with it still replays exactly (`replays_exactly`) and how the shrink treats it.
//! 3. Its name on the command line: [`chaos::plan::Faults::named`] and
//!    [`chaos::plan::FAULT_NAMES`], where it cannot run in
//!    [`chaos::plan::Faults::refusal`] (with a unit test of each), the `--faults` help
//!    in `src/cli/chaos.rs`, and the replay command ([`chaos::Chaos::replay`]).
//! 4. Tests: `tests/lab/chaos.rs` (`the_rust_reference_under_every_fault_breaks_nothing`
//!    pins the default faults) and a mutant caught under the new fault; with it in
//!    `Faults::all`, `lab matrix --chaos` runs it too. Checked by `cargo test`;
//!    `labs/reference.md` and `labs/students.md` describe the faults by hand.

#![warn(missing_docs)]

pub mod analysis;
pub mod chaos;
pub mod child_process;
pub mod command;
pub mod course;
pub mod exercise;
pub mod exercise_table;
pub mod external;
pub mod fault;
pub mod frame;
pub mod handle;
pub mod immutable;
pub mod inert;
pub mod job_store;
pub mod lab_text;
pub mod matrix;
pub mod outcome;
pub mod pg_server;
pub mod probe;
pub mod program_threads;
pub mod race;
pub mod report;
pub mod runner;
pub mod sandbox;
pub mod serve;
pub mod shared_files;
pub mod status_line;
pub mod subject;
pub mod suite;
pub mod terminal;
pub mod tutor;
pub mod variant;
pub mod vfs_shim;

// The store's crate (crates/store/), whose modules keep their paths here.
pub use lease_lab_store::{backend, error, job, mutant, operation, reach, store, store_postgres};

pub use error::{ErrorKind, Result, StoreError};
pub use job::{Fence, Job};
pub use variant::active::{
    claim, claim_many, complete, enqueue, init_db, release, renew, state, Store,
};

//! The formats of every report the lab writes, each with its usual file
//! extension and its renderer: the kill matrix's ([`MatrixFormat`]), the
//! analysis's ([`AnalysisFormat`]), a chaos run's ([`ChaosFormat`]), a
//! class's grade ([`GradeFormat`]), and the text-or-JSON of a student's
//! own reports ([`ReportFormat`]). A new format is a variant here and its
//! renderer in a module of its own, under `report/` in the folder of
//! those who read it.
//!
//! And where `lab matrix` sends its reports: `--format F` to standard
//! output or to `--output FILE`, and any number of `--output FORMAT=FILE`,
//! each a report of its own format, all from one run of the matrix.
//!
//! The formats derive clap's `ValueEnum`, as every value type of the
//! library that a command takes does: their doc comments are the
//! `--format` help.

use crate::analysis::Analysis;
use crate::chaos::beside::ChaosBeside;
use crate::chaos::Chaos;
use crate::matrix::Matrix;
use clap::ValueEnum;
use std::path::PathBuf;

/// A report as JSON text, pretty-printed, with a line end.
pub fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).expect("a report is JSON") + "\n"
}

/// A format of the kill matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MatrixFormat {
    /// A grid for the terminal.
    Text,
    /// JSON for tools.
    Json,
    /// A Markdown table.
    Markdown,
    /// Stryker's mutation-testing-report schema, version 2.
    Stryker,
    /// One self-contained HTML page.
    Html,
    /// Stryker's report in Stryker's own viewer, one page that opens from
    /// disk (with --viewer, the viewer's npm package).
    StrykerHtml,
}

impl MatrixFormat {
    /// The format's name, as `--format` and `FORMAT=FILE` take it.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|value| value.get_name().to_string())
            .unwrap_or_default()
    }

    /// The file extension a report of this format usually has.
    pub fn extension(self) -> &'static str {
        match self {
            MatrixFormat::Text => "txt",
            MatrixFormat::Json | MatrixFormat::Stryker => "json",
            MatrixFormat::Markdown => "md",
            MatrixFormat::Html | MatrixFormat::StrykerHtml => "html",
        }
    }

    /// `matrix` in this format, at `width` columns for text, with a chaos
    /// run beside it (`lab matrix --chaos`: text and JSON only), and with
    /// Stryker's `viewer` for `stryker-html`.
    ///
    /// Errors: `stryker-html` without a viewer, said with what to give.
    pub fn render(
        self,
        matrix: &Matrix,
        chaos: Option<&ChaosBeside>,
        viewer: Option<&super::matrix::stryker_page::Viewer>,
        width: usize,
    ) -> Result<String, OutputClash> {
        Ok(match self {
            MatrixFormat::Text => {
                let mut text = super::matrix::text::matrix(matrix, width);
                for summary in matrix.summaries() {
                    if let Some(advice) = super::matrix::survivor_advice(matrix, &summary.id) {
                        let advice = crate::terminal::fill(&advice, width.min(100), "", "");
                        text.push_str(&format!("\n{advice}\n"));
                    }
                }
                if let Some((settings, verdicts, comparison)) = chaos {
                    text.push_str(&crate::chaos::beside::text(verdicts, comparison, settings));
                }
                text
            }
            MatrixFormat::Json => {
                let mut report = super::matrix::json::report(matrix);
                if let Some((settings, verdicts, comparison)) = chaos {
                    report["chaos"] = serde_json::json!({
                        "settings": settings,
                        "variants": verdicts,
                        "comparison": comparison,
                    });
                }
                json_text(&report)
            }
            MatrixFormat::Markdown => super::matrix::markdown::report(matrix),
            MatrixFormat::Stryker => json_text(&super::matrix::stryker::report(matrix)),
            MatrixFormat::Html => super::matrix::html::page(matrix),
            MatrixFormat::StrykerHtml => {
                let viewer = viewer.ok_or_else(|| OutputClash(Self::NEEDS_THE_VIEWER.into()))?;
                super::matrix::stryker_page::page(&super::matrix::stryker::report(matrix), viewer)
            }
        })
    }

    /// Why `stryker-html` needs `--viewer`, and what to give.
    pub const NEEDS_THE_VIEWER: &'static str = "stryker-html draws the report with Stryker's viewer, which the lab does not ship: `npm install mutation-testing-elements`, then give --viewer node_modules/mutation-testing-elements";

    /// Every format's name, for messages: `text, json, ...`.
    pub fn names() -> String {
        MatrixFormat::value_variants()
            .iter()
            .map(|format| format.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One `--output` value: `FORMAT=FILE`, a report of that format to that
/// file, or a bare `FILE`, the `--format` report to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputArg {
    /// `FORMAT=FILE`.
    Format(MatrixFormat, PathBuf),
    /// `FILE`.
    File(PathBuf),
}

impl OutputArg {
    /// Parses an `--output` value. A value with `=` before any `/` is
    /// `FORMAT=FILE`, and its format must be one the lab writes; a file
    /// whose name holds `=` can be given as `./NAME`.
    pub fn parse(value: &str) -> Result<OutputArg, OutputClash> {
        let Some((name, file)) = value
            .split_once('=')
            .filter(|(name, _)| !name.contains('/'))
        else {
            return Ok(OutputArg::File(value.into()));
        };
        let format = MatrixFormat::from_str(name, false).map_err(|_| {
            OutputClash(format!(
                "`{name}` is not a format; FORMAT=FILE takes one of {} (a file whose name holds `=` is written ./{value})",
                MatrixFormat::names()
            ))
        })?;
        if file.is_empty() {
            return Err(OutputClash(format!(
                "no file after `{name}=`: write FORMAT=FILE, such as {name}=matrix.{}",
                format.extension()
            )));
        }
        Ok(OutputArg::Format(format, file.into()))
    }
}

/// An `--output` value that cannot be used, or values that cannot all be
/// written: what to give instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OutputClash(pub String);

/// A format of `lab analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AnalysisFormat {
    /// Text for the terminal.
    Text,
    /// JSON for tools.
    Json,
    /// Markdown.
    Markdown,
    /// One self-contained HTML page, with the subsumption graph.
    Html,
}

impl AnalysisFormat {
    /// The file extension a report of this format usually has.
    pub fn extension(self) -> &'static str {
        match self {
            AnalysisFormat::Text => "txt",
            AnalysisFormat::Json => "json",
            AnalysisFormat::Markdown => "md",
            AnalysisFormat::Html => "html",
        }
    }

    /// `analysis` in this format, at `width` columns for text.
    pub fn render(self, analysis: &Analysis, width: usize) -> String {
        match self {
            AnalysisFormat::Text => super::analysis::text(analysis, width),
            AnalysisFormat::Json => json_text(&super::analysis::json(analysis)),
            AnalysisFormat::Markdown => super::analysis::markdown(analysis),
            AnalysisFormat::Html => super::analysis::html::page(analysis),
        }
    }
}

/// How `lab chaos` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ChaosFormat {
    /// Text for the terminal.
    Text,
    /// The whole history and what was found, as JSON.
    Json,
    /// A page that draws the timeline.
    Html,
}

impl ChaosFormat {
    /// The file extension a report of this format usually has.
    pub fn extension(self) -> &'static str {
        match self {
            ChaosFormat::Text => "txt",
            ChaosFormat::Json => "json",
            ChaosFormat::Html => "html",
        }
    }

    /// The chaos run in this format.
    pub fn render(self, chaos: &Chaos) -> String {
        match self {
            ChaosFormat::Text => crate::chaos::timeline::report_text(chaos),
            ChaosFormat::Json => json_text(chaos),
            ChaosFormat::Html => crate::report::chaos::page(chaos),
        }
    }
}

/// How `lab grade` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GradeFormat {
    /// Text for the terminal.
    Text,
    /// JSON for tools.
    Json,
    /// Comma-separated values, a header row first (RFC 4180).
    Csv,
    /// Markdown (with --misconceptions).
    Markdown,
    /// The class page: one self-contained HTML file with every view.
    Html,
    /// Gradescope's results.json for each submission (with --impl-dir and
    /// --results-dir).
    Gradescope,
}

/// What `lab grade` was asked for besides its format.
#[derive(Debug, Clone, Copy, Default)]
pub struct GradeAsked {
    /// `--misconceptions`.
    pub misconceptions: bool,
    /// `--per-exercise`.
    pub per_exercise: bool,
    /// `--impl-dir`: the students' implementations are checked.
    pub impl_dir: bool,
    /// `--results-dir`: where Gradescope's results go.
    pub results_dir: bool,
    /// Progress files were given.
    pub files: bool,
}

impl GradeFormat {
    /// The view `asked` wants, once it and this format are known to go
    /// together: every pair [`GradeFormat::render`] cannot write is refused,
    /// before anything is read or run, saying what to give instead.
    ///
    /// Errors: the format and the options do not go together (a usage
    /// error; the message names what to give).
    pub fn view(self, asked: GradeAsked) -> Result<GradeView, String> {
        let view = if asked.misconceptions {
            GradeView::Misconceptions
        } else if asked.per_exercise {
            GradeView::PerExercise
        } else {
            GradeView::Students
        };
        let gradescope_without_its_folders = !asked.impl_dir || !asked.results_dir || asked.files;
        let refused = [
            (
                self == GradeFormat::Markdown && !asked.misconceptions,
                "--format markdown writes the misconceptions: add --misconceptions, or choose text, json, csv or html",
            ),
            (
                self == GradeFormat::Csv && asked.misconceptions,
                "--misconceptions has no CSV: choose text, json, markdown or html (the class page)",
            ),
            (
                self == GradeFormat::Gradescope && gradescope_without_its_folders,
                "--format gradescope writes a results.json per submission: give --impl-dir DIR and --results-dir OUT, and no progress files",
            ),
            (
                asked.results_dir && self != GradeFormat::Gradescope,
                "--results-dir is where --format gradescope writes: add --format gradescope",
            ),
            (
                asked.impl_dir
                    && (matches!(self, GradeFormat::Markdown | GradeFormat::Html)
                        || asked.misconceptions
                        || asked.per_exercise),
                "--impl-dir reports as text, json or csv, without --misconceptions or --per-exercise",
            ),
            (
                asked.impl_dir && self != GradeFormat::Text && asked.files,
                "with --impl-dir, --format json or csv reports the implementations alone: grade the progress files in a run of their own",
            ),
        ];
        match refused.into_iter().find(|(refused, _)| *refused) {
            Some((_, why)) => Err(why.into()),
            None => Ok(view),
        }
    }

    /// The file extension a report of this format usually has.
    pub fn extension(self) -> &'static str {
        match self {
            GradeFormat::Text => "txt",
            GradeFormat::Json => "json",
            GradeFormat::Csv => "csv",
            GradeFormat::Markdown => "md",
            GradeFormat::Html => "html",
            GradeFormat::Gradescope => "json",
        }
    }

    /// A class's grade in this format, seen as `view`, at `width` columns
    /// for text; `None` for a pair the lab does not write (the students or
    /// the exercises in Markdown, the misconceptions in CSV, Gradescope's
    /// results, which are for implementations). JSON and the class page
    /// hold every view.
    pub fn render(
        self,
        graded: &crate::course::grade::ClassGrade,
        view: GradeView,
        width: usize,
    ) -> Option<String> {
        use super::class::grade as render;
        Some(match (self, view) {
            (GradeFormat::Text, GradeView::Students) => render::text(graded, width),
            (GradeFormat::Text, GradeView::Misconceptions) => {
                render::misconceptions_text(graded, width)
            }
            (GradeFormat::Text, GradeView::PerExercise) => render::exercises_text(graded, width),
            (GradeFormat::Json, _) => json_text(graded),
            (GradeFormat::Html, _) => super::class::class_page::page(graded),
            (GradeFormat::Csv, GradeView::Students) => render::csv(graded),
            (GradeFormat::Csv, GradeView::PerExercise) => render::exercises_csv(graded),
            (GradeFormat::Markdown, GradeView::Misconceptions) => {
                render::misconceptions_markdown(graded)
            }
            (GradeFormat::Csv, GradeView::Misconceptions)
            | (GradeFormat::Markdown, GradeView::Students | GradeView::PerExercise)
            | (GradeFormat::Gradescope, _) => return None,
        })
    }
}

/// What of a graded class a report shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GradeView {
    /// A row per student, then the class per exercise.
    Students,
    /// The wrong predictions per exercise, with the students' reasons.
    Misconceptions,
    /// A row per exercise: the first and latest attempts and the item
    /// statistics.
    PerExercise,
}

/// How `lab check` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    /// Text for the terminal.
    Text,
    /// The result per step and per test, as JSON for tools.
    Json,
    /// Gradescope's autograder `results.json`: a test per contract test.
    Gradescope,
    /// PrairieLearn's external grader `results.json`: a test per contract
    /// test, the score the share passed.
    #[value(name = "prairielearn")]
    PrairieLearn,
}

impl CheckFormat {
    /// The file extension a report of this format usually has.
    pub fn extension(self) -> &'static str {
        match self {
            CheckFormat::Text => "txt",
            CheckFormat::Json | CheckFormat::Gradescope | CheckFormat::PrairieLearn => "json",
        }
    }

    /// A check's report for tools, `None` for text (which is written as
    /// the check runs).
    pub fn render(
        self,
        report: &crate::course::check::CheckReport,
        implementation: &str,
        through: u8,
    ) -> Option<String> {
        let value = match self {
            CheckFormat::Text => return None,
            CheckFormat::Json => super::student::check::check_json(report, implementation, through),
            CheckFormat::Gradescope => {
                super::class::gradescope::results(report, implementation, through)
            }
            CheckFormat::PrairieLearn => {
                super::class::prairielearn::results(report, implementation, through)
            }
        };
        Some(serde_json::to_string_pretty(&value).expect("a check is JSON"))
    }

    /// An autograder's results file for a check that could not run, saying
    /// `why` and scoring nothing (see [`super::class::gradescope::not_checked`]
    /// and [`super::class::prairielearn::not_gradable`]); `None` for the lab's
    /// own formats, where the error says it.
    pub fn not_checked(self, why: &str) -> Option<String> {
        let value = match self {
            CheckFormat::Text | CheckFormat::Json => return None,
            CheckFormat::Gradescope => super::class::gradescope::not_checked(why),
            CheckFormat::PrairieLearn => super::class::prairielearn::not_gradable(why),
        };
        Some(serde_json::to_string_pretty(&value).expect("a check is JSON"))
    }
}

/// How a student's own report (progress, a check) is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Text for the terminal.
    Text,
    /// JSON for tools.
    Json,
}

/// Where one report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output.
    Stdout,
    /// This file.
    File(PathBuf),
}

/// The reports `lab matrix` writes, planned from its `--format`, its
/// `--output`s, `--chaos` and `--viewer`, each checked before the matrix
/// runs: the reports ([`plan`]), and Stryker's viewer when one of them
/// needs it (read now, so that a missing one is said at once).
///
/// Errors: an `--output` that names no format, reports that clash,
/// `--chaos` with a format that has no column for it, a viewer missing,
/// unreadable or given for no report that uses it.
pub fn plan_reports(
    format: Option<MatrixFormat>,
    outputs: &[String],
    chaos: bool,
    viewer: Option<&std::path::Path>,
) -> Result<PlannedReports, OutputClash> {
    let outputs = outputs
        .iter()
        .map(|value| {
            OutputArg::parse(value)
                .map_err(|message| OutputClash(format!("--output {value}: {}", message.0)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let reports = plan(format, &outputs)?;
    if let Some((format, _)) = reports
        .iter()
        .find(|(format, _)| chaos && !matches!(format, MatrixFormat::Text | MatrixFormat::Json))
    {
        return Err(OutputClash(format!(
            "--chaos adds its column to the text and json reports only, not to {}",
            format.name()
        )));
    }
    let wants_viewer = reports
        .iter()
        .any(|(format, _)| *format == MatrixFormat::StrykerHtml);
    let viewer = match (viewer, wants_viewer) {
        (Some(path), true) => Some(
            super::matrix::stryker_page::Viewer::load(path)
                .map_err(|error| OutputClash(format!("--viewer: {error}")))?,
        ),
        (None, true) => return Err(OutputClash(MatrixFormat::NEEDS_THE_VIEWER.into())),
        (Some(_), false) => {
            return Err(OutputClash(
                "--viewer is for --format stryker-html (or --output stryker-html=FILE)".into(),
            ))
        }
        (None, false) => None,
    };
    Ok(PlannedReports { reports, viewer })
}

/// What `lab matrix` will write ([`plan_reports`]).
pub struct PlannedReports {
    /// Each report's format and destination, in the order given.
    pub reports: Vec<(MatrixFormat, Destination)>,
    /// Stryker's viewer, when a report draws with it.
    pub viewer: Option<super::matrix::stryker_page::Viewer>,
}

/// The reports one run writes, in the order given: each format with its
/// destination.
///
/// With no `--output`, the `--format` report (text unless given) goes to
/// standard output; a bare `--output FILE` takes it instead. Each
/// `FORMAT=FILE` adds a report; with any of them, standard output gets a
/// report only when `--format` is given and no bare `FILE` takes it.
///
/// Errors: two reports to one file, or two bare `FILE`s; the message says
/// what to give instead.
pub fn plan(
    format: Option<MatrixFormat>,
    outputs: &[OutputArg],
) -> Result<Vec<(MatrixFormat, Destination)>, OutputClash> {
    let bare: Vec<&PathBuf> = outputs
        .iter()
        .filter_map(|output| match output {
            OutputArg::File(path) => Some(path),
            OutputArg::Format(..) => None,
        })
        .collect();
    if let [first, second, ..] = bare.as_slice() {
        return Err(OutputClash(format!(
            "--output {} and --output {}: only one file takes the --format report; name the format of the others as FORMAT=FILE (formats: {})",
            first.display(),
            second.display(),
            MatrixFormat::names()
        )));
    }
    let mut reports = Vec::new();
    let named = outputs.len() > bare.len();
    match (bare.first(), format) {
        (Some(path), format) => reports.push((
            format.unwrap_or(MatrixFormat::Text),
            Destination::File((*path).clone()),
        )),
        (None, Some(format)) => reports.push((format, Destination::Stdout)),
        (None, None) if !named => reports.push((MatrixFormat::Text, Destination::Stdout)),
        (None, None) => {}
    }
    for output in outputs {
        if let OutputArg::Format(format, path) = output {
            reports.push((*format, Destination::File(path.clone())));
        }
    }
    let mut files: Vec<&PathBuf> = Vec::new();
    for (_, destination) in &reports {
        if let Destination::File(path) = destination {
            if files.contains(&path) {
                return Err(OutputClash(format!(
                    "two reports to one file, {}: give each report a file of its own",
                    path.display()
                )));
            }
            files.push(path);
        }
    }
    Ok(reports)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each pair of a grade's format and options that the lab cannot
    /// write is refused, naming what to give; the others give the view
    /// their options ask for.
    #[test]
    fn a_grade_s_format_and_options_are_checked_together() {
        let files = GradeAsked {
            files: true,
            ..GradeAsked::default()
        };
        let misconceptions = GradeAsked {
            misconceptions: true,
            ..files
        };
        let per_exercise = GradeAsked {
            per_exercise: true,
            ..files
        };
        let implementations = GradeAsked {
            impl_dir: true,
            ..GradeAsked::default()
        };
        let gradescope = GradeAsked {
            results_dir: true,
            ..implementations
        };
        assert_eq!(GradeFormat::Text.view(files), Ok(GradeView::Students));
        assert_eq!(
            GradeFormat::Html.view(misconceptions),
            Ok(GradeView::Misconceptions)
        );
        assert_eq!(
            GradeFormat::Csv.view(per_exercise),
            Ok(GradeView::PerExercise)
        );
        assert_eq!(
            GradeFormat::Json.view(implementations),
            Ok(GradeView::Students)
        );
        assert_eq!(
            GradeFormat::Gradescope.view(gradescope),
            Ok(GradeView::Students)
        );
        let refused = |format: GradeFormat, asked: GradeAsked| format.view(asked).unwrap_err();
        assert!(refused(GradeFormat::Markdown, files).contains("add --misconceptions"));
        assert!(refused(GradeFormat::Csv, misconceptions).contains("has no CSV"));
        assert!(refused(GradeFormat::Gradescope, implementations).contains("--results-dir OUT"));
        let with_files = GradeAsked {
            files: true,
            ..gradescope
        };
        assert!(refused(GradeFormat::Gradescope, with_files).contains("no progress files"));
        assert!(refused(GradeFormat::Text, gradescope).contains("add --format gradescope"));
        assert!(refused(GradeFormat::Html, implementations).contains("text, json or csv"));
        let per_exercise_implementations = GradeAsked {
            per_exercise: true,
            ..implementations
        };
        assert!(
            refused(GradeFormat::Text, per_exercise_implementations).contains("text, json or csv")
        );
        let both = GradeAsked {
            impl_dir: true,
            ..files
        };
        assert_eq!(GradeFormat::Text.view(both), Ok(GradeView::Students));
        assert!(refused(GradeFormat::Csv, both).contains("in a run of their own"));
    }

    /// The reports of `lab matrix` are planned with their checks: an
    /// `--output` that names no format, `--chaos` beside a format without
    /// its column, and Stryker's viewer missing or given for nothing.
    #[test]
    fn the_matrix_s_reports_are_refused_before_it_runs() {
        let refused =
            |format: Option<MatrixFormat>, outputs: &[&str], chaos: bool, viewer: Option<&str>| {
                let outputs: Vec<String> =
                    outputs.iter().map(|output| output.to_string()).collect();
                match plan_reports(format, &outputs, chaos, viewer.map(std::path::Path::new)) {
                    Ok(_) => String::new(),
                    Err(clash) => clash.0,
                }
            };
        assert_eq!(refused(None, &[], true, None), "");
        assert!(refused(None, &["jsn=m.json"], false, None).starts_with("--output jsn=m.json: "));
        assert!(refused(Some(MatrixFormat::Html), &[], true, None).contains("not to html"));
        assert!(refused(None, &["json=m.json"], true, None).is_empty());
        assert_eq!(
            refused(Some(MatrixFormat::StrykerHtml), &[], false, None),
            MatrixFormat::NEEDS_THE_VIEWER
        );
        assert!(refused(None, &[], false, Some("viewer")).starts_with("--viewer is for"));
        assert!(refused(
            Some(MatrixFormat::StrykerHtml),
            &[],
            false,
            Some("/no/such/viewer")
        )
        .starts_with("--viewer: "));
        let planned = plan_reports(None, &["json=m.json".into()], false, None).unwrap();
        assert_eq!(planned.reports, vec![file(MatrixFormat::Json, "m.json")]);
        assert!(planned.viewer.is_none());
    }

    fn file(format: MatrixFormat, path: &str) -> (MatrixFormat, Destination) {
        (format, Destination::File(path.into()))
    }

    #[test]
    fn an_output_is_format_equals_file_or_a_bare_file() {
        assert_eq!(
            OutputArg::parse("json=m.json"),
            Ok(OutputArg::Format(MatrixFormat::Json, "m.json".into()))
        );
        assert_eq!(
            OutputArg::parse("m.html"),
            Ok(OutputArg::File("m.html".into()))
        );
        assert_eq!(
            OutputArg::parse("./a=b.txt"),
            Ok(OutputArg::File("./a=b.txt".into()))
        );
        let unknown = OutputArg::parse("pdf=m.pdf").unwrap_err().0;
        assert!(unknown.contains("`pdf` is not a format;"), "{unknown}");
        assert!(
            unknown.contains("text, json, markdown, stryker, html"),
            "{unknown}"
        );
        let empty = OutputArg::parse("stryker=").unwrap_err().0;
        assert!(empty.contains("stryker=matrix.json"), "{empty}");
    }

    #[test]
    fn a_plan_sends_the_format_to_stdout_or_its_file_and_adds_each_named_report() {
        use MatrixFormat::*;
        assert_eq!(plan(None, &[]).unwrap(), [(Text, Destination::Stdout)]);
        assert_eq!(
            plan(Some(Html), &[OutputArg::File("m.html".into())]).unwrap(),
            [file(Html, "m.html")]
        );
        let named = [
            OutputArg::Format(Json, "m.json".into()),
            OutputArg::Format(Stryker, "s.json".into()),
        ];
        assert_eq!(
            plan(None, &named).unwrap(),
            [file(Json, "m.json"), file(Stryker, "s.json")]
        );
        assert_eq!(
            plan(Some(Markdown), &named).unwrap(),
            [
                (Markdown, Destination::Stdout),
                file(Json, "m.json"),
                file(Stryker, "s.json")
            ]
        );
    }

    #[test]
    fn two_bare_files_or_two_reports_to_one_file_are_refused() {
        let twice = plan(
            None,
            &[OutputArg::File("a".into()), OutputArg::File("b".into())],
        )
        .unwrap_err();
        assert!(twice.0.contains("FORMAT=FILE"), "{twice:?}");
        let clash = plan(
            Some(MatrixFormat::Json),
            &[
                OutputArg::File("m.json".into()),
                OutputArg::Format(MatrixFormat::Stryker, "m.json".into()),
            ],
        )
        .unwrap_err();
        assert!(
            clash.0.contains("two reports to one file, m.json"),
            "{clash:?}"
        );
    }
}

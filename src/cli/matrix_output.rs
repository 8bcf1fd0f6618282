//! Where `lab matrix` sends its reports: `--format F` to standard output or
//! to `--output FILE`, and any number of `--output FORMAT=FILE`, each a
//! report of its own format, all from one run of the matrix.

use super::outcome::CliError;
use clap::ValueEnum;
use std::path::PathBuf;

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
}

impl MatrixFormat {
    /// The format's name, as `--format` and `FORMAT=FILE` take it.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map(|value| value.get_name().to_string())
            .unwrap_or_default()
    }

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
    pub fn parse(value: &str) -> Result<OutputArg, String> {
        let Some((name, file)) = value
            .split_once('=')
            .filter(|(name, _)| !name.contains('/'))
        else {
            return Ok(OutputArg::File(value.into()));
        };
        let format = MatrixFormat::from_str(name, false).map_err(|_| {
            format!(
                "`{name}` is not a format; FORMAT=FILE takes one of {} (a file whose name holds `=` is written ./{value})",
                MatrixFormat::names()
            )
        })?;
        if file.is_empty() {
            return Err(format!(
                "no file after `{name}=`: write FORMAT=FILE, such as {name}=matrix.{}",
                extension(format)
            ));
        }
        Ok(OutputArg::Format(format, file.into()))
    }
}

/// The file extension a report of `format` usually has.
fn extension(format: MatrixFormat) -> &'static str {
    match format {
        MatrixFormat::Text => "txt",
        MatrixFormat::Json | MatrixFormat::Stryker => "json",
        MatrixFormat::Markdown => "md",
        MatrixFormat::Html => "html",
    }
}

/// Where one report goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// Standard output.
    Stdout,
    /// This file.
    File(PathBuf),
}

/// The reports one run writes, in the order given: each format with its
/// destination.
///
/// With no `--output`, the `--format` report (text unless given) goes to
/// standard output; a bare `--output FILE` takes it instead. Each
/// `FORMAT=FILE` adds a report; with any of them, standard output gets a
/// report only when `--format` is given and no bare `FILE` takes it.
/// Two reports to one file, or two bare `FILE`s, are a usage error.
pub fn plan(
    format: Option<MatrixFormat>,
    outputs: &[OutputArg],
) -> Result<Vec<(MatrixFormat, Destination)>, CliError> {
    let bare: Vec<&PathBuf> = outputs
        .iter()
        .filter_map(|output| match output {
            OutputArg::File(path) => Some(path),
            OutputArg::Format(..) => None,
        })
        .collect();
    if let [first, second, ..] = bare.as_slice() {
        return Err(CliError::Usage(format!(
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
                return Err(CliError::Usage(format!(
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
        let unknown = OutputArg::parse("pdf=m.pdf").unwrap_err();
        assert!(unknown.contains("`pdf` is not a format;"), "{unknown}");
        assert!(
            unknown.contains("text, json, markdown, stryker, html"),
            "{unknown}"
        );
        let empty = OutputArg::parse("stryker=").unwrap_err();
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
        assert!(
            matches!(&twice, CliError::Usage(message) if message.contains("FORMAT=FILE")),
            "{twice:?}"
        );
        let clash = plan(
            Some(MatrixFormat::Json),
            &[
                OutputArg::File("m.json".into()),
                OutputArg::Format(MatrixFormat::Stryker, "m.json".into()),
            ],
        )
        .unwrap_err();
        assert!(
            matches!(&clash, CliError::Usage(message) if message.contains("two reports to one file, m.json")),
            "{clash:?}"
        );
    }
}

//! The CSV files the lab writes (RFC 4180: a class's grade, the class per
//! exercise, the students' implementations checked), each cell made safe
//! for the spreadsheets that open them and the terminals that show them.
//! A cell may hold what a student chose (a name, a file name, a test they
//! named) or what their program wrote (a reason quoted from its output).

use std::borrow::Cow;

/// A CSV file in memory, every cell written as [`cell`] makes it, every
/// cell quoted.
///
/// Every cell is quoted (the csv crate's `QuoteStyle::Always`): the
/// crate's default rule quotes a cell only for a comma, a `"` or a line
/// break, but a spreadsheet set to split on `;` (the usual separator
/// where the comma is the decimal mark) or on tabs would split an
/// unquoted `Bob;=1+1` into two cells, the second one a formula. Quoted,
/// it is one cell whatever the separator; a reader of RFC 4180 reads a
/// quoted cell as the same text, and a spreadsheet reads a quoted number
/// as a number.
pub(crate) struct SafeCsv(csv::Writer<Vec<u8>>);

impl SafeCsv {
    /// An empty file.
    pub(crate) fn new() -> SafeCsv {
        SafeCsv(
            csv::WriterBuilder::new()
                .quote_style(csv::QuoteStyle::Always)
                .from_writer(Vec::new()),
        )
    }

    /// Writes one row, each cell as [`cell`] makes it.
    pub(crate) fn row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let cells = cells.into_iter().map(|text| cell(text.as_ref()));
        self.0.write_record(cells).expect("CSV into memory");
    }

    /// The file's text.
    pub(crate) fn text(self) -> String {
        String::from_utf8(self.0.into_inner().expect("CSV into memory")).expect("CSV of UTF-8")
    }
}

/// `text` as a CSV cell (before the quoting that [`SafeCsv`] adds):
///
/// - made inert as a one-line field ([`crate::inert::line`]): an escape
///   sequence shows as `\x1b`, and a line break as `\n`. A line break in
///   a name is not kept, quoted, as RFC 4180 would allow: the CSV is
///   printed to a terminal as often as it is saved, and tools read it a
///   line at a time (`grep`, `sort`, a spreadsheet's import that splits
///   lines before it reads quotes); with no line break in any cell, each
///   row is one line and no student can start a row of their own. The
///   JSON report keeps the exact text;
/// - [`neutralised`]: a cell that a spreadsheet would run as a formula
///   gets a leading `'`;
/// - and so does a formula hidden after a separator: in `Bob;=1+1`, the
///   `=` after the `;` (and any spaces) gets a `'` before it, for a
///   spreadsheet that splits on `;` or `,` without regard to quotes, as
///   OWASP's rule on CSV injection asks of every separator.
pub(crate) fn cell(text: &str) -> String {
    let inert = crate::inert::line(text);
    let neutralised = neutralised(&inert);
    let mut out = String::with_capacity(neutralised.len());
    let mut after_separator = false;
    for c in neutralised.chars() {
        if after_separator && FORMULA_STARTS.contains(&c) {
            out.push('\'');
        }
        after_separator = match c {
            ',' | ';' => true,
            ' ' => after_separator,
            _ => false,
        };
        out.push(c);
    }
    out
}

/// The characters with which a spreadsheet takes a cell for a formula,
/// as OWASP lists them (a tab and a carriage return too, which [`cell`]
/// shows as `\t` and `\r` before it looks).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// `cell`, with a leading `'` when a spreadsheet would take it for a
/// formula (it begins with one of `FORMULA_STARTS`), as OWASP advises for
/// CSV injection: the cell keeps its text after that mark.
pub(crate) fn neutralised(cell: &str) -> Cow<'_, str> {
    if cell.starts_with(FORMULA_STARTS) {
        format!("'{cell}").into()
    } else {
        cell.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell a spreadsheet would run as a formula gets a leading `'`;
    /// other cells, and the marks inside a cell, are kept.
    #[test]
    fn cells_that_a_spreadsheet_would_run_are_neutralised() {
        for formula in [
            "=HYPERLINK(\"http://x\",\"click\")",
            "+1",
            "-1",
            "@SUM(A1)",
            "\tx",
            "\rx",
        ] {
            assert_eq!(neutralised(formula), format!("'{formula}"));
        }
        for plain in ["Ada", "a=b", "", "1-2", "'quoted"] {
            assert_eq!(neutralised(plain), plain);
        }
    }

    /// A formula after a `;` or a `,`, spaces or not, is neutralised
    /// where it starts; a cell's control characters and line breaks are
    /// shown as escapes, and a tab at its start needs no mark then.
    #[test]
    fn a_formula_after_a_separator_and_control_characters_are_made_harmless() {
        assert_eq!(cell("Bob;=1+1"), "Bob;'=1+1");
        assert_eq!(cell("Bob, =1+1;  @SUM(A1)"), "Bob, '=1+1;  '@SUM(A1)");
        assert_eq!(cell("=1;-2"), "'=1;'-2");
        assert_eq!(cell("a = b; c - d, e"), "a = b; c - d, e");
        assert_eq!(cell("Ada\nLovelace"), "Ada\\nLovelace");
        assert_eq!(cell("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
        assert_eq!(cell("\t=1"), "\\t=1");
        assert_eq!(cell("rust: 1 2; python: 6"), "rust: 1 2; python: 6");
    }

    /// Every cell is quoted, `;` and tabs too, and read back whole.
    #[test]
    fn every_cell_is_quoted_and_read_back_as_written() {
        let mut csv = SafeCsv::new();
        csv.row(["student", "score"]);
        csv.row(["Bob;=1+1", "100"]);
        csv.row(["Lovelace, \"Ada\"", "-"]);
        let text = csv.text();
        assert_eq!(
            text,
            "\"student\",\"score\"\n\"Bob;'=1+1\",\"100\"\n\"Lovelace, \"\"Ada\"\"\",\"'-\"\n"
        );
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(&rows[0][0], "Bob;'=1+1");
        assert_eq!(&rows[1][0], "Lovelace, \"Ada\"");
        let mut by_semicolon = csv::ReaderBuilder::new()
            .delimiter(b';')
            .from_reader(text.as_bytes());
        let split: Vec<csv::StringRecord> = by_semicolon.records().map(Result::unwrap).collect();
        assert_eq!(
            split[0].len(),
            1,
            "a reader that splits on ; keeps the quoted cell whole: {:?}",
            split[0]
        );
    }
}

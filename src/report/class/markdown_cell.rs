//! How untrusted text (a student's name, their `--why`, a test they
//! named) goes into a cell of any table the lab writes in Markdown
//! ([`cell`], [`code_cell`]).

/// Untrusted text as the text of a Markdown table cell, shown as written
/// and never read as Markdown or HTML, whichever renderer of GitHub's
/// Markdown (GFM) or of CommonMark reads it:
///
/// - made inert as a one-line field ([`crate::inert::line`]): a line
///   break is shown as `\n`, so it cannot end the row and start one of
///   the student's own, and no control character reaches a terminal that
///   shows the file;
/// - `&`, `<` and `>` as HTML's character references: no raw HTML, no
///   `<https://...>` link, no character reference of the student's;
/// - each character that opens or closes inline Markdown escaped with a
///   backslash (the backslash itself too): `` ` `` `*` `_` `~` (code,
///   emphasis, strikethrough), `[` `]` (a link, an image, a footnote), `|`
///   (which would end the cell), `$` (GitHub's math), `:` and `@` (a bare
///   URL or e-mail address, which GFM makes a link, and an emoji's
///   `:name:`), and the `.` after `www` (GFM's `www.` link).
pub fn cell(text: &str) -> String {
    let inert = crate::inert::line(text);
    let mut out = String::with_capacity(inert.len());
    for c in inert.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '~' | '[' | ']' | '|' | '$' | ':' | '@' => {
                out.push('\\');
                out.push(c);
            }
            '.' if out.len() >= 3
                && out.as_bytes()[out.len() - 3..].eq_ignore_ascii_case(b"www") =>
            {
                out.push_str("\\.");
            }
            c => out.push(c),
        }
    }
    out
}

/// Untrusted text that names code (a test a student named) as a code span
/// in a Markdown table cell: made inert as [`cell`] makes it, fenced by
/// more backticks than it holds in a row (and spaced from them when it
/// starts or ends with one), each `|` escaped, which GFM's tables undo
/// inside code. A name that holds a backslash is given as [`cell`] gives
/// it, not as code: a code span cannot escape a backslash, and one before
/// a `|` would end the cell.
pub fn code_cell(text: &str) -> String {
    let inert = crate::inert::line(text);
    if inert.contains('\\') || inert.trim().is_empty() {
        return cell(&inert);
    }
    let mut longest = 0;
    let mut run = 0;
    for c in inert.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let space = if inert.starts_with('`') || inert.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{space}{}{space}{fence}", inert.replace('|', "\\|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Untrusted text is text in its cell: HTML as references, each mark
    /// of inline Markdown escaped, a line break shown as `\n`, and
    /// ordinary text as it is.
    #[test]
    fn a_cell_shows_markdown_and_html_as_text() {
        assert_eq!(cell("Zoë 李 a, b; c = d."), "Zoë 李 a, b; c = d.");
        assert_eq!(cell("<img src=x>&"), "&lt;img src=x&gt;&amp;");
        assert_eq!(
            cell("*a* _b_ `c` ~d~ [e](f) ![g](h) $i$ |"),
            "\\*a\\* \\_b\\_ \\`c\\` \\~d\\~ \\[e\\](f) !\\[g\\](h) \\$i\\$ \\|"
        );
        assert_eq!(
            cell("https://x.example WWW.y.example a@b.example :tada:"),
            "https\\://x.example WWW\\.y.example a\\@b.example \\:tada\\:"
        );
        assert_eq!(cell("www.x"), "www\\.x");
        assert_eq!(cell("one\ntwo\x1b[1A\\"), "one\\\\ntwo\\\\x1b\\[1A\\\\");
    }

    /// A name as code: fenced by more backticks than it holds, its `|`
    /// escaped; with a backslash, as text.
    #[test]
    fn a_code_cell_fences_the_name_and_escapes_its_bar() {
        assert_eq!(code_cell("claim_many"), "`claim_many`");
        assert_eq!(code_cell("a|b"), "`a\\|b`");
        assert_eq!(code_cell("a``b"), "```a``b```");
        assert_eq!(code_cell("`a"), "`` `a ``");
        assert_eq!(code_cell("a\\|b"), "a\\\\\\|b");
        assert_eq!(code_cell("a\nb"), "a\\\\nb");
        assert_eq!(code_cell("  "), "  ", "blank, no empty code span");
    }
}

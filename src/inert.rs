//! Untrusted text made inert for a terminal: what a student or a
//! student's program controls (a name, a `--why`, a file name, the lines
//! a program wrote) shown so that it can be read and never obeyed.
//!
//! A terminal obeys the control characters in what it is given: an escape
//! sequence sets the window's title, moves the cursor up to write over the
//! row above, or clears the screen; a carriage return writes over the
//! start of its own line. The bidirectional overrides and isolates of
//! Unicode reorder what a reader sees without changing what is there (as
//! in the "Trojan Source" attack on code review). Each of these is shown
//! as an escape a reader sees instead (`\x1b`, `\u{202e}`), which is
//! printable ASCII: a screen pads and cuts the result by its display width
//! as it does any text (`\x1b` takes four columns).
//!
//! JSON is for tools and keeps the exact text (it escapes control
//! characters itself); HTML, Markdown and CSV apply their own escaping on
//! top of this one.

use std::borrow::Cow;

/// `text`, a one-line field (a student's name, a file name, a `--why`),
/// made inert:
///
/// - a line break is shown as `\n`, a carriage return as `\r`, a tab as
///   `\t`: a one-line field stays on its line, and its width is known;
/// - every other C0 control character (U+0000 to U+001F) and DEL as `\x`
///   and two lower-case hex digits: `\x1b`, `\x07`, `\x7f`;
/// - every C1 control character (U+0080 to U+009F, which some terminals
///   obey as ESC followed by a letter) and the bidirectional overrides and
///   isolates (U+202A to U+202E, U+2066 to U+2069) as `\u{` and their
///   lower-case hex code: `\u{9b}`, `\u{202e}`;
/// - everything else as it is: letters of every script, accents, CJK,
///   emoji, and the backslash too, so that ordinary text (a Windows path)
///   is unchanged. The escapes are for a reader, not for decoding: a name
///   that holds the four characters `\x1b` looks the same as one that
///   holds ESC, and neither does anything.
///
/// Borrowed when there is nothing to show differently.
pub fn line(text: &str) -> Cow<'_, str> {
    escaped(text, false)
}

/// `text`, a program's output of several lines (a traceback, standard
/// error), made inert line by line: its line breaks are kept, so that a
/// traceback keeps its shape; a carriage return just before a line break
/// is part of that break (as a program on Windows ends its lines) and is
/// left out; every other character is shown as [`line()`] shows it.
pub fn lines(text: &str) -> Cow<'_, str> {
    escaped(text, true)
}

/// `text` with every character that [`line()`] escapes shown escaped; with
/// `keep_lines`, its line breaks kept as [`lines`] says.
fn escaped(text: &str, keep_lines: bool) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| needs_escape(c) && !(keep_lines && c == '\n'))
    {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' if keep_lines => shown.push('\n'),
            '\r' if keep_lines && chars.peek() == Some(&'\n') => {}
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            '\0'..='\u{1f}' | '\u{7f}' => shown.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if needs_escape(c) => shown.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// Whether a terminal might obey `c`, or it reorders the text around it:
/// the C0 and C1 control characters, DEL, and the bidirectional overrides
/// and isolates.
fn needs_escape(c: char) -> bool {
    matches!(
        c,
        '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_shown_and_not_obeyed() {
        assert_eq!(line("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
        assert_eq!(line("up\x1b[1Aover"), "up\\x1b[1Aover");
        assert_eq!(line("\x1b[2K\x1b[31mred"), "\\x1b[2K\\x1b[31mred");
        assert_eq!(line("nul\0bell\x07del\x7f"), "nul\\x00bell\\x07del\\x7f");
        assert_eq!(line("\x08\x0b\x0c\x1f"), "\\x08\\x0b\\x0c\\x1f");
    }

    #[test]
    fn c1_controls_and_bidirectional_overrides_are_shown_by_their_code() {
        assert_eq!(line("a\u{9b}31mb"), "a\\u{9b}31mb");
        assert_eq!(line("\u{80}\u{85}\u{9f}"), "\\u{80}\\u{85}\\u{9f}");
        assert_eq!(line("Bob\u{202e}gnp.exe"), "Bob\\u{202e}gnp.exe");
        for (bidi, shown) in [
            ('\u{202a}', "\\u{202a}"),
            ('\u{202b}', "\\u{202b}"),
            ('\u{202c}', "\\u{202c}"),
            ('\u{202d}', "\\u{202d}"),
            ('\u{2066}', "\\u{2066}"),
            ('\u{2067}', "\\u{2067}"),
            ('\u{2068}', "\\u{2068}"),
            ('\u{2069}', "\\u{2069}"),
        ] {
            assert_eq!(line(&bidi.to_string()), shown);
        }
        // Next to the ranges, and not in them.
        assert_eq!(
            line("\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}"),
            "\u{a0}\u{2029}\u{202f}\u{2065}\u{206a}"
        );
    }

    #[test]
    fn a_one_line_field_shows_its_line_breaks_and_tabs() {
        assert_eq!(line("Ada\nLovelace"), "Ada\\nLovelace");
        assert_eq!(line("a\r\nb\rc\td"), "a\\r\\nb\\rc\\td");
    }

    #[test]
    fn program_output_keeps_its_lines_each_made_inert() {
        let traceback = "Traceback (most recent call last):\r\n  File \"x.py\", line 1\n\x1b[1A\x1b[2Kgone\n\tat\rx\n";
        assert_eq!(
            lines(traceback),
            "Traceback (most recent call last):\n  File \"x.py\", line 1\n\\x1b[1A\\x1b[2Kgone\n\\tat\\rx\n"
        );
        assert_eq!(lines("ends in\r"), "ends in\\r");
    }

    #[test]
    fn ordinary_text_is_unchanged_and_borrowed() {
        for plain in [
            "",
            "Ada Lovelace",
            "Zoë Ångström, née Ñúñez",
            "李小龙",
            "Łukasz 🦀 👩🏽‍💻",
            "C:\\Users\\bob\\store.py",
            "a \"quoted\" 'word'; =1+1, <b>&</b>",
            "e\u{301}",
        ] {
            assert!(matches!(line(plain), Cow::Borrowed(_)), "{plain:?}");
            assert_eq!(line(plain), plain);
            assert_eq!(lines(plain), plain);
        }
        assert!(matches!(lines("two\nlines"), Cow::Borrowed(_)));
    }

    #[test]
    fn what_is_shown_is_printable_and_as_wide_as_its_characters() {
        let hostile = "\x1b]0;pwned\x07\u{9b}\u{202e}\n李";
        let shown = line(hostile);
        assert!(!shown.chars().any(needs_escape), "{shown}");
        assert_eq!(
            unicode_width::UnicodeWidthStr::width(shown.as_ref()),
            shown.chars().count() + 1,
            "every character one column but the CJK one, two"
        );
        assert_eq!(line(&shown), shown, "made inert twice, the same");
    }
}

//! Text in the lab's HTML pages that a student or their program chose (a
//! name, a file name, a `--why`, a reason that quotes a program's output):
//! made inert, then escaped for where it goes on the page.
//!
//! Escaping alone keeps out markup, but not what HTML leaves in place: a
//! browser reorders the text around a bidirectional override (a name can
//! be made to read as another), and a control character is an error of
//! HTML's syntax that a browser drops or draws as it likes. Each is shown
//! as its escape ([`crate::inert`]), as the terminal shows it.

use std::borrow::Cow;

/// Untrusted text as the text of an HTML element: made inert
/// ([`crate::inert::line`], or with `lines` [`crate::inert::lines`], for
/// a program's output of several lines), then `&`, `<` and `>` escaped.
pub fn untrusted(text: &str, lines: bool) -> String {
    html_escape::encode_text(&inert(text, lines)).into_owned()
}

/// Untrusted text as [`untrusted`] makes it, for an attribute's value
/// between double quotes (a `title`, which a browser shows as a tooltip):
/// `"` escaped too.
pub fn untrusted_attr(text: &str, lines: bool) -> String {
    html_escape::encode_double_quoted_attribute(&inert(text, lines)).into_owned()
}

fn inert(text: &str, lines: bool) -> Cow<'_, str> {
    if lines {
        crate::inert::lines(text)
    } else {
        crate::inert::line(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped_and_control_characters_shown() {
        let hostile = "<b>Eve</b> & \"x\"\x1b]0;pwned\x07\u{202e}\nline";
        assert_eq!(
            untrusted(hostile, false),
            "&lt;b&gt;Eve&lt;/b&gt; &amp; \"x\"\\x1b]0;pwned\\x07\\u{202e}\\nline"
        );
        assert_eq!(
            untrusted(hostile, true),
            "&lt;b&gt;Eve&lt;/b&gt; &amp; \"x\"\\x1b]0;pwned\\x07\\u{202e}\nline"
        );
        assert_eq!(
            untrusted_attr(hostile, false),
            "&lt;b&gt;Eve&lt;/b&gt; &amp; &quot;x&quot;\\x1b]0;pwned\\x07\\u{202e}\\nline"
        );
        assert_eq!(untrusted("Zoë 李 🦀", false), "Zoë 李 🦀");
    }
}

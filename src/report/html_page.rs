//! What every HTML page the lab writes shares: the document around its
//! body ([`shell`]).

use html_escape::encode_text as text;

/// Every page the lab writes, around its `body`: a complete HTML document
/// with no external resource, titled `title` (HTML already escaped), styled
/// by `style`, and ending in a footer that names the command that made it.
/// The lab's one page shell: the matrix, the analysis, the class and a
/// chaos run use it.
pub fn shell(title: &str, style: &str, body: &str, made_by: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<link rel=\"icon\" href=\"data:,\">\n<title>{title}</title>\n<style>{style}</style>\n</head>\n<body>\n{body}<footer><p class=\"summary\">Made by <code>{}</code>, lease-lab {}.</p></footer>\n</body>\n</html>\n",
        text(made_by),
        env!("CARGO_PKG_VERSION")
    )
}

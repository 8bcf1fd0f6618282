//! Which of the eight operations can run a mutant's change: the lab's
//! coverage analysis, as mutation tools do it (PIT, Stryker's per-test
//! coverage), by a call graph of the store's functions by name.
//!
//! A test that calls none of the operations a mutant reaches runs no
//! mutated code, so it answers as it does on the reference: the kill
//! matrix need not run it. The analysis may only over-approximate: every
//! operation that can run the change is in its reach. Functions of the
//! same name are one node (a free function and a method alike), every
//! name in a function's body counts as a call of it (a call, a function
//! passed as a value, a name inside a macro), and wherever the analysis
//! cannot tell, the reach is every operation.
//!
//! The store's build (`build.rs`) finds the Rust store's functions with `syn`; the
//! Python store's are found here, by indentation ([`python_functions`]).
//! Both then go through [`reach`].

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

/// A function of a store's source, as the call graph sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    /// Its name (a method's without its type).
    pub name: String,
    /// Where it is in the source, in bytes, from its first to its last character.
    pub span: Range<usize>,
    /// Every name its body mentions.
    pub calls: BTreeSet<String>,
    /// Whether it may run without its name being written anywhere (a
    /// trait's method, which `?`, `==` or formatting call; a Python
    /// class's body): a change in it reaches every operation.
    pub implicit: bool,
}

/// The names of `text` that could name a function: words of letters,
/// digits and underscores that do not start with a digit, wherever they
/// are (in code, strings and comments alike: more names only widen a reach).
pub fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.chars().next().is_some_and(|c| !c.is_ascii_digit()))
        .map(String::from)
        .collect()
}

/// The operations of `operations` (the names of their functions) that
/// can run the text at `fragment` of a source whose functions are
/// `functions`, in the order of `operations`.
///
/// `elsewhere` holds the names mentioned by code that runs other than
/// through an operation's own function (a setting the lab makes on the
/// store besides its operations, a static's initialiser, the protocol
/// loop that dispatches to the operations): a function that code reaches,
/// without going through an operation, reaches every operation, since what
/// it does may show in any of them.
///
/// The reach is every operation when the fragment is in no function (a
/// constant, a type), when the innermost function around it is
/// [`Function::implicit`], or when its function is one that `elsewhere`
/// or an implicit function reaches. A function nothing reaches reaches no
/// operation.
pub fn reach(
    functions: &[Function],
    operations: &[&'static str],
    elsewhere: &BTreeSet<String>,
    fragment: Range<usize>,
) -> Vec<&'static str> {
    let every = operations.to_vec();
    let Some(enclosing) = functions
        .iter()
        .filter(|function| {
            function.span.start <= fragment.start && fragment.end <= function.span.end
        })
        .min_by_key(|function| function.span.len())
    else {
        return every;
    };
    if enclosing.implicit {
        return every;
    }
    let mut graph: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for function in functions {
        graph
            .entry(function.name.as_str())
            .or_default()
            .extend(function.calls.iter().map(String::as_str));
    }
    let target = enclosing.name.as_str();
    // What an implicit function calls runs from wherever it is called.
    let implicit_calls = functions
        .iter()
        .filter(|function| function.implicit)
        .flat_map(|function| function.calls.iter());
    let starts = elsewhere.iter().chain(implicit_calls).map(String::as_str);
    let from_elsewhere = reachable(&graph, starts, operations);
    if from_elsewhere.contains(target) {
        return every;
    }
    every
        .into_iter()
        .filter(|operation| reachable(&graph, [*operation], &[]).contains(target))
        .collect()
}

/// Every name reachable in `graph` from `start` (included), not going
/// through the names of `stop`.
fn reachable<'a>(
    graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
    start: impl IntoIterator<Item = &'a str>,
    stop: &[&str],
) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut next: Vec<&str> = start.into_iter().collect();
    while let Some(name) = next.pop() {
        if stop.contains(&name) || !seen.insert(name) {
            continue;
        }
        next.extend(graph.get(name).into_iter().flatten().copied());
    }
    seen
}

/// The functions of a Python source, by indentation, and the names its
/// module-level code mentions (the `elsewhere` of [`reach`]).
///
/// A function is a `def` at the start of a line, up to the next line that
/// is neither blank nor indented nor a comment; a `class` there is taken
/// the same way, as an implicit function (its methods run unnamed). The
/// module's other lines, the protocol's loop among them, are its code
/// elsewhere. Comments and strings name nothing (see [`python_code`]).
pub fn python_functions(source: &str) -> (Vec<Function>, BTreeSet<String>) {
    let code = python_code(source);
    let mut functions: Vec<Function> = Vec::new();
    let mut elsewhere = BTreeSet::new();
    let mut open: Option<Function> = None;
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end();
        let continues = content.trim_start().is_empty()
            || content.starts_with([' ', '\t'])
            || content.starts_with('#');
        if continues {
            match open.as_mut() {
                Some(function) => {
                    if !content.trim_start().is_empty() {
                        function.span.end = start + content.len();
                    }
                    function.calls.extend(words(line));
                }
                None => elsewhere.extend(words(line)),
            }
            continue;
        }
        functions.extend(open.take());
        let header = |keyword: &str| {
            content
                .strip_prefix(keyword)
                .and_then(|rest| rest.split(['(', ':']).next())
                .map(|name| name.trim().to_string())
        };
        let (name, implicit) = match (header("def "), header("class ")) {
            (Some(name), _) => (name, false),
            (None, Some(name)) => (name, true),
            (None, None) => {
                elsewhere.extend(words(line));
                continue;
            }
        };
        let mut calls = words(line);
        calls.remove(&name);
        open = Some(Function {
            name,
            span: start..start + content.len(),
            calls,
            implicit,
        });
    }
    functions.extend(open);
    (functions, elsewhere)
}

/// A Python source with its comments and the text of its strings blanked
/// out (each byte a space, lines kept), so that a docstring that mentions
/// `claim` is no call of it and a string's lines do not look like code at
/// the start of a line. Of an f-string, what its braces hold is kept: code.
pub fn python_code(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut code = bytes.to_vec();
    let blank = |code: &mut Vec<u8>, range: Range<usize>| {
        for byte in &mut code[range] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'#' => {
                let end = source[at..].find('\n').map_or(bytes.len(), |n| at + n);
                blank(&mut code, at..end);
                at = end;
            }
            quote @ (b'"' | b'\'') => {
                let prefix = source[..at]
                    .bytes()
                    .rev()
                    .take_while(u8::is_ascii_alphabetic)
                    .collect::<Vec<u8>>();
                let formatted = prefix.iter().any(|c| c.eq_ignore_ascii_case(&b'f'));
                let triple = bytes[at..].starts_with(&[quote; 3]);
                let opening = if triple { 3 } else { 1 };
                let mut end = at + opening;
                loop {
                    match bytes.get(end) {
                        None => break,
                        Some(b'\\') => end += 2,
                        Some(b'\n') if !triple => break,
                        Some(&c)
                            if c == quote && (!triple || bytes[end..].starts_with(&[quote; 3])) =>
                        {
                            end += opening;
                            break;
                        }
                        Some(_) => end += 1,
                    }
                }
                let end = end.min(bytes.len());
                if formatted {
                    blank_text_of_f_string(&mut code, at..end);
                } else {
                    blank(&mut code, at..end);
                }
                at = end;
            }
            _ => at += 1,
        }
    }
    // Only ASCII bytes were replaced, each whole character of a string by
    // as many spaces as its bytes, so the text is still UTF-8.
    String::from_utf8(code).expect("blanking keeps UTF-8")
}

/// Blanks the text of the f-string at `range` of `code`, keeping what its
/// braces hold (`{{` is a brace of the text).
fn blank_text_of_f_string(code: &mut [u8], range: Range<usize>) {
    let mut depth = 0usize;
    let mut at = range.start;
    while at < range.end {
        let byte = code[at];
        let keep = match byte {
            b'{' if depth == 0 && code.get(at + 1) == Some(&b'{') => {
                code[at] = b' ';
                code[at + 1] = b' ';
                at += 2;
                continue;
            }
            b'{' => {
                depth += 1;
                true
            }
            b'}' if depth > 0 => {
                depth -= 1;
                true
            }
            _ => depth > 0,
        };
        if !keep && byte != b'\n' {
            code[at] = b' ';
        }
        at += 1;
    }
}

/// The operations of `operations` that can run `fragment` of the Python
/// source `source` (where it first occurs; every operation if it occurs
/// nowhere).
pub fn python_reach(
    source: &str,
    fragment: &str,
    operations: &[&'static str],
) -> Vec<&'static str> {
    let Some(at) = source.find(fragment) else {
        return operations.to_vec();
    };
    let (functions, elsewhere) = python_functions(source);
    reach(&functions, operations, &elsewhere, at..at + fragment.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operation::NAMES;

    fn function(name: &str, span: Range<usize>, calls: &[&str]) -> Function {
        Function {
            name: name.into(),
            span,
            calls: calls.iter().map(|call| call.to_string()).collect(),
            implicit: false,
        }
    }

    #[test]
    fn a_change_reaches_the_operations_that_call_its_function() {
        let functions = [
            function("claim", 0..10, &["check", "lock"]),
            function("claim_many", 10..20, &["claim", "check"]),
            function("renew", 20..30, &["check"]),
            function("check", 30..40, &[]),
            function("lock", 40..50, &[]),
            function("unused", 50..60, &["renew"]),
        ];
        let none = BTreeSet::new();
        assert_eq!(
            reach(&functions, &NAMES, &none, 41..42),
            ["claim", "claim_many"]
        );
        assert_eq!(
            reach(&functions, &NAMES, &none, 31..32),
            ["claim", "renew", "claim_many"]
        );
        assert_eq!(reach(&functions, &NAMES, &none, 21..29), ["renew"]);
        assert_eq!(
            reach(&functions, &NAMES, &none, 51..52),
            Vec::<&str>::new(),
            "nothing calls it"
        );
        assert_eq!(
            reach(&functions, &NAMES, &none, 60..61),
            NAMES,
            "in no function"
        );
        assert_eq!(
            reach(&functions, &NAMES, &none, 8..12),
            NAMES,
            "across two functions"
        );
        let elsewhere = ["lock".to_string()].into();
        assert_eq!(
            reach(&functions, &NAMES, &elsewhere, 41..42),
            NAMES,
            "what runs besides the operations may show in any of them"
        );
        let dispatch = ["claim".to_string()].into();
        assert_eq!(
            reach(&functions, &NAMES, &dispatch, 41..42),
            ["claim", "claim_many"],
            "a call of an operation from elsewhere is that operation"
        );
        let mut implicit = functions.to_vec();
        implicit[4].implicit = true;
        assert_eq!(reach(&implicit, &NAMES, &none, 41..42), NAMES);
        implicit.push(Function {
            implicit: true,
            ..function("fmt", 70..80, &["unused"])
        });
        assert_eq!(
            reach(&implicit, &NAMES, &none, 51..52),
            NAMES,
            "what an implicit function calls may run anywhere"
        );
    }

    #[test]
    fn the_innermost_function_holds_the_change() {
        let functions = [
            function("renew", 0..100, &[]),
            function("helper", 10..20, &[]),
            function("state", 200..300, &["helper"]),
        ];
        assert_eq!(
            reach(&functions, &NAMES, &BTreeSet::new(), 12..14),
            ["state"]
        );
        assert_eq!(
            reach(&functions, &NAMES, &BTreeSet::new(), 30..40),
            ["renew"]
        );
    }

    #[test]
    fn python_functions_end_where_the_indentation_does() {
        let source = "X = 1\n\ndef a(p):\n    return b(p)\n\n    # still a\n\ndef b(p):\n    '''Not c(p).\nstill b'''\n    return p  # nor c\nclass E(Exception):\n    pass\nif __name__ == '__main__':\n    serve(a, f\"{c()} {{d}} e\")\n";
        let (functions, elsewhere) = python_functions(source);
        let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "E"]);
        assert_eq!(
            &source[functions[0].span.clone()],
            "def a(p):\n    return b(p)"
        );
        assert!(functions[0].calls.contains("b") && !functions[0].calls.contains("a"));
        assert!(!functions[1].calls.contains("c"), "{:?}", functions[1]);
        assert!(elsewhere.contains("c"), "an f-string's code counts");
        assert!(
            !elsewhere.contains("d") && !elsewhere.contains("e"),
            "its text does not"
        );
        assert!(functions[2].implicit && !functions[1].implicit);
        assert!(elsewhere.contains("serve") && elsewhere.contains("X"));
        assert!(!elsewhere.contains("b"));
    }
}

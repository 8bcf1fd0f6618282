//! The tests of mutants of one's own: templates, fragments, validation.

use super::*;

#[test]
fn every_step_has_code_and_a_fragment_from_it() {
    for step in 1..=8 {
        let code = step_code(step).expect("every step has a banner");
        let fragment = suggested_fragment(step).expect("every step has a fragment");
        assert!(code.text.contains(fragment), "step {step}: {fragment}");
        assert_eq!(REFERENCE_SOURCE.matches(fragment).count(), 1);
        let first = REFERENCE_SOURCE.lines().nth(code.first_line - 1).unwrap();
        assert!(code.text.starts_with(first));
    }
    assert_eq!(step_code(9), None);
}

/// A step's code runs from after its banner to the rule that opens
/// the next one; the last step's, to the file's end.
#[test]
fn a_steps_code_ends_where_the_next_banner_begins() {
    let lines: Vec<&str> = REFERENCE_SOURCE.lines().collect();
    for step in 1..=8 {
        let code = step_code(step).unwrap();
        assert!(!code.text.contains("// ---"), "step {step}");
        assert_eq!(
            code.text.lines().count(),
            code.last_line + 1 - code.first_line
        );
        if step < 8 {
            assert!(is_rule(lines[code.last_line]), "step {step}");
            let next = format!("// Step {}.", step + 1);
            assert!(lines[code.last_line + 1].starts_with(&next), "step {step}");
        } else {
            assert_eq!(code.last_line, lines.len());
        }
    }
}

/// A fragment is a line of code that decides something, else the
/// first statement; never a comment, an import or a constant, and
/// never a line that occurs twice in the source.
#[test]
fn a_fragment_is_a_deciding_line_else_a_statement_occurring_once() {
    let code = "// a > b decides\n    let a = 1;\n    if a > b {\n";
    assert_eq!(fragment_in(code, code, rust_statement), Some("if a > b {"));
    let code = "use x;\nconst N: u8 = 1;\nfoo(1)\nlet b = 2;\nlet c = 3;\n";
    assert_eq!(fragment_in(code, code, rust_statement), Some("let b = 2;"));
    let source = format!("{code}let b = 2;\n");
    assert_eq!(
        fragment_in(code, &source, rust_statement),
        Some("let c = 3;")
    );
    assert_eq!(
        fragment_in("foo(1)\n# note\n", "foo(1)\n# note\n", rust_statement),
        None
    );
}

#[test]
fn a_template_for_a_step_the_worksheet_lacks_says_which_steps_it_has() {
    assert_eq!(
        template(9, "o09a", &Subject::Rust).unwrap_err().to_string(),
        "there is no step 9: the worksheet has steps 1 to 8"
    );
}

#[test]
fn the_fragment_offered_is_the_decision_where_there_is_one() {
    assert_eq!(suggested_fragment(4), Some("if done || held_until > now {"));
    assert!(suggested_fragment(2).unwrap().contains("INSERT OR IGNORE"));
    assert!(suggested_fragment(7)
        .unwrap()
        .contains("UPDATE jobs SET owner = NULL"));
}

#[test]
fn code_ignores_spacing_and_comments_but_not_strings() {
    let a = "fn f() { let x = 1; // one\n  x > 0 }";
    assert_eq!(
        code_of(a),
        code_of("fn f(){let x=1;/* a /* nested */ note */ x>0}")
    );
    assert_ne!(code_of(a), code_of("fn f() { let x = 1; x >= 0 }"));
    assert_ne!(code_of("s(\"a b\")"), code_of("s(\"ab\")"));
    assert_ne!(code_of("let x"), code_of("letx"));
    assert_ne!(code_of("x = a / b;"), code_of("x = a / c;"));
    // An escaped quote does not end a string; an escaped backslash
    // before the closing quote does not keep it open.
    assert_ne!(code_of(r#"s("a\" b")"#), code_of(r#"s("a\"  b")"#));
    assert_eq!(code_of(r#"s("a\\")  ;"#), code_of(r#"s("a\\");"#));
}

/// Texts that neither plain quotes nor a literal string can hold.
const NEED_ESCAPES: [&str; 4] = [
    "a '''b\" c",
    "ends with \"it\" '",
    "\nafter \"a\" break",
    "a\r\"b\"",
];

#[test]
fn toml_strings_read_back_as_the_same_text() {
    for text in [
        "plain",
        "it's",
        "say \"hi\"",
        "back\\slash",
        "a '''b''' c",
        "ends with '",
        "two\nlines",
        "\nafter a break",
    ]
    .into_iter()
    .chain(NEED_ESCAPES)
    {
        let line = format!("value = {}", toml_string(text));
        let table: toml::Table = toml::from_str(&line).unwrap();
        assert_eq!(table["value"].as_str(), Some(text), "{line}");
    }
}

/// Each text in the most readable form that holds it: plain quotes,
/// else a literal string (code as it is), else a basic string with escapes.
#[test]
fn toml_strings_take_the_most_readable_form() {
    assert_eq!(toml_string("plain"), r#""plain""#);
    assert_eq!(toml_string(r#"say "hi""#), r#"'''say "hi"'''"#);
    assert_eq!(toml_string(r"back\slash"), r"'''back\slash'''");
    assert_eq!(toml_string("two\nlines"), "'''two\nlines'''");
    for escaped in NEED_ESCAPES {
        let shown = toml_string(escaped);
        assert!(shown.starts_with('"'), "a basic string: {shown}");
    }
}

/// Writes `text` as `name` in a new folder and validates it.
fn validate_text(name: &str, text: &str) -> Result<Validated, SpecError> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join(name);
    std::fs::write(&path, text).unwrap();
    validate(&path)
}

#[test]
fn a_template_needs_its_replacement_edited_and_then_validates() {
    for store in [Subject::Rust, Subject::Python] {
        for step in 1..=8 {
            let text = template(step, "o01a", &store).unwrap();
            let error = validate_text("o01a-own.toml", &text).unwrap_err();
            assert!(error.reason.contains("same as its fragment"), "{error}");
        }
    }
    let text = template(4, "o04a", &Subject::Rust).unwrap();
    let edited = text.replacen(
        "replacement = \"if done || held_until > now {\"",
        "replacement = \"if held_until > now {\"",
        1,
    );
    assert_ne!(edited, text, "the template offers step 4's comparison");
    let valid = validate_text("o04a-own.toml", &edited).unwrap();
    assert_eq!(valid.spec.step, 4);
    assert_eq!(
        valid.notes,
        [
            "its title still says TODO: say what the change breaks",
            "its explanation still says TODO: say what the change breaks"
        ]
    );
}

/// The Python store's template takes a step's code from its operation's
/// body, after the docstring: step 4's comparison, in `src/store.py`; and
/// edited, it validates as a mutant of that store.
#[test]
fn a_python_template_breaks_the_python_store_s_step() {
    for step in 1..=8 {
        let code = python_step_code(step).expect("every step has an operation");
        let name = crate::operation::NAMES[usize::from(step) - 1];
        let def = PYTHON_SOURCE
            .lines()
            .nth(code.first_line - 2)
            .unwrap_or_default();
        assert!(
            def.trim_end().ends_with("\"\"\"") || def.starts_with(&format!("def {name}(")),
            "step {step} starts after {name}'s docstring: {def}"
        );
        assert!(!code.text.contains("\"\"\""), "step {step}: {}", code.text);
        assert!(!code.text.ends_with("\n\n"), "step {step}");
        assert_eq!(
            code.text.lines().count(),
            code.last_line + 1 - code.first_line
        );
    }
    let eight = template(8, "o08a", &Subject::Python).unwrap();
    assert!(
        eight.contains("fragment = \"return list(pool.map(lambda owner: claim(path, job_id, owner, now, ttl), owners))\""),
        "no line decides at step 8: its first statement of its own: {eight}"
    );
    assert!(python_statement("return x") && !python_statement("with a as b:"));
    assert!(!python_statement("f(a,") && !python_statement("import os"));
    assert_eq!(python_step_code(9), None);
    assert_eq!(python_step_code(0), None);
    let text = template(4, "o04a", &Subject::Python).unwrap();
    assert!(text.contains("file = \"src/store.py\""), "{text}");
    assert!(text.contains("`lab matrix --impl python`"), "{text}");
    let fragment =
        r#"row = conn.execute("SELECT until, done FROM jobs WHERE id=?", (job_id,)).fetchone()"#;
    assert!(
        text.contains(&format!("fragment = '''{fragment}'''")),
        "the first line that decides: {text}"
    );
    let edited = text.replacen(
        &format!("replacement = '''{fragment}'''"),
        &format!(
            "replacement = '''{}'''",
            fragment.replace("until, done", "until, 0")
        ),
        1,
    );
    let valid = validate_text("o04a-own.toml", &edited).unwrap();
    assert_eq!(valid.spec.file, PYTHON_STORE);
    let own = Subject::Own(crate::subject::Implementation::Python {
        file: "store.py".into(),
    });
    assert_eq!(
        template(4, "o04a", &own).unwrap(),
        text,
        "a student's Python file takes the Python store's"
    );
}

fn own(id: &str, fragment: &str, replacement: &str) -> String {
    format!(
        "id = \"{id}\"\nstep = 4\nkind = \"own\"\ntitle = \"t\"\nfile = \"crates/store/src/store.rs\"\nfragment = {}\nreplacement = {}\nexplanation = \"e\"\n",
        toml_string(fragment),
        toml_string(replacement)
    )
}

#[test]
fn validation_refuses_what_the_build_would_refuse_or_no_test_could_kill() {
    let missing = validate_text("o04a-x.toml", &own("o04a", "no such text", "x")).unwrap_err();
    assert!(missing.reason.contains("does not occur"), "{missing}");
    let twice =
        validate_text("o04a-x.toml", &own("o04a", "check_job_id(job_id)?;", "")).unwrap_err();
    assert!(twice.reason.contains("times"), "{twice}");
    let spacing = validate_text(
        "o04a-x.toml",
        &own(
            "o04a",
            "if done || held_until > now {",
            "if done||held_until>now { // same",
        ),
    )
    .unwrap_err();
    assert!(
        spacing.reason.contains("only spacing or comments"),
        "{spacing}"
    );
    let taken = validate_text(
        "04-mine.toml",
        &own(
            "04",
            "if done || held_until > now {",
            "if held_until > now {",
        ),
    )
    .unwrap_err();
    assert!(
        taken.reason.contains("taken by 04-claim-boundary.toml"),
        "{taken}"
    );
}

#[test]
fn validation_refuses_an_id_that_another_file_in_the_folder_has() {
    let folder = tempfile::tempdir().unwrap();
    let body = own(
        "o04a",
        "if done || held_until > now {",
        "if held_until > now {",
    );
    std::fs::write(folder.path().join("o04a-first.toml"), &body).unwrap();
    let second = folder.path().join("o04a-second.toml");
    std::fs::write(&second, &body).unwrap();
    let error = validate(&second).unwrap_err();
    assert!(error.reason.contains("taken by o04a-first.toml"), "{error}");
}

#[test]
fn the_built_in_mutant_files_validate_the_rust_and_the_python_ones() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("mutants");
    for name in ["04-claim-boundary.toml", "py04-claim-boundary.toml"] {
        let valid = validate(&folder.join(name)).unwrap();
        assert!(valid.notes.is_empty(), "{name}");
    }
}

#[test]
fn python_code_ignores_comments_and_blank_lines_but_not_indentation_or_strings() {
    let a = "def f():\n    x = 1  # one\n\n    return x > 0\n";
    assert_eq!(
        python_code_of(a),
        python_code_of("def f():\n    x = 1\n    return x > 0   \n# done\n")
    );
    assert_ne!(
        python_code_of(a),
        python_code_of("def f():\n    x = 1\nreturn x > 0\n")
    );
    assert_ne!(python_code_of("s = '#a'\n"), python_code_of("s = '#b'\n"));
    assert_ne!(python_code_of("s = 'x#a'\n"), python_code_of("s = 'x#b'\n"));
    assert_eq!(
        python_code_of("s = \"it's\"  # one\n"),
        python_code_of("s = \"it's\"  # two\n")
    );
}

#[test]
fn new_files_take_the_next_free_id_and_never_overwrite() {
    let folder = tempfile::tempdir().unwrap();
    let first = new_file(folder.path(), 5, &Subject::Rust).unwrap();
    let second = new_file(folder.path(), 5, &Subject::Rust).unwrap();
    assert!(first.ends_with("o05a-own.toml"), "{}", first.display());
    assert!(second.ends_with("o05b-own.toml"), "{}", second.display());
    let text = std::fs::read_to_string(&first).unwrap();
    assert!(text.contains("id = \"o05a\""), "{text}");
    let error = new_file(folder.path(), 9, &Subject::Rust).unwrap_err();
    assert!(matches!(error, NewFileError::Template(_)), "{error:?}");
    assert_eq!(
        error.to_string(),
        "there is no step 9: the worksheet has steps 1 to 8"
    );
}

#[test]
fn a_new_file_needs_a_free_id_and_a_folder_it_can_write_in() {
    let folder = tempfile::tempdir().unwrap();
    for letter in 'a'..='z' {
        std::fs::write(folder.path().join(format!("o05{letter}-x.toml")), "").unwrap();
    }
    let error = new_file(folder.path(), 5, &Subject::Rust).unwrap_err();
    assert!(
        matches!(error, NewFileError::IdsTaken { step: 5, .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "every id from o05a to o05z is taken in {}",
            folder.path().display()
        )
    );
    assert!(
        new_file(folder.path(), 6, &Subject::Rust).is_ok(),
        "another step's ids are free"
    );
    let blocked = folder.path().join("blocked");
    std::fs::write(&blocked, "a file, not a folder").unwrap();
    let error = new_file(&blocked, 5, &Subject::Rust).unwrap_err();
    assert!(matches!(error, NewFileError::Write { .. }), "{error:?}");
    let shown = error.to_string();
    let start = format!("cannot write a mutant file in {}: ", blocked.display());
    assert!(shown.starts_with(&start), "{shown}");
    let inner = std::fs::create_dir_all(&blocked).unwrap_err();
    assert_eq!(shown, format!("{start}{inner}"));
}

//! The tests of what the matrix's reports share: how the grids draw a failure,
//! where each mutant's change sits in its source, outcomes' looks and the
//! advice about a survivor.

use super::*;
use crate::variant::{Variant, MUTANTS, REFERENCE_SOURCE};

/// A grid draws what the matrix's rule counts: a mutant's failure of a
/// test the reference fails too is no kill, in the text grid, its key,
/// the Markdown table and the HTML page; the reference's own failure
/// still shows as a broken reference.
#[test]
fn a_failure_the_rule_does_not_count_is_never_drawn_as_a_kill() {
    use crate::matrix::sample::small_matrix;
    let failed = || Outcome::Fail {
        check: "claim".into(),
        expected: "fence 1".into(),
        actual: "none".into(),
        state: None,
    };
    let matrix = small_matrix(failed(), [failed(), Outcome::Pass], [failed(), failed()]);
    let case = matrix.tests[0];
    assert_eq!(cell_look(&matrix, case, &matrix.runs[0]).class, "broken");
    assert_eq!(cell_look(&matrix, case, &matrix.runs[1]), NOT_COUNTED);
    assert_eq!(cell_look(&matrix, case, &matrix.runs[2]), NOT_COUNTED);
    let boundary = matrix.tests[1];
    assert_eq!(
        cell_look(&matrix, boundary, &matrix.runs[2]).class,
        "killed"
    );
    assert!(key_looks(&matrix).contains(&NOT_COUNTED));
    let grid = text::matrix(&matrix, 80);
    let row = grid
        .lines()
        .find(|line| line.contains(case.name))
        .expect("the test's row");
    assert!(row.trim_end().ends_with("!  oo"), "{row}");
    assert!(
        grid.contains("o the test fails but does not count"),
        "{grid}"
    );
    let markdown = markdown::report(&matrix);
    assert!(
        markdown.contains("| **fails** | fails, not counted | fails, not counted |"),
        "{markdown}"
    );
    assert!(html::page(&matrix).contains("class=\"cell not-counted"));
}

/// Where no failure goes uncounted, the key does not explain the look.
#[test]
fn the_key_explains_a_failure_not_counted_only_where_the_grid_shows_one() {
    use crate::matrix::sample::small_matrix;
    let failed = || Outcome::Fail {
        check: "claim".into(),
        expected: "fence 1".into(),
        actual: "none".into(),
        state: None,
    };
    let matrix = small_matrix(
        Outcome::Pass,
        [failed(), Outcome::Pass],
        [Outcome::Pass, failed()],
    );
    assert!(!key_looks(&matrix).contains(&NOT_COUNTED));
    assert!(!key_looks(&matrix).contains(&NOT_RUN));
    assert!(!text::matrix(&matrix, 80).contains("does not count"));
}

/// A cell not run because its test cannot run the mutant's change
/// looks so in every rendering, and says why.
#[test]
fn a_cell_not_covered_is_shown_as_such_everywhere() {
    use crate::matrix::sample::small_matrix;
    use crate::outcome::TestRun;
    let mut matrix = small_matrix(
        Outcome::Pass,
        [Outcome::Pass, Outcome::Pass],
        [Outcome::Pass, Outcome::Pass],
    );
    let first = matrix.tests[0].name;
    let skipped = TestRun::not_covered(&matrix.runs[0].runs[0]);
    matrix.runs[1].runs[0] = skipped;
    assert_eq!(matrix.not_covered(), 1);
    let case = matrix.tests[0];
    assert_eq!(cell_look(&matrix, case, &matrix.runs[1]), NOT_COVERED);
    assert_eq!(cell_look(&matrix, case, &matrix.runs[2]).class, "survives");
    let markdown = markdown::report(&matrix);
    assert!(
        markdown
            .lines()
            .nth(2)
            .unwrap()
            .contains("| pass | not covered |  |"),
        "{markdown}"
    );
    let json = json::report(&matrix);
    assert_eq!(
        json["variants"][1]["not_covered"],
        serde_json::json!([first])
    );
    assert_eq!(
        json["variants"][1]["reaches"],
        serde_json::json!(["claim", "claim_many"])
    );
    assert_eq!(
        json["variants"][1]["outcomes"][first], "pass",
        "the reference's"
    );
    assert_eq!(
        json["variants"][1]["details"][first],
        "not covered: the test calls none of the operations the mutant's change reaches (claim, claim_many), so it was not run; it answers as on the reference"
    );
    assert_eq!(json["variants"][2]["not_covered"], serde_json::json!([]));
    let page = html::page(&matrix);
    assert!(
        page.contains("class=\"cell not-covered group-start kind-worksheet\" title=\"04 × "),
        "{page}"
    );
    let text = text::matrix(&matrix, 100);
    assert!(
        text.contains("- not covered: the test calls no operation"),
        "{text}"
    );
}

#[test]
fn positions_count_lines_and_utf16_columns_from_one() {
    let text = "ab\nµx\n";
    assert_eq!(position(text, 0), Position { line: 1, column: 1 });
    assert_eq!(position(text, 3), Position { line: 2, column: 1 });
    // µ is two bytes in UTF-8 and one unit in UTF-16.
    assert_eq!(position(text, 5), Position { line: 2, column: 2 });
    assert_eq!(position(text, text.len()), Position { line: 3, column: 1 });
}

/// The byte offset of `position` in `text`: the inverse of [`position`].
fn offset(text: &str, position: Position) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(position.line - 1)
        .map(str::len)
        .sum();
    let mut units = 0;
    let column_bytes: usize = text[line_start..]
        .chars()
        .take_while(|c| {
            units += c.len_utf16();
            units < position.column
        })
        .map(char::len_utf8)
        .sum();
    line_start + column_bytes
}

/// Each change, put in place of its range of the reference source,
/// gives the mutant's source; what it replaces is text of the mutant's
/// fragment (or, for an insertion, the spacing after it).
#[test]
fn every_change_in_its_place_gives_the_mutant_s_source() {
    for compiled in MUTANTS {
        let mutant = Mutant::from(compiled);
        let change = change(&mutant);
        let (start, end) = (
            offset(REFERENCE_SOURCE, change.start),
            offset(REFERENCE_SOURCE, change.end),
        );
        assert_eq!(
            REFERENCE_SOURCE[start..end],
            change.original,
            "mutant {}",
            compiled.id
        );
        let placed = format!(
            "{}{}{}",
            &REFERENCE_SOURCE[..start],
            change.replacement,
            &REFERENCE_SOURCE[end..]
        );
        assert!(placed == compiled.source, "mutant {}", compiled.id);
        assert!(compiled.fragment.contains(change.original.as_str()));
        assert_ne!(
            change.original, change.replacement,
            "mutant {}",
            compiled.id
        );
    }
}

/// No two mutants of the Rust store share a place: a viewer opens the
/// mutant at the place clicked.
#[test]
fn every_mutant_of_the_rust_store_has_a_place_of_its_own() {
    let mut places = std::collections::BTreeMap::new();
    for compiled in MUTANTS {
        let change = change(&Mutant::from(compiled));
        let place = (
            change.start.line,
            change.start.column,
            change.end.line,
            change.end.column,
        );
        if let Some(other) = places.insert(place, compiled.id) {
            panic!("{} and {other} share {place:?}", compiled.id);
        }
    }
}

/// A mutant of `fn f() {FRAGMENT}` that puts `replacement` in its place.
fn made_up_mutant(fragment: &str, replacement: &str) -> Mutant {
    mutant_of(&format!("fn f() {{{fragment}}}"), fragment, replacement)
}

/// A mutant of `original` that puts `replacement` in place of `fragment`.
fn mutant_of(original: &str, fragment: &str, replacement: &str) -> Mutant {
    use crate::mutant::{MutantKind, MutantSpec};
    Mutant {
        spec: MutantSpec {
            id: "x1".into(),
            step: 1,
            title: "t".into(),
            kind: MutantKind::Own,
            file: "crates/store/src/store.rs".into(),
            fragment: fragment.into(),
            replacement: replacement.into(),
            explanation: "e".into(),
            worksheet: None,
            story: None,
        },
        source: std::borrow::Cow::Owned(original.replacen(fragment, replacement, 1)),
        original: std::borrow::Cow::Owned(original.to_string()),
        reaches: None,
    }
}

fn pair(change: &Change) -> (&str, &str) {
    (change.original.as_str(), change.replacement.as_str())
}

#[test]
fn a_change_is_the_smallest_differing_span_widened_to_whole_tokens() {
    let sql = "\"UPDATE jobs SET until = :until WHERE id = :id AND until > :now\"";
    let boundary = change(&made_up_mutant(
        sql,
        &sql.replace("until > :now", "until >= :now"),
    ));
    assert_eq!(pair(&boundary), (">", ">="));
    // `fn f() {` is 8 columns; columns count from 1.
    assert_eq!(boundary.start.column, 9 + sql.find("> :now").unwrap());
    let any_job = change(&made_up_mutant(sql, &sql.replace("WHERE id", "WHERE :id")));
    assert_eq!(pair(&any_job), ("id", ":id"));
    let renamed = change(&made_up_mutant("let fence = 1;", "let fences = 1;"));
    assert_eq!(pair(&renamed), ("fence", "fences"));
    let deleted = change(&made_up_mutant("   a   ", "   "));
    assert_eq!(pair(&deleted), ("a   ", ""));
    let widened = change(&made_up_mutant("  ", "   "));
    assert_eq!(pair(&widened), ("", " "));
}

/// A line added after the fragment begins with a line break; the
/// change begins with the added code instead, on the next line.
#[test]
fn an_added_line_is_placed_at_the_start_of_the_next_line_s_code() {
    let mutant = mutant_of(
        "fn f() {\n    let a = 1;\n    b();\n}\n",
        "    let a = 1;",
        "    let a = 1;\n    return;",
    );
    let change = change(&mutant);
    assert_eq!(pair(&change), ("", "return;\n    "));
    assert_eq!(change.start, Position { line: 3, column: 5 });
    assert_eq!(change.end, change.start);
    let variant = Variant::find("08").expect("mutant 08 exists");
    let claim_many = super::change(variant.mutant.as_ref().unwrap());
    assert!(claim_many.replacement.starts_with("return Ok("));
    assert_eq!(claim_many.original, "");
}

#[test]
fn a_change_over_two_lines_starts_where_they_first_differ() {
    let variant = Variant::find("08b").expect("mutant 08b exists");
    let change = change(variant.mutant.as_ref().unwrap());
    assert!(
        change.original.starts_with("tx = "),
        "{:?}",
        change.original
    );
    assert!(
        change.original.contains("let lease"),
        "{:?}",
        change.original
    );
    assert!(change.replacement.starts_with("lease = "));
    assert_eq!(change.end.line, change.start.line + 1);
}

#[test]
fn every_outcome_has_its_own_look_and_kills_differ_from_broken_references() {
    let failed = Outcome::Fail {
        check: "c".into(),
        expected: "e".into(),
        actual: "a".into(),
        state: None,
    };
    assert_eq!(look(Some(&Outcome::Pass), true).glyph, "+");
    assert_eq!(look(Some(&Outcome::Pass), false).glyph, ".");
    assert_eq!(look(Some(&failed), true).class, "broken");
    assert_eq!(look(Some(&failed), false).class, "killed");
    assert_ne!(
        look(Some(&failed), true).glyph,
        look(Some(&failed), false).glyph
    );
    assert_eq!(look(None, false).class, "not-run");
    let glyphs: std::collections::BTreeSet<&str> = LOOKS.iter().map(|l| l.glyph).collect();
    assert_eq!(glyphs.len(), LOOKS.len(), "one glyph per look");
    assert_eq!(status_look(MutantStatus::Survived).class, "broken");
}

#[test]
fn a_survivor_gets_the_gap_or_equivalent_advice_and_a_killed_mutant_none() {
    let matrix = sample::matrix();
    let advice = survivor_advice(&matrix, "07").expect("07 survives in the sample");
    assert!(advice.contains("the suite has a gap"), "{advice}");
    assert!(advice.contains("equivalent to the reference"), "{advice}");
    assert!(advice.contains("lab probe FILE --variant 07"), "{advice}");
    assert!(
        advice.contains("labs/probes/07-release-current.probe"),
        "{advice}"
    );
    assert_eq!(survivor_advice(&matrix, "04"), None);
    assert_eq!(survivor_advice(&matrix, "05"), None, "a timeout is caught");
}

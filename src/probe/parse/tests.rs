//! The probe parser's tests: every form of line, and every error with its
//! message.

use super::*;

fn one(line: &str) -> ProbeLine {
    let probe = parse("t.probe", line).unwrap_or_else(|e| panic!("{e}"));
    probe.lines[1].clone()
}

fn error(text: &str) -> String {
    parse("t.probe", text).unwrap_err().to_string()
}

#[test]
fn reads_every_operation() {
    assert_eq!(one("init").operation, Operation::InitDb);
    let state = one("state j1 fence -> 2");
    assert_eq!(
        state.operation,
        Operation::State {
            job_id: "j1".into()
        }
    );
    assert_eq!(state.field, Some(Field::Fence));
    assert_eq!(
        one("renew j A 3 ttl=5 now=-1").operation,
        Operation::Renew {
            job_id: "j".into(),
            owner: "A".into(),
            fence: Fence(3),
            now: -1.0,
            ttl: 5.0
        }
    );
    assert_eq!(
        one(r#"complete j A 1 now=2 result="all \"done\"""#).operation,
        Operation::Complete {
            job_id: "j".into(),
            owner: "A".into(),
            fence: Fence(1),
            now: 2.0,
            result: "all \"done\"".into()
        }
    );
    assert_eq!(
        one("release j A 1").operation,
        Operation::Release {
            job_id: "j".into(),
            owner: "A".into(),
            fence: Fence(1)
        }
    );
}

#[test]
fn expands_owner_ranges_only_when_unquoted() {
    let Operation::ClaimMany { owners, .. } =
        one(r#"claim-many j w*3 "x*2" B now=0 ttl=1"#).operation
    else {
        panic!("a claim-many line");
    };
    assert_eq!(owners, ["w1", "w2", "w3", "x*2", "B"]);
}

#[test]
fn reads_every_kind_of_expectation() {
    assert_eq!(one("init -> ok").expectation, Expectation::Ok);
    assert_eq!(one("enqueue j").expectation, Expectation::Runs);
    assert_eq!(
        one("claim j A now=0 ttl=1 -> null").expectation,
        Expectation::Fence(None)
    );
    assert_eq!(
        one("state j -> owner=none until=1.5 done=true").expectation,
        Expectation::Row(vec![
            (Field::Owner, Value::Text(None)),
            (Field::Until, Value::Number(1.5)),
            (Field::Done, Value::Bool(true)),
        ])
    );
    assert_eq!(
        one(r#"state j result -> "none""#).expectation,
        Expectation::Field(Field::Result, Value::Text(Some("none".into())))
    );
    assert_eq!(
        one("claim-many j A B now=0 ttl=1 -> [1 none]").expectation,
        Expectation::Fences(vec![Some(Fence(1)), None])
    );
    assert_eq!(
        one("claim-many j A*4 now=0 ttl=1 -> one-winner").expectation,
        Expectation::Winners {
            winners: 1,
            owners: 4
        }
    );
    assert_eq!(
        one("claim j A now=0 ttl=0 -> error invalid-argument # ttl must be > 0").expectation,
        Expectation::Error(Some(ErrorKind::InvalidArgument))
    );
}

#[test]
fn keeps_the_call_as_written() {
    assert_eq!(
        one("claim j1 A now=0 ttl=10   -> 1   # first").call,
        "claim j1 A now=0 ttl=10"
    );
}

#[test]
fn names_what_it_expected_and_found() {
    assert_eq!(
        error("enqueue j\nclaim j A now=0 -> 1"),
        "t.probe:2: expected `ttl=`, but found the end of the line"
    );
    assert_eq!(
        error("claim j now=0 ttl=1"),
        "t.probe:1: expected an owner, but found `now=`"
    );
    assert_eq!(
        error("enqueue j -> yes"),
        "t.probe:1: expected `true`, `false` or `error`, but found `yes`"
    );
    assert_eq!(
        error("grab j"),
        format!("t.probe:1: expected {OPERATIONS}, but found `grab`")
    );
    assert_eq!(
        error("enqueue \"j"),
        "t.probe:1: expected a closing `\"`, but found the end of the line"
    );
    assert_eq!(
        error("claim j A now=0 now=1 ttl=1"),
        "t.probe:1: expected each argument once, but found `now=` twice"
    );
    assert_eq!(
        error("state j colour -> 1"),
        format!("t.probe:1: expected {FIELDS}, but found `colour`")
    );
    assert_eq!(
        error("claim j A now=0 ttl=1 -> error oops"),
        "t.probe:1: expected an error kind (invalid-argument, missing-folder, \
         no-database, is-a-directory, not-a-database, no-jobs-table, incompatible-schema, \
         read-only, busy, sqlite, not-implemented, other), but found `oops`"
    );
    assert_eq!(
        error("claim-many j w*0 now=0 ttl=1"),
        "t.probe:1: expected `NAME*K` with K from 1 to 1000, but found `w*0`"
    );
    match one("claim-many j v*999 A now=0 ttl=1").operation {
        Operation::ClaimMany { owners, .. } => assert_eq!(owners.len(), MAX_OWNERS),
        other => panic!("not a claim-many: {other:?}"),
    }
    assert_eq!(
        error("claim-many j v*999 A B now=0 ttl=1"),
        "t.probe:1: expected at most 1000 owners on one line, but found `B`, which makes 1001"
    );
    assert_eq!(
        error("claim-many j v*1000 w*1000 now=0 ttl=1"),
        "t.probe:1: expected at most 1000 owners on one line, but found `w*1000`, which makes 2000"
    );
    assert_eq!(
        error("state j owner -> ["),
        "t.probe:1: expected an owner or `none`, but found `[`"
    );
    assert_eq!(
        error("state j result -> ["),
        "t.probe:1: expected a result text or `none`, but found `[`"
    );
    assert_eq!(
        error("claim-many j A [ now=0 ttl=1"),
        "t.probe:1: expected an owner, or `now=`, but found `[`"
    );
    assert_eq!(
        error("claim-many j A now=0 ttl=1 -> lots"),
        "t.probe:1: expected `[FENCE-OR-none, ...]`, `one-winner`, `winners=K` or `error`, \
         but found `lots`"
    );
    assert_eq!(
        error("enqueue j k -> true"),
        "t.probe:1: expected `->` or the end of the line, but found `k`"
    );
    assert_eq!(
        error("enqueue j -> true false"),
        "t.probe:1: expected the end of the line, but found `false`"
    );
    assert_eq!(
        error("claim-many j A B C now=0 ttl=1 -> [1, none]"),
        "t.probe:1: expected 3 answers, one per owner, but found `]` after 2"
    );
    assert_eq!(
        error("claim-many j A B now=0 ttl=1 -> [1, none, none]"),
        "t.probe:1: expected `]` after 2 answers, one per owner, but found `none`"
    );
    assert_eq!(
        error("# nothing but a comment\n"),
        "t.probe:1: expected at least one operation (enqueue, state, claim, ...), but found the end of the file"
    );
}

/// An expectation is shown (in a verdict's `expected:` row) as a probe
/// would write it: shown and read again, it is the same expectation.
#[test]
fn an_expectation_reads_back_as_it_is_shown() {
    let lines = [
        "init -> ok",
        "enqueue j -> true",
        "enqueue j -> false",
        "claim j A now=0 ttl=1 -> 3",
        "claim j A now=0 ttl=1 -> none",
        "claim j A now=0 ttl=1 -> error",
        "claim j A now=0 ttl=1 -> error invalid-argument",
        "state j -> none",
        r#"state j -> owner="A B" until=1.5 fence=2 result=none done=false"#,
        "state j until -> 2.25",
        "state j done -> true",
        "claim-many j A B C now=0 ttl=1 -> [1, none, none]",
        "claim-many j A B C now=0 ttl=1 -> one-winner",
        "claim-many j A B C now=0 ttl=1 -> winners=2",
    ];
    for text in lines {
        let line = one(text);
        let (call, _) = text.split_once(" -> ").expect("an expectation");
        let shown = format!("{call} -> {}", line.expectation);
        assert_eq!(
            one(&shown).expectation,
            line.expectation,
            "{text} shown as {shown}"
        );
        assert_eq!(shown, text, "{text} is shown as written");
    }
    assert_eq!(
        one("enqueue j").expectation.to_string(),
        "any answer but an error"
    );
}

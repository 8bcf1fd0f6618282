//! The kill matrix as JSON, for tools: every test, every variant with its
//! outcomes and the reasons behind them, and what `--check` would say.

use crate::matrix::Matrix;
use serde_json::{json, Map, Value};

/// The matrix as JSON: `tests` with name and step, and `variants` with
/// id, step, title, kind, status, and each test's outcome and reason; a
/// mutant's `reaches` (the operations its change can run in, `null` when
/// unknown) and `not_covered`, the tests not run against it because they
/// call none of those (their `outcomes` are the reference's, and their
/// `details` say so).
pub fn report(matrix: &Matrix) -> Value {
    let summaries = matrix.summaries();
    let tests: Vec<Value> = matrix
        .tests
        .iter()
        .map(|case| json!({"name": case.name, "step": case.step, "tag": case.tag.name()}))
        .collect();
    let variants: Vec<Value> = matrix
        .runs
        .iter()
        .map(|run| {
            let mut outcomes = Map::new();
            let mut details = Map::new();
            let mut not_covered = Vec::new();
            for test in &run.runs {
                outcomes.insert(test.test.clone(), json!(test.outcome.label()));
                if test.not_covered {
                    not_covered.push(test.test.as_str());
                    let reason = super::not_covered_reason(run.variant.mutant.as_deref());
                    details.insert(test.test.clone(), json!(reason));
                } else if let Some(reason) = test.outcome.reason() {
                    details.insert(test.test.clone(), json!(reason));
                }
            }
            let mut entry = match run.variant.mutant.as_deref() {
                None => json!({
                    "id": run.variant.id,
                    "step": Value::Null,
                    "title": "the reference implementation",
                    "kind": "reference",
                }),
                Some(mutant) => {
                    let spec = &mutant.spec;
                    let summary = summaries
                        .iter()
                        .find(|summary| summary.id == spec.id)
                        .expect("a summary per mutant");
                    json!({
                        "id": spec.id,
                        "step": spec.step,
                        "title": spec.title,
                        "kind": spec.kind.name(),
                        "status": summary.status,
                        "killed_by": summary.killers,
                        "fragment": spec.fragment,
                        "replacement": spec.replacement,
                        "reaches": mutant.reaches,
                    })
                }
            };
            entry["outcomes"] = Value::Object(outcomes);
            entry["details"] = Value::Object(details);
            entry["not_covered"] = json!(not_covered);
            entry
        })
        .collect();
    json!({
        "tests": tests,
        "variants": variants,
        "idle_tests": matrix.idle_tests(),
        "beyond_the_worksheet": matrix.beyond_the_worksheet(),
        "problems": matrix.problems(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::sample::{failed, small_matrix};
    use crate::outcome::Outcome;
    use crate::{suite, variant};

    #[test]
    fn the_matrix_json_has_the_documented_shape() {
        let matrix = small_matrix(
            Outcome::Pass,
            [Outcome::Pass, failed()],
            [failed(), Outcome::Pass],
        );
        let value = report(&matrix);
        assert_eq!(
            value["tests"][1],
            json!({"name": "claim_at_exact_expiry_is_reassigned", "step": 4, "tag": "contract"})
        );
        assert_eq!(value["variants"][0]["id"], "reference");
        assert_eq!(value["variants"][0]["step"], json!(null));
        assert_eq!(value["variants"][0]["kind"], "reference");
        let m04 = &value["variants"][1];
        assert_eq!(
            (
                m04["id"].as_str(),
                m04["step"].as_u64(),
                m04["kind"].as_str()
            ),
            (Some("04"), Some(4), Some("worksheet"))
        );
        assert_eq!(m04["status"], "killed");
        assert_eq!(
            m04["killed_by"],
            json!(["claim_at_exact_expiry_is_reassigned"])
        );
        assert_eq!(
            m04["outcomes"]["claim_at_exact_expiry_is_reassigned"],
            "fail"
        );
        assert_eq!(m04["outcomes"][suite::CASES[0].name], "pass");
        assert_eq!(
            m04["details"]["claim_at_exact_expiry_is_reassigned"],
            "c: expected e, got a"
        );
        assert_eq!(
            m04["fragment"],
            variant::compiled_mutant("04").unwrap().fragment
        );
        assert_eq!(value["problems"], json!([]));
        assert_eq!(value["idle_tests"], json!([]));
    }
}

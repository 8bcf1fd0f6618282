//! A student's prediction of which tests catch a mutant, and its score.

use lease_lab::suite::Case;
use serde::{Deserialize, Serialize};

/// Reads a selection of tests from a menu: numbers (1-based positions in
/// `menu`) or test names, separated by commas or spaces, in any mix.
///
/// Errors name the token that is neither and say what is accepted.
pub fn parse_selection(input: &str, menu: &[&'static Case]) -> Result<Vec<&'static str>, String> {
    let mut chosen: Vec<&'static str> = Vec::new();
    for token in input
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        let case = match token.parse::<usize>() {
            Ok(number) => number
                .checked_sub(1)
                .and_then(|index| menu.get(index))
                .ok_or_else(|| format!("there is no test number {number}: choose from 1 to {}", menu.len()))?,
            Err(_) => menu
                .iter()
                .find(|case| case.name == token)
                .ok_or_else(|| format!("{token:?} is not a test in force at this step: give its number or its exact name"))?,
        };
        if !chosen.contains(&case.name) {
            chosen.push(case.name);
        }
    }
    Ok(chosen)
}

/// The prediction beside the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// Tests predicted that did catch the mutant.
    pub predicted_and_caught: Vec<String>,
    /// Tests predicted that passed on the mutant.
    pub predicted_but_survived: Vec<String>,
    /// Tests that caught the mutant but were not predicted.
    pub caught_not_predicted: Vec<String>,
    /// Agreement from 0 to 100: the tests named rightly, over every test
    /// that was predicted or caught (100 when the two sets are the same).
    pub percent: u8,
}

impl Score {
    /// Compares the predicted tests with the tests that caught the mutant.
    pub fn of(predicted: &[String], caught: &[String]) -> Score {
        let predicted_and_caught: Vec<String> = predicted
            .iter()
            .filter(|t| caught.contains(t))
            .cloned()
            .collect();
        let predicted_but_survived: Vec<String> = predicted
            .iter()
            .filter(|t| !caught.contains(t))
            .cloned()
            .collect();
        let caught_not_predicted: Vec<String> = caught
            .iter()
            .filter(|t| !predicted.contains(t))
            .cloned()
            .collect();
        let union =
            predicted_and_caught.len() + predicted_but_survived.len() + caught_not_predicted.len();
        // Nothing predicted and nothing caught is full agreement.
        let percent = (predicted_and_caught.len() * 100)
            .checked_div(union)
            .map_or(100, |percent| u8::try_from(percent).unwrap_or(100));
        Score {
            predicted_and_caught,
            predicted_but_survived,
            caught_not_predicted,
            percent,
        }
    }

    /// Whether at least one predicted test caught the mutant.
    pub fn found_a_killer(&self) -> bool {
        !self.predicted_and_caught.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lease_lab::suite;

    fn menu(step: u8) -> Vec<&'static Case> {
        suite::cases_through(step).collect()
    }

    #[test]
    fn a_selection_takes_numbers_and_names_in_any_mix() {
        let menu = menu(2);
        let chosen =
            parse_selection("1, enqueue_of_an_existing_job_answers_false 3,1", &menu).unwrap();
        assert_eq!(
            chosen,
            [
                menu[0].name,
                "enqueue_of_an_existing_job_answers_false",
                menu[2].name
            ]
        );
        assert_eq!(parse_selection("", &menu).unwrap(), Vec::<&str>::new());
        let last = menu.len();
        assert_eq!(
            parse_selection(&last.to_string(), &menu).unwrap(),
            [menu[last - 1].name]
        );
    }

    #[test]
    fn a_selection_refuses_what_is_not_on_the_menu() {
        let menu = menu(2);
        let error = parse_selection("0", &menu).unwrap_err();
        assert!(
            error.contains("no test number 0") && error.contains(&format!("1 to {}", menu.len())),
            "{error}"
        );
        let error = parse_selection(&(menu.len() + 1).to_string(), &menu).unwrap_err();
        assert!(
            error.contains(&format!("no test number {}", menu.len() + 1)),
            "{error}"
        );
        let error = parse_selection("claim_at_exact_expiry_is_reassigned", &menu).unwrap_err();
        assert!(
            error.contains("not a test in force"),
            "tests of later steps are not on the menu: {error}"
        );
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn a_score_sets_the_prediction_beside_the_result() {
        let score = Score::of(&names(&["a", "b", "c"]), &names(&["b", "c", "d"]));
        assert_eq!(score.predicted_and_caught, names(&["b", "c"]));
        assert_eq!(score.predicted_but_survived, names(&["a"]));
        assert_eq!(score.caught_not_predicted, names(&["d"]));
        assert_eq!(score.percent, 50);
        assert!(score.found_a_killer());
        let exact = Score::of(&names(&["a"]), &names(&["a"]));
        assert_eq!(exact.percent, 100);
        let wrong = Score::of(&names(&["a"]), &names(&["b"]));
        assert_eq!(wrong.percent, 0);
        assert!(!wrong.found_a_killer());
        assert_eq!(
            Score::of(&[], &[]).percent,
            100,
            "nothing predicted, nothing caught"
        );
        assert_eq!(
            Score::of(&names(&["a", "b"]), &names(&["a", "b", "c"])).percent,
            66
        );
    }
}

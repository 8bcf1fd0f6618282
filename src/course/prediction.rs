//! A student's prediction of which tests catch a mutant, and its score.

use crate::suite::{self, Case};
use colored::Colorize;
use serde::{Deserialize, Serialize};

/// Reads a selection of tests from a menu: numbers (1-based positions in
/// `menu`, which are the tests' numbers in the suite) or test names,
/// separated by commas or spaces, in any mix.
///
/// Every entry that is neither is reported at once, each with what is
/// wrong and, for a name close to a test's, the test it may have meant.
pub fn parse_selection(
    input: &str,
    menu: &[&'static Case],
) -> Result<Vec<&'static str>, Vec<String>> {
    let mut chosen: Vec<&'static str> = Vec::new();
    let mut wrong = Vec::new();
    for token in input
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        match find(token, menu) {
            Ok(name) if !chosen.contains(&name) => chosen.push(name),
            Ok(_) => {}
            Err(problem) => wrong.push(problem),
        }
    }
    if wrong.is_empty() {
        Ok(chosen)
    } else {
        Err(wrong)
    }
}

/// The test an entry names, or what is wrong with it.
fn find(token: &str, menu: &[&'static Case]) -> Result<&'static str, String> {
    if let Ok(number) = token.parse::<usize>() {
        return number
            .checked_sub(1)
            .and_then(|index| menu.get(index))
            .map(|case| case.name)
            .ok_or_else(|| {
                format!(
                    "there is no test number {number}: choose from 1 to {}",
                    menu.len()
                )
            });
    }
    if let Some(case) = menu.iter().find(|case| case.name == token) {
        return Ok(case.name);
    }
    if let Some(later) = suite::case(token) {
        return Err(format!(
            "{token} is a test of step {}, not in force yet at this step",
            later.step
        ));
    }
    let nearest = menu
        .iter()
        .map(|case| (strsim::jaro_winkler(token, case.name), case.name))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .filter(|(similarity, _)| *similarity >= 0.85);
    Err(match nearest {
        Some((_, name)) => format!("{token:?} is not a test; did you mean {name}?"),
        None => {
            format!("{token:?} is not a test: give its number or its exact name (lab tests lists them; t at the prompt)")
        }
    })
}

/// The prediction beside the result, judged on two things apart: whether
/// it named a test (or a probe) that catches the mutant
/// ([`Score::found_a_killer`]: one is enough to catch it), and how precise
/// it was ([`Score::percent`]: the share of what it named that caught it).
/// Killers it did not name are listed, not held against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// Tests predicted that did catch the mutant.
    pub predicted_and_caught: Vec<String>,
    /// Tests predicted that passed on the mutant.
    pub predicted_but_survived: Vec<String>,
    /// Tests that caught the mutant but were not predicted.
    pub caught_not_predicted: Vec<String>,
    /// Precision from 0 to 100: the predictions that caught the mutant,
    /// over every prediction (100 when nothing was predicted and nothing
    /// caught it; 0 when nothing was predicted and something did).
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
        Score::from_lists(
            predicted_and_caught,
            predicted_but_survived,
            caught_not_predicted,
        )
    }

    /// The score of a prediction made of tests and, or only, a probe.
    ///
    /// A probe predicts an observation of its own, which no test need
    /// share: it counts as one more prediction, right when it kills the
    /// mutant. With a probe alone, the tests that caught the mutant are
    /// not listed as missed, and a killing probe scores 100%.
    pub fn with_probe(predicted: &[String], caught: &[String], probe: &str, killed: bool) -> Score {
        let mut score = if predicted.is_empty() {
            Score::from_lists(Vec::new(), Vec::new(), Vec::new())
        } else {
            Score::of(predicted, caught)
        };
        let name = format!("probe {probe}");
        if killed {
            score.predicted_and_caught.push(name);
        } else {
            score.predicted_but_survived.push(name);
        }
        Score::from_lists(
            score.predicted_and_caught,
            score.predicted_but_survived,
            score.caught_not_predicted,
        )
    }

    fn from_lists(
        predicted_and_caught: Vec<String>,
        predicted_but_survived: Vec<String>,
        caught_not_predicted: Vec<String>,
    ) -> Score {
        let predicted = predicted_and_caught.len() + predicted_but_survived.len();
        // Nothing predicted: right only if nothing caught the mutant either.
        let nothing = if caught_not_predicted.is_empty() {
            100
        } else {
            0
        };
        let percent = (predicted_and_caught.len() * 100)
            .checked_div(predicted)
            .map_or(nothing, |percent| u8::try_from(percent).unwrap_or(100));
        Score {
            predicted_and_caught,
            predicted_but_survived,
            caught_not_predicted,
            percent,
        }
    }

    /// Whether at least one prediction (a test or the probe) caught the mutant.
    pub fn found_a_killer(&self) -> bool {
        !self.predicted_and_caught.is_empty()
    }
}

/// What was broken, that a prediction is about: the lab's mutant, or a
/// change the student made to their own implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// One of the lab's mutants.
    Mutant,
    /// The student's own change to their implementation.
    YourChange,
}

impl Broken {
    /// How the texts name it.
    fn name(self) -> &'static str {
        match self {
            Broken::Mutant => "the mutant",
            Broken::YourChange => "your change",
        }
    }
}

/// The prediction beside the result, with its two scores, each list
/// filled to `width` under its label; then each predicted test that
/// survived `broken`, with what it checks in its own words.
pub fn comparison(score: &Score, broken: Broken, width: usize) -> String {
    let line = |label: String, names: &[String]| {
        // A name may be a probe's file, as the student named it.
        let list = if names.is_empty() {
            "none".to_string()
        } else {
            crate::inert::line(&names.join(", ")).into_owned()
        };
        let beside = crate::terminal::fill(&list, width, &format!("  {label} "), LIST_INDENT);
        // A name too long to fit beside the labels starts the list on a
        // line of its own.
        let plain = crate::terminal::fill(&list, width, LIST_INDENT, LIST_INDENT);
        if plain.lines().all(|line| line.len() <= width) {
            beside + "\n"
        } else {
            format!(
                "  {}\n{}\n",
                label.trim_end(),
                crate::terminal::fill(&list, width, "    ", "    ")
            )
        }
    };
    let named = score.predicted_and_caught.len() + score.predicted_but_survived.len();
    let right = score.predicted_and_caught.len();
    let killers = right + score.caught_not_predicted.len();
    let found = if score.found_a_killer() {
        format!("yes, {right} of the {killers} that catch it")
    } else {
        format!("no, none of the {named} you named catches it")
    };
    let precision = format!(
        "{}%, {right} of the {named} you named caught it",
        score.percent
    );
    format!(
        "\n{}\n{}{}{}{}\n{}\n",
        "Your prediction beside the result".bold(),
        line(
            "predicted and caught:       ".green().to_string(),
            &score.predicted_and_caught
        ),
        line(
            "predicted but it survived:  ".red().to_string(),
            &score.predicted_but_survived
        ),
        line(
            "caught but not predicted:   ".yellow().to_string(),
            &score.caught_not_predicted
        ),
        crate::terminal::fill(
            &found,
            width,
            &format!("  {} ", "found a killer:             ".bold()),
            LIST_INDENT
        ),
        crate::terminal::fill(
            &precision,
            width,
            &format!("  {} ", "precision:                  ".bold()),
            LIST_INDENT
        ),
    ) + &survivors(&score.predicted_but_survived, broken, width)
}

/// Why each test in `names` (tests the student named, that passed on the
/// mutant) survived: what it checks, from its own documentation, and that
/// all of it holds on the mutant. Probes are left out: a probe's own check
/// says which of its lines answered alike.
fn survivors(names: &[String], broken: Broken, width: usize) -> String {
    let explained: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let checks = suite::description(name)?;
            Some(format!(
                "  {name}\n{}\n",
                crate::terminal::fill(
                    &format!(
                        "checks: {checks} Everything it checks is the same under {}, so it passes there.",
                        broken.name()
                    ),
                    width,
                    "    ",
                    "      "
                )
            ))
        })
        .collect();
    if explained.is_empty() {
        return String::new();
    }
    format!(
        "\n{}\n{}",
        "Why the tests you named survived".bold(),
        explained.concat()
    )
}

/// Where the lists of [`comparison`] start: under the first name.
const LIST_INDENT: &str = "                               ";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite;

    fn menu(step: u8) -> Vec<&'static Case> {
        suite::cases_through(step).collect()
    }

    /// Each list is filled under its label, and a list with a name too
    /// long to fit beside the labels starts on a line of its own.
    #[test]
    fn the_comparison_fills_each_list_to_the_width() {
        colored::control::set_override(false);
        let names =
            |names: &[&str]| -> Vec<String> { names.iter().map(|n| n.to_string()).collect() };
        let score = Score::of(
            &names(&["claim_touches_only_its_job", "enqueue_twice"]),
            &names(&[
                "claim_touches_only_its_job",
                "release_by_the_holder_frees_the_lease_and_keeps_the_fence",
            ]),
        );
        assert_eq!(
            comparison(&score, Broken::Mutant, 60),
            "\nYour prediction beside the result\n  predicted and caught:        claim_touches_only_its_job\n  predicted but it survived:   enqueue_twice\n  caught but not predicted:\n    release_by_the_holder_frees_the_lease_and_keeps_the_fence\n  found a killer:              yes, 1 of the 2 that catch it\n  precision:                   50%, 1 of the 2 you named\n                               caught it\n"
        );
        let short = Score::of(&names(&["a", "b", "c"]), &names(&["a", "b", "c"]));
        assert_eq!(
            comparison(&short, Broken::Mutant, 36),
            "\nYour prediction beside the result\n  predicted and caught:        a, b,\n                               c\n  predicted but it survived:   none\n  caught but not predicted:    none\n  found a killer:              yes,\n                               3 of\n                               the 3\n                               that\n                               catch\n                               it\n  precision:                   100%,\n                               3 of\n                               the 3\n                               you\n                               named\n                               caught\n                               it\n"
        );
        // A name exactly as wide as the room beside the labels stays beside them.
        let exact = Score::of(&names(&["abcde"]), &names(&["abcde"]));
        assert!(
            comparison(&exact, Broken::Mutant, 36)
                .contains("  predicted and caught:        abcde\n"),
            "{}",
            comparison(&exact, Broken::Mutant, 36)
        );
    }

    /// A predicted test that survived is explained in its own words; a
    /// survivor the suite does not document (a probe) is not.
    #[test]
    fn each_predicted_test_that_survived_says_what_it_checks() {
        colored::control::set_override(false);
        let survivor = "enqueue_of_an_existing_job_answers_false";
        let score = Score::with_probe(
            &names(&["claim_at_exact_expiry_is_reassigned", survivor]),
            &names(&["claim_at_exact_expiry_is_reassigned"]),
            "mine.probe",
            false,
        );
        let shown = comparison(&score, Broken::Mutant, 60);
        let (_, why) = shown
            .split_once("\nWhy the tests you named survived\n")
            .unwrap_or_else(|| panic!("{shown}"));
        assert_eq!(
            why,
            "  enqueue_of_an_existing_job_answers_false\n    checks: Enqueueing an id that exists answers `false`.\n      Everything it checks is the same under the mutant, so\n      it passes there.\n"
        );
        let all_caught = Score::of(&names(&[survivor]), &names(&[survivor]));
        assert!(!comparison(&all_caught, Broken::Mutant, 60).contains("Why the tests"));
        // A student who broke their own code reads of their change.
        let own = comparison(&score, Broken::YourChange, 200);
        assert!(
            own.contains("Everything it checks is the same under your change, so it passes there."),
            "{own}"
        );
        assert!(!own.contains("mutant"), "{own}");
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
    fn a_selection_reports_every_wrong_entry_at_once() {
        let menu = menu(2);
        let errors = parse_selection(
            "0, 2, claim_at_exact_expiry_is_reassigned, enqueue_of_an_existing_job, nonsense",
            &menu,
        )
        .unwrap_err();
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert_eq!(
            errors[0],
            format!("there is no test number 0: choose from 1 to {}", menu.len())
        );
        assert_eq!(
            errors[1],
            "claim_at_exact_expiry_is_reassigned is a test of step 4, not in force yet at this step"
        );
        assert_eq!(
            errors[2],
            "\"enqueue_of_an_existing_job\" is not a test; did you mean enqueue_of_an_existing_job_answers_false?"
        );
        assert!(
            errors[3].contains("\"nonsense\" is not a test: give its number"),
            "{errors:?}"
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
        assert_eq!(score.percent, 66, "b and c of a, b, c caught it");
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
            Score::of(&names(&["a", "b"]), &names(&["a", "b", "c", "d", "e", "f"])).percent,
            100,
            "two of six killers named, and nothing else: precise"
        );
        assert_eq!(
            Score::of(&[], &names(&["a"])).percent,
            0,
            "nothing predicted, but something caught it"
        );
        assert_eq!(
            Score::of(&names(&["a", "b", "c"]), &names(&["c"])).percent,
            33
        );
    }

    #[test]
    fn a_probe_that_kills_is_a_right_prediction() {
        let alone = Score::with_probe(&[], &names(&["t1", "t2"]), "mine.probe", true);
        assert_eq!(alone.percent, 100);
        assert_eq!(alone.predicted_and_caught, ["probe mine.probe"]);
        assert!(alone.caught_not_predicted.is_empty());
        assert!(alone.found_a_killer());
        let missed = Score::with_probe(&[], &names(&["t1"]), "mine.probe", false);
        assert_eq!(missed.percent, 0);
        assert_eq!(missed.predicted_but_survived, ["probe mine.probe"]);
        let both = Score::with_probe(&names(&["t1"]), &names(&["t1", "t2"]), "p", true);
        assert_eq!(both.percent, 100, "t1 and the probe right; t2 not named");
        assert_eq!(both.caught_not_predicted, ["t2"]);
        let half = Score::with_probe(&names(&["t1", "t3"]), &names(&["t1"]), "p", true);
        assert_eq!(half.percent, 66, "t1 and the probe right, t3 survived");
    }
}

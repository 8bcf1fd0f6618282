//! What a kill matrix means, for an instructor: the tests that kill
//! nothing and what they guard, tests that say the same as others or less,
//! mutants no test tells apart, which mutants subsume which (Ammann,
//! Delamaro and Offutt, "Establishing theoretical minimal sets of mutants",
//! ICST 2014), and the smallest set of tests that kills every mutant.
//!
//! "Kills" has the matrix's one rule ([`Matrix::caught_by`]): a test that
//! fails on the reference, or is beyond the worksheet for a program, kills
//! nothing. A mutant that no test kills is listed apart and left out of
//! subsumption, where it would subsume everything.

pub mod cover;

use crate::matrix::{Matrix, NotCounted, Verdict};
use crate::suite::{self, Case, Tag};
use cover::Elements;
use serde::Serialize;

/// Everything [`Analysis::of`] finds in one matrix. Tests are named as the
/// suite names them, mutants by id; lists keep suite and matrix order.
#[derive(Debug, Clone, Serialize)]
pub struct Analysis {
    /// How many tests the matrix has.
    pub tests: usize,
    /// How many mutants it has.
    pub mutants: usize,
    /// The tests that kill no mutant.
    pub idle_tests: Vec<IdleTest>,
    /// Groups of two or more tests that kill exactly the same mutants
    /// (at least one).
    pub equivalent_tests: Vec<Vec<&'static str>>,
    /// The tests whose kills are a strict subset of another test's.
    pub dominated_tests: Vec<DominatedTest>,
    /// The tests that kill something and are dominated by no test, as
    /// groups of equivalent tests (most groups hold one).
    pub undominated_tests: Vec<Vec<&'static str>>,
    /// The mutants no test kills.
    pub survived: Vec<String>,
    /// The killed mutants, grouped by the tests that kill them: the
    /// mutants of a group are indistinguishable to this suite.
    pub mutant_groups: Vec<MutantGroup>,
    /// The subsumption graph over [`Analysis::mutant_groups`], reduced
    /// transitively: each edge says the group `from` strictly subsumes the
    /// group `to`, with no group between them.
    pub subsumption: Vec<Edge>,
    /// The killed mutants that some other killed mutant strictly subsumes.
    pub subsumed_mutants: Vec<SubsumedMutant>,
    /// The smallest set of tests that kills every killed mutant.
    pub minimum_tests: Vec<ChosenTest>,
    /// The smallest set of the worksheet's contract tests alone that kills
    /// every mutant they can kill, and the mutants none of them kills.
    pub contract_minimum: ContractMinimum,
}

/// A test that kills nothing, with what it guards and what could break it.
#[derive(Debug, Clone, Serialize)]
pub struct IdleTest {
    /// Its name.
    pub name: &'static str,
    /// Its step.
    pub step: u8,
    /// Whose promise it checks.
    pub tag: Tag,
    /// Why its failures count for nothing, or that it passes on every mutant.
    pub why: Idle,
    /// What it guards: its documentation, on one line.
    pub guards: Option<&'static str>,
    /// The operations it called against the reference (empty when the
    /// reference's run did not record them).
    pub operations: Vec<String>,
    /// The mutants whose change it runs: those it could break on.
    pub runs_the_change_of: Vec<String>,
}

/// Why a test kills nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Idle {
    /// It passes on every mutant.
    PassesOnEveryMutant,
    /// It fails on the reference, so it tells no mutant from it.
    FailsOnTheReference,
    /// It checks a promise of the Rust store's own, which does not judge a
    /// program.
    BeyondTheWorksheet,
}

/// A test whose kills another test's strictly include.
#[derive(Debug, Clone, Serialize)]
pub struct DominatedTest {
    /// Its name.
    pub name: &'static str,
    /// The mutants it kills.
    pub kills: Vec<String>,
    /// The tests that kill all of those and more, in suite order.
    pub dominated_by: Vec<&'static str>,
}

/// Killed mutants that exactly the same tests kill.
#[derive(Debug, Clone, Serialize)]
pub struct MutantGroup {
    /// The mutants' ids.
    pub mutants: Vec<String>,
    /// The tests that kill them, in suite order.
    pub killers: Vec<&'static str>,
    /// No other killed mutant strictly subsumes this group: it belongs to
    /// the dominator set (one mutant per such group suffices).
    pub dominator: bool,
}

impl MutantGroup {
    /// The group's label: its mutants' ids joined by `=`.
    pub fn label(&self) -> String {
        self.mutants.join("=")
    }
}

/// An edge of the subsumption graph, between indices of
/// [`Analysis::mutant_groups`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Edge {
    /// The subsuming group: every test that kills it kills `to`.
    pub from: usize,
    /// The subsumed group, killed by more tests.
    pub to: usize,
}

/// A mutant another killed mutant strictly subsumes: any test that kills
/// the other kills this one too, so a suite need not aim at it.
#[derive(Debug, Clone, Serialize)]
pub struct SubsumedMutant {
    /// Its id.
    pub id: String,
    /// The mutants that strictly subsume it, in matrix order.
    pub subsumed_by: Vec<String>,
}

/// A test of the minimum set.
#[derive(Debug, Clone, Serialize)]
pub struct ChosenTest {
    /// Its name.
    pub name: &'static str,
    /// It is the only killer of some mutant: every such set holds it.
    pub forced: bool,
}

/// The minimum over the contract tests alone.
#[derive(Debug, Clone, Serialize)]
pub struct ContractMinimum {
    /// How many contract tests the matrix has.
    pub contract_tests: usize,
    /// A smallest set of them that kills every mutant they can kill.
    pub tests: Vec<ChosenTest>,
    /// The killed mutants that no contract test kills.
    pub survivors: Vec<String>,
}

impl ContractMinimum {
    /// Whether the contract tests alone kill every killed mutant.
    pub fn kills_every_mutant(&self) -> bool {
        self.survivors.is_empty()
    }
}

impl Analysis {
    /// Analyses `matrix`: which tests kill which mutants, by its rule.
    pub fn of(matrix: &Matrix) -> Analysis {
        let table = KillTable::of(matrix);
        let tests = &matrix.tests;
        let idle_tests = (0..tests.len())
            .filter(|&test| table.kills[test].is_empty())
            .map(|test| idle_test(matrix, tests[test]))
            .collect();
        let active = table.active();
        let test_groups = groups(&active, |&t| &table.kills[t]);
        let killed = table.killed();
        let group_killers = table.group_killers(&killed);
        Analysis {
            tests: tests.len(),
            mutants: table.ids.len(),
            idle_tests,
            equivalent_tests: table.equivalent_tests(&test_groups),
            dominated_tests: table.dominated_tests(&active),
            undominated_tests: table.undominated_tests(&test_groups, &active),
            survived: table.survived(),
            mutant_groups: table.mutant_groups(&group_killers),
            subsumption: subsumption(&group_killers),
            subsumed_mutants: table.subsumed_mutants(&killed),
            minimum_tests: chosen(tests, &(0..tests.len()).collect::<Vec<_>>(), &table.kills),
            contract_minimum: table.contract_minimum(&killed),
        }
    }

    /// The groups of two or more mutants that no test tells apart.
    pub fn indistinguishable(&self) -> impl Iterator<Item = &MutantGroup> {
        self.mutant_groups
            .iter()
            .filter(|group| group.mutants.len() > 1)
    }

    /// The dominator set: one mutant (the first) of every group no other
    /// killed mutant strictly subsumes. A suite that kills these kills
    /// every killed mutant.
    pub fn dominators(&self) -> Vec<&str> {
        self.mutant_groups
            .iter()
            .filter(|group| group.dominator)
            .map(|group| group.mutants[0].as_str())
            .collect()
    }
}

/// Which tests kill which mutants in a matrix, both ways, by index: tests
/// in suite order, mutants in matrix order.
struct KillTable<'a> {
    /// The mutants' ids.
    ids: Vec<String>,
    /// The matrix's tests.
    tests: &'a [&'static Case],
    /// `kills[t]`: the mutants (by index) that test `t` kills.
    kills: Vec<Elements>,
    /// `killers[m]`: the tests (by index) that kill mutant `m`.
    killers: Vec<Elements>,
}

impl<'a> KillTable<'a> {
    /// The table of `matrix`, by its rule.
    fn of(matrix: &'a Matrix) -> KillTable<'a> {
        let summaries = matrix.summaries();
        let ids: Vec<String> = summaries.iter().map(|s| s.id.clone()).collect();
        let tests = &matrix.tests;
        let kills: Vec<Elements> = tests
            .iter()
            .map(|case| {
                summaries
                    .iter()
                    .enumerate()
                    .filter(|(_, summary)| summary.killers.contains(&case.name))
                    .map(|(mutant, _)| mutant)
                    .collect()
            })
            .collect();
        let killers: Vec<Elements> = (0..ids.len())
            .map(|mutant| {
                (0..tests.len())
                    .filter(|&test| kills[test].contains(&mutant))
                    .collect()
            })
            .collect();
        KillTable {
            ids,
            tests,
            kills,
            killers,
        }
    }

    /// The ids of the mutants in `set`.
    fn names(&self, set: &Elements) -> Vec<String> {
        set.iter().map(|&m| self.ids[m].clone()).collect()
    }

    /// The names of the tests in `set`.
    fn test_names(&self, set: &[usize]) -> Vec<&'static str> {
        set.iter().map(|&t| self.tests[t].name).collect()
    }

    /// The tests that kill something.
    fn active(&self) -> Vec<usize> {
        (0..self.tests.len())
            .filter(|&t| !self.kills[t].is_empty())
            .collect()
    }

    /// The mutants some test kills.
    fn killed(&self) -> Vec<usize> {
        (0..self.ids.len())
            .filter(|&m| !self.killers[m].is_empty())
            .collect()
    }

    /// The ids of the mutants no test kills.
    fn survived(&self) -> Vec<String> {
        (0..self.ids.len())
            .filter(|&m| self.killers[m].is_empty())
            .map(|m| self.ids[m].clone())
            .collect()
    }

    /// The `test_groups` of two or more tests, by name.
    fn equivalent_tests(&self, test_groups: &[Vec<usize>]) -> Vec<Vec<&'static str>> {
        test_groups
            .iter()
            .filter(|group| group.len() > 1)
            .map(|group| self.test_names(group))
            .collect()
    }

    /// The `active` tests whose kills another active test's strictly
    /// include, with those others.
    fn dominated_tests(&self, active: &[usize]) -> Vec<DominatedTest> {
        active
            .iter()
            .filter_map(|&test| {
                let by: Vec<usize> = active
                    .iter()
                    .copied()
                    .filter(|&other| is_strict_subset(&self.kills[test], &self.kills[other]))
                    .collect();
                (!by.is_empty()).then(|| DominatedTest {
                    name: self.tests[test].name,
                    kills: self.names(&self.kills[test]),
                    dominated_by: self.test_names(&by),
                })
            })
            .collect()
    }

    /// The `test_groups` that no `active` test dominates, by name.
    fn undominated_tests(
        &self,
        test_groups: &[Vec<usize>],
        active: &[usize],
    ) -> Vec<Vec<&'static str>> {
        test_groups
            .iter()
            .filter(|group| {
                !active
                    .iter()
                    .any(|&other| is_strict_subset(&self.kills[group[0]], &self.kills[other]))
            })
            .map(|group| self.test_names(group))
            .collect()
    }

    /// The `killed` mutants grouped by the tests that kill them: each
    /// group's mutants, with its killers.
    fn group_killers(&self, killed: &[usize]) -> Vec<(Vec<usize>, &Elements)> {
        groups(killed, |&m| &self.killers[m])
            .into_iter()
            .map(|group| {
                let killers = &self.killers[group[0]];
                (group, killers)
            })
            .collect()
    }

    /// The groups of `group_killers` as the analysis lists them, each
    /// marked when no other group strictly subsumes it.
    fn mutant_groups(&self, group_killers: &[(Vec<usize>, &Elements)]) -> Vec<MutantGroup> {
        let count = group_killers.len();
        group_killers
            .iter()
            .enumerate()
            .map(|(index, (group, killers))| MutantGroup {
                mutants: group.iter().map(|&m| self.ids[m].clone()).collect(),
                killers: killers.iter().map(|&t| self.tests[t].name).collect(),
                dominator: !(0..count).any(|other| group_subsumes(group_killers, other, index)),
            })
            .collect()
    }

    /// The `killed` mutants that another killed mutant strictly subsumes,
    /// with those others.
    fn subsumed_mutants(&self, killed: &[usize]) -> Vec<SubsumedMutant> {
        killed
            .iter()
            .filter_map(|&mutant| {
                let by: Vec<String> = killed
                    .iter()
                    .filter(|&&other| is_strict_subset(&self.killers[other], &self.killers[mutant]))
                    .map(|&other| self.ids[other].clone())
                    .collect();
                (!by.is_empty()).then(|| SubsumedMutant {
                    id: self.ids[mutant].clone(),
                    subsumed_by: by,
                })
            })
            .collect()
    }

    /// The minimum over the contract tests alone, and the `killed`
    /// mutants none of them kills.
    fn contract_minimum(&self, killed: &[usize]) -> ContractMinimum {
        let contract: Vec<usize> = (0..self.tests.len())
            .filter(|&t| self.tests[t].tag == Tag::Contract)
            .collect();
        let survivors = killed
            .iter()
            .filter(|&&m| !contract.iter().any(|&t| self.kills[t].contains(&m)))
            .map(|&m| self.ids[m].clone())
            .collect();
        ContractMinimum {
            contract_tests: contract.len(),
            tests: chosen(self.tests, &contract, &self.kills),
            survivors,
        }
    }
}

/// Whether group `a` of `group_killers` strictly subsumes group `b`:
/// kills(a) ⊂ kills(b).
fn group_subsumes(group_killers: &[(Vec<usize>, &Elements)], a: usize, b: usize) -> bool {
    is_strict_subset(group_killers[a].1, group_killers[b].1)
}

/// The subsumption graph over the groups of `group_killers`, reduced
/// transitively: an edge for each strict subsumption with no group
/// between.
fn subsumption(group_killers: &[(Vec<usize>, &Elements)]) -> Vec<Edge> {
    let count = group_killers.len();
    let subsumes = |a: usize, b: usize| group_subsumes(group_killers, a, b);
    (0..count)
        .flat_map(|from| (0..count).map(move |to| Edge { from, to }))
        .filter(|edge| {
            subsumes(edge.from, edge.to)
                && !(0..count)
                    .any(|between| subsumes(edge.from, between) && subsumes(between, edge.to))
        })
        .collect()
}

/// A test that kills nothing, with why, what it guards and what it runs.
fn idle_test(matrix: &Matrix, case: &'static Case) -> IdleTest {
    let reference = matrix.reference();
    // A test that judges no mutant (the Rust store's own promises, against
    // programs) counts for nothing, whether it passes or fails.
    let judged: Vec<bool> = matrix
        .mutant_runs()
        .map(|(run, _)| Matrix::judges(case, &run.variant))
        .collect();
    let why = match reference.and_then(|run| matrix.verdict(case, run)) {
        _ if !judged.is_empty() && !judged.contains(&true) => Idle::BeyondTheWorksheet,
        Some(Verdict::NotCounted(NotCounted::BeyondTheWorksheet)) => Idle::BeyondTheWorksheet,
        Some(Verdict::Fail) => Idle::FailsOnTheReference,
        _ => Idle::PassesOnEveryMutant,
    };
    IdleTest {
        name: case.name,
        step: case.step,
        tag: case.tag,
        why,
        guards: suite::description(case.name),
        operations: reference
            .and_then(|run| run.test_run(case.name))
            .map(|run| run.operations.clone())
            .unwrap_or_default(),
        runs_the_change_of: matrix
            .mutant_runs()
            .filter(|(run, _)| matrix.covering(run).contains(&case.name))
            .map(|(_, mutant)| mutant.spec.id.clone())
            .collect(),
    }
}

/// A minimum set of the tests `candidates` (indices) killing every mutant
/// they can kill, in suite order, its forced members marked.
fn chosen(tests: &[&'static Case], candidates: &[usize], kills: &[Elements]) -> Vec<ChosenTest> {
    let sets: Vec<Elements> = candidates.iter().map(|&t| kills[t].clone()).collect();
    let cover = cover::minimum_cover(&sets);
    cover
        .chosen
        .iter()
        .map(|&index| ChosenTest {
            name: tests[candidates[index]].name,
            forced: cover.forced.contains(&index),
        })
        .collect()
}

/// `items` grouped by equal keys, groups in the order of their first item.
fn groups<'a, T: Copy>(items: &[T], key: impl Fn(&T) -> &'a Elements) -> Vec<Vec<T>> {
    let mut groups: Vec<Vec<T>> = Vec::new();
    for item in items {
        match groups.iter_mut().find(|group| key(&group[0]) == key(item)) {
            Some(group) => group.push(*item),
            None => groups.push(vec![*item]),
        }
    }
    groups
}

/// `a ⊂ b`.
fn is_strict_subset(a: &Elements, b: &Elements) -> bool {
    a.len() < b.len() && a.is_subset(b)
}

/// Kill matrices made by hand, for the analysis's tests and its renderings.
#[cfg(test)]
pub(crate) mod sample {
    use crate::matrix::sample::{failed, run};
    use crate::matrix::Matrix;
    use crate::outcome::Outcome;
    use crate::runner::VariantRun;
    use crate::suite;
    use crate::variant::Variant;

    /// The first `tests.len()` tests of step 4 and the mutants `ids`,
    /// where `kills[m]` lists the tests (by index) that kill mutant `m`;
    /// the reference passes every test, and every test calls `claim`.
    pub(crate) fn matrix(tests: usize, ids: &[&str], kills: &[&[usize]]) -> Matrix {
        let cases: Vec<_> = suite::CASES
            .iter()
            .filter(|case| case.step >= 4)
            .take(tests)
            .collect();
        let column = |variant: Variant, killed: &[usize]| VariantRun {
            variant,
            runs: cases
                .iter()
                .enumerate()
                .map(|(index, case)| {
                    let outcome = if killed.contains(&index) {
                        failed()
                    } else {
                        Outcome::Pass
                    };
                    run(case.name, outcome).with_operations(vec!["claim".into()])
                })
                .collect(),
        };
        let mut runs = vec![column(Variant::reference(), &[])];
        for (id, killed) in ids.iter().zip(kills) {
            runs.push(column(
                Variant::find(id).expect("a compiled mutant"),
                killed,
            ));
        }
        Matrix { tests: cases, runs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Outcome;
    use crate::variant::Variant;

    /// Tests t0..t5 against mutants 04, h04a, h04b, h04c, h04d (killed by
    /// {t0,t1}, {t0,t1,t2}, {t0,t1}, {t3}, nothing); t4 and t5 kill nothing.
    fn analysis() -> (Analysis, Vec<&'static str>) {
        let matrix = sample::matrix(
            6,
            &["04", "h04a", "h04b", "h04c", "h04d"],
            &[&[0, 1], &[0, 1, 2], &[0, 1], &[3], &[]],
        );
        let names = matrix.tests.iter().map(|case| case.name).collect();
        (Analysis::of(&matrix), names)
    }

    #[test]
    fn idle_tests_say_what_they_guard_and_what_they_run() {
        let (analysis, t) = analysis();
        let idle: Vec<&str> = analysis.idle_tests.iter().map(|test| test.name).collect();
        assert_eq!(idle, [t[4], t[5]]);
        let first = &analysis.idle_tests[0];
        assert_eq!(first.why, Idle::PassesOnEveryMutant);
        assert_eq!(first.guards, suite::description(t[4]));
        assert!(first.guards.is_some());
        assert_eq!(first.operations, ["claim"]);
        assert_eq!(
            first.runs_the_change_of,
            ["04", "h04a", "h04b", "h04c", "h04d"]
        );
    }

    #[test]
    fn equivalent_and_dominated_tests_are_found() {
        let (analysis, t) = analysis();
        assert_eq!(analysis.equivalent_tests, [vec![t[0], t[1]]]);
        let dominated: Vec<(&str, &[String])> = analysis
            .dominated_tests
            .iter()
            .map(|test| (test.name, test.kills.as_slice()))
            .collect();
        assert_eq!(dominated, [(t[2], &["h04a".to_string()][..])]);
        assert_eq!(analysis.dominated_tests[0].dominated_by, [t[0], t[1]]);
        assert_eq!(analysis.undominated_tests, [vec![t[0], t[1]], vec![t[3]]]);
    }

    #[test]
    fn mutants_are_grouped_subsumed_and_survivors_kept_apart() {
        let (analysis, t) = analysis();
        assert_eq!(analysis.survived, ["h04d"]);
        let labels: Vec<String> = analysis
            .mutant_groups
            .iter()
            .map(MutantGroup::label)
            .collect();
        assert_eq!(labels, ["04=h04b", "h04a", "h04c"]);
        assert_eq!(analysis.indistinguishable().count(), 1);
        assert_eq!(analysis.mutant_groups[0].killers, [t[0], t[1]]);
        // 04 is killed by a strict subset of h04a's killers: it subsumes h04a.
        assert_eq!(analysis.subsumption, [Edge { from: 0, to: 1 }]);
        let subsumed: Vec<(&str, &[String])> = analysis
            .subsumed_mutants
            .iter()
            .map(|m| (m.id.as_str(), m.subsumed_by.as_slice()))
            .collect();
        assert_eq!(
            subsumed,
            [("h04a", &["04".to_string(), "h04b".to_string()][..])]
        );
        assert_eq!(analysis.dominators(), ["04", "h04c"]);
    }

    /// The graph keeps only the edges no third group stands between.
    #[test]
    fn the_subsumption_graph_is_reduced_transitively() {
        let matrix = sample::matrix(4, &["04", "h04a", "h04b"], &[&[0], &[0, 1], &[0, 1, 2]]);
        let analysis = Analysis::of(&matrix);
        assert_eq!(
            analysis.subsumption,
            [Edge { from: 0, to: 1 }, Edge { from: 1, to: 2 }]
        );
        assert_eq!(analysis.subsumed_mutants[1].subsumed_by, ["04", "h04a"]);
        assert_eq!(analysis.dominators(), ["04"]);
    }

    /// The minimum marks the only killer of a mutant as forced; the
    /// contract minimum names what the contract tests cannot kill.
    #[test]
    fn the_minimum_marks_forced_tests_and_the_contract_minimum_its_survivors() {
        let (analysis, t) = analysis();
        let minimum: Vec<(&str, bool)> = analysis
            .minimum_tests
            .iter()
            .map(|test| (test.name, test.forced))
            .collect();
        assert_eq!(minimum, [(t[0], false), (t[3], true)]);
        assert!(analysis.contract_minimum.kills_every_mutant());
        let reference_tagged = suite::CASES
            .iter()
            .position(|case| case.step == 4 && case.tag == Tag::Reference)
            .unwrap()
            - suite::CASES.iter().position(|case| case.step == 4).unwrap();
        let matrix = sample::matrix(
            reference_tagged + 1,
            &["04", "h04a"],
            &[&[0], &[reference_tagged]],
        );
        let only_reference = Analysis::of(&matrix);
        assert!(!only_reference.contract_minimum.kills_every_mutant());
        assert_eq!(only_reference.contract_minimum.survivors, ["h04a"]);
        assert_eq!(only_reference.contract_minimum.tests.len(), 1);
        assert_eq!(
            only_reference.contract_minimum.contract_tests,
            reference_tagged
        );
    }

    /// On a matrix where greedy would take the widest test first and need
    /// three, the minimum is the two tests that split the mutants between
    /// them, neither forced.
    #[test]
    fn the_minimum_test_set_is_smaller_than_greedy_s_on_a_matrix() {
        let tests: [&[usize]; 5] = [
            &[0, 1, 2, 3, 4, 5, 6],
            &[7, 8, 9, 10, 11, 12, 13],
            &[0, 1, 2, 3, 7, 8, 9, 10],
            &[4, 5, 11, 12],
            &[6, 13],
        ];
        let ids: Vec<&str> = crate::variant::MUTANTS
            .iter()
            .map(|mutant| mutant.id)
            .take(14)
            .collect();
        let kills: Vec<Vec<usize>> = (0..14)
            .map(|m| (0..5).filter(|&t| tests[t].contains(&m)).collect())
            .collect();
        let kills: Vec<&[usize]> = kills.iter().map(Vec::as_slice).collect();
        let matrix = sample::matrix(5, &ids, &kills);
        let analysis = Analysis::of(&matrix);
        let minimum: Vec<(&str, bool)> = analysis
            .minimum_tests
            .iter()
            .map(|test| (test.name, test.forced))
            .collect();
        assert_eq!(
            minimum,
            [(matrix.tests[0].name, false), (matrix.tests[1].name, false)]
        );
    }

    /// A test of the Rust store's own promises judges no program: against
    /// a program and its mutant it kills nothing, even where it passes.
    #[test]
    fn a_test_beyond_the_worksheet_is_idle_for_that_reason_against_programs() {
        use crate::external::ImplCommand;
        let mut matrix = sample::matrix(1, &["04"], &[&[0]]);
        let promise = suite::CASES
            .iter()
            .find(|case| case.tag == Tag::Reference)
            .unwrap();
        matrix.tests.push(promise);
        for run in &mut matrix.runs {
            run.runs
                .push(crate::matrix::sample::run(promise.name, Outcome::Pass));
            run.variant = Variant {
                mutant: run.variant.mutant.clone(),
                ..Variant::program(&run.variant.id, ImplCommand::parse("python3 s.py").unwrap())
            };
        }
        matrix.runs[1].runs[1].outcome = crate::matrix::sample::failed();
        let analysis = Analysis::of(&matrix);
        assert_eq!(analysis.idle_tests.len(), 1);
        assert_eq!(analysis.idle_tests[0].name, promise.name);
        assert_eq!(analysis.idle_tests[0].why, Idle::BeyondTheWorksheet);
    }

    /// With no mutant to judge it by, a promise of the Rust store's own
    /// that a program fails is still beyond the worksheet, not a failure
    /// of the reference nor a test that passes on every mutant.
    #[test]
    fn a_program_failing_a_promise_beyond_the_worksheet_is_idle_for_that_reason_alone() {
        use crate::external::ImplCommand;
        let mut matrix = sample::matrix(1, &[], &[]);
        let promise = suite::CASES
            .iter()
            .find(|case| case.tag == Tag::Reference)
            .unwrap();
        matrix.tests.push(promise);
        let reference = &mut matrix.runs[0];
        reference.runs.push(crate::matrix::sample::run(
            promise.name,
            crate::matrix::sample::failed(),
        ));
        reference.variant =
            Variant::program("reference", ImplCommand::parse("python3 s.py").unwrap());
        let analysis = Analysis::of(&matrix);
        let idle: Vec<(&str, Idle)> = analysis
            .idle_tests
            .iter()
            .map(|test| (test.name, test.why))
            .collect();
        assert!(
            idle.contains(&(promise.name, Idle::BeyondTheWorksheet)),
            "{idle:?}"
        );
    }

    /// A test the reference fails kills nothing, and says why.
    #[test]
    fn a_test_the_reference_fails_is_idle_for_that_reason() {
        let mut matrix = sample::matrix(2, &["04"], &[&[0, 1]]);
        matrix.runs[0].runs[1].outcome = crate::matrix::sample::failed();
        let analysis = Analysis::of(&matrix);
        assert_eq!(analysis.idle_tests.len(), 1);
        assert_eq!(analysis.idle_tests[0].why, Idle::FailsOnTheReference);
    }
}

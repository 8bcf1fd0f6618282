//! The smallest set of tests that kills every mutant: an exact minimum set
//! cover.
//!
//! Set cover is NP-hard, but a kill matrix is small and most of it is
//! decided before any search: a test that is the only killer of some
//! mutant must be chosen (it is *forced*), a test whose kills (among those
//! still to cover) are a subset of another's can be left out, and what
//! remains is searched by branch and bound, branching on the mutant with
//! the fewest killers left and pruning with a lower bound. A greedy answer
//! is only a starting bound: greedy is not always optimal.

use std::collections::BTreeSet;

/// A set of elements (mutants), by index.
pub type Elements = BTreeSet<usize>;

/// A minimum cover: the chosen sets, by index, in ascending order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cover {
    /// The indices of the chosen sets, ascending.
    pub chosen: Vec<usize>,
    /// Those of `chosen` that every cover must hold: the only set that
    /// contains some element.
    pub forced: Vec<usize>,
}

/// The forced sets of `sets`: each the only one that contains some element
/// of their union, in ascending order.
pub fn forced(sets: &[Elements]) -> Vec<usize> {
    let universe: Elements = sets.iter().flatten().copied().collect();
    let mut forced: Vec<usize> = universe
        .iter()
        .filter_map(|element| {
            let mut holders = sets
                .iter()
                .enumerate()
                .filter(|(_, set)| set.contains(element));
            match (holders.next(), holders.next()) {
                (Some((index, _)), None) => Some(index),
                _ => None,
            }
        })
        .collect();
    forced.sort_unstable();
    forced.dedup();
    forced
}

/// A smallest collection of `sets` whose union is the union of all of
/// them. Among covers of the same size, the search prefers sets that cover
/// more, then lower indices, so the answer is the same run after run.
pub fn minimum_cover(sets: &[Elements]) -> Cover {
    let forced = forced(sets);
    let mut uncovered: Elements = sets.iter().flatten().copied().collect();
    for &index in &forced {
        uncovered.retain(|element| !sets[index].contains(element));
    }
    let mut best = greedy(sets, &uncovered);
    let mut chosen = Vec::new();
    search(sets, &uncovered, &mut chosen, &mut best);
    let mut all: Vec<usize> = forced.iter().copied().chain(best).collect();
    all.sort_unstable();
    Cover {
        chosen: all,
        forced,
    }
}

/// A cover of `uncovered` taking, each time, the set that covers the most
/// of what is left (of two that cover as much, the lower index): a first
/// bound for the search, not always the minimum. An element no set holds
/// stays uncovered.
pub fn greedy(sets: &[Elements], uncovered: &Elements) -> Vec<usize> {
    let mut left = uncovered.clone();
    let mut chosen = Vec::new();
    // Each pick covers something new, so no set is picked twice: at most
    // as many picks as sets.
    for _ in 0..sets.len() {
        let Some((index, gain)) = sets
            .iter()
            .enumerate()
            .map(|(index, set)| (index, set.intersection(&left).count()))
            .max_by_key(|&(index, gain)| (gain, std::cmp::Reverse(index)))
        else {
            break;
        };
        if gain == 0 {
            break;
        }
        left.retain(|element| !sets[index].contains(element));
        chosen.push(index);
    }
    chosen
}

/// Branch and bound: extends `chosen` until it covers `uncovered`, and
/// keeps in `best` the smallest cover found.
fn search(sets: &[Elements], uncovered: &Elements, chosen: &mut Vec<usize>, best: &mut Vec<usize>) {
    if uncovered.is_empty() {
        // Smaller than `best`, always: the bound let this branch through
        // only because it could end smaller. (A sibling that ended as
        // small went first: of the sets that cover all that is left, one
        // stays a candidate, and it sorts first.)
        best.clone_from(chosen);
        return;
    }
    let candidates = undominated(sets, uncovered);
    let widest = candidates
        .iter()
        .map(|(_, gain)| gain.len())
        .max()
        .unwrap_or(0);
    // Every further set covers at most `widest` of what is left. What is
    // left came from the sets' union, so some set holds part of it: widest
    // is 1 at least.
    if chosen.len() + uncovered.len().div_ceil(widest) >= best.len() {
        return;
    }
    // Some killer of the hardest mutant must be in any cover: try each.
    let hardest = uncovered
        .iter()
        .min_by_key(|element| {
            candidates
                .iter()
                .filter(|(_, gain)| gain.contains(element))
                .count()
        })
        .copied()
        .expect("something is uncovered");
    let mut branches: Vec<&(usize, Elements)> = candidates
        .iter()
        .filter(|(_, gain)| gain.contains(&hardest))
        .collect();
    branches.sort_by_key(|(index, gain)| (std::cmp::Reverse(gain.len()), *index));
    for (index, gain) in branches {
        let left: Elements = uncovered.difference(gain).copied().collect();
        chosen.push(*index);
        search(sets, &left, chosen, best);
        chosen.pop();
    }
}

/// The sets that cover some of `uncovered`, each with what it covers of
/// it, less those whose share is within another's (of two with the same
/// share, the lower index stays).
fn undominated(sets: &[Elements], uncovered: &Elements) -> Vec<(usize, Elements)> {
    let gains: Vec<(usize, Elements)> = sets
        .iter()
        .enumerate()
        .map(|(index, set)| (index, set.intersection(uncovered).copied().collect()))
        .filter(|(_, gain): &(usize, Elements)| !gain.is_empty())
        .collect();
    gains
        .iter()
        .filter(|(index, gain)| {
            // (No set is its own: its share is not smaller than itself,
            // nor its index lower.)
            !gains.iter().any(|(other, wider)| {
                gain.is_subset(wider) && (gain.len() < wider.len() || other < index)
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets(lists: &[&[usize]]) -> Vec<Elements> {
        lists
            .iter()
            .map(|list| list.iter().copied().collect())
            .collect()
    }

    fn covers(sets: &[Elements], chosen: &[usize]) -> bool {
        let all: Elements = sets.iter().flatten().copied().collect();
        let got: Elements = chosen.iter().flat_map(|&i| &sets[i]).copied().collect();
        all == got
    }

    /// Greedy breaks a tie by the lower index, picks no set twice, and
    /// leaves an element no set holds uncovered, rather than search for
    /// ever.
    #[test]
    fn greedy_breaks_ties_by_index_and_stops_at_what_no_set_holds() {
        let twins = sets(&[&[0, 1], &[0, 1], &[2]]);
        assert_eq!(greedy(&twins, &[0, 1, 2].into()), [0, 2]);
        assert_eq!(greedy(&twins, &[2].into()), [2]);
        assert_eq!(greedy(&twins, &[0, 7].into()), [0]);
        assert_eq!(greedy(&twins, &Elements::new()), Vec::<usize>::new());
    }

    /// The classic case where greedy takes the big middle set first and
    /// needs three, while two suffice.
    #[test]
    fn the_minimum_beats_greedy_where_greedy_is_not_optimal() {
        let sets = sets(&[
            &[0, 1, 2, 3, 4, 5, 6],
            &[7, 8, 9, 10, 11, 12, 13],
            &[0, 1, 2, 3, 7, 8, 9, 10],
            &[4, 5, 11, 12],
            &[6, 13],
        ]);
        let greedy = greedy(&sets, &sets.iter().flatten().copied().collect());
        assert_eq!(greedy, [2, 3, 4], "greedy takes the widest first");
        let cover = minimum_cover(&sets);
        assert_eq!(cover.chosen, [0, 1]);
        assert!(covers(&sets, &cover.chosen));
        assert!(cover.forced.is_empty());
    }

    /// A set that alone holds some element is in every cover, and marked.
    #[test]
    fn the_only_holder_of_an_element_is_forced() {
        let sets = sets(&[&[0, 1], &[1, 2], &[2, 3], &[3], &[4]]);
        assert_eq!(forced(&sets), [0, 4]);
        let cover = minimum_cover(&sets);
        assert_eq!(cover.forced, [0, 4]);
        assert_eq!(cover.chosen, [0, 2, 4]);
        assert!(covers(&sets, &cover.chosen));
    }

    /// Every cover the search returns is as small as the smallest found by
    /// trying every subset, on many random instances: small sets over
    /// many elements too, whose covers are deep enough for the bound to
    /// prune (and prune wrongly, were it wrong).
    #[test]
    fn the_search_finds_the_minimum_that_trying_every_subset_finds() {
        let mut rng = fastrand::Rng::with_seed(7);
        for round in 0..1500 {
            let count = rng.usize(1..13);
            let (elements, sparseness) = if round % 2 == 0 { (8, 3) } else { (14, 5) };
            let sets: Vec<Elements> = (0..count)
                .map(|_| {
                    (0..elements)
                        .filter(|_| rng.u8(0..sparseness) == 0)
                        .collect()
                })
                .collect();
            let masks: Vec<u32> = sets
                .iter()
                .map(|set| set.iter().map(|element| 1u32 << element).sum())
                .collect();
            let all = masks.iter().fold(0, |all, mask| all | mask);
            let smallest = (0u32..1 << count)
                .filter(|subset| {
                    let union = (0..count)
                        .filter(|i| subset & (1 << i) != 0)
                        .fold(0, |union, i| union | masks[i]);
                    union == all
                })
                .map(u32::count_ones)
                .min()
                .unwrap();
            let cover = minimum_cover(&sets);
            assert!(covers(&sets, &cover.chosen), "{sets:?}: {cover:?}");
            assert_eq!(cover.chosen.len(), smallest as usize, "{sets:?}: {cover:?}");
            assert!(cover.forced.iter().all(|i| cover.chosen.contains(i)));
        }
    }

    /// Where five sets are needed beyond greedy's six, the bound of a
    /// branch two sets deep is what the sets chosen add to what is left:
    /// a bound any larger prunes the branch that holds the minimum.
    #[test]
    fn a_deep_search_keeps_the_branch_that_holds_the_minimum() {
        let sets = sets(&[
            &[4, 5, 14, 16, 19],
            &[9, 10, 13, 15, 18],
            &[6, 12],
            &[0, 1, 2, 5, 8, 9, 11, 13, 16, 18],
            &[1, 6, 9, 13, 14, 18],
            &[0, 2, 4, 5, 8, 10, 16, 17],
            &[2, 10],
            &[1, 4, 9, 10, 11, 14],
            &[1, 2, 8, 12, 14, 19],
            &[0, 1, 4, 7, 8, 13, 14, 17],
            &[1, 3, 12, 15, 16],
            &[0, 3, 4, 8, 11, 13, 15, 16, 18],
            &[7, 11, 16],
        ]);
        assert_eq!(minimum_cover(&sets).chosen, [4, 5, 8, 9, 11]);
    }

    /// A set whose share of what is left is within a wider one's goes, as
    /// does the later of two with the same share; a set with no share is
    /// no candidate.
    #[test]
    fn a_share_within_another_s_is_no_candidate() {
        let sets = sets(&[&[0, 1], &[0, 1, 2], &[2, 3, 9], &[2, 3], &[5]]);
        let left: Elements = [0, 1, 2, 3].into();
        let share = |elements: &[usize]| -> Elements { elements.iter().copied().collect() };
        assert_eq!(
            undominated(&sets, &left),
            [(1, share(&[0, 1, 2])), (2, share(&[2, 3]))]
        );
    }

    #[test]
    fn nothing_to_cover_needs_no_set() {
        assert_eq!(
            minimum_cover(&sets(&[&[], &[]])),
            Cover {
                chosen: vec![],
                forced: vec![]
            }
        );
    }
}

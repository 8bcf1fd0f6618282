//! The analysis as one self-contained HTML page: the subsumption graph
//! drawn as inline SVG, then a table per finding.
//!
//! The graph is laid out by hand, as it stays small (one node per group of
//! indistinguishable mutants): each node sits in the layer of its longest
//! path from the top, where the dominators are, and within a layer nodes
//! follow the mean place of their parents, which keeps edges short. A
//! layer wider than a window wraps onto more lines: the drawing keeps its
//! size (labels of 12 px), and a narrower window scrolls it in its box.

use super::{headline, idle_reason, reach};
use crate::analysis::{Analysis, ChosenTest};
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use std::fmt::Write as _;

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d1d1f; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.summary { color: #444; }
table { border-collapse: collapse; }
th, td { border-bottom: 1px solid #eee; padding: 3px 10px; text-align: left; vertical-align: top; overflow-wrap: anywhere; }
div.graph { overflow: auto; max-width: 100%; border: 1px solid #eee; }
svg.subsumption { display: block; }
svg .node rect { fill: #fafafa; stroke: #888; }
svg .node.dominator rect { fill: #ffb74d; stroke: #4e2a00; stroke-width: 2; }
svg .node text { font: 12px ui-monospace, Menlo, Consolas, monospace; text-anchor: middle; dominant-baseline: central; }
svg .edge { stroke: #999; fill: none; }
.forced { font-weight: bold; }
.key span { display: inline-block; padding: 0 6px; border: 1px solid #888; border-radius: 3px; margin-right: 6px; }
.key span.dominator { background: #ffb74d; border-color: #4e2a00; }
"#;

/// Node height, gaps and per-character width of the drawing, in pixels.
const NODE_HEIGHT: usize = 24;
const LAYER_GAP: usize = 56;
const NODE_GAP: usize = 14;
const CHAR_WIDTH: usize = 8;
const MARGIN: usize = 10;

/// The widest a line of nodes is drawn: a layer wider than this wraps
/// onto more lines, so that the drawing fits a 1,400 px window at its own
/// size (labels of 12 px), never shrunk; a narrower window scrolls it.
const MOST_WIDTH: usize = 1300;

/// The gap between two lines of one layer.
const LINE_GAP: usize = 12;

/// Where one group's node is drawn.
#[derive(Debug, Clone, Copy)]
struct Place {
    layer: usize,
    x: usize,
    y: usize,
    width: usize,
}

/// Each group's layer: the length of its longest path from a dominator.
fn layers(analysis: &Analysis) -> Vec<usize> {
    let mut layer = vec![0; analysis.mutant_groups.len()];
    // A longest path has at most one edge per group: relax that often.
    for _ in 0..analysis.mutant_groups.len() {
        let mut changed = false;
        for edge in &analysis.subsumption {
            if layer[edge.to] < layer[edge.from] + 1 {
                layer[edge.to] = layer[edge.from] + 1;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    layer
}

/// Every group's place, and the drawing's width and height: a layer per
/// row, top-down, each ordered by its parents' mean centre and wrapped
/// into lines of at most [`MOST_WIDTH`], each line centred.
fn layout(analysis: &Analysis) -> (Vec<Place>, usize, usize) {
    let layer = layers(analysis);
    let depth = layer.iter().max().map_or(0, |deepest| deepest + 1);
    let mut places: Vec<Place> = analysis
        .mutant_groups
        .iter()
        .zip(&layer)
        .map(|(group, &layer)| Place {
            layer,
            x: 0,
            y: 0,
            width: group.label().chars().count() * CHAR_WIDTH + 2 * MARGIN,
        })
        .collect();
    let mut y = MARGIN;
    for row in 0..depth {
        // Parents are placed already: order by their mean centre.
        let centre = |g: usize, places: &[Place]| -> usize {
            let parents: Vec<usize> = analysis
                .subsumption
                .iter()
                .filter(|edge| edge.to == g)
                .map(|edge| places[edge.from].x + places[edge.from].width / 2)
                .collect();
            if parents.is_empty() {
                g
            } else {
                parents.iter().sum::<usize>() / parents.len()
            }
        };
        let mut members: Vec<(usize, usize)> = (0..places.len())
            .filter(|&g| places[g].layer == row)
            .map(|g| (centre(g, &places), g))
            .collect();
        members.sort_unstable();
        let mut lines: Vec<Vec<usize>> = vec![Vec::new()];
        let mut line_width = 0;
        for (_, g) in members {
            let width = places[g].width;
            let line = lines.last_mut().expect("a line");
            if !line.is_empty() && line_width + NODE_GAP + width > MOST_WIDTH {
                lines.push(vec![g]);
                line_width = width;
            } else {
                line_width += if line.is_empty() {
                    width
                } else {
                    NODE_GAP + width
                };
                line.push(g);
            }
        }
        for line in lines {
            let width: usize = line
                .iter()
                .map(|&g| places[g].width + NODE_GAP)
                .sum::<usize>()
                - NODE_GAP;
            let mut x = MARGIN + MOST_WIDTH.saturating_sub(width) / 2;
            for g in line {
                places[g].x = x;
                places[g].y = y;
                x += places[g].width + NODE_GAP;
            }
            y += NODE_HEIGHT + LINE_GAP;
        }
        y += LAYER_GAP - LINE_GAP;
    }
    // Lines were centred in the widest a line may be: move the drawing to
    // its left margin.
    let left = places.iter().map(|place| place.x).min().unwrap_or(MARGIN);
    for place in &mut places {
        place.x = place.x - left + MARGIN;
    }
    let width = places
        .iter()
        .map(|place| place.x + place.width + MARGIN)
        .max()
        .unwrap_or(2 * MARGIN);
    let height = (y + MARGIN).saturating_sub(LAYER_GAP).max(2 * MARGIN);
    (places, width, height)
}

/// The subsumption graph as an inline SVG element: a node per group of
/// indistinguishable mutants (class `node`, and `dominator` for the
/// dominator set), an edge from each subsuming group down to the groups it
/// subsumes directly.
pub fn graph(analysis: &Analysis) -> String {
    let (places, width, height) = layout(analysis);
    let top = |place: &Place| place.y;
    let mut out = format!(
        "<svg class=\"subsumption\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"mutant subsumption graph\">\n<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#999\"/></marker></defs>\n"
    );
    for edge in &analysis.subsumption {
        let (from, to) = (&places[edge.from], &places[edge.to]);
        writeln!(
            out,
            "<line class=\"edge\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" marker-end=\"url(#arrow)\"/>",
            from.x + from.width / 2,
            top(from) + NODE_HEIGHT,
            to.x + to.width / 2,
            top(to)
        )
        .unwrap();
    }
    for (group, place) in analysis.mutant_groups.iter().zip(&places) {
        let class = if group.dominator {
            "node dominator"
        } else {
            "node"
        };
        writeln!(
            out,
            "<g class=\"{class}\" data-mutants=\"{}\"><title>{}: killed by {}</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{NODE_HEIGHT}\" rx=\"4\"/><text x=\"{}\" y=\"{}\">{}</text></g>",
            attr(&group.mutants.join(" ")),
            text(&group.label()),
            text(&group.killers.join(", ")),
            place.x,
            top(place),
            place.width,
            place.x + place.width / 2,
            top(place) + NODE_HEIGHT / 2,
            text(&group.label()),
        )
        .unwrap();
    }
    out.push_str("</svg>\n");
    out
}

/// The whole page: a complete HTML document with no external resource.
pub fn page(analysis: &Analysis) -> String {
    let mut out = heading(analysis);
    section(&mut out, "subsumption", headline::subsumed(analysis));
    subsumption(&mut out, analysis);
    section(&mut out, "idle", headline::idle(analysis));
    idle_tests(&mut out, analysis);
    section(&mut out, "equivalent", headline::equivalent(analysis));
    test_groups(&mut out, &analysis.equivalent_tests);
    section(&mut out, "dominated", headline::dominated(analysis));
    dominated_tests(&mut out, analysis);
    section(&mut out, "undominated", headline::undominated(analysis));
    test_groups(&mut out, &analysis.undominated_tests);
    section(
        &mut out,
        "indistinguishable",
        headline::indistinguishable(analysis),
    );
    indistinguishable(&mut out, analysis);
    section(&mut out, "minimum", headline::minimum(analysis));
    chosen(&mut out, &analysis.minimum_tests, Some(analysis));
    section(&mut out, "contract", headline::contract(analysis));
    chosen(&mut out, &analysis.contract_minimum.tests, None);
    crate::report::html_page::shell(
        "lease-lab: what the kill matrix means",
        STYLE,
        &out,
        "lab analyze --format html",
    )
}

/// Test names, each as code, comma-separated.
fn code(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| format!("<code>{}</code>", text(name)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The page's title and its summary: how many tests, mutants, survivors.
fn heading(analysis: &Analysis) -> String {
    format!(
        "<h1>lease-lab: what the kill matrix means</h1>\n<p class=\"summary\">{} tests against {} mutants; {} survived{}.</p>\n",
        analysis.tests,
        analysis.mutants,
        analysis.survived.len(),
        if analysis.survived.is_empty() {
            String::new()
        } else {
            format!(" ({}), left out of subsumption", text(&analysis.survived.join(", ")))
        }
    )
}

/// Opens section `id` in `out`, with `title` as its heading.
fn section(out: &mut String, id: &str, title: String) {
    writeln!(out, "<section id=\"{id}\">\n<h2>{}</h2>", text(&title)).unwrap();
}

/// The subsumption section's body, closing it: the key, the graph, and a
/// table of the subsumed mutants.
fn subsumption(out: &mut String, analysis: &Analysis) {
    writeln!(
        out,
        "<p class=\"key\"><span class=\"dominator\">dominator</span>{} <span>mutant</span>an arrow from a to b: every test that kills a kills b; ids joined by = are indistinguishable.</p>",
        text(&headline::dominators(analysis))
    )
    .unwrap();
    writeln!(out, "<div class=\"graph\">\n{}</div>", graph(analysis)).unwrap();
    if closed_if_empty(out, analysis.subsumed_mutants.is_empty()) {
        return;
    }
    out.push_str("<table>\n<tr><th>mutant</th><th>subsumed by</th></tr>\n");
    for mutant in &analysis.subsumed_mutants {
        writeln!(
            out,
            "<tr><td>{}</td><td>{}</td></tr>",
            text(&mutant.id),
            text(&mutant.subsumed_by.join(", "))
        )
        .unwrap();
    }
    out.push_str("</table>\n</section>\n");
}

/// Closes a section with "None." when its table or list would be
/// `empty`, and says whether it did: a head over no rows reads as a page
/// cut short.
fn closed_if_empty(out: &mut String, empty: bool) -> bool {
    if empty {
        out.push_str("<p>None.</p>\n</section>\n");
    }
    empty
}

/// The idle tests' section body, closing it: a table row per test.
fn idle_tests(out: &mut String, analysis: &Analysis) {
    if closed_if_empty(out, analysis.idle_tests.is_empty()) {
        return;
    }
    out.push_str("<table>\n<tr><th>test</th><th>step</th><th>tag</th><th>guards</th><th>calls</th><th>could break on</th></tr>\n");
    for test in &analysis.idle_tests {
        writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}; {}</td></tr>",
            text(test.name),
            test.step,
            test.tag.name(),
            text(test.guards.unwrap_or("")),
            text(&test.operations.join(", ")),
            text(&reach(test)),
            text(idle_reason(test)),
        )
        .unwrap();
    }
    out.push_str("</table>\n</section>\n");
}

/// A section body of groups of tests, closing it: a list item per group.
fn test_groups(out: &mut String, groups: &[Vec<&'static str>]) {
    if closed_if_empty(out, groups.is_empty()) {
        return;
    }
    out.push_str("<ul>\n");
    for group in groups {
        writeln!(out, "<li>{}</li>", code(group)).unwrap();
    }
    out.push_str("</ul>\n</section>\n");
}

/// The dominated tests' section body, closing it: a table row per test.
fn dominated_tests(out: &mut String, analysis: &Analysis) {
    if closed_if_empty(out, analysis.dominated_tests.is_empty()) {
        return;
    }
    out.push_str("<table>\n<tr><th>test</th><th>kills</th><th>dominated by</th></tr>\n");
    for test in &analysis.dominated_tests {
        writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
            text(test.name),
            text(&test.kills.join(", ")),
            code(&test.dominated_by)
        )
        .unwrap();
    }
    out.push_str("</table>\n</section>\n");
}

/// The indistinguishable mutants' section body, closing it: a list item
/// per group, with its killers.
fn indistinguishable(out: &mut String, analysis: &Analysis) {
    if closed_if_empty(out, analysis.indistinguishable().next().is_none()) {
        return;
    }
    out.push_str("<ul>\n");
    for group in analysis.indistinguishable() {
        writeln!(
            out,
            "<li>{}: killed by {}</li>",
            text(&group.label()),
            code(&group.killers)
        )
        .unwrap();
    }
    out.push_str("</ul>\n</section>\n");
}

/// A section body of chosen tests, closing it: a numbered list, the
/// forced ones marked, a dominated one (in the smallest set of `among`'s
/// tests) with why it is there.
fn chosen(out: &mut String, tests: &[ChosenTest], among: Option<&Analysis>) {
    out.push_str("<ol>\n");
    for test in tests {
        let why = among
            .and_then(|analysis| super::stand_in(analysis, test.name))
            .map_or(String::new(), |why| format!(": {}", text(&why)));
        if test.forced {
            writeln!(
                out,
                "<li class=\"forced\"><code>{}</code> (forced){why}</li>",
                text(test.name)
            )
            .unwrap();
        } else {
            writeln!(out, "<li><code>{}</code>{why}</li>", text(test.name)).unwrap();
        }
    }
    out.push_str("</ol>\n</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sample;

    /// A chain 04 → h04a → h04b and a lone h04c: three layers, the two
    /// dominators at the top, one edge per direct subsumption.
    #[test]
    fn the_graph_puts_each_group_in_the_layer_of_its_longest_path() {
        let analysis = Analysis::of(&sample::matrix(
            5,
            &["04", "h04a", "h04b", "h04c"],
            &[&[0], &[0, 1], &[0, 1, 2], &[3]],
        ));
        assert_eq!(layers(&analysis), [0, 1, 2, 0]);
        let (places, width, height) = layout(&analysis);
        assert_eq!(height, 3 * NODE_HEIGHT + 2 * LAYER_GAP + 2 * MARGIN);
        assert_eq!(
            places.iter().map(|p| p.y).collect::<Vec<_>>(),
            [
                MARGIN,
                MARGIN + NODE_HEIGHT + LAYER_GAP,
                MARGIN + 2 * (NODE_HEIGHT + LAYER_GAP),
                MARGIN
            ]
        );
        assert!(places.iter().all(|p| p.x + p.width <= width));
        assert_eq!(places.iter().map(|p| p.x).min(), Some(MARGIN));
        assert!(
            places[3].x > places[0].x,
            "two nodes of a layer side by side"
        );
        let svg = graph(&analysis);
        assert_eq!(svg.matches("class=\"node dominator\"").count(), 2, "{svg}");
        assert_eq!(svg.matches("<line class=\"edge\"").count(), 2, "{svg}");
        let page = page(&analysis);
        assert!(page.contains("<li class=\"forced\">"), "{page}");
        assert!(page.ends_with("</html>\n"));
    }

    /// Forty lone mutants, one layer far wider than a window: it wraps into
    /// lines no wider than [`MOST_WIDTH`], each under the one before, and
    /// every node keeps its own size, overlapping none.
    #[test]
    fn a_wide_layer_wraps_into_lines_that_fit() {
        let ids: Vec<String> = crate::variant::Variant::all_compiled()
            .into_iter()
            .filter(|variant| variant.mutant.is_some())
            .map(|variant| variant.id)
            .take(40)
            .collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let killers: Vec<Vec<usize>> = (0..ids.len()).map(|i| vec![i]).collect();
        let killers: Vec<&[usize]> = killers.iter().map(Vec::as_slice).collect();
        let analysis = Analysis::of(&sample::matrix(ids.len(), &ids, &killers));
        assert_eq!(analysis.mutant_groups.len(), 40);
        let (places, width, height) = layout(&analysis);
        assert!(width <= MOST_WIDTH + 2 * MARGIN, "{width}");
        for (group, place) in analysis.mutant_groups.iter().zip(&places) {
            assert_eq!(
                place.width,
                group.label().chars().count() * CHAR_WIDTH + 2 * MARGIN
            );
        }
        let lines: std::collections::BTreeSet<usize> = places.iter().map(|p| p.y).collect();
        let unwrapped: usize = places.iter().map(|p| p.width + NODE_GAP).sum();
        assert!(lines.len() >= unwrapped.div_ceil(MOST_WIDTH), "{lines:?}");
        assert!(lines.len() > 1);
        assert_eq!(
            height,
            lines.len() * NODE_HEIGHT + (lines.len() - 1) * LINE_GAP + 2 * MARGIN
        );
        for (i, a) in places.iter().enumerate() {
            for b in &places[i + 1..] {
                let apart = a.x + a.width <= b.x || b.x + b.width <= a.x || a.y != b.y;
                assert!(apart, "two nodes overlap: {a:?} {b:?}");
            }
        }
    }
}

//! `lab chaos --format html`: the counterexample (or, for a run that broke
//! nothing, its first calls) drawn as a timeline, one lane per worker, each
//! call a bar over its real-time interval; killed calls are marked, and
//! the calls that break the contract are drawn in red. Below it, the same
//! calls as a table, and what was found. One self-contained page: no
//! script, no network.

use super::history::Returned;
use super::judge::Judgement;
use super::timeline::{answer_text, call_text};
use super::Chaos;
use html_escape::encode_text as text;

/// The most calls a page draws for a run that broke nothing.
const MOST_DRAWN: usize = 200;

/// What the drawing's marks mean.
const LEGEND: &str = "One lane per worker; each call a bar over its real-time interval, time running right: blue, a call; red, a call the finding names; grey and dashed, a call killed before it answered (drawn to the end).";

/// The two verdicts, fencing and the worksheet's contract, in words.
fn verdicts(judged: &Judgement) -> String {
    use super::judge::Held;
    let word = |held: Held| match held {
        Held::Held => "held",
        Held::Broken => "broken",
    };
    format!(
        "Fencing {}; the worksheet's contract {}.",
        word(judged.fencing),
        word(judged.contract)
    )
}

/// Which run the drawing shows, and how much of it: the shrunk run, the
/// run's calls on the job it broke, or its first calls.
fn drawn(chaos: &Chaos, judged: &Judgement, count: usize) -> String {
    let all = judged.record.calls.len();
    let job = judged
        .job()
        .map_or(String::new(), |job| format!(" on {job}"));
    match &chaos.shrunk {
        Some(_) => format!(
            "Drawn: the shrunk run ({}, {all} calls; the run that failed first made {}), its {count} calls{job}.",
            crate::terminal::plural(judged.record.settings.workers, "worker"),
            chaos.judged.record.calls.len()
        ),
        None if judged.failed() => {
            format!("Drawn: {count} calls{job} that show the finding, of the run's {all}.")
        }
        None => format!("Drawn: calls 1 to {count} of {all}; the run broke nothing."),
    }
}

/// The side-effect services' counts, as the text report says them.
fn sinks(judged: &Judgement) -> String {
    let sinks = &judged.record.sinks;
    format!(
        "Two services downstream of the store, to which each worker sends the job's report before it completes (what a side effect does without the token; they do not judge the store). Without the token: {} taken, {} stale (an older lease's, after a newer's). With the token: {} taken, {} refused for an older fence.",
        sinks.trusting_taken(),
        sinks.trusting_stale(),
        sinks.fenced_taken(),
        sinks.fenced_refused()
    )
}

/// The lanes' geometry, in SVG units.
const LANE: f64 = 28.0;
const LEFT: f64 = 48.0;
const WIDTH: f64 = 1100.0;

/// The whole page.
pub fn page(chaos: &Chaos) -> String {
    let judged = chaos
        .shrunk
        .as_ref()
        .map_or(&chaos.judged, |shrunk| &shrunk.judged);
    let shown: Vec<usize> = if judged.failed() {
        judged.shown()
    } else {
        (0..judged.record.calls.len().min(MOST_DRAWN)).collect()
    };
    let culprits = judged.culprits();
    let settings = &chaos.judged.record.settings;
    let verdict = if chaos.judged.failed() {
        format!("✗ {}", text(&chaos.judged.finding_text()))
    } else {
        "✓ no violation".to_string()
    };
    let findings: String = judged
        .violations
        .iter()
        .map(|violation| format!("<li>{}</li>", text(&violation.text)))
        .collect();
    let replay = chaos
        .shrunk
        .as_ref()
        .map(|shrunk| {
            format!(
                "<p class=\"replay\">Replay: <code>{}</code></p>",
                text(&chaos.replay(&shrunk.judged.record.settings))
            )
        })
        .unwrap_or_default();
    let body = format!(
        "<h1>lab chaos: {subject}</h1>\
         <p class=\"run\">{workers}, {operations} calls, seed {seed}; faults: {faults}</p>\
         <p class=\"verdicts\">{verdicts}</p>\
         <p class=\"verdict\">{verdict}</p><ul class=\"findings\">{findings}</ul>\
         <p class=\"model\">Model check: {model}</p>{replay}\
         <p class=\"drawn\">{drawn}</p><p class=\"legend\">{LEGEND}</p>\
         <div class=\"scroll\">{svg}</div><div class=\"scroll\">{table}</div>\
         <p class=\"prefix\">The longest valid prefix: {prefix}.</p>\
         <h2>Side effects</h2><p class=\"sinks\">{sinks}</p>\n",
        verdicts = verdicts(&chaos.judged),
        drawn = text(&drawn(chaos, judged, shown.len())),
        sinks = text(&sinks(&chaos.judged)),
        subject = text(&chaos.subject),
        workers = crate::terminal::plural(settings.workers, "worker"),
        operations = settings.operations,
        seed = settings.seed,
        faults = text(&settings.faults.names().join(", ")),
        model = text(&judged.model_text()),
        svg = lanes(judged, &shown, &culprits),
        table = table(judged, &shown, &culprits),
        prefix = judged.valid_prefix_text(),
    );
    crate::report::html::shell(
        &format!("lab chaos: {}", text(&chaos.subject)),
        STYLE,
        &body,
        "lab chaos --format html",
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
div.scroll{overflow:auto;max-width:100%}code{overflow-wrap:anywhere}\
svg{border:1px solid #ccc;background:#fafafa}\
rect.call{fill:#6a9fd4}rect.culprit{fill:#d43c3c}rect.killed{fill:#999;stroke:#222;stroke-dasharray:3 2}\
text{font-size:11px}table{border-collapse:collapse;margin-top:1em}\
td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;font-family:monospace}\
tr.culprit td{color:#b00;font-weight:bold}";

/// One lane per worker; each call a bar from when it began to when it
/// ended (a killed call runs to the end of the picture, dashed).
fn lanes(judged: &Judgement, shown: &[usize], culprits: &[usize]) -> String {
    let calls = judged.calls();
    let workers = judged.record.settings.workers;
    let first = shown
        .iter()
        .map(|index| calls[*index].began)
        .min()
        .unwrap_or(0);
    let last = shown
        .iter()
        .map(|index| calls[*index].ended.unwrap_or(calls[*index].began))
        .max()
        .unwrap_or(first)
        .max(first + 1);
    let x = |at: u64| LEFT + (at.saturating_sub(first)) as f64 / (last - first) as f64 * WIDTH;
    let height = LANE * workers as f64 + 20.0;
    let mut svg = format!(
        "<svg class=\"lanes\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" role=\"img\" aria-label=\"the calls, one lane per worker\">",
        LEFT + WIDTH + 10.0
    );
    for worker in 0..workers {
        let y = LANE * worker as f64 + 10.0;
        svg.push_str(&format!(
            "<text x=\"4\" y=\"{}\">{}</text><line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#ddd\"/>",
            y + 14.0,
            super::plan::owner(worker),
            y + LANE / 2.0,
            LEFT + WIDTH,
            y + LANE / 2.0
        ));
    }
    for &index in shown {
        let call = &calls[index];
        let y = LANE * call.worker as f64 + 14.0;
        let start = x(call.began);
        let end = call.ended.map_or(LEFT + WIDTH, x).max(start + 2.0);
        let class = if culprits.contains(&index) {
            "call culprit"
        } else if call.returned == Returned::Unknown {
            "call killed"
        } else {
            "call"
        };
        svg.push_str(&format!(
            "<rect class=\"{class}\" data-call=\"{index}\" x=\"{start:.1}\" y=\"{y}\" width=\"{:.1}\" height=\"{}\"><title>{} → {}</title></rect>",
            end - start,
            LANE - 8.0,
            text(&call_text(&call.operation)),
            text(&answer_text(&call.returned))
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// The calls as a table, as the terminal's timeline shows them.
fn table(judged: &Judgement, shown: &[usize], culprits: &[usize]) -> String {
    let calls = judged.calls();
    let rows: String =
        shown
            .iter()
            .map(|&index| {
                let call = &calls[index];
                format!(
                "<tr class=\"{}\"><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                if culprits.contains(&index) { "culprit" } else { "call" },
                index + 1,
                call.began as f64 / 1e6,
                call.worker_name(),
                text(&call_text(&call.operation)),
                text(&answer_text(&call.returned))
            )
            })
            .collect();
    format!(
        "<table class=\"timeline\"><thead><tr><th>call</th><th>ms</th><th>worker</th><th>call</th><th>answer</th></tr></thead><tbody>{rows}</tbody></table>"
    )
}

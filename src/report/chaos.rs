//! `lab chaos --format html`: the counterexample (or, for a run that broke
//! nothing, its first calls) drawn as a timeline, one lane per worker, each
//! call a bar over its real-time interval on a time axis; killed calls are
//! marked, the calls that break the contract are drawn in red, and the
//! moments of the story (a stall, a return, a kill, a restart) are marked
//! on their worker's lane. Below it, the same calls and moments as a table,
//! the story in a sentence, and what was found. One self-contained page: no
//! script, no network; the drawing scales to the window.

use super::html_text::untrusted;
use crate::chaos::history::{Noted, Returned};
use crate::chaos::judge::Judgement;
use crate::chaos::timeline::{answer_text, call_text, moment_text, moments_in_view};
use crate::chaos::Chaos;
use html_escape::encode_text as text;

/// The most calls a page draws for a run that broke nothing.
const MOST_DRAWN: usize = 200;

/// What the drawing's marks mean.
const LEGEND: &str = "One lane per worker; each call a bar over its real-time interval, time running right (in ms since the run began): blue, a call; red, a call the finding names; grey and dashed, a call killed before it answered (drawn to the end); an orange diamond, a moment of the story (a stall, a stalled attempt's return, a kill or a restart: hover for which).";

/// The two verdicts, fencing and the worksheet's contract, in words.
fn verdicts(judged: &Judgement) -> String {
    use crate::chaos::judge::Held;
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

/// The lanes' geometry, in SVG units: the drawing is scaled to the page's
/// width (at most [`MOST_WIDTH`] pixels), about one unit a pixel at 800.
const LANE: f64 = 28.0;
const LEFT: f64 = 36.0;
const WIDTH: f64 = 660.0;
/// The height of the time axis under the lanes, in SVG units.
const AXIS: f64 = 30.0;
/// How many ticks the time axis has, its ends included.
const TICKS: usize = 5;
/// The widest the drawing is shown, in pixels.
const MOST_WIDTH: u32 = 1000;

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
    let moments = moments_in_view(judged.calls(), &judged.record.moments, judged.job(), &shown);
    let settings = &chaos.judged.record.settings;
    let verdict = if chaos.judged.failed() {
        format!("✗ {}", untrusted(&chaos.judged.finding_text(), true))
    } else {
        "✓ no violation".to_string()
    };
    let findings: String = judged
        .violations
        .iter()
        .map(|violation| format!("<li>{}</li>", untrusted(&violation.text, true)))
        .collect();
    let replay = chaos
        .shrunk
        .as_ref()
        .map(|shrunk| {
            format!(
                "<p class=\"replay\">Replay: <code>{}</code></p>",
                untrusted(&chaos.replay(&shrunk.judged.record.settings), false)
            )
        })
        .unwrap_or_default();
    let chosen = chaos
        .chosen
        .as_ref()
        .map(|chosen| format!("<p class=\"chosen\">({})</p>", untrusted(chosen, true)))
        .unwrap_or_default();
    let body = format!(
        "<h1>lab chaos: {subject}</h1>{chosen}\
         <p class=\"run\">{workers}, {operations} calls, seed {seed}; faults: {faults}</p>\
         <p class=\"verdicts\">{verdicts}</p>\
         <p class=\"verdict\">{verdict}</p><ul class=\"findings\">{findings}</ul>\
         <p class=\"model\">Model check: {model}</p>{story}{replay}\
         <p class=\"drawn\">{drawn}</p><p class=\"legend\">{LEGEND}</p>\
         <div class=\"scroll\">{svg}</div><div class=\"scroll\">{table}</div>\
         <p class=\"prefix\">The longest valid prefix: {prefix}.</p>\
         <h2>Side effects</h2><p class=\"sinks\">{sinks}</p>\n",
        verdicts = verdicts(&chaos.judged),
        drawn = text(&drawn(chaos, judged, shown.len())),
        sinks = text(&sinks(&chaos.judged)),
        subject = untrusted(&chaos.subject, false),
        workers = crate::terminal::plural(settings.workers, "worker"),
        operations = settings.operations,
        seed = settings.seed,
        faults = text(&settings.faults.names().join(", ")),
        model = text(&judged.model_text()),
        story = judged
            .story()
            .map(|story| {
                format!(
                    "<p class=\"story\">What happened: {}.</p>",
                    untrusted(&story, true)
                )
            })
            .unwrap_or_default(),
        svg = lanes(judged, &shown, &culprits, &moments),
        table = table(judged, &shown, &culprits, &moments),
        prefix = judged.valid_prefix_text(),
    );
    crate::report::html_page::shell(
        &format!("lab chaos: {}", untrusted(&chaos.subject, false)),
        STYLE,
        &body,
        "lab chaos --format html",
    )
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;color:#222}\
div.scroll{overflow:auto;max-width:100%}code{overflow-wrap:anywhere}\
svg{border:1px solid #ccc;background:#fafafa;width:100%;height:auto;display:block;box-sizing:border-box}\
rect.call{fill:#6a9fd4}rect.culprit{fill:#d43c3c}rect.killed{fill:#999;stroke:#222;stroke-dasharray:3 2}\
path.moment{fill:#e8901c;stroke:#7a4500}line.tick{stroke:#999}\
text{font-size:11px}table{border-collapse:collapse;margin-top:1em}\
td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:left;font-family:monospace}\
tr.culprit td{color:#b00;font-weight:bold}tr.moment td{color:#7a4500;font-style:italic}";

/// One lane per worker; each call a bar from when it began to when it
/// ended (a killed call runs to the end of the picture, dashed), each of
/// `moments` a diamond on its worker's lane; under them a time axis, in ms
/// since the run began.
fn lanes(judged: &Judgement, shown: &[usize], culprits: &[usize], moments: &[&Noted]) -> String {
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
        .chain(moments.iter().map(|noted| noted.at))
        .max()
        .unwrap_or(first)
        .max(first + 1);
    let x = |at: u64| LEFT + (at.saturating_sub(first)) as f64 / (last - first) as f64 * WIDTH;
    let lanes_height = LANE * workers as f64 + 10.0;
    let (width, height) = (LEFT + WIDTH + 24.0, lanes_height + AXIS);
    let mut svg = format!(
        "<svg class=\"lanes\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" style=\"max-width:{MOST_WIDTH}px\" role=\"img\" aria-label=\"the calls, one lane per worker, over time\">",
    );
    for worker in 0..workers {
        let y = LANE * worker as f64 + 10.0;
        svg.push_str(&format!(
            "<text x=\"4\" y=\"{}\">{}</text><line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#ddd\"/>",
            y + 14.0,
            crate::chaos::plan::owner(worker),
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
            "<rect class=\"{class}\" data-call=\"{index}\" x=\"{start:.1}\" y=\"{y}\" width=\"{:.1}\" height=\"{}\"><title>call {}: {} → {}</title></rect>",
            end - start,
            LANE - 8.0,
            index + 1,
            text(&call_text(&call.operation)),
            text(&answer_text(&call.returned))
        ));
    }
    for noted in moments {
        let (cx, cy) = (x(noted.at), LANE * noted.worker as f64 + 10.0 + LANE / 2.0);
        svg.push_str(&format!(
            "<path class=\"moment\" d=\"M{cx:.1} {:.1}l6 8l-6 8l-6-8z\"><title>{} {}</title></path>",
            cy - 8.0,
            crate::chaos::plan::owner(noted.worker),
            text(&moment_text(noted))
        ));
    }
    svg.push_str(&axis(first, last, lanes_height));
    svg.push_str("</svg>");
    svg
}

/// The time axis from `first` to `last` (nanoseconds on the run's clock)
/// at `top`: a line, [`TICKS`] ticks labelled in ms since the run began.
fn axis(first: u64, last: u64, top: f64) -> String {
    let mut axis = format!(
        "<g class=\"axis\"><line class=\"tick\" x1=\"{LEFT}\" y1=\"{top}\" x2=\"{}\" y2=\"{top}\"/>",
        LEFT + WIDTH
    );
    for tick in 0..TICKS {
        let share = tick as f64 / (TICKS - 1) as f64;
        let x = LEFT + share * WIDTH;
        let ms = (first as f64 + share * (last - first) as f64) / 1e6;
        let anchor = match tick {
            0 => "start",
            _ if tick == TICKS - 1 => "end",
            _ => "middle",
        };
        axis.push_str(&format!(
            "<line class=\"tick\" x1=\"{x:.1}\" y1=\"{top}\" x2=\"{x:.1}\" y2=\"{}\"/><text x=\"{x:.1}\" y=\"{}\" text-anchor=\"{anchor}\">{ms:.2} ms</text>",
            top + 5.0,
            top + 18.0
        ));
    }
    axis.push_str("</g>");
    axis
}

/// The calls as a table, as the terminal's timeline shows them, with the
/// moments of the story in their places.
fn table(judged: &Judgement, shown: &[usize], culprits: &[usize], moments: &[&Noted]) -> String {
    let calls = judged.calls();
    let mut rows = String::new();
    let mut moments = moments.iter().peekable();
    let moment_row = |noted: &Noted| {
        format!(
            "<tr class=\"moment\"><td></td><td>{:.2}</td><td>{}</td><td colspan=\"2\">┄ {}</td></tr>",
            noted.at as f64 / 1e6,
            crate::chaos::plan::owner(noted.worker),
            text(&moment_text(noted))
        )
    };
    for &index in shown {
        while let Some(noted) = moments.next_if(|noted| noted.before <= index) {
            rows.push_str(&moment_row(noted));
        }
        let call = &calls[index];
        rows.push_str(&format!(
            "<tr class=\"{}\"><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if culprits.contains(&index) {
                "culprit"
            } else {
                "call"
            },
            index + 1,
            call.began as f64 / 1e6,
            call.worker_name(),
            text(&call_text(&call.operation)),
            text(&answer_text(&call.returned))
        ));
    }
    for noted in moments {
        rows.push_str(&moment_row(noted));
    }
    format!(
        "<table class=\"timeline\"><thead><tr><th>call</th><th>ms</th><th>worker</th><th>what</th><th>answer</th></tr></thead><tbody>{rows}</tbody></table>"
    )
}

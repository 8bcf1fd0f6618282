//! A history as a student reads it: one line per call, time, worker, call
//! and answer, in the style of `lab demo`, with the calls that break the
//! contract marked. Every line fits 80 columns.

use super::history::{Call, Noted, Returned};
use super::plan::Moment;
use crate::operation::{Answer, Operation};
use crate::terminal::plural;

/// The call as a line's middle: the operation and its arguments, short.
pub fn call_text(operation: &Operation) -> String {
    match operation {
        Operation::InitDb => "init_db".into(),
        Operation::Enqueue { job_id } => format!("enqueue {job_id}"),
        Operation::State { job_id } => format!("state {job_id}"),
        Operation::Claim {
            job_id, now, ttl, ..
        } => {
            format!("claim {job_id} now={} ttl={}", number(*now), number(*ttl))
        }
        Operation::Renew {
            job_id, fence, now, ..
        } => format!("renew {job_id} fence={fence} now={}", number(*now)),
        Operation::Complete {
            job_id, fence, now, ..
        } => format!("complete {job_id} fence={fence} now={}", number(*now)),
        Operation::Release { job_id, fence, .. } => format!("release {job_id} fence={fence}"),
        Operation::ClaimMany { job_id, owners, .. } => {
            format!("claim_many {job_id} ×{}", owners.len())
        }
    }
}

/// A clock value, as short as it is exact to the millisecond.
pub fn number(value: f64) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".into()
    } else {
        text.into()
    }
}

/// The answer, short: a fence, `none`, `true`, a row's fence and owner.
/// `None` is written `none`, as `lab check` writes it (the protocol's
/// `null` is JSON's word, which the JSON report keeps).
pub fn answer_text(returned: &Returned) -> String {
    match returned {
        Returned::Unknown => "killed: unknown".into(),
        Returned::Error(kind) => format!("error {}", kind.name()),
        Returned::Answer(answer) => match answer {
            Answer::Done => "ok".into(),
            Answer::Bool(flag) => flag.to_string(),
            Answer::Fence(Some(fence)) => fence.to_string(),
            Answer::Fence(None) | Answer::Row(None) => "none".into(),
            // The owner is as the program answered it, which may hold anything.
            Answer::Row(Some(row)) => format!(
                "fence {} {}{}",
                row.fence,
                crate::inert::line(row.owner.as_deref().unwrap_or("-")),
                if row.done { " done" } else { "" }
            ),
            Answer::Fences(fences) => format!("{} fences", fences.iter().flatten().count()),
        },
    }
}

/// The timeline of `calls` (indices into `history`), each numbered as the
/// findings number it (`call 105`), marking `marked` ones with the step of
/// their own operation (`◀ step 4` for a claim): a header, then a line per
/// call, and between them the `moments` of the story on the job in view
/// (`job`) or of a worker in view: where it stalled and came back with
/// what clock, or was killed or started again.
pub fn timeline(
    history: &[Call],
    moments: &[Noted],
    job: Option<&str>,
    calls: &[usize],
    marked: &[usize],
) -> Vec<String> {
    let mut lines = vec![format!(
        "{:>4}  {:>8}  {:<6} {:<34} {}",
        "call", "ms", "worker", "what", "answer"
    )];
    let mut moments = moments_in_view(history, moments, job, calls)
        .into_iter()
        .peekable();
    for &index in calls {
        while let Some(noted) = moments.next_if(|noted| noted.before <= index) {
            lines.push(moment_line(noted));
        }
        let call = &history[index];
        let at = call.began as f64 / 1e6;
        let answer = answer_text(&call.returned);
        let mut line = format!(
            "{:>4}  {at:>8.2}  {:<6} {:<34} {answer}",
            index + 1,
            call.worker_name(),
            call_text(&call.operation)
        );
        if line.chars().count() > 80 {
            // A long call and a long answer: the answer goes under the
            // call, in the answers' column.
            let (head, _) = line.split_at(line.len() - answer.len() - 1);
            lines.push(head.to_string());
            line = format!("{:58}{answer}", "");
        }
        if marked.contains(&index) {
            let mark = format!("step {}", call.operation.step());
            let marked_line = format!("{line:<66} ◀ {mark}");
            if marked_line.chars().count() <= 80 {
                line = marked_line;
            } else {
                // Too long for one line: the mark goes under it, at the right.
                lines.push(line);
                line = format!("{:>80}", format!("◀ {mark}"));
            }
        }
        lines.push(line);
    }
    lines.extend(moments.map(moment_line));
    lines
}

/// The `moments` to show beside `calls` (indices into `history`, in order):
/// those that came between the first and just after the last, on the job in
/// view (`job`), or a kill or restart of a worker in view.
pub fn moments_in_view<'m>(
    history: &[Call],
    moments: &'m [Noted],
    job: Option<&str>,
    calls: &[usize],
) -> Vec<&'m Noted> {
    let (Some(&first), Some(&last)) = (calls.first(), calls.last()) else {
        return Vec::new();
    };
    let workers: Vec<usize> = calls.iter().map(|index| history[*index].worker).collect();
    moments
        .iter()
        .filter(|noted| {
            noted.before > first
                && noted.before <= last + 1
                && noted
                    .job()
                    .map_or(workers.contains(&noted.worker), |of| Some(of) == job)
        })
        .collect()
}

/// A moment of the story as a timeline's line: `┄` where a call would be.
fn moment_line(noted: &Noted) -> String {
    let what = moment_text(noted);
    // The number column stays empty: a moment is no call.
    let head = format!(
        "{:>4}  {:>8.2}  {:<6} ┄ ",
        "",
        noted.at as f64 / 1e6,
        super::plan::owner(noted.worker)
    );
    let rest = " ".repeat(head.chars().count());
    crate::terminal::fill(&what, 80, &head, &rest)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What a moment of the story was, in words: `stalls holding fence 1:
/// that attempt is stuck`.
pub fn moment_text(noted: &Noted) -> String {
    match &noted.moment {
        Moment::Stalled {
            fence, whole: true, ..
        } => format!("stalls holding fence {fence}: the whole worker pauses"),
        Moment::Stalled {
            fence,
            whole: false,
            ..
        } => format!("stalls holding fence {fence}: that attempt is stuck"),
        Moment::CameBack {
            now, stale: true, ..
        } => format!(
            "the stalled attempt returns, its clock still at {}",
            number(*now)
        ),
        Moment::CameBack { stale: false, .. } => "the stalled attempt returns".into(),
        Moment::Killed => "is killed mid-call, and starts again knowing nothing".into(),
        Moment::Restarted => "is stopped and starts again knowing nothing".into(),
        Moment::CutOff => {
            "loses its connection mid-call: the call may or may not have landed".into()
        }
        Moment::Partitioned => {
            "is cut off from the server until past its lease, then goes on with what it held".into()
        }
    }
}

/// What a chaos run found, as the terminal shows it: the run, the first
/// finding, the counterexample (the run shrunk, or, unshrunk, the run as
/// it ran) as a timeline with the command that replays it, the model
/// check's verdict on it and its longest valid prefix, and the side-effect
/// sinks. Every sentence that cites a call is about the run whose timeline
/// it is shown beside, and that call is in it. Every line fits 80 columns.
pub fn report_text(chaos: &super::Chaos) -> String {
    let judged = &chaos.judged;
    let mut lines = run_lines(chaos);
    lines.push(String::new());
    lines.extend(finding_lines(judged));
    match &chaos.shrunk {
        Some(shrunk) => {
            lines.extend(shrunk_lines(chaos, shrunk));
            lines.extend(counterexample_lines(&shrunk.judged));
        }
        None if judged.failed() => {
            lines.push(String::new());
            lines.extend(counterexample_lines(judged));
        }
        None => {}
    }
    lines.extend(sink_lines(&judged.record.sinks));
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// The report's head: what ran, with which faults, how fast, and how
/// many workers were killed or restarted.
fn run_lines(chaos: &super::Chaos) -> Vec<String> {
    let record = &chaos.judged.record;
    let settings = &record.settings;
    let mut lines = vec![crate::terminal::fill_lines(
        &format!(
            "lab chaos: {}, {}, {} calls, seed {}",
            crate::inert::line(&chaos.subject),
            plural(settings.workers, "worker"),
            settings.operations,
            settings.seed
        ),
        80,
    )];
    // Which implementation ran, when --impl did not say: the student's
    // recorded one, or the lab's own store.
    if let Some(chosen) = &chaos.chosen {
        lines.push(crate::terminal::fill(
            &format!("({})", crate::inert::line(chosen)),
            80,
            "  ",
            "   ",
        ));
    }
    let faults = settings.faults.names();
    lines.push(format!(
        "faults: {}",
        if faults.is_empty() {
            "none".to_string()
        } else {
            faults.join(", ")
        }
    ));
    let seconds = record.took.as_secs_f64();
    let rate = if seconds > 0.0 {
        record.calls.len() as f64 / seconds
    } else {
        0.0
    };
    lines.push(format!(
        "ran {} calls in {seconds:.2} s ({rate:.0} a second); {} killed mid-call{}",
        record.calls.len(),
        record.kills,
        if record.settings.faults.restarts {
            ","
        } else {
            ""
        }
    ));
    if record.settings.faults.restarts {
        lines.push(format!("{} restarted between calls", record.restarts));
    }
    if record.settings.faults.partition {
        lines.push(format!(
            "{}, each a worker cut off from the server until past its lease",
            crate::terminal::plural(record.partitions, "partition")
        ));
    }
    if record.settings.faults.server_crash {
        lines.push(format!(
            "the server crashed once and restarted, cutting off {}",
            crate::terminal::plural(record.cut_off, "call")
        ));
    }
    lines
}

/// What the run showed: that nothing broke, and the model check's
/// verdict; or the first three violations (or the model check's finding),
/// whose model check is told beside the counterexample's timeline.
fn finding_lines(judged: &super::judge::Judgement) -> Vec<String> {
    let mut lines = Vec::new();
    if !judged.failed() {
        lines.push("✓ no violation: no fence handed out twice or going down, no stale".into());
        lines.push("  completion, every stored result the accepted one's, no done job".into());
        lines.push(if judged.record.on_a_server {
            "  changed, no job lost".into()
        } else {
            "  changed, no job lost, the file sound".into()
        });
        lines.push(crate::terminal::fill_lines(
            &format!("  model check: {}", judged.model_text()),
            80,
        ));
        return lines;
    }
    // The two verdicts first: a store whose conventions differ from the
    // worksheet's (a lease kept through its last instant, a token checked
    // without the owner's name) breaks the contract while its fencing holds.
    if judged.fencing == super::judge::Held::Held {
        lines.push("✓ fencing held: no stale write accepted, no fence handed out twice or".into());
        lines.push("  going down, no done job changed".into());
        lines.push("✗ the worksheet's contract broken:".into());
    } else {
        lines.push("✗ fencing broken, and with it the worksheet's contract".into());
    }
    for violation in judged.violations.iter().take(3) {
        lines.push(crate::terminal::fill(
            &format!(
                "✗ {} (step {}){}",
                violation.property.text(),
                violation.step,
                violation
                    .job
                    .as_deref()
                    .map_or_else(String::new, |job| format!(", on {job}"))
            ),
            80,
            "",
            "  ",
        ));
        lines.push(crate::terminal::fill_lines(
            &format!("  {}", violation.text),
            80,
        ));
    }
    if judged.violations.is_empty() {
        let step = judged
            .culprits()
            .first()
            .map_or(4, |call| judged.calls()[*call].operation.step());
        lines.push(format!(
            "✗ {} (step {step}){}",
            super::properties::Property::NotLinearizable.text(),
            judged
                .job()
                .map_or_else(String::new, |job| format!(", on {job}"))
        ));
    }
    if judged.violations.len() > 3 {
        lines.push(format!("  ... and {} more", judged.violations.len() - 3));
    }
    lines
}

/// The shrunk counterexample: how it was found and the command that
/// replays it.
fn shrunk_lines(chaos: &super::Chaos, shrunk: &super::judge::Shrunk) -> Vec<String> {
    let small = &shrunk.judged;
    let small_settings = &small.record.settings;
    let mut lines = vec![String::new()];
    // The sizes of the run shown: its workers and calls, and where it broke
    // when that is before its end (a run that may not replay exactly goes
    // to its end).
    let calls = small.record.calls.len();
    let broke_at = super::judge::through_failure(small);
    let at = if broke_at < calls {
        format!(", broken by call {broke_at}")
    } else {
        String::new()
    };
    let sizes = format!(
        "shrunk in {} to {} and {}{at};",
        plural(shrunk.runs, "run"),
        plural(small_settings.workers, "worker"),
        plural(calls, "call")
    );
    // "replay it with:" ends a line, the command's first line after it.
    if sizes.chars().count() + " replay it with:".len() <= 80 {
        lines.push(format!("{sizes} replay it with:"));
    } else {
        lines.push(sizes);
        lines.push("replay it with:".into());
    }
    lines.extend(replay_lines(&chaos.replay(small_settings)));
    if shrunk.out_of_time {
        lines.push(
            "  (the shrink ran out of time: the smallest run it had confirmed by then)".into(),
        );
    }
    let full = chaos.judged.record.settings.faults.untimed();
    let small_untimed = small_settings.faults.untimed();
    if small_untimed == ["kills"] {
        lines.push("  (its kills land when the operating system lets them: a replay may".into());
        lines.push("  break elsewhere, or take a few runs)".into());
    } else if !small_untimed.is_empty() {
        lines.push(crate::terminal::fill_lines(
            &format!(
                "  (its {} land when the operating system lets them: a replay may break \
                 elsewhere, or take a few runs)",
                and_list(&small_untimed)
            ),
            80,
        ));
    } else if full == ["kills"] {
        lines.push("  (without the kills: the run breaks without them, and a kill lands".into());
        lines.push("  when the operating system lets it, not when the seed says)".into());
    } else if !full.is_empty() {
        lines.push(crate::terminal::fill_lines(
            &format!(
                "  (without the {}: the run breaks without them, and each lands when the \
                 operating system lets it, not when the seed says)",
                and_list(&full)
            ),
            80,
        ));
    }
    lines.push(String::new());
    lines
}

/// The counterexample `small` (the run shrunk, or the run as it ran): its
/// timeline on the job it broke, with the culprits marked, what happened
/// in a sentence, the model check's verdict on it and its longest valid
/// prefix.
fn counterexample_lines(small: &super::judge::Judgement) -> Vec<String> {
    let calls = small.record.calls.len();
    let mut lines = Vec::new();
    // The shrunk run may break another job than the full run did: the
    // timeline says which it shows.
    if let Some(job) = small.job() {
        lines.push(format!(
            "the calls on {job} ({} of the run's {calls}), where it broke:",
            small.shown().len()
        ));
    }
    lines.extend(timeline(
        small.calls(),
        &small.record.moments,
        small.job(),
        &small.shown(),
        &small.culprits(),
    ));
    let hidden = small.not_shown();
    if hidden > 0 {
        lines.push(format!(
            "  … {} of {} not shown (--format json has all)",
            plural(hidden, "more call"),
            small.job().unwrap_or("the job")
        ));
    }
    // The story when the moments tell one, else the finding's sentence.
    let said = small.story().or_else(|| {
        small
            .violations
            .first()
            .map(|violation| violation.text.clone())
    });
    if let Some(said) = said {
        lines.push(crate::terminal::fill(&format!("✗ {said}"), 80, "", "  "));
    }
    lines.push(crate::terminal::fill_lines(
        &format!("model check: {}", small.model_text()),
        80,
    ));
    lines.push(format!(
        "the longest valid prefix: {}",
        small.valid_prefix_text()
    ));
    lines
}

/// The command `replay`, indented, to copy: too long for one line, it
/// goes on two, joined by the shell's line continuation.
fn replay_lines(replay: &str) -> Vec<String> {
    match replay.find(" --seed ") {
        Some(at) if replay.chars().count() + 2 > 80 => vec![
            format!("  {} \\", &replay[..at]),
            format!("    {}", &replay[at + 1..]),
        ],
        _ => vec![format!("  {replay}")],
    }
}

/// What the two side-effect sinks took, and what was stale.
fn sink_lines(sinks: &super::sink::SinkReport) -> Vec<String> {
    let stale = match sinks.fenced_stale() {
        0 => "so none stale".to_string(),
        stale => format!("yet {stale} stale"),
    };
    vec![
        String::new(),
        "side effects: two services downstream of the store, to which each worker".into(),
        "sends the job's report before it completes (what a side effect does without".into(),
        "the token; the store is not judged by them):".into(),
        format!(
            "  without the token: {} taken, {} stale (an older lease's, after a newer's)",
            sinks.trusting_taken(),
            sinks.trusting_stale()
        ),
        format!(
            "  with the token:    {} taken, {} refused for an older fence, {stale}",
            sinks.fenced_taken(),
            sinks.fenced_refused(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::Fence;

    /// Every line fits 80 columns, even for the longest call and a mark.
    #[test]
    fn a_timeline_fits_80_columns() {
        let history = vec![Call {
            worker: 7,
            operation: Operation::Complete {
                job_id: "job-1234".into(),
                owner: "w8".into(),
                fence: Fence(12345),
                now: -12345.125,
                result: "w8/12345".into(),
            },
            began: 98_765_432_100,
            ended: None,
            returned: Returned::Unknown,
        }];
        let lines = timeline(&history, &[], None, &[0], &[0]);
        for line in &lines {
            assert!(
                line.chars().count() <= 80,
                "{} columns: {line}",
                line.chars().count()
            );
        }
        assert!(lines[1].contains("complete job-1234 fence=12345 now=-12345.125"));
        assert!(lines.last().expect("lines").ends_with("◀ step 6"));
    }

    /// A row's owner is as the program answered it: shown inert.
    #[test]
    fn an_answered_owner_is_shown_inert() {
        let row = crate::job::Job {
            owner: Some("\x1b]0;pwned\x07w1\u{202e}".into()),
            fence: Fence(3),
            ..crate::job::Job::default()
        };
        assert_eq!(
            answer_text(&Returned::Answer(Answer::Row(Some(row)))),
            "fence 3 \\x1b]0;pwned\\x07w1\\u{202e}"
        );
    }

    /// A marked call names its own operation's step: a claim is step 4,
    /// whatever step the finding is about.
    #[test]
    fn a_marked_call_names_its_own_step() {
        let call = |operation| Call {
            worker: 0,
            operation,
            began: 1_000_000,
            ended: Some(2_000_000),
            returned: Returned::Answer(Answer::Bool(true)),
        };
        let history = vec![
            call(Operation::Claim {
                job_id: "job-4".into(),
                owner: "w1".into(),
                now: 1.0,
                ttl: 2.0,
            }),
            call(Operation::Complete {
                job_id: "job-4".into(),
                owner: "w1".into(),
                fence: Fence(1),
                now: 9.0,
                result: "w1/1".into(),
            }),
        ];
        let lines = timeline(&history, &[], None, &[0, 1], &[0, 1]);
        assert!(
            lines[1].starts_with("   1      1.00  w1     claim job-4")
                && lines[1].ends_with("◀ step 4"),
            "{lines:?}"
        );
        assert!(lines[2].ends_with("◀ step 6"), "{lines:?}");
    }

    /// The moments of the story sit between the calls, each where it came:
    /// those on the job in view, and a kill or restart of a worker in view;
    /// a moment of another job, or of a worker not in view, is left out.
    #[test]
    fn the_moments_of_the_story_sit_between_the_calls() {
        use crate::chaos::testing::{claim, complete, enqueue};
        let history = vec![
            enqueue(0),
            claim(0, 1_000_000, 1.0, Some(1)),
            claim(0, 2_000_000, 4.0, Some(2)),
            complete(0, 3_000_000, 1, true),
        ];
        let noted = |worker, before, moment| Noted {
            worker,
            before,
            at: 500_000 + before as u64 * 1_000_000,
            moment,
        };
        let stalled = |job: &str| Moment::Stalled {
            job: job.into(),
            fence: Fence(1),
            whole: false,
        };
        let moments = vec![
            noted(0, 2, stalled("j")),
            noted(0, 2, stalled("k")),
            noted(1, 3, Moment::Restarted),
            noted(
                0,
                3,
                Moment::CameBack {
                    job: "j".into(),
                    fence: Fence(1),
                    now: 1.0,
                    stale: true,
                },
            ),
            noted(0, 4, Moment::Killed),
        ];
        let lines = timeline(&history, &moments, Some("j"), &[1, 2, 3], &[3]);
        let starts: Vec<&str> = lines.iter().map(|line| &line[..4]).collect();
        assert_eq!(
            starts,
            ["call", "   2", "    ", "   3", "    ", "   4", "    "]
        );
        assert!(lines[2].ends_with("w1     ┄ stalls holding fence 1: that attempt is stuck"));
        assert!(lines[4].ends_with("┄ the stalled attempt returns, its clock still at 1"));
        assert!(lines[6].ends_with("┄ is killed mid-call, and starts again knowing nothing"));
        assert!(lines.iter().all(|line| line.chars().count() <= 80));
    }

    /// A report of a run that broke fencing at calls 9 to 12, shrunk to
    /// the four calls that show it, the shrink `out_of_time` or not.
    fn shrunk_report(out_of_time: bool) -> String {
        use crate::chaos::testing::{call, claim, complete, enqueue, record, row};
        let stale = || vec![enqueue(0), claim(0, 10, 1.0, Some(1))];
        let mut calls: Vec<Call> = (0..8)
            .map(|index| {
                call(
                    1,
                    index,
                    Operation::State { job_id: "k".into() },
                    Returned::Answer(Answer::Row(None)),
                )
            })
            .collect();
        calls.extend(stale().into_iter().map(|mut call| {
            call.began += 100;
            call.ended = call.ended.map(|ended| ended + 100);
            call
        }));
        calls.extend([claim(0, 120, 4.0, Some(2)), complete(0, 130, 1, true)]);
        let full = crate::chaos::judge::Judgement::of(record(calls, vec![row("w1", 1, true)]));
        let mut small = stale();
        small.extend([claim(0, 20, 4.0, Some(2)), complete(0, 30, 1, true)]);
        let small = crate::chaos::judge::Judgement::of(record(small, vec![row("w1", 1, true)]));
        assert!(full.failed() && small.failed());
        assert!(
            full.model_text().contains("call 12"),
            "{}",
            full.model_text()
        );
        report_text(&super::super::Chaos {
            subject: "the Rust store, reference".into(),
            chosen: None,
            replay_prefix: "lab chaos".into(),
            judged: full,
            shrunk: Some(crate::chaos::judge::Shrunk {
                judged: small,
                runs: 5,
                out_of_time,
            }),
        })
    }

    /// The call numbers `text` cites in its sentences (`call 4`), and
    /// those its timeline's rows show.
    fn cited_and_shown(text: &str) -> (Vec<usize>, Vec<usize>) {
        let number = |word: &str| word.trim_end_matches([',', ';', ':']).parse::<usize>().ok();
        let mut cited = Vec::new();
        let mut shown = Vec::new();
        for line in text.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            let row = line.starts_with("  ") && line.len() > 16 && &line[4..6] == "  ";
            if let (true, Some(first)) = (row, words.first().and_then(|word| number(word))) {
                shown.push(first);
                continue;
            }
            for pair in words.windows(2) {
                if pair[0] == "call" {
                    cited.extend(number(pair[1]));
                }
            }
        }
        (cited, shown)
    }

    /// The model check's sentence is the shrunk run's, told beside its
    /// timeline: every call a sentence cites is one of the timeline's
    /// rows, and none is the run's before the shrink (its culprit was call
    /// 12). The run's own findings above name no call.
    #[test]
    fn the_sentences_and_the_timeline_describe_the_same_run() {
        let text = shrunk_report(false);
        let (cited, shown) = cited_and_shown(&text);
        assert_eq!(shown, [1, 2, 3, 4], "{text}");
        assert!(cited.contains(&4), "the model check names call 4:\n{text}");
        assert!(
            cited.iter().all(|call| shown.contains(call)),
            "{cited:?} cited, {shown:?} shown:\n{text}"
        );
        let model = text.find("model check: ").expect("a model check");
        let timeline = text.find("call        ms").expect("a timeline");
        assert!(timeline < model, "{text}");
        assert_eq!(text.matches("model check: ").count(), 1, "{text}");
        assert!(!text.contains("ran out of time"), "{text}");
        let late = shrunk_report(true);
        assert!(
            late.contains(
                "\n  (the shrink ran out of time: the smallest run it had confirmed by then)\n"
            ),
            "{late}"
        );
    }

    /// `None` is written `none`, as `lab check` writes it, never JSON's
    /// `null`: a refused claim, a state of a job not enqueued.
    #[test]
    fn an_answer_of_none_is_written_none() {
        assert_eq!(answer_text(&Returned::Answer(Answer::Fence(None))), "none");
        assert_eq!(answer_text(&Returned::Answer(Answer::Row(None))), "none");
        let text = shrunk_report(false);
        assert!(!text.contains("null"), "{text}");
    }

    #[test]
    fn numbers_are_short_and_exact() {
        assert_eq!(number(2.0), "2");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(-0.0001), "0");
        assert_eq!(number(1.2345), "1.234");
    }
}

//! The stories of `lab demo` as text: the timeline of the calls and their
//! answers, the final row, and what the story shows, worded from the
//! ending the library judged ([`crate::course::demo`]).

use crate::course::demo::{Ending, Event, RestartEnding, RestartStory, Story};
use crate::job::{Fence, Job};
use crate::terminal::fill;
use crate::variant::Variant;
use colored::Colorize;
use std::fmt::Write as _;

/// What a story in which A claims, something happens, and B claims says
/// of its ending: the two stories differ only in their words.
struct FenceStoryWords {
    /// The story's name, for the title.
    name: &'static str,
    /// Fence `a` kept, B got `b`.
    kept: fn(Fence, Fence) -> String,
    /// Fence `b` handed out again after `a`.
    reused: fn(Fence, Fence) -> String,
    /// What to try next after the reference kept the fence.
    next: &'static str,
}

const RESTART_WORDS: FenceStoryWords = FenceStoryWords {
    name: "The restart story",
    kept: |a, b| {
        format!("Fence {a} survived the restart: B got fence {b}, so a write sent with A's fence {a} before the restart can still be told from B's and refused.")
    },
    reused: |a, b| {
        format!("Fence {b} was handed out TWICE: A held fence {a} before the restart, and B got fence {b} after it. A write A sent before the restart, still on its way with fence {a}, cannot be told from B's.")
    },
    next: "Now a restart that forgets a released job's fence: lab demo --variant f01a",
};

const POWER_CUT_WORDS: FenceStoryWords = FenceStoryWords {
    name: "The power-cut story",
    kept: |a, b| format!("Fence {a} survived the power cut: B got fence {b}, so a write with A's fence {a} can still be told from B's and refused."),
    reused: |a, b| format!("Fence {b} was handed out TWICE: A's claim of fence {a} was lost with the power, so B got fence {b} again. Two workers now hold the same token, and nothing that checks fences can tell their writes apart."),
    next: "Every commit waits until the disk has it (synchronous=FULL). Now a store that does not: lab demo --power-cut --variant h04g",
};

/// The restart story as a timeline, then the final row and what it shows.
pub fn restart_text(story: &RestartStory, variant: &Variant, width: usize) -> String {
    fence_story_text(story, variant, width, &RESTART_WORDS)
}

/// The power-cut story as a timeline, then the final row and what it shows.
pub fn power_cut_text(story: &RestartStory, variant: &Variant, width: usize) -> String {
    fence_story_text(story, variant, width, &POWER_CUT_WORDS)
}

/// A story judged by whether B's fence is greater than A's, told in `words`.
fn fence_story_text(
    story: &RestartStory,
    variant: &Variant,
    width: usize,
    words: &FenceStoryWords,
) -> String {
    let mut out = format!(
        "{}\n\n",
        fill(&title(words.name, variant), width, "", "").bold()
    );
    out.push_str(&timeline(&story.events, width));
    out.push_str(&final_row_text(story.final_row.as_ref(), width));
    let conclusion = match (story.ending(), story.a_fence, story.b_fence) {
        (RestartEnding::FenceKept, Some(a), Some(b)) => {
            fill(&(words.kept)(a, b), width, "", "").green().bold()
        }
        (RestartEnding::FenceReused, Some(a), Some(b)) => {
            fill(&(words.reused)(a, b), width, "", "").red().bold()
        }
        _ => fill(
            "A claim got no fence at all: the story could not be told on this store.",
            width,
            "",
            "",
        )
        .red()
        .bold(),
    };
    writeln!(out, "\n{conclusion}").unwrap();
    if story.ending() == RestartEnding::FenceKept && variant.is_reference() {
        writeln!(out, "{}", fill(words.next, width, "", "  ")).unwrap();
    }
    out
}

/// `NAME on the reference store`, or `NAME on mutant ID: TITLE`.
fn title(name: &str, variant: &Variant) -> String {
    match variant.mutant.as_deref() {
        None if variant.server().is_some() => {
            format!("{name} on the reference store on PostgreSQL")
        }
        None => format!("{name} on the reference store"),
        Some(mutant) => format!("{name} on mutant {}: {}", mutant.spec.id, mutant.spec.title),
    }
}

/// The events, one line each: time, actor, action and answer.
fn timeline(events: &[Event], width: usize) -> String {
    let mut out = String::new();
    for event in events {
        let answer = match event.answer.as_str() {
            "refused" => "refused".red().bold().to_string(),
            "accepted" => "accepted".green().to_string(),
            // Another answer may be a program's error, in its words.
            other => crate::inert::line(other).into_owned(),
        };
        let arrow = if event.answer.is_empty() {
            String::new()
        } else {
            format!("  -> {answer}")
        };
        // A long action goes on under itself.
        let line = format!(
            "  t={:<5} {:<2} {}{}",
            event.time, event.actor, event.action, arrow
        );
        writeln!(out, "{}", fill(&line, width, "", &" ".repeat(13))).unwrap();
    }
    out
}

/// The job's row at the end, in one line.
fn final_row_text(row: Option<&Job>, width: usize) -> String {
    match row {
        Some(row) => format!(
            "\n{}\n",
            fill(
                &format!(
                    "final row: owner {}, fence {}, done {}, result {}",
                    // As the program stored it, which may hold anything.
                    crate::inert::line(row.owner.as_deref().unwrap_or("none")),
                    row.fence,
                    row.done,
                    row.result
                        .as_deref()
                        .map_or("none".to_string(), |r| format!("{r:?}"))
                ),
                width,
                "  ",
                "    "
            )
        ),
        None => "\n  final row: none (the job is gone)\n".to_string(),
    }
}

/// The story (`takeover` or `stale-first`) as a timeline, then the final
/// row and what it shows, in words true of the order it was told in.
pub fn story_text(story: &Story, variant: &Variant, width: usize) -> String {
    let name = match (story.partition, story.stale_first) {
        (true, _) => "The partition story",
        (false, true) => "The story with A back first",
        (false, false) => "The story",
    };
    let mut out = format!("{}\n\n", fill(&title(name, variant), width, "", "").bold());
    out.push_str(&timeline(&story.events, width));
    out.push_str(&final_row_text(story.final_row.as_ref(), width));
    let words = conclusion(story);
    let conclusion = fill(&words, width, "", "").bold();
    let conclusion = if story.ending() == Ending::Protected {
        conclusion.green()
    } else {
        conclusion.red()
    };
    writeln!(out, "\n{conclusion}").unwrap();
    if story.ending() == Ending::Protected && variant.is_reference() {
        let next = match (story.stale_first, variant.server().is_some()) {
            _ if story.partition => {
                "Now a store that asks only whether the job is running, as River and pg-boss \
                 do: lab demo --engine postgres --partition --variant pgf06a"
            }
            (true, false) => {
                "Now a store that asks only whether the job is running: lab demo --variant f06a"
            }
            (false, false) => {
                "Now try it on a store that trusts the lease alone: lab demo --variant h06h"
            }
            // River's and pg-boss's completion: the job's state alone.
            (_, true) => {
                "Now a store that asks only whether the job is running, as River and pg-boss \
                 do: lab demo --engine postgres --variant pgf06a"
            }
        };
        writeln!(out, "{}", fill(next, width, "", "  ")).unwrap();
    }
    out
}

/// What a takeover story shows, in words judged from its answers and
/// final row.
fn conclusion(story: &Story) -> String {
    match story.ending() {
        Ending::JobLost => {
            let told: Vec<&str> = [(story.a_completed, "A"), (story.b_completed, "B")]
                .iter()
                .filter(|(accepted, _)| *accepted)
                .map(|(_, who)| *who)
                .collect();
            let mut words = "The job is GONE: its row no longer exists, so no result is stored".to_string();
            if !told.is_empty() {
                words.push_str(&format!(
                    ", though {} {} told {} completion was accepted",
                    told.join(" and "),
                    if told.len() == 1 { "was" } else { "were" },
                    if told.len() == 1 { "its" } else { "their" },
                ));
            }
            words.push('.');
            if story.a_completed && story.b_fence.is_some() && !story.b_completed {
                words.push_str(" A's stale completion took the job away from B, which held it.");
            }
            words
        }
        Ending::StaleWriteLanded if story.b_completed => {
            "The stale write LANDED: A, whose lease was taken over, overwrote B's result.".into()
        }
        Ending::StaleWriteLanded if story.b_fence.is_some() => {
            "The stale write LANDED: A, whose lease was taken over, stored its result while B held the job, and B's completion was refused: B's work is lost.".into()
        }
        Ending::StaleWriteLanded => {
            "The stale write LANDED: A stored its result after its lease had run out.".into()
        }
        Ending::Protected => "A's stale write was refused; B's result stands.".into(),
        Ending::StaleToldSuccess => {
            "A was told its completion succeeded, but B's result is stored: A believes a result that was never written (and may acknowledge it downstream).".into()
        }
        Ending::NoTakeover => {
            "B could not take over the expired lease, so no result was stored: the job is stuck with a worker that stalled.".into()
        }
        Ending::Broken => {
            "B took over, but its result is not what the row holds: the store lost or refused the current worker's write.".into()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::course::demo::play_power_cut;
    use crate::runner::DEFAULT_TIMEOUT;
    use std::path::Path;

    /// A row a program stored is shown inert: its owner, and its result
    /// as Rust writes a string.
    #[test]
    fn the_final_row_is_shown_inert() {
        let row = Job {
            owner: Some("\x1b]0;pwned\x07B\u{202e}".into()),
            result: Some("\x1b[1A".into()),
            ..Job::default()
        };
        assert_eq!(
            final_row_text(Some(&row), 100),
            "\n  final row: owner \\x1b]0;pwned\\x07B\\u{202e}, fence 0, done false, result \"\\u{1b}[1A\"\n"
        );
    }

    fn play_on(id: &str, folder: &Path) -> (Story, String) {
        let variant = Variant::find(id).unwrap();
        let story = crate::course::demo::play(
            variant.open(DEFAULT_TIMEOUT).as_ref(),
            &folder.join(format!("{id}.db")),
        )
        .unwrap();
        let text = story_text(&story, &variant, 80);
        (story, text)
    }

    #[test]
    fn the_demo_tells_the_story_and_what_it_shows() {
        let folder = tempfile::tempdir().unwrap();
        let (_, text) = play_on("reference", folder.path());
        assert!(text.contains("B's result stands"), "{text}");
        assert!(text.contains("lab demo --variant h06h"), "{text}");
        assert!(text.contains("t=113   A  wakes up"), "{text}");
        let (_, text) = play_on("h06h", folder.path());
        assert!(text.contains("The stale write LANDED"), "{text}");
    }

    /// The partition story is named as such, and on the reference it
    /// points to the field's completion with the link cut too.
    #[test]
    fn the_partition_story_is_named_and_points_to_the_field_s_completion() {
        let folder = tempfile::tempdir().unwrap();
        let (mut story, _) = play_on("reference", folder.path());
        story.partition = true;
        let text = story_text(&story, &Variant::reference(), 80);
        assert!(
            text.starts_with("The partition story on the reference store"),
            "{text}"
        );
        assert!(
            text.contains("lab demo --engine postgres --partition --variant pgf06a"),
            "{text}"
        );
    }

    #[test]
    fn a_store_that_refuses_the_takeover_is_not_said_to_protect_b() {
        let folder = tempfile::tempdir().unwrap();
        let (_, text) = play_on("04", folder.path());
        assert!(!text.contains("B's result stands"), "{text}");
        assert!(text.contains("B could not take over"), "{text}");
        assert!(text.contains("final row: owner A, fence 1"), "{text}");
    }

    #[test]
    fn the_power_cut_story_tells_the_fence_kept_on_the_reference_and_reused_without_full_sync() {
        let folder = tempfile::tempdir().unwrap();
        let play_cut = |id: &str| {
            let variant = Variant::find(id).unwrap();
            let story = play_power_cut(
                variant.open(DEFAULT_TIMEOUT).as_ref(),
                &folder.path().join(format!("{id}.db")),
            )
            .unwrap();
            power_cut_text(&story, &variant, 80)
        };
        let text = play_cut("reference");
        assert!(
            text.contains("Fence 1 survived the power cut: B got fence 2"),
            "{text}"
        );
        assert!(
            text.contains("lab demo --power-cut --variant h04g"),
            "{text}"
        );
        let text = play_cut("h04g");
        assert!(text.contains("Fence 1 was handed out TWICE"), "{text}");
        assert!(
            text.contains("writes not yet synced to disk are lost"),
            "{text}"
        );
    }
}

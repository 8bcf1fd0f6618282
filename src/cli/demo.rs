//! `lab demo`: the worksheet's story replayed on a real database.
//!
//! A claims the job and stalls; its lease runs out; B claims it with the
//! next fence and completes; A comes back and tries to complete with its
//! old fence. The reference refuses A and keeps B's result. Replayed with a
//! mutant, the same story shows where that protection breaks; what the
//! lab concludes comes from the answers and the final row, whatever the
//! variant did.
//!
//! A mutant that breaks only in another order of the calls names its own
//! story in its file (`story = "stale-first"`, `"restart"`), which `lab demo
//! --variant ID` then tells; `--story NAME` tells any story on any variant.
//!
//! `lab demo --power-cut` tells the other story the fence must survive: A
//! claims, the power fails before the disk has what was not synced, the
//! machine restarts, B claims. B must get a greater fence than A's, or two
//! workers hold the same token. The power cut is the lab's VFS shim
//! ([`lease_lab::vfs_shim`]), so this story runs only on the stores
//! compiled into `lab`.
//!
//! The stories are played, and what they show judged, in the library
//! ([`lease_lab::course::demo`]) and told in [`lease_lab::report::demo`].

use super::args::{EngineArg, ImplArgs};
use super::outcome::{say, CliError, Outcome};
use lease_lab::course::demo::{play_power_cut, story_for, tell, DemoStory, Told};
use lease_lab::report::demo::{power_cut_text, restart_text, story_text};
use lease_lab::runner::DEFAULT_TIMEOUT;
use lease_lab::variant::REFERENCE_ID;
use std::path::PathBuf;

/// `lab demo`'s arguments.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Replay it on a mutant instead of the reference (e.g. h06h).
    #[arg(long, default_value = REFERENCE_ID)]
    variant: String,
    /// Keep the database at this path (default: a temporary one).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Tell the power-cut story instead: A claims, the power fails, B claims
    /// (try it with --variant h04g, a store that does not sync each commit).
    #[arg(long)]
    power_cut: bool,
    /// Which story to tell (default: the one the mutant's file names, else
    /// takeover).
    #[arg(long, value_enum, conflicts_with = "power_cut")]
    story: Option<StoryName>,
    #[command(flatten)]
    implementation: ImplArgs,
}

/// A story, as `--story` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum StoryName {
    /// The worksheet's: B takes over and completes, then A comes back.
    Takeover,
    /// A comes back while B is still working: A completes, then B.
    StaleFirst,
    /// A releases the job, every worker restarts, B claims.
    Restart,
}

impl StoryName {
    fn story(self) -> DemoStory {
        match self {
            StoryName::Takeover => DemoStory::Takeover,
            StoryName::StaleFirst => DemoStory::StaleFirst,
            StoryName::Restart => DemoStory::Restart,
        }
    }
}

/// `lab demo`: plays the story and tells it.
pub fn run(args: &Args) -> Outcome {
    if args.power_cut && args.implementation.engine == EngineArg::Postgres {
        return Err(CliError::Usage(
            "--power-cut cuts the power of the lab's disk model, which the store on \
             PostgreSQL is not on; its crash is `lab chaos --engine postgres --faults \
             server-crash` (leave out --power-cut)"
                .into(),
        ));
    }
    let variant = args.implementation.variant(&args.variant)?;
    let folder = tempfile::tempdir()
        .map_err(|error| CliError::Failed(format!("cannot make a temporary folder: {error}")))?;
    let path = args
        .db
        .clone()
        .unwrap_or_else(|| folder.path().join("demo.db"));
    let store = variant.open(DEFAULT_TIMEOUT);
    if args.power_cut {
        if !store.in_this_process() {
            return Err(CliError::Usage(format!(
                "the power cut is simulated under the stores compiled into lab, and {} runs in a program of its own: use --impl rust (the default)",
                args.implementation.subject.name()
            )));
        }
        let story = play_power_cut(store.as_ref(), &path)
            .map_err(|error| CliError::Failed(error.to_string()))?;
        return say(&power_cut_text(
            &story,
            &variant,
            lease_lab::terminal::text_width(),
        ));
    }
    let told = tell(
        story_for(args.story.map(StoryName::story), &variant),
        store.as_ref(),
        &path,
    )
    .map_err(|error| CliError::Failed(error.to_string()))?;
    let width = lease_lab::terminal::text_width();
    say(&match told {
        Told::Takeover(story) => story_text(&story, &variant, width),
        Told::Restart(story) => restart_text(&story, &variant, width),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use lease_lab::variant::Variant;
    use lease_lab::vfs_shim::Disk;

    /// `lab demo` with `args`, through the command line's own parsing.
    fn demo(args: &[&str]) -> Outcome {
        let cli = Cli::try_parse_from([&["lab", "demo"][..], args].concat()).unwrap();
        let Some(Command::Demo(args)) = cli.command else {
            unreachable!("lab demo parses as the demo command");
        };
        run(&args)
    }

    /// `lab demo --variant ID` tells the story the mutant's file names, and
    /// `--story` tells any story on any variant; the reference is
    /// protected in each.
    #[test]
    fn a_mutant_s_story_is_told_unless_another_is_asked_for() {
        let folder = tempfile::tempdir().unwrap();
        let told = |args: &[&str]| {
            let db = folder.path().join(format!("{}.db", args.join("-")));
            let cli = Cli::try_parse_from(
                [&["lab", "demo", "--db", db.to_str().unwrap()][..], args].concat(),
            )
            .unwrap();
            let Some(Command::Demo(args)) = cli.command else {
                unreachable!("lab demo parses as the demo command");
            };
            let variant = Variant::find(&args.variant).unwrap();
            let store = variant.open(DEFAULT_TIMEOUT);
            match tell(
                story_for(args.story.map(StoryName::story), &variant),
                store.as_ref(),
                &db,
            )
            .unwrap()
            {
                Told::Takeover(story) => story_text(&story, &variant, 80),
                Told::Restart(story) => restart_text(&story, &variant, 80),
            }
        };
        let text = told(&["--variant", "f06a"]);
        assert!(
            text.starts_with("The story with A back first on mutant f06a"),
            "{text}"
        );
        assert!(text.contains("The stale write LANDED"), "{text}");
        let text = told(&["--variant", "f06a", "--story", "takeover"]);
        assert!(text.contains("B's result stands"), "{text}");
        let text = told(&["--variant", "f06b"]);
        assert!(text.contains("The job is GONE"), "{text}");
        assert!(text.contains("final row: none"), "{text}");
        let text = told(&["--variant", "f06c"]);
        assert!(
            text.contains("A was told its completion succeeded, but B's result is stored"),
            "{text}"
        );
        let text = told(&["--variant", "f01a"]);
        assert!(
            text.starts_with("The restart story on mutant f01a"),
            "{text}"
        );
        assert!(text.contains("Fence 1 was handed out TWICE"), "{text}");
        for story in ["takeover", "stale-first", "restart"] {
            let text = told(&["--story", story]);
            assert!(
                text.contains("B's result stands") || text.contains("survived the restart"),
                "{story}: {text}"
            );
        }
        let error =
            Cli::try_parse_from(["lab", "demo", "--story", "restart", "--power-cut"]).unwrap_err();
        assert!(error.to_string().contains("cannot be used with"), "{error}");
        let error = Cli::try_parse_from(["lab", "demo", "--story", "sad"]).unwrap_err();
        assert!(
            error.to_string().contains("takeover, stale-first, restart"),
            "{error}"
        );
    }

    /// A story that could not be told is a command that could not run (exit 3),
    /// with the library's message: the store's, or the shim's.
    #[test]
    fn a_story_that_could_not_be_told_fails_with_the_library_s_message() {
        let folder = tempfile::tempdir().unwrap();
        let missing = folder.path().join("missing/x.db");
        for power_cut in [&[][..], &["--power-cut"]] {
            let error =
                demo(&[&["--db", missing.to_str().unwrap()][..], power_cut].concat()).unwrap_err();
            assert_eq!(error.exit_code(), 3, "{error:?}");
            assert!(error.to_string().contains("does not exist"), "{error}");
        }
        let db = folder.path().join("tracked.db");
        let _tracked = Disk::track(&db).unwrap();
        let error = demo(&["--power-cut", "--db", db.to_str().unwrap()]).unwrap_err();
        assert_eq!(error.exit_code(), 3, "{error:?}");
        let message = error.message().unwrap();
        assert!(
            message.starts_with("the simulated power cut failed: "),
            "{message}"
        );
        assert!(message.contains("another Disk tracks"), "{message}");
    }
}

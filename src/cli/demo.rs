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
//! `lab demo --engine postgres --partition` tells the worksheet's story
//! with a real stall: A and B are processes on hosts of their own (network
//! namespaces), and A's link to the server is cut after its claim.
//!
//! The stories are played, and what they show judged, in the library
//! ([`lease_lab::course::demo`]) and told in [`lease_lab::report::student::demo`].

use super::args::{worker_command, EngineArg, ImplArgs};
use super::exit::{say, CliError, Outcome};
use lease_lab::chaos::run::Workers;
use lease_lab::course::demo::{
    play_partition_on_hosts, play_power_cut, story_for, tell, DemoStory, Told,
};
use lease_lab::pg_server::Hosts;
use lease_lab::report::student::demo::{power_cut_text, restart_text, story_text};
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
    /// With --engine postgres: tell the story with a real partition. A and
    /// B are workers on hosts of their own (network namespaces; needs root
    /// and `ip`), the server on another; A's link to it is cut after its
    /// claim, and mended when A comes back (takeover or stale-first).
    /// Nothing is left when it ends.
    #[arg(long, conflicts_with_all = ["power_cut", "db"])]
    partition: bool,
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
    if args.partition {
        return partition(args);
    }
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

/// `lab demo --partition`: A and B on hosts of their own, A's link cut
/// for real.
fn partition(args: &Args) -> Outcome {
    if args.implementation.engine != EngineArg::Postgres {
        return Err(CliError::Usage(
            "--partition cuts a worker's link to a database server, and this store keeps \
             its jobs in a file; add --engine postgres"
                .into(),
        ));
    }
    if args.implementation.dsn.is_some() {
        return Err(CliError::Usage(
            "--partition starts a cluster of its own on a host of its own, and cannot move \
             a server it is given; leave out --dsn"
                .into(),
        ));
    }
    let variant = args.implementation.variant_on_hosts(&args.variant)?;
    let stale_first = match story_for(args.story.map(StoryName::story), &variant) {
        DemoStory::Takeover => false,
        DemoStory::StaleFirst => true,
        DemoStory::Restart => {
            return Err(CliError::Usage(
                "--partition cuts A's link while B takes the job over: tell it as the \
                 takeover or stale-first story (--story restart has no takeover)"
                    .into(),
            ))
        }
    };
    let workers = Workers::of(&variant, &worker_command()?)
        .on_hosts()
        .map_err(|error| CliError::Usage(error.to_string()))?;
    Hosts::can_be_made().map_err(|error| CliError::Failed(error.to_string()))?;
    // Said before the story: what it makes, and that it goes.
    eprintln!(
        "lab: A and B each on a host of its own (a network namespace), the server on\n     another, on a cluster of the story's own; all removed when it ends"
    );
    let story = play_partition_on_hosts(&workers, stale_first)
        .map_err(|error| CliError::Failed(error.to_string()))?;
    say(&story_text(
        &story,
        &variant,
        lease_lab::terminal::text_width(),
    ))
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

    /// `--partition` is refused, before anything is made, where it cannot
    /// be told: on a file, on a server given, with a story without a
    /// takeover, on another store than the lab's Rust one.
    #[test]
    fn a_partition_is_refused_where_it_cannot_be_told() {
        for (args, says) in [
            (
                &[][..],
                "this store keeps its jobs in a file; add --engine postgres",
            ),
            (
                &["--engine", "postgres", "--dsn", "host=/nowhere"],
                "cannot move a server it is given; leave out --dsn",
            ),
            (
                &["--engine", "postgres", "--story", "restart"],
                "(--story restart has no takeover)",
            ),
            (
                &["--engine", "postgres", "--impl", "python"],
                "not the lab's python store; leave out --impl",
            ),
            (
                &["--engine", "postgres", "--variant", "f06a"],
                "no variant \"f06a\"",
            ),
        ] {
            let error = demo(&[&["--partition"][..], args].concat()).unwrap_err();
            assert_eq!(error.exit_code(), 2, "{args:?}: {error:?}");
            assert!(error.to_string().contains(says), "{args:?}: {error}");
        }
        for other in ["--power-cut", "--db=x.db"] {
            let error = Cli::try_parse_from(["lab", "demo", "--partition", other]).unwrap_err();
            assert!(error.to_string().contains("cannot be used with"), "{error}");
        }
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

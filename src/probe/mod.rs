//! Probes: a student's prediction written as store operations and the
//! answers the student expects, which the lab runs against the reference
//! and against mutants.
//!
//! A probe is good when every line holds on the reference and some line
//! fails on the mutant: it names an input, error or stored state that tells
//! the two apart. A probe that fails on the reference reads the contract
//! wrongly, since the reference is the contract.
//!
//! # The probe language
//!
//! One operation per line, optionally followed by `->` and the expected
//! answer. `#` starts a comment (outside quotes); blank lines are ignored.
//!
//! ```text
//! # step 4: a lease that ends exactly now can be taken over
//! enqueue j1                        -> true
//! claim j1 A now=100 ttl=10         -> 1
//! claim j1 B now=110 ttl=5          -> 2    # the boundary
//! state j1 fence                    -> 2
//! state j1 -> owner=B until=115 done=false
//! claim j1 C now=112 ttl=0          -> error invalid-argument
//! enqueue j2
//! claim-many j2 w*64 now=100 ttl=10 -> one-winner
//! ```
//!
//! Every probe starts on a new database that `init_db` has already created,
//! as a worker's start-up would; `init` calls `init_db` again. The
//! operations mirror `lab db`:
//!
//! | line | answer |
//! |---|---|
//! | `init` | `ok` |
//! | `enqueue JOB` | `true` / `false` |
//! | `state JOB` | `none`, or `FIELD=VALUE ...` (only the fields listed are checked) |
//! | `state JOB FIELD` | the field's value (`none` for an empty owner or result) |
//! | `claim JOB OWNER now=N ttl=T` | a fence, or `none` |
//! | `renew JOB OWNER FENCE now=N ttl=T` | `true` / `false` |
//! | `complete JOB OWNER FENCE now=N result=TEXT` | `true` / `false` |
//! | `release JOB OWNER FENCE` | `true` / `false` |
//! | `claim-many JOB OWNER... now=N ttl=T` | `[1, none, ...]`, `one-winner` or `winners=K` |
//!
//! The fields are `id`, `owner`, `until`, `fence`, `result` and `done`.
//! Any operation may instead expect `error` (any error) or `error KIND`,
//! KIND being the name of an [`ErrorKind`](crate::error::ErrorKind). A
//! line without `->` must merely not fail. Names and texts with spaces or special characters are written
//! in double quotes (`result="all done"`, `""` for an empty id); a quoted
//! `"none"` is the text, not the absence. In `claim-many`, an unquoted
//! owner `NAME*K` stands for the K owners `NAME1` to `NAMEK`; a line names
//! at most [`MAX_OWNERS`] owners in all. `null` is
//! accepted for `none`.
//!
//! `one-winner` and `winners=K` check that every owner got an answer and
//! that exactly one (or K) of them got a fence; a list checks every answer
//! in owner order. A race left to the scheduler shows a bug on some runs
//! only, so the claims of `claim-many` queue behind another client's write
//! lock until every one of them waits for it, and race when it is let go
//! (see [`crate::race`]): a probe's verdict is the same on every run.

mod judge;
mod line;
mod parse;
mod reply;
mod run;

pub use judge::{
    check, check_text, judge, CheckOptions, Difference, MutantCheck, ProbeCheck, Verdict,
};
pub use line::{Expectation, Field, Probe, ProbeError, ProbeLine, Value, MAX_OWNERS};
pub use parse::{load, parse};
pub use reply::Reply;
pub use run::{run, LineRun, ProbeRun};

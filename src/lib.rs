//! lease-lab: a teaching lab for fencing tokens.
//!
//! The library holds a real job store on SQLite ([`store`]) whose lease and
//! fencing token stop a stalled worker from overwriting a newer result, the
//! contract suite that checks it ([`suite`]), and the machinery of the `lab`
//! binary that runs that suite against deliberately broken copies of the
//! store ([`variant`], [`runner`]) and shows what caught them ([`matrix`],
//! [`report`], [`probe`]). The command line itself lives in the binary.
//!
//! The store's functions are re-exported at the top level:
//!
//! ```
//! use lease_lab::{claim, complete, enqueue, init_db, state, Fence};
//!
//! let dir = tempfile::tempdir()?;
//! let db = dir.path().join("jobs.db");
//! init_db(&db)?;
//! enqueue(&db, "report")?;
//! let a = claim(&db, "report", "A", 100.0, 10.0)?; // A takes fence 1 and stalls
//! let b = claim(&db, "report", "B", 110.0, 10.0)?; // the lease ran out: B takes fence 2
//! assert_eq!((a, b), (Some(Fence(1)), Some(Fence(2))));
//! assert!(complete(&db, "report", "B", Fence(2), 112.0, "B's result")?);
//! assert!(!complete(&db, "report", "A", Fence(1), 113.0, "A's late result")?);
//! assert_eq!(state(&db, "report")?.unwrap().result.as_deref(), Some("B's result"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod analysis;
pub mod chaos;
pub mod child_process;
pub mod course;
pub mod error;
pub mod exercise;
pub mod exercise_table;
pub mod external;
pub mod fault;
pub mod handle;
pub mod immutable;
pub mod job;
pub mod job_store;
pub mod lab_text;
pub mod matrix;
pub mod mutant;
pub mod operation;
pub mod outcome;
pub mod probe;
pub mod program_threads;
pub mod race;
pub mod reach;
pub mod report;
pub mod runner;
pub mod serve;
pub mod store;
pub mod subject;
pub mod suite;
pub mod terminal;
pub mod variant;
pub mod vfs_shim;

pub use error::{ErrorKind, Result, StoreError};
pub use job::{Fence, Job};
pub use variant::active::{
    claim, claim_many, complete, enqueue, init_db, release, renew, state, Store,
};

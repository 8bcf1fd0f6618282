//! The job store of lease-lab: an ownership lease and a fencing token that
//! only grows, so that a worker that stalled and came back late can never
//! overwrite the result of the worker that took its job over.
//!
//! One file per engine holds the reference implementation, in the
//! worksheet's order (steps 1 to 8) and with no mutant code: [`store`] on
//! SQLite, [`store_postgres`] on PostgreSQL. Beside them are the values they
//! hand out ([`job`]), their errors ([`error`]), a call described once
//! ([`operation`]) and the eight operations as a trait, with the one match
//! that runs a call on it ([`backend`]).
//!
//! The build script (`build.rs`) turns every file of the workspace's
//! `mutants/` that changes one of these two files into a copy of it with
//! the fragment replaced, compiled in as a module of [`variants`], with the
//! operations each change can reach ([`reach`]). The mutant files are read
//! with [`mutant`], which the build script includes too. The lab (the
//! `lease-lab` crate) depends on this crate and re-exports its modules, so
//! an edit of the lab recompiles none of these copies.
//!
//! Without its default feature `variants`, the crate has no compiled mutants;
//! a feature `mutant-ID` (or `LEASE_LAB_MUTANT=ID`) makes the crate's public
//! store ([`variants::active`], re-exported at the top) that mutant.
//!
//! ```
//! use lease_lab_store::{claim, enqueue, init_db, Fence};
//!
//! let dir = tempfile::tempdir()?;
//! let db = dir.path().join("jobs.db");
//! init_db(&db)?;
//! enqueue(&db, "report")?;
//! assert_eq!(claim(&db, "report", "A", 100.0, 10.0)?, Some(Fence(1)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

pub mod backend;
pub mod error;
pub mod job;
pub mod mutant;
pub mod operation;
pub mod reach;
pub mod store;
pub mod store_postgres;
pub mod variants;

pub use error::{ErrorKind, Result, StoreError};
pub use job::{Fence, Job};
pub use variants::active::{
    claim, claim_many, complete, enqueue, init_db, release, renew, state, Store,
};

//! The reference stores and their mutants, compiled into this crate: each
//! mutant of `mutants/` is a copy of its store's file with the fragment
//! replaced, written and included as a module by the build script
//! (`build.rs`), and listed with what it is ([`CompiledMutant`]) in
//! [`MUTANTS`] (the store on a file) and [`SERVER_MUTANTS`] (the store on
//! PostgreSQL). Each store's eight operations are a value: [`CompiledStore`]
//! for one on a file, [`ServerStore`] for one on a server.

use crate::error::Result;
use crate::mutant::{DemoStory, MutantKind};
#[cfg(doc)]
use crate::mutant::{MUTABLE_FILE, POSTGRES_STORE};
use crate::operation::{Answer, Operation};
use std::path::Path;
use std::time::Duration;

/// A mutant compiled into this crate by its build script (`build.rs`), with
/// its operations (`S`): a store on a file ([`CompiledStore`]) or on a
/// server ([`ServerStore`]).
#[derive(Clone, Copy)]
pub struct CompiledMutant<S: 'static = CompiledStore> {
    /// The mutant's id (`04`, `08b`, `h05a`).
    pub id: &'static str,
    /// The worksheet step whose contract it breaks.
    pub step: u8,
    /// What the broken code does, in one line.
    pub title: &'static str,
    /// Worksheet, hardening or field.
    pub kind: MutantKind,
    /// Its file in `mutants/`.
    pub file_name: &'static str,
    /// The store's source file it changes ([`MUTABLE_FILE`] or
    /// [`POSTGRES_STORE`]).
    pub file: &'static str,
    /// That file's reference source, exactly as compiled.
    pub original: &'static str,
    /// The reference text it replaces.
    pub fragment: &'static str,
    /// The text it puts in its place.
    pub replacement: &'static str,
    /// Why the change breaks the contract.
    pub explanation: &'static str,
    /// The worksheet's own wording of the fragment, if any.
    pub worksheet: Option<&'static str>,
    /// The `lab demo` story that shows its break, if not the worksheet's.
    pub story: Option<DemoStory>,
    /// The whole mutated store source, exactly as compiled.
    pub source: &'static str,
    /// The operations that can run its change, by name, in
    /// [`NAMES`](crate::operation::NAMES) order (see [`crate::reach`]): a
    /// test that calls none of them runs no mutated code.
    pub reaches: &'static [&'static str],
    /// Its eight operations.
    pub store: S,
}

/// The source of the reference store, exactly as compiled.
pub const REFERENCE_SOURCE: &str = include_str!("store.rs");

/// The source of the reference store on PostgreSQL, exactly as compiled.
pub const POSTGRES_SOURCE: &str = include_str!("store_postgres.rs");

/// The reference implementation's operations.
pub static REFERENCE: CompiledStore = compiled_store!(crate::store);

mod generated {
    use super::CompiledMutant;
    include!(concat!(env!("OUT_DIR"), "/variants.rs"));
}

pub use generated::{active, ACTIVE_MUTANT, MUTANTS, SERVER_MUTANTS};

/// The operations of the store the crate exports (see [`ACTIVE_MUTANT`]).
pub static ACTIVE: CompiledStore = compiled_store!(self::active);

/// The compiled mutant with this id, if any.
pub fn compiled_mutant(id: &str) -> Option<&'static CompiledMutant> {
    MUTANTS.iter().find(|mutant| mutant.id == id)
}

impl<S> std::fmt::Debug for CompiledMutant<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledMutant")
            .field("id", &self.id)
            .field("step", &self.step)
            .field("kind", &self.kind)
            .field("title", &self.title)
            .finish_non_exhaustive()
    }
}

/// A store compiled into this crate: the reference, or a mutant's copy
/// of it. Made by `compiled_store!` from the module's path functions.
#[derive(Clone, Copy)]
pub struct CompiledStore {
    pub(crate) run: fn(&Path, &Operation) -> Result<Answer>,
    pub(crate) set_busy_timeout: fn(Option<Duration>),
}

impl CompiledStore {
    /// Runs `operation` on the database at `db`, as the store's path
    /// function of that operation does.
    ///
    /// Errors: the store's, as each operation documents them.
    pub fn call(&self, db: &Path, operation: &Operation) -> Result<Answer> {
        (self.run)(db, operation)
    }

    /// Sets how long this thread's calls wait for a lock (`None`: the
    /// default), as the store's `set_thread_busy_timeout` does.
    pub fn set_thread_busy_timeout(&self, timeout: Option<Duration>) {
        (self.set_busy_timeout)(timeout)
    }
}

/// The [`CompiledStore`] of a store module (the reference or a mutant's
/// copy): each operation goes to the module's path function, through an
/// adapter ([`Backend`](crate::backend::Backend) on the database's path)
/// and [`answer`](crate::backend::answer).
macro_rules! compiled_store {
    ($($module:ident)::+) => {
        $crate::variants::CompiledStore {
            run: |db, operation| {
                use $crate::error::Result;
                use $crate::job::{Fence, Job};
                /// The module's path functions on the database at a path.
                struct At<'a>(&'a ::std::path::Path);
                impl $crate::backend::Backend for At<'_> {
                    type Error = $crate::error::StoreError;
                    fn init_db(&self) -> Result<()> {
                        $($module)::+::init_db(self.0)
                    }
                    fn enqueue(&self, job_id: &str) -> Result<bool> {
                        $($module)::+::enqueue(self.0, job_id)
                    }
                    fn state(&self, job_id: &str) -> Result<Option<Job>> {
                        $($module)::+::state(self.0, job_id)
                    }
                    fn claim(
                        &self,
                        job_id: &str,
                        owner: &str,
                        now: f64,
                        ttl: f64,
                    ) -> Result<Option<Fence>> {
                        $($module)::+::claim(self.0, job_id, owner, now, ttl)
                    }
                    fn renew(
                        &self,
                        job_id: &str,
                        owner: &str,
                        fence: Fence,
                        now: f64,
                        ttl: f64,
                    ) -> Result<bool> {
                        $($module)::+::renew(self.0, job_id, owner, fence, now, ttl)
                    }
                    fn complete(
                        &self,
                        job_id: &str,
                        owner: &str,
                        fence: Fence,
                        now: f64,
                        result: &str,
                    ) -> Result<bool> {
                        $($module)::+::complete(self.0, job_id, owner, fence, now, result)
                    }
                    fn release(&self, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
                        $($module)::+::release(self.0, job_id, owner, fence)
                    }
                    fn claim_many(
                        &self,
                        job_id: &str,
                        owners: &[&str],
                        now: f64,
                        ttl: f64,
                    ) -> Result<Vec<Option<Fence>>> {
                        $($module)::+::claim_many(self.0, job_id, owners, now, ttl)
                    }
                }
                // As a `dyn`, so that one `answer` is compiled for every
                // copy, not one per copy.
                let at: &dyn $crate::backend::Backend<Error = _> = &At(db);
                $crate::backend::answer(at, operation)
            },
            set_busy_timeout: |timeout| $($module)::+::set_thread_busy_timeout(timeout),
        }
    };
}

pub(crate) use compiled_store;

/// Defines `On`, a connection of a module's `Postgres` (the reference's, or
/// a mutated copy's) as a [`Backend`](crate::backend::Backend): each
/// operation goes to the method of that name; `init_db` takes no path, the
/// server holds the table.
macro_rules! on_postgres {
    ($($module:ident)::+) => {
        /// A connection to the server, with the module's operations.
        struct On<'a>(&'a $($module)::+::Postgres);
        impl $crate::backend::Backend for On<'_> {
            type Error = $crate::error::StoreError;
            fn init_db(&self) -> $crate::error::Result<()> {
                self.0.init_db()
            }
            fn enqueue(&self, job_id: &str) -> $crate::error::Result<bool> {
                self.0.enqueue(job_id)
            }
            fn state(
                &self,
                job_id: &str,
            ) -> $crate::error::Result<Option<$crate::job::Job>> {
                self.0.state(job_id)
            }
            fn claim(
                &self,
                job_id: &str,
                owner: &str,
                now: f64,
                ttl: f64,
            ) -> $crate::error::Result<Option<$crate::job::Fence>> {
                self.0.claim(job_id, owner, now, ttl)
            }
            fn renew(
                &self,
                job_id: &str,
                owner: &str,
                fence: $crate::job::Fence,
                now: f64,
                ttl: f64,
            ) -> $crate::error::Result<bool> {
                self.0.renew(job_id, owner, fence, now, ttl)
            }
            fn complete(
                &self,
                job_id: &str,
                owner: &str,
                fence: $crate::job::Fence,
                now: f64,
                result: &str,
            ) -> $crate::error::Result<bool> {
                self.0.complete(job_id, owner, fence, now, result)
            }
            fn release(
                &self,
                job_id: &str,
                owner: &str,
                fence: $crate::job::Fence,
            ) -> $crate::error::Result<bool> {
                self.0.release(job_id, owner, fence)
            }
            fn claim_many(
                &self,
                job_id: &str,
                owners: &[&str],
                now: f64,
                ttl: f64,
            ) -> $crate::error::Result<Vec<Option<$crate::job::Fence>>> {
                self.0.claim_many(job_id, owners, now, ttl)
            }
        }
    };
}

pub(crate) use on_postgres;

/// `operation` on the reference store `store`, on its connection, as the
/// protocol answers it.
///
/// Errors: the store's, as each operation documents them.
pub fn call(
    store: &crate::store_postgres::Postgres,
    operation: &Operation,
) -> crate::store_postgres::Result<Answer> {
    on_postgres!(crate::store_postgres);
    crate::backend::answer(&On(store), operation)
}

/// The operations of a store on PostgreSQL compiled into this crate: the
/// reference's ([`POSTGRES_REFERENCE`]) or a mutant's (`build.rs` makes one per
/// mutant of `src/store_postgres.rs`).
#[derive(Clone, Copy)]
pub struct ServerStore {
    /// Connects to the server at the connection string given, with the
    /// `jobs` table in the schema given (or the server's default), and
    /// runs the operation on that connection.
    pub run: fn(&str, Option<&str>, &Operation) -> crate::error::Result<Answer>,
}

/// The [`ServerStore`] of a module that defines the store's `Postgres`.
macro_rules! server_store {
    ($($module:ident)::+) => {
        $crate::variants::ServerStore {
            run: |dsn, schema, operation| {
                $crate::variants::on_postgres!($($module)::+);
                let store = $($module)::+::Postgres::connect_in(dsn, schema)?;
                // As a `dyn`: one `answer` for every copy.
                let on: &dyn $crate::backend::Backend<Error = _> = &On(&store);
                $crate::backend::answer(on, operation)
            },
        }
    };
}

#[allow(
    unused_imports,
    reason = "for the generated copies, which a build without the `variants` feature leaves out"
)]
pub(crate) use server_store;

/// The reference store on PostgreSQL's operations.
pub static POSTGRES_REFERENCE: ServerStore = server_store!(crate::store_postgres);

/// A row of `SELECT id, owner, until, fence, result, done FROM jobs` as a
/// [`Job`](crate::job::Job), as the reference store on PostgreSQL reads it:
/// for a client of the lab's own that reads the stored rows beside the store.
pub fn job_of(row: &postgres::Row) -> crate::job::Job {
    crate::store_postgres::job_of(row)
}

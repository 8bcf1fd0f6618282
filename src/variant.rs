//! The implementations the lab can test: the reference store and every
//! compiled mutant, each reachable through the same eight operations.

use crate::error::Result;
use crate::job::{Fence, Job};
use crate::mutant::MutantKind;
use std::path::Path;
use std::time::Duration;

/// The eight operations of one implementation of the store, path-based as
/// the worksheet's contract is. The contract suite takes an implementation
/// as a value of this trait, so one test runs against any variant.
pub trait JobStore: Send + Sync {
    /// `init_db(path)`.
    fn init_db(&self, path: &Path) -> Result<()>;
    /// `enqueue(path, job_id)`.
    fn enqueue(&self, path: &Path, job_id: &str) -> Result<bool>;
    /// `state(path, job_id)`.
    fn state(&self, path: &Path, job_id: &str) -> Result<Option<Job>>;
    /// `claim(path, job_id, owner, now, ttl)`.
    fn claim(
        &self,
        path: &Path,
        job_id: &str,
        owner: &str,
        now: f64,
        ttl: f64,
    ) -> Result<Option<Fence>>;
    /// `renew(path, job_id, owner, fence, now, ttl)`.
    fn renew(
        &self,
        path: &Path,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        ttl: f64,
    ) -> Result<bool>;
    /// `complete(path, job_id, owner, fence, now, result)`.
    fn complete(
        &self,
        path: &Path,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        result: &str,
    ) -> Result<bool>;
    /// `release(path, job_id, owner, fence)`.
    fn release(&self, path: &Path, job_id: &str, owner: &str, fence: Fence) -> Result<bool>;
    /// `claim_many(path, job_id, owners, now, ttl)`.
    fn claim_many(
        &self,
        path: &Path,
        job_id: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Result<Vec<Option<Fence>>>;
    /// How long this thread's calls wait for a lock (`None`: the default).
    fn set_thread_busy_timeout(&self, timeout: Option<Duration>);
}

/// The answers of `claim_many`: a fence or `None` per owner, in owner order.
pub type Claims = Vec<Option<Fence>>;

/// The eight path functions of one compiled store module, as plain
/// function pointers, so variants can live in a static table.
#[derive(Clone, Copy)]
pub struct Operations {
    /// See [`JobStore::init_db`].
    pub init_db: fn(&Path) -> Result<()>,
    /// See [`JobStore::enqueue`].
    pub enqueue: fn(&Path, &str) -> Result<bool>,
    /// See [`JobStore::state`].
    pub state: fn(&Path, &str) -> Result<Option<Job>>,
    /// See [`JobStore::claim`].
    pub claim: fn(&Path, &str, &str, f64, f64) -> Result<Option<Fence>>,
    /// See [`JobStore::renew`].
    pub renew: fn(&Path, &str, &str, Fence, f64, f64) -> Result<bool>,
    /// See [`JobStore::complete`].
    pub complete: fn(&Path, &str, &str, Fence, f64, &str) -> Result<bool>,
    /// See [`JobStore::release`].
    pub release: fn(&Path, &str, &str, Fence) -> Result<bool>,
    /// See [`JobStore::claim_many`].
    pub claim_many: fn(&Path, &str, &[&str], f64, f64) -> Result<Claims>,
    /// See [`JobStore::set_thread_busy_timeout`].
    pub set_thread_busy_timeout: fn(Option<Duration>),
}

/// The [`Operations`] of a store module (the reference or a mutant's copy).
#[macro_export]
#[doc(hidden)]
macro_rules! operations_of {
    ($($module:ident)::+) => {
        $crate::variant::Operations {
            init_db: |path| $($module)::+::init_db(path),
            enqueue: |path, job| $($module)::+::enqueue(path, job),
            state: |path, job| $($module)::+::state(path, job),
            claim: |path, job, owner, now, ttl| $($module)::+::claim(path, job, owner, now, ttl),
            renew: |path, job, owner, fence, now, ttl| $($module)::+::renew(path, job, owner, fence, now, ttl),
            complete: |path, job, owner, fence, now, result| {
                $($module)::+::complete(path, job, owner, fence, now, result)
            },
            release: |path, job, owner, fence| $($module)::+::release(path, job, owner, fence),
            claim_many: |path, job, owners, now, ttl| $($module)::+::claim_many(path, job, owners, now, ttl),
            set_thread_busy_timeout: |timeout| $($module)::+::set_thread_busy_timeout(timeout),
        }
    };
}

impl JobStore for Operations {
    fn init_db(&self, path: &Path) -> Result<()> {
        (self.init_db)(path)
    }
    fn enqueue(&self, path: &Path, job_id: &str) -> Result<bool> {
        (self.enqueue)(path, job_id)
    }
    fn state(&self, path: &Path, job_id: &str) -> Result<Option<Job>> {
        (self.state)(path, job_id)
    }
    fn claim(
        &self,
        path: &Path,
        job_id: &str,
        owner: &str,
        now: f64,
        ttl: f64,
    ) -> Result<Option<Fence>> {
        (self.claim)(path, job_id, owner, now, ttl)
    }
    fn renew(
        &self,
        path: &Path,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        ttl: f64,
    ) -> Result<bool> {
        (self.renew)(path, job_id, owner, fence, now, ttl)
    }
    fn complete(
        &self,
        path: &Path,
        job_id: &str,
        owner: &str,
        fence: Fence,
        now: f64,
        result: &str,
    ) -> Result<bool> {
        (self.complete)(path, job_id, owner, fence, now, result)
    }
    fn release(&self, path: &Path, job_id: &str, owner: &str, fence: Fence) -> Result<bool> {
        (self.release)(path, job_id, owner, fence)
    }
    fn claim_many(
        &self,
        path: &Path,
        job_id: &str,
        owners: &[&str],
        now: f64,
        ttl: f64,
    ) -> Result<Vec<Option<Fence>>> {
        (self.claim_many)(path, job_id, owners, now, ttl)
    }
    fn set_thread_busy_timeout(&self, timeout: Option<Duration>) {
        (self.set_thread_busy_timeout)(timeout)
    }
}

/// A mutant compiled into the binary by the build step.
#[derive(Clone, Copy)]
pub struct CompiledMutant {
    /// The mutant's id (`04`, `08b`, `h05a`).
    pub id: &'static str,
    /// The worksheet step whose contract it breaks.
    pub step: u8,
    /// What the broken code does, in one line.
    pub title: &'static str,
    /// Worksheet, hardening or own.
    pub kind: MutantKind,
    /// Its file in `mutants/`.
    pub file_name: &'static str,
    /// The reference text it replaces.
    pub fragment: &'static str,
    /// The text it puts in its place.
    pub replacement: &'static str,
    /// Why the change breaks the contract.
    pub explanation: &'static str,
    /// The worksheet's own wording of the fragment, if any.
    pub worksheet: Option<&'static str>,
    /// The whole mutated store source, exactly as compiled.
    pub source: &'static str,
    /// Its eight operations.
    pub operations: Operations,
}

/// An exercise text of `labs/`, compiled in.
#[derive(Debug, Clone, Copy)]
pub struct LabText {
    /// The step it belongs to.
    pub step: u8,
    /// Its file name.
    pub file_name: &'static str,
    /// Its markdown.
    pub text: &'static str,
}

/// The source of the reference store, exactly as compiled.
pub const REFERENCE_SOURCE: &str = include_str!("store.rs");

/// The id under which the lab reports the reference implementation.
pub const REFERENCE_ID: &str = "correct";

/// The reference implementation's operations.
pub static REFERENCE: Operations = crate::operations_of!(crate::store);

mod generated {
    use super::{CompiledMutant, LabText};
    include!(concat!(env!("OUT_DIR"), "/variants.rs"));
}

pub use generated::{active, ACTIVE_MUTANT, LAB_TEXTS, MUTANTS};

/// The operations of the store the library exports (see [`ACTIVE_MUTANT`]).
pub static ACTIVE: Operations = crate::operations_of!(self::active);

/// One implementation the lab runs the suite against.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The reference implementation.
    Reference,
    /// A compiled mutant.
    Mutant(&'static CompiledMutant),
}

impl Variant {
    /// Every variant: the reference first, then the mutants in file order.
    pub fn all() -> Vec<Variant> {
        std::iter::once(Variant::Reference)
            .chain(MUTANTS.iter().map(Variant::Mutant))
            .collect()
    }

    /// The variant with this id (`correct` or a mutant id), if any.
    pub fn find(id: &str) -> Option<Variant> {
        Variant::all()
            .into_iter()
            .find(|variant| variant.id() == id)
    }

    /// `correct` or the mutant's id.
    pub fn id(&self) -> &'static str {
        match self {
            Variant::Reference => REFERENCE_ID,
            Variant::Mutant(mutant) => mutant.id,
        }
    }

    /// Its operations.
    pub fn operations(&self) -> &'static Operations {
        match self {
            Variant::Reference => &REFERENCE,
            Variant::Mutant(mutant) => &mutant.operations,
        }
    }

    /// The mutant, or `None` for the reference.
    pub fn mutant(&self) -> Option<&'static CompiledMutant> {
        match self {
            Variant::Reference => None,
            Variant::Mutant(mutant) => Some(mutant),
        }
    }
}

/// The compiled mutant with this id, if any.
pub fn mutant(id: &str) -> Option<&'static CompiledMutant> {
    MUTANTS.iter().find(|mutant| mutant.id == id)
}

/// The exercise text of a step, if `labs/` has one.
pub fn lab_text(step: u8) -> Option<&'static LabText> {
    LAB_TEXTS.iter().find(|text| text.step == step)
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Variant({})", self.id())
    }
}

impl PartialEq for CompiledMutant {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl Eq for CompiledMutant {}

impl std::fmt::Debug for CompiledMutant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledMutant")
            .field("id", &self.id)
            .field("step", &self.step)
            .field("kind", &self.kind)
            .field("title", &self.title)
            .finish_non_exhaustive()
    }
}

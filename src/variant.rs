//! The implementations the lab runs the suite against: the reference store
//! and its mutants compiled into this binary.
//!
//! A [`Variant`] is one column of the kill matrix: an id, the mutant it is
//! (none for the reference), and what carries out its operations.

use crate::external::{ExternalStore, ImplCommand};
use crate::job_store::{CompiledStore, JobStore};
use crate::mutant::{MutantKind, MutantSpec};
use crate::pg_server::{OnServer, Server};
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

pub use lease_lab_store::variants::{
    active, compiled_mutant, CompiledMutant, ACTIVE, ACTIVE_MUTANT, MUTANTS, POSTGRES_SOURCE,
    REFERENCE, REFERENCE_SOURCE, SERVER_MUTANTS,
};

/// Another name of the reference, as commands take it.
pub const REFERENCE_ALIAS: &str = "correct";

/// The id under which the lab reports a reference implementation.
pub const REFERENCE_ID: &str = "reference";

/// A mutant as the lab shows and runs it: its file's fields and the
/// mutated source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// What its mutant file says.
    pub spec: MutantSpec,
    /// The reference source it changes.
    pub original: Cow<'static, str>,
    /// The mutated source, exactly as it runs.
    pub source: Cow<'static, str>,
    /// The operations that can run its change, by name (see
    /// [`crate::reach`]); `None` when the lab does not know, and every
    /// test may run it.
    pub reaches: Option<Vec<&'static str>>,
}

impl Mutant {
    /// Whether a test that called `operations` (by name) can run this
    /// mutant's change: it called an operation the change reaches, or the
    /// reach is unknown.
    pub fn covered_by<'a>(&self, mut operations: impl Iterator<Item = &'a str>) -> bool {
        match &self.reaches {
            None => true,
            Some(reaches) => operations.any(|operation| reaches.contains(&operation)),
        }
    }
}

impl<S> From<&'static CompiledMutant<S>> for Mutant {
    fn from(compiled: &'static CompiledMutant<S>) -> Mutant {
        Mutant {
            spec: MutantSpec {
                id: compiled.id.into(),
                step: compiled.step,
                title: compiled.title.into(),
                kind: compiled.kind,
                file: compiled.file.into(),
                fragment: compiled.fragment.into(),
                replacement: compiled.replacement.into(),
                explanation: compiled.explanation.into(),
                worksheet: compiled.worksheet.map(String::from),
                story: compiled.story,
            },
            original: Cow::Borrowed(compiled.original),
            source: Cow::Borrowed(compiled.source),
            reaches: Some(compiled.reaches.to_vec()),
        }
    }
}

/// What carries out a variant's operations.
#[derive(Clone)]
pub enum Engine {
    /// A store compiled into this binary.
    Compiled(&'static CompiledStore),
    /// A program that speaks the lab's protocol.
    Process(Arc<Program>),
    /// A store on PostgreSQL compiled into this binary, on a server.
    Server(Arc<OnServer>),
}

/// A program that speaks the lab's protocol, and the files it runs from
/// (a mutated copy of a store, written for the run), kept while it may run.
#[derive(Debug)]
pub struct Program {
    /// How to start it.
    pub command: ImplCommand,
    /// The folder of its files, removed when the last variant using it goes.
    pub files: Option<tempfile::TempDir>,
}

/// One implementation the lab runs the suite against: a column of the
/// kill matrix.
#[derive(Clone)]
pub struct Variant {
    /// [`REFERENCE_ID`], or the mutant's id.
    pub id: String,
    /// The mutant it is; `None` for a reference.
    pub mutant: Option<Arc<Mutant>>,
    /// What carries out its operations.
    pub engine: Engine,
}

impl Variant {
    /// The Rust reference store.
    pub fn reference() -> Variant {
        Variant {
            id: REFERENCE_ID.into(),
            mutant: None,
            engine: Engine::Compiled(&REFERENCE),
        }
    }

    /// A compiled mutant.
    pub fn compiled(mutant: &'static CompiledMutant) -> Variant {
        Variant {
            id: mutant.id.into(),
            mutant: Some(Arc::new(Mutant::from(mutant))),
            engine: Engine::Compiled(&mutant.store),
        }
    }

    /// The store on PostgreSQL on `server`: the reference first, then every
    /// compiled mutant of it in file order.
    pub fn all_on_server(server: &Arc<Server>) -> Vec<Variant> {
        let on = |store| Engine::Server(Arc::new(OnServer::of(Arc::clone(server), store)));
        std::iter::once(Variant {
            id: REFERENCE_ID.into(),
            mutant: None,
            engine: on(&crate::pg_server::REFERENCE),
        })
        .chain(SERVER_MUTANTS.iter().map(|mutant| Variant {
            id: mutant.id.into(),
            mutant: Some(Arc::new(Mutant::from(mutant))),
            engine: on(&mutant.store),
        }))
        .collect()
    }

    /// The variant `id` of the store on PostgreSQL ([`Variant::all_on_server`]),
    /// on the server whose connection string is in the environment
    /// ([`DSN_VARIABLE`](crate::pg_server::DSN_VARIABLE)): how the lab's
    /// worker processes are told the server, which a command line would
    /// show to every user of the machine, password and all.
    ///
    /// Errors: the variable is not set, or names no such variant; says which.
    pub fn find_on_the_server_of_the_environment(id: &str) -> Result<Variant, String> {
        let variable = crate::pg_server::DSN_VARIABLE;
        let dsn = std::env::var(variable)
            .ok()
            .filter(|dsn| !dsn.is_empty())
            .ok_or_else(|| {
                format!("--on-server needs the server's connection string in {variable}")
            })?;
        let server = Arc::new(Server::given(&dsn));
        Variant::find_in(Variant::all_on_server(&server), id).map_err(|ids| {
            format!(
                "no variant {id:?} on PostgreSQL; the variants are: {}",
                ids.join(", ")
            )
        })
    }

    /// The same variant with every database path in `schema` of its server,
    /// which another process made and drops ([`OnServer::sharing`]): how a
    /// chaos run's workers share one table. Any other variant is as it was.
    pub fn in_schema(self, schema: &str) -> Variant {
        match &self.engine {
            Engine::Server(store) => Variant {
                engine: Engine::Server(Arc::new(store.sharing(schema))),
                ..self
            },
            _ => self,
        }
    }

    /// The tests of the suite it runs: on a server, those that mean
    /// something there ([`crate::suite::on_a_server`]); a program, those
    /// that can be asked of one ([`crate::suite::for_programs`]); a store
    /// compiled in, the whole suite. The one rule for which tests a store
    /// is asked.
    pub fn suite(&self) -> Vec<&'static crate::suite::Case> {
        match self.engine {
            Engine::Server(_) => crate::suite::on_a_server(),
            Engine::Process(_) => crate::suite::for_programs(),
            Engine::Compiled(_) => crate::suite::CASES.iter().collect(),
        }
    }

    /// The tests of steps 1 to `step` it runs ([`Variant::suite`]).
    pub fn suite_through(&self, step: u8) -> Vec<&'static crate::suite::Case> {
        self.suite()
            .into_iter()
            .filter(|case| case.step <= step)
            .collect()
    }

    /// The server it runs on, for a store on PostgreSQL.
    pub fn server(&self) -> Option<&Server> {
        match &self.engine {
            Engine::Server(store) => Some(store.server()),
            _ => None,
        }
    }

    /// The reference first, then every compiled mutant in file order.
    pub fn all_compiled() -> Vec<Variant> {
        std::iter::once(Variant::reference())
            .chain(MUTANTS.iter().map(Variant::compiled))
            .collect()
    }

    /// The compiled variant that `id` names (the reference or a mutant;
    /// see [`Variant::is_named`]), if any.
    pub fn find(id: &str) -> Option<Variant> {
        Variant::find_in(Variant::all_compiled(), id).ok()
    }

    /// The variant of `variants` that `id` names ([`Variant::is_named`]).
    ///
    /// Errors: none is named so; the error lists the ids there are.
    pub fn find_in(variants: Vec<Variant>, id: &str) -> Result<Variant, Vec<String>> {
        match variants.iter().position(|variant| variant.is_named(id)) {
            Some(index) => Ok(variants.into_iter().nth(index).expect("found")),
            None => Err(variants.into_iter().map(|variant| variant.id).collect()),
        }
    }

    /// `variants` less the mutants of another kind than `kind` (with
    /// `None`, all of them); a reference is always kept.
    pub fn of_kind(variants: Vec<Variant>, kind: Option<MutantKind>) -> Vec<Variant> {
        variants
            .into_iter()
            .filter(|variant| match (kind, &variant.mutant) {
                (Some(kind), Some(mutant)) => mutant.spec.kind == kind,
                _ => true,
            })
            .collect()
    }

    /// Whether `id` names this variant: its own id, or, for a reference
    /// (the lab's or a program), `reference` or its alias `correct`.
    pub fn is_named(&self, id: &str) -> bool {
        self.id == id || (self.is_reference() && (id == REFERENCE_ID || id == REFERENCE_ALIAS))
    }

    /// Whether this is a reference implementation (no mutant).
    pub fn is_reference(&self) -> bool {
        self.mutant.is_none()
    }

    /// Whether this is one of the lab's own references (the Rust or the
    /// Python store), not a program of one's own.
    pub fn is_lab_reference(&self) -> bool {
        self.is_reference() && self.id == REFERENCE_ID
    }

    /// A program of one's own (or a store run by one), under `id`.
    pub fn program(id: &str, command: ImplCommand) -> Variant {
        Variant {
            id: id.into(),
            mutant: None,
            engine: Engine::Process(Arc::new(Program {
                command,
                files: None,
            })),
        }
    }

    /// The implementation, ready to run its operations; a program's calls
    /// each wait at most `limit` for their answer.
    pub fn open(&self, limit: Duration) -> Arc<dyn JobStore> {
        match &self.engine {
            Engine::Compiled(store) => Arc::new(**store),
            Engine::Process(_) => self.open_program(limit).expect("a program"),
            Engine::Server(store) => Arc::clone(store) as Arc<dyn JobStore>,
        }
    }

    /// [`Variant::open`] for a program, as the program's store; `None` for
    /// a compiled variant.
    pub fn open_program(&self, limit: Duration) -> Option<Arc<ExternalStore>> {
        match &self.engine {
            Engine::Compiled(_) | Engine::Server(_) => None,
            Engine::Process(program) => Some(Arc::new(
                ExternalStore::new(program.command.clone(), limit)
                    .keeping(Arc::clone(program) as Arc<dyn std::any::Any + Send + Sync>),
            )),
        }
    }

    /// The command that runs it, when it is a program.
    pub fn command(&self) -> Option<&ImplCommand> {
        match &self.engine {
            Engine::Compiled(_) | Engine::Server(_) => None,
            Engine::Process(program) => Some(&program.command),
        }
    }
}

impl PartialEq for Variant {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.mutant == other.mutant
    }
}

impl std::fmt::Debug for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Variant({})", self.id)
    }
}

#[cfg(test)]
mod tests {
    /// One cargo feature per compiled mutant, and no other `mutant-`
    /// feature: the `[features]` of the store's Cargo.toml follow from
    /// `mutants/`, and the lab's forward each of them to the store's crate
    /// (a mutant without its feature can only be chosen through
    /// `LEASE_LAB_MUTANT`; a feature without its mutant names nothing).
    #[test]
    fn the_cargo_features_are_the_compiled_mutants() {
        let mut ids: Vec<&str> = MUTANTS.iter().map(|mutant| mutant.id).collect();
        ids.sort_unstable();
        for (name, text) in [
            (
                "crates/store/Cargo.toml",
                include_str!("../crates/store/Cargo.toml"),
            ),
            ("Cargo.toml", include_str!("../Cargo.toml")),
        ] {
            let manifest: toml::Table = text.parse().unwrap();
            let declared = manifest["features"].as_table().expect("[features]");
            let mut features: Vec<&str> = declared
                .keys()
                .filter_map(|name| name.strip_prefix("mutant-"))
                .collect();
            features.sort_unstable();
            assert_eq!(
                features, ids,
                "add or remove `mutant-ID` lines in {name}'s [features] to match mutants/"
            );
            for (feature, enables) in declared.iter().filter(|(f, _)| f.starts_with("mutant-")) {
                let forwarded = format!("lease-lab-store/{feature}");
                let expected: &[&str] = match name {
                    "Cargo.toml" => &[&forwarded],
                    _ => &[],
                };
                let enables: Vec<&str> = enables
                    .as_array()
                    .expect("a list")
                    .iter()
                    .filter_map(|value| value.as_str())
                    .collect();
                assert_eq!(enables, expected, "{name}: {feature}");
            }
        }
    }

    use super::*;

    #[test]
    fn every_compiled_mutant_is_its_fragment_applied_to_the_reference() {
        assert!(MUTANTS.len() >= 9);
        for mutant in MUTANTS {
            assert_eq!(
                REFERENCE_SOURCE.replacen(mutant.fragment, mutant.replacement, 1),
                mutant.source,
                "mutant {}",
                mutant.id
            );
            assert!(mutant.file_name.starts_with(&format!("{}-", mutant.id)));
        }
        assert_eq!(ACTIVE_MUTANT, None, "plain cargo test runs the reference");
        assert_eq!(compiled_mutant("08b").unwrap().kind, MutantKind::Worksheet);
        assert_eq!(compiled_mutant("h06h").unwrap().kind.name(), "hardening");
        assert!(compiled_mutant("nope").is_none());
    }

    /// The build's call graph of the store: a change reaches the
    /// operations whose functions call the function it is in, and every
    /// operation when it is in code they all run.
    #[test]
    fn each_compiled_mutant_reaches_the_operations_that_can_run_its_change() {
        let reaches = |id: &str| compiled_mutant(id).unwrap().reaches;
        assert_eq!(reaches("h05a"), ["renew"]);
        assert_eq!(reaches("08b"), ["claim", "claim_many"]);
        assert_eq!(reaches("04"), ["claim", "claim_many"]);
        assert_eq!(reaches("03"), ["state"]);
        assert_eq!(reaches("01"), ["init_db"]);
        assert_eq!(reaches("08"), ["claim_many"]);
        assert_eq!(
            reaches("h04g"),
            crate::operation::NAMES,
            "the connection's setup runs in every operation"
        );
        for mutant in MUTANTS {
            assert!(!mutant.reaches.is_empty(), "{} runs somewhere", mutant.id);
            let mut names = crate::operation::NAMES.iter();
            assert!(
                mutant
                    .reaches
                    .iter()
                    .all(|operation| names.any(|name| name == operation)),
                "{}: {:?} are operations, in order",
                mutant.id,
                mutant.reaches
            );
        }
        let renew = Mutant::from(compiled_mutant("h05a").unwrap());
        assert!(renew.covered_by(["init_db", "renew"].into_iter()));
        assert!(!renew.covered_by(["init_db", "claim"].into_iter()));
        let unknown = Mutant {
            reaches: None,
            ..renew
        };
        assert!(unknown.covered_by(std::iter::empty()));
    }

    #[test]
    fn variants_are_found_by_id_with_the_reference_first() {
        let all = Variant::all_compiled();
        assert_eq!(all.len(), MUTANTS.len() + 1);
        assert_eq!(all[0], Variant::reference());
        assert_eq!(all[0].id, REFERENCE_ID);
        assert!(all[0].is_reference());
        let boundary = Variant::find("04").unwrap();
        assert_eq!(boundary.mutant.as_ref().unwrap().spec.step, 4);
        assert_eq!(
            boundary.mutant.as_ref().unwrap().source,
            compiled_mutant("04").unwrap().source
        );
        assert_eq!(Variant::find(REFERENCE_ID), Some(Variant::reference()));
        assert_eq!(Variant::find("99"), None);
        assert_eq!(format!("{boundary:?}"), "Variant(04)");
    }

    #[test]
    fn the_busy_timeout_reaches_the_store_of_each_variant() {
        // A thread's setting must not leak to other threads or tests.
        let handle = std::thread::spawn(|| {
            let store = Variant::find("04").unwrap().open(Duration::from_secs(10));
            store.set_thread_busy_timeout(Some(std::time::Duration::from_millis(7)));
            crate::store::busy_timeout()
        });
        let reference_timeout = handle.join().unwrap();
        assert_eq!(
            reference_timeout,
            crate::store::busy_timeout(),
            "the reference's own setting is untouched"
        );
        let reference = Variant::reference().open(Duration::from_secs(10));
        reference.set_thread_busy_timeout(Some(std::time::Duration::from_millis(9)));
        assert_eq!(
            crate::store::busy_timeout(),
            std::time::Duration::from_millis(9)
        );
        reference.set_thread_busy_timeout(None);
    }

    #[test]
    fn variants_are_the_same_when_both_their_id_and_their_mutant_are() {
        use crate::external::ImplCommand;
        let boundary = Variant::find("04").unwrap();
        assert_eq!(boundary, Variant::find("04").unwrap());
        assert_ne!(boundary, Variant::find("05").unwrap(), "another mutant");
        let python = ImplCommand::parse("python3 store.py").unwrap();
        assert_ne!(
            Variant::program("mine", python.clone()),
            Variant::program("yours", python.clone()),
            "no mutant either, but another id"
        );
        assert_ne!(
            boundary,
            Variant::program("04", python),
            "the same id, but no mutant"
        );
    }

    #[test]
    fn a_compiled_mutant_shows_what_it_is() {
        let text = format!("{:?}", compiled_mutant("04").unwrap());
        assert!(
            text.starts_with("CompiledMutant { id: \"04\", step: 4,"),
            "{text}"
        );
    }

    #[test]
    fn the_lab_s_references_are_told_from_a_program_of_one_s_own() {
        use crate::external::ImplCommand;
        let python = ImplCommand::parse("python3 store.py").unwrap();
        assert!(Variant::reference().is_lab_reference());
        assert!(Variant::program(REFERENCE_ID, python.clone()).is_lab_reference());
        let yours = Variant::program("yours", python);
        assert!(yours.is_reference() && !yours.is_lab_reference());
        assert!(!Variant::find("04").unwrap().is_lab_reference());
        assert_eq!(
            yours.command().map(ImplCommand::display).as_deref(),
            Some("python3 store.py")
        );
        assert!(Variant::reference().command().is_none());
    }
}

//! The store on its two engines, side by side: SQLite (a file in WAL mode,
//! `synchronous=FULL`, on the system's temporary folder) and PostgreSQL (a
//! throwaway cluster on a Unix socket in the same folder, `fsync` and
//! `synchronous_commit` on), on the same machine.
//!
//! - claims a second: each worker (1, then 8, each a thread with a
//!   connection of its own) enqueues, claims and completes jobs of its own,
//!   over and over; a claim is counted with its completion;
//! - the fence check's cost: a completion with the worksheet's whole
//!   condition (`owner`, `fence`, `done`, `until`), against the same
//!   statement with only the job's id and `done`, on each engine.
//!
//! - the kill matrix on each engine: `lab matrix` (the store on a file and
//!   its mutants) against `lab matrix --engine postgres` (the store on a
//!   throwaway cluster and its mutants), the whole command's wall time,
//!   the cluster's start included.
//!
//! Each figure is the median of five runs (three for the matrices). It
//! ends with two Markdown tables, printed and written to
//! `target/bench-engines.md` for the README. `cargo bench --bench engines`
//! takes about two minutes; it needs PostgreSQL's server programs (see
//! `lease_lab::pg_server`).

use lease_lab::pg_server::Cluster;
use lease_lab::store_postgres::Postgres;
use lease_lab::{Fence, Store};
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

/// Claim → complete cycles each worker makes in one run.
const CYCLES: usize = 300;
/// Runs of each measurement; the median is kept.
const RUNS: usize = 5;

/// One engine's store as a worker uses it.
trait Engine: Sync {
    /// A new handle, for one worker.
    fn worker(&self) -> Box<dyn Worker>;
    /// Another client that runs a completion statement with the
    /// worksheet's whole condition (`fenced`: `owner`, `fence`, `done`,
    /// `until`), or with the job's id and `done` only.
    fn completer(&self, fenced: bool) -> Box<dyn Completer>;
}

/// One worker's handle: the three calls of a job's cycle.
trait Worker {
    fn enqueue(&self, job: &str) -> bool;
    fn claim(&self, job: &str, owner: &str, now: f64) -> Option<Fence>;
    fn complete(&self, job: &str, owner: &str, fence: Fence, now: f64) -> bool;

    /// Enqueues `job`, claims it at `now` and completes it.
    fn cycle(&self, job: &str, now: f64) {
        assert!(self.enqueue(job));
        let fence = self.claim(job, "w", now).expect("a fence");
        assert!(self.complete(job, "w", fence, now + 1.0));
    }
}

/// A completion statement, prepared: the rows it changed.
trait Completer {
    fn complete(&mut self, job: &str, fence: Fence) -> u64;
}

/// [`CYCLES`] completions by `engine`'s completer on jobs claimed by "A"
/// with a lease to 110, each at 105 (named by `run`): the time the
/// statements took.
fn completions(engine: &dyn Engine, fenced: bool, run: usize) -> Duration {
    let store = engine.worker();
    let mut completer = engine.completer(fenced);
    let mut total = Duration::ZERO;
    for cycle in 0..CYCLES {
        let job = format!("f{fenced}-{run}-{cycle}");
        assert!(store.enqueue(&job));
        let fence = store.claim(&job, "A", 100.0).expect("a fence");
        let started = Instant::now();
        let changed = completer.complete(&job, fence);
        total += started.elapsed();
        assert_eq!(changed, 1);
    }
    total
}

struct Sqlite<'a> {
    db: &'a Path,
}

impl Engine for Sqlite<'_> {
    fn worker(&self) -> Box<dyn Worker> {
        Box::new(Store::open(self.db).expect("opens"))
    }

    fn completer(&self, fenced: bool) -> Box<dyn Completer> {
        let connection = rusqlite::Connection::open(self.db).expect("opens");
        connection
            .busy_timeout(Duration::from_secs(10))
            .expect("busy timeout");
        connection
            .pragma_update(None, "synchronous", "FULL")
            .expect("synchronous");
        let sql = if fenced {
            "UPDATE jobs SET result = 'r', done = 1 WHERE id = ?1 AND owner = 'A' AND fence = ?2 AND done = 0 AND until > ?3"
        } else {
            "UPDATE jobs SET result = 'r', done = 1 WHERE id = ?1 AND done = 0 AND ?2 IS NOT NULL AND ?3 IS NOT NULL"
        };
        Box::new((connection, sql))
    }
}

impl Completer for (rusqlite::Connection, &'static str) {
    fn complete(&mut self, job: &str, fence: Fence) -> u64 {
        let changed = self
            .0
            .prepare_cached(self.1)
            .and_then(|mut statement| statement.execute(rusqlite::params![job, fence.0, 105.0]))
            .expect("completes");
        changed as u64
    }
}

impl Worker for Store {
    fn enqueue(&self, job: &str) -> bool {
        Store::enqueue(self, job).expect("enqueue")
    }
    fn claim(&self, job: &str, owner: &str, now: f64) -> Option<Fence> {
        Store::claim(self, job, owner, now, 10.0).expect("claim")
    }
    fn complete(&self, job: &str, owner: &str, fence: Fence, now: f64) -> bool {
        Store::complete(self, job, owner, fence, now, "done").expect("complete")
    }
}

struct Server<'a> {
    dsn: &'a str,
}

impl Engine for Server<'_> {
    fn worker(&self) -> Box<dyn Worker> {
        Box::new(Postgres::connect(self.dsn).expect("connects"))
    }

    fn completer(&self, fenced: bool) -> Box<dyn Completer> {
        let mut client = postgres::Client::connect(self.dsn, postgres::NoTls).expect("connects");
        let sql = if fenced {
            "UPDATE jobs SET result = 'r', done = 1 WHERE id = $1 AND owner = 'A' AND fence = $2 AND done = 0 AND until > $3"
        } else {
            "UPDATE jobs SET result = 'r', done = 1 WHERE id = $1 AND done = 0 AND $2::BIGINT IS NOT NULL AND $3::FLOAT8 IS NOT NULL"
        };
        let statement = client.prepare(sql).expect("prepares");
        Box::new((client, statement))
    }
}

impl Completer for (postgres::Client, postgres::Statement) {
    fn complete(&mut self, job: &str, fence: Fence) -> u64 {
        self.0
            .execute(&self.1, &[&job, &fence.0, &105.0_f64])
            .expect("completes")
    }
}

impl Worker for Postgres {
    fn enqueue(&self, job: &str) -> bool {
        Postgres::enqueue(self, job).expect("enqueue")
    }
    fn claim(&self, job: &str, owner: &str, now: f64) -> Option<Fence> {
        Postgres::claim(self, job, owner, now, 10.0).expect("claim")
    }
    fn complete(&self, job: &str, owner: &str, fence: Fence, now: f64) -> bool {
        Postgres::complete(self, job, owner, fence, now, "done").expect("complete")
    }
}

/// Claims a second with `workers` workers at once, each making
/// [`CYCLES`] cycles on jobs of its own (named by `run`).
fn claims_per_second(engine: &dyn Engine, workers: usize, run: usize) -> f64 {
    let start = Barrier::new(workers + 1);
    let started = thread::scope(|scope| {
        for worker in 0..workers {
            let start = &start;
            scope.spawn(move || {
                let handle = engine.worker();
                start.wait();
                for cycle in 0..CYCLES {
                    handle.cycle(&format!("c{workers}-{run}-{worker}-{cycle}"), 100.0);
                }
            });
        }
        start.wait();
        Instant::now()
    });
    (workers * CYCLES) as f64 / started.elapsed().as_secs_f64()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let folder = tempfile::tempdir().expect("a temporary folder");
    let db = folder.path().join("bench.db");
    lease_lab::init_db(&db).expect("init_db");
    let cluster = Cluster::start(&std::env::temp_dir()).expect("a PostgreSQL cluster starts");
    let server = Postgres::connect(cluster.dsn()).expect("connects");
    server.init_db().expect("init_db");
    let sqlite = Sqlite { db: &db };
    let postgres = Server { dsn: cluster.dsn() };
    let engines: [(&str, &dyn Engine); 2] = [("SQLite", &sqlite), ("PostgreSQL", &postgres)];

    let mut table = String::from(
        "| engine | claims/s, 1 worker | claims/s, 8 workers | completion, fenced (µs) | without the fence (µs) | the fence's cost |\n|---|---:|---:|---:|---:|---:|\n",
    );
    for (name, engine) in engines {
        let one = median(
            (0..RUNS)
                .map(|run| claims_per_second(engine, 1, run))
                .collect(),
        );
        let eight = median(
            (0..RUNS)
                .map(|run| claims_per_second(engine, 8, run))
                .collect(),
        );
        let per = |fenced: bool| {
            median(
                (0..RUNS)
                    .map(|run| completions(engine, fenced, run).as_secs_f64() * 1e6 / CYCLES as f64)
                    .collect(),
            )
        };
        let (fenced, bare) = (per(true), per(false));
        let _ = writeln!(
            table,
            "| {name} | {one:.0} | {eight:.0} | {fenced:.1} | {bare:.1} | {:+.1}% |",
            (fenced / bare - 1.0) * 100.0
        );
    }
    table.push_str(&matrices());
    println!("{table}");
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-engines.md");
    let _ = std::fs::write(target, &table);
}

/// Runs of each kill matrix; the median is kept.
const MATRIX_RUNS: usize = 3;

/// The kill matrix on each engine, as a user runs it (the `lab` binary of
/// this build): its wall time, median of [`MATRIX_RUNS`], as a table.
fn matrices() -> String {
    let mut table = String::from(
        "\n| kill matrix | variants | tests each | wall time (s) |\n|---|---:|---:|---:|\n",
    );
    for (name, engine) in [
        ("`lab matrix`", "sqlite"),
        ("`lab matrix --engine postgres`", "postgres"),
    ] {
        let mut shape = (0, 0);
        let times = (0..MATRIX_RUNS)
            .map(|_| {
                let started = Instant::now();
                let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
                    .args(["matrix", "--engine", engine, "--format", "json"])
                    .env_remove(lease_lab::pg_server::DSN_VARIABLE)
                    .output()
                    .expect("lab runs");
                let took = started.elapsed().as_secs_f64();
                assert!(
                    output.status.success(),
                    "{}",
                    String::from_utf8_lossy(&output.stderr)
                );
                let report: serde_json::Value =
                    serde_json::from_slice(&output.stdout).expect("the matrix as JSON");
                let variants = report["variants"].as_array().expect("variants").len();
                let tests = report["tests"].as_array().map_or(0, Vec::len);
                shape = (variants, tests);
                took
            })
            .collect();
        let _ = writeln!(
            table,
            "| {name} | {} | {} | {:.1} |",
            shape.0,
            shape.1,
            median(times)
        );
    }
    table
}

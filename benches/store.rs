//! The store against raw SQLite, side by side, on the same file settings:
//! WAL, `synchronous=FULL`, on a real disk (the system's temporary folder),
//! so that every commit pays its fsync as it would in production.
//!
//! - raw SQLite, the floor: `BEGIN IMMEDIATE; UPDATE one row; COMMIT` on a
//!   kept connection, and on a connection opened for each transaction
//!   (set up as the store sets up its own: `synchronous=FULL`, no
//!   checkpoint on close);
//! - the path functions and the `Store` handle: enqueue, claim, renew,
//!   complete, release, and a claim → complete cycle;
//! - `claim_many` with 2, 8, 32 and 64 owners racing for one job (more
//!   owners than its 16 threads from 32 on);
//! - N threads (1, 2, 4, 8), each with its own handle, claiming and
//!   completing distinct jobs.
//!
//! Every operation is timed on its own, so besides criterion's report the
//! run ends with a table of ops/s, p50/p99 latency and the ratio to raw
//! SQLite, printed and written to `target/bench-store.md` for the README.
//! The ratios come from raw transactions run in turn with the store's
//! calls on the same file (see [`paired`]): the cost of an fsync drifts
//! with whatever else the machine writes, and only figures taken side by
//! side compare. `cargo bench --bench store` takes about three minutes.

use criterion::{Criterion, SamplingMode};
use lease_lab::{Fence, Store};
use rusqlite::config::DbConfig;
use rusqlite::{params, Connection, OpenFlags};
use std::cell::RefCell;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------
// What each benchmark measured, for the table
// ---------------------------------------------------------------------------

/// Every operation's latency, and the wall time the operations took (with
/// threads, less than the sum of the latencies).
#[derive(Default)]
struct Stats {
    latencies: Vec<Duration>,
    wall: Duration,
}

impl Stats {
    fn record(&mut self, latencies: &[Duration], wall: Duration) {
        self.latencies.extend_from_slice(latencies);
        self.wall += wall;
    }

    fn ops_per_second(&self) -> f64 {
        self.latencies.len() as f64 / self.wall.as_secs_f64()
    }

    /// Wall time per operation: the inverse of the throughput.
    fn mean(&self) -> Duration {
        self.wall.div_f64(self.latencies.len() as f64)
    }

    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        sorted[((sorted.len() - 1) as f64 * p).round() as usize]
    }
}

type Recorder = Rc<RefCell<Stats>>;

/// One line of the table: a benchmark, and the raw SQLite it was paired
/// with (see [`Baseline`]), if any.
struct Row {
    name: String,
    stats: Recorder,
    baseline: Option<(Recorder, &'static str)>,
}

/// The benchmarks' measurements, in the order they ran.
#[derive(Default)]
struct Table {
    rows: Vec<Row>,
}

impl Table {
    fn recorder(&mut self, name: &str) -> Recorder {
        let stats = Recorder::default();
        self.rows.push(Row {
            name: name.to_string(),
            stats: Rc::clone(&stats),
            baseline: None,
        });
        stats
    }

    /// A recorder for a benchmark and one for the raw transactions run
    /// beside it.
    fn paired(&mut self, name: &str, baseline: &Baseline) -> (Recorder, Recorder) {
        let (stats, raw) = (Recorder::default(), Recorder::default());
        self.rows.push(Row {
            name: name.to_string(),
            stats: Rc::clone(&stats),
            baseline: Some((Rc::clone(&raw), baseline.label())),
        });
        (stats, raw)
    }

    fn get(&self, name: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|row| row.name == name && !row.stats.borrow().latencies.is_empty())
    }
}

/// Times each of `iters` calls of `operation` on its own; returns their sum.
fn timed(recorder: &Recorder, iters: u64, mut operation: impl FnMut(u64)) -> Duration {
    let mut latencies = Vec::with_capacity(iters as usize);
    for i in 0..iters {
        let started = Instant::now();
        operation(i);
        latencies.push(started.elapsed());
    }
    let total = latencies.iter().sum();
    recorder.borrow_mut().record(&latencies, total);
    total
}

/// Like [`timed`], but each call is paired with a run of `baseline`, in
/// turn before and after it, timed apart. An fsync here costs from 0.2 to
/// 10 ms depending on what else the machine writes, so figures taken
/// minutes apart do not compare; a store call and the raw transactions
/// beside it meet the same disk. Returns the calls' time only.
fn paired(
    (recorder, raw): &(Recorder, Recorder),
    baseline: &Baseline,
    iters: u64,
    mut operation: impl FnMut(u64),
) -> Duration {
    let mut latencies = Vec::with_capacity(iters as usize);
    let mut raw_latencies = Vec::with_capacity(iters as usize);
    let time = |run: &mut dyn FnMut()| {
        let started = Instant::now();
        run();
        started.elapsed()
    };
    for i in 0..iters {
        if i % 2 == 0 {
            raw_latencies.push(time(&mut || baseline.run()));
            latencies.push(time(&mut || operation(i)));
        } else {
            latencies.push(time(&mut || operation(i)));
            raw_latencies.push(time(&mut || baseline.run()));
        }
    }
    let total = latencies.iter().sum();
    recorder.borrow_mut().record(&latencies, total);
    raw.borrow_mut()
        .record(&raw_latencies, raw_latencies.iter().sum());
    total
}

// ---------------------------------------------------------------------------
// Databases
// ---------------------------------------------------------------------------

/// A fresh lease-lab database in the system's temporary folder.
struct Database {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Database {
    fn new() -> Database {
        let dir = tempfile::Builder::new()
            .prefix("lease-lab-bench-")
            .tempdir()
            .expect("a temporary folder");
        let path = dir.path().join("jobs.db");
        lease_lab::init_db(&path).expect("init_db");
        assert!(lease_lab::enqueue(&path, "raw").expect("enqueue"));
        Database { _dir: dir, path }
    }

    /// Adds jobs `{prefix}{start}..{start + count}` in one transaction,
    /// outside the timing: unclaimed, or held by `bench` with fence 1
    /// until far in the future.
    fn add_jobs(&self, prefix: &str, start: u64, count: u64, held: bool) {
        let mut conn = raw_connection(&self.path);
        let tx = conn.transaction().expect("begin");
        {
            let mut insert = tx
                .prepare("INSERT INTO jobs (id, owner, until, fence) VALUES (?1, ?2, ?3, ?4)")
                .expect("prepare");
            for n in start..start + count {
                let (owner, until, fence) = if held {
                    (Some("bench"), 1e18, 1)
                } else {
                    (None, 0.0, 0)
                };
                insert
                    .execute(params![format!("{prefix}{n}"), owner, until, fence])
                    .expect("insert a job");
            }
        }
        tx.commit().expect("commit");
    }
}

/// A plain connection set up as the store sets up its own, so that raw
/// SQLite and the store are measured on the same settings.
fn raw_connection(path: &Path) -> Connection {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .expect("open");
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .expect("no checkpoint on close");
    conn.pragma_update(None, "synchronous", "FULL")
        .expect("synchronous=FULL");
    conn.busy_timeout(Duration::from_secs(5))
        .expect("busy timeout");
    conn
}

/// The raw SQLite a store call is compared with: `count` transactions on a
/// kept connection, or each on a connection of its own.
struct Baseline {
    kept: Option<Connection>,
    path: PathBuf,
    count: u32,
}

impl Baseline {
    fn kept(db: &Database, count: u32) -> Baseline {
        Baseline {
            kept: Some(raw_connection(&db.path)),
            path: db.path.clone(),
            count,
        }
    }

    fn per_transaction(db: &Database, count: u32) -> Baseline {
        Baseline {
            kept: None,
            path: db.path.clone(),
            count,
        }
    }

    fn for_form(db: &Database, form: Form, count: u32) -> Baseline {
        match form {
            Form::Handle => Baseline::kept(db, count),
            Form::Path => Baseline::per_transaction(db, count),
        }
    }

    fn run(&self) {
        for _ in 0..self.count {
            match &self.kept {
                Some(conn) => raw_transaction(conn),
                None => raw_transaction(&raw_connection(&self.path)),
            }
        }
    }

    fn label(&self) -> &'static str {
        match (&self.kept, self.count) {
            (Some(_), 1) => "raw kept",
            (Some(_), _) => "2× raw kept",
            (None, 1) => "raw per-txn",
            (None, _) => "2× raw per-txn",
        }
    }
}

/// The floor: one write transaction that updates one row.
fn raw_transaction(conn: &Connection) {
    conn.execute_batch(
        "BEGIN IMMEDIATE; UPDATE jobs SET until = until + 1 WHERE id = 'raw'; COMMIT",
    )
    .expect("a raw transaction");
}

// ---------------------------------------------------------------------------
// The benchmarks
// ---------------------------------------------------------------------------

fn raw_sqlite(c: &mut Criterion, table: &mut Table) {
    let mut group = c.benchmark_group("raw");
    group.sampling_mode(SamplingMode::Flat);
    let db = Database::new();

    let recorder = table.recorder("raw/kept");
    let conn = raw_connection(&db.path);
    group.bench_function("kept", |b| {
        b.iter_custom(|iters| timed(&recorder, iters, |_| raw_transaction(&conn)))
    });
    drop(conn);

    let recorder = table.recorder("raw/per_transaction");
    group.bench_function("per_transaction", |b| {
        b.iter_custom(|iters| {
            timed(&recorder, iters, |_| {
                raw_transaction(&raw_connection(&db.path))
            })
        })
    });
    group.finish();
}

/// The eight operations' calls, by path or on a handle.
#[derive(Clone, Copy)]
enum Form {
    Path,
    Handle,
}

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::Path => "path",
            Form::Handle => "handle",
        }
    }
}

/// The store's operations on one database, in either form.
struct Client<'a> {
    db: &'a Path,
    handle: Option<Store>,
}

impl<'a> Client<'a> {
    fn new(db: &'a Path, form: Form) -> Client<'a> {
        let handle = match form {
            Form::Path => None,
            Form::Handle => Some(Store::open(db).expect("open a handle")),
        };
        Client { db, handle }
    }

    fn enqueue(&self, job: &str) -> bool {
        match &self.handle {
            Some(store) => store.enqueue(job),
            None => lease_lab::enqueue(self.db, job),
        }
        .expect("enqueue")
    }

    fn claim(&self, job: &str, now: f64, ttl: f64) -> Option<Fence> {
        match &self.handle {
            Some(store) => store.claim(job, "bench", now, ttl),
            None => lease_lab::claim(self.db, job, "bench", now, ttl),
        }
        .expect("claim")
    }

    fn renew(&self, job: &str, fence: Fence, now: f64, ttl: f64) -> bool {
        match &self.handle {
            Some(store) => store.renew(job, "bench", fence, now, ttl),
            None => lease_lab::renew(self.db, job, "bench", fence, now, ttl),
        }
        .expect("renew")
    }

    fn complete(&self, job: &str, fence: Fence, now: f64) -> bool {
        match &self.handle {
            Some(store) => store.complete(job, "bench", fence, now, "done"),
            None => lease_lab::complete(self.db, job, "bench", fence, now, "done"),
        }
        .expect("complete")
    }

    fn release(&self, job: &str, fence: Fence) -> bool {
        match &self.handle {
            Some(store) => store.release(job, "bench", fence),
            None => lease_lab::release(self.db, job, "bench", fence),
        }
        .expect("release")
    }
}

/// Each operation on a fresh database, paired with raw transactions on the
/// same file: a kept connection for the handle, a connection per
/// transaction for the path functions (two transactions for the cycle).
/// Every call measured is one that writes (a refusal would skip the commit
/// and flatter the figures), and each asserts its answer.
fn operations(c: &mut Criterion, table: &mut Table, form: Form) {
    let mut group = c.benchmark_group(form.name());
    group.sampling_mode(SamplingMode::Flat);
    let recorders = |table: &mut Table, operation: &str, baseline: &Baseline| {
        table.paired(&format!("{}/{operation}", form.name()), baseline)
    };

    let db = Database::new();
    let client = Client::new(&db.path, form);
    let baseline = Baseline::for_form(&db, form, 1);
    let recorder = recorders(table, "enqueue", &baseline);
    let mut next = 0;
    group.bench_function("enqueue", |b| {
        b.iter_custom(|iters| {
            let total = paired(&recorder, &baseline, iters, |i| {
                assert!(client.enqueue(&format!("e{}", next + i)));
            });
            next += iters;
            total
        })
    });

    // One job claimed again and again: each claim comes after the last
    // lease ended, so each one takes the lease and raises the fence.
    let db = Database::new();
    let client = Client::new(&db.path, form);
    client.enqueue("c");
    let baseline = Baseline::for_form(&db, form, 1);
    let recorder = recorders(table, "claim", &baseline);
    let mut now = 0.0;
    group.bench_function("claim", |b| {
        b.iter_custom(|iters| {
            paired(&recorder, &baseline, iters, |_| {
                now += 10.0;
                assert!(client.claim("c", now, 1.0).is_some());
            })
        })
    });

    // One lease renewed again and again, always before it ends.
    let db = Database::new();
    let client = Client::new(&db.path, form);
    client.enqueue("r");
    let fence = client.claim("r", 0.0, 1e9).unwrap();
    let baseline = Baseline::for_form(&db, form, 1);
    let recorder = recorders(table, "renew", &baseline);
    let mut now = 0.0;
    group.bench_function("renew", |b| {
        b.iter_custom(|iters| {
            paired(&recorder, &baseline, iters, |_| {
                now += 1.0;
                assert!(client.renew("r", fence, now, 1e9));
            })
        })
    });

    // Complete and release need a held job per call, and the cycle a
    // fresh one: made beforehand, outside the timing, in one transaction.
    for (operation, held, transactions) in [
        ("complete", true, 1),
        ("release", true, 1),
        ("cycle", false, 2),
    ] {
        let db = Database::new();
        let client = Client::new(&db.path, form);
        let baseline = Baseline::for_form(&db, form, transactions);
        let recorder = recorders(table, operation, &baseline);
        let mut next = 0;
        group.bench_function(operation, |b| {
            b.iter_custom(|iters| {
                db.add_jobs("j", next, iters, held);
                let total = paired(&recorder, &baseline, iters, |i| {
                    let job = format!("j{}", next + i);
                    match operation {
                        "complete" => assert!(client.complete(&job, Fence(1), 1.0)),
                        "release" => assert!(client.release(&job, Fence(1))),
                        _ => {
                            let fence = client.claim(&job, 1.0, 10.0).unwrap();
                            assert!(client.complete(&job, fence, 2.0));
                        }
                    }
                });
                next += iters;
                total
            })
        });
    }
    group.finish();
}

/// `claim_many` on one job with more and more owners: each call comes
/// after the last lease ended, so each has exactly one winner.
fn claim_many(c: &mut Criterion, table: &mut Table) {
    let mut group = c.benchmark_group("claim_many");
    group.sampling_mode(SamplingMode::Flat);
    for owners in [2usize, 8, 32, 64] {
        let db = Database::new();
        lease_lab::enqueue(&db.path, "m").unwrap();
        let names: Vec<String> = (0..owners).map(|i| format!("owner-{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let recorder = table.recorder(&format!("claim_many/{owners}"));
        let mut now = 0.0;
        group.bench_function(owners.to_string(), |b| {
            b.iter_custom(|iters| {
                timed(&recorder, iters, |_| {
                    now += 10.0;
                    let answers = lease_lab::claim_many(&db.path, "m", &names, now, 1.0)
                        .expect("claim_many runs under contention");
                    assert_eq!(answers.iter().filter(|a| a.is_some()).count(), 1);
                })
            })
        });
    }
    group.finish();
}

/// N threads, each with its own handle, each claiming and completing its
/// own jobs: how the write lock and the fsync per commit share out. Each
/// batch follows as many pairs of raw transactions on a kept connection,
/// so the throughput compares with the serial floor of the same moment.
fn threads(c: &mut Criterion, table: &mut Table) {
    let mut group = c.benchmark_group("threads");
    group.sampling_mode(SamplingMode::Flat);
    for count in [1u64, 2, 4, 8] {
        let db = Database::new();
        let baseline = Baseline::kept(&db, 2);
        let (recorder, raw) = table.paired(&format!("threads/{count}"), &baseline);
        let mut round = 0;
        group.bench_function(count.to_string(), |b| {
            b.iter_custom(|iters| {
                timed(&raw, iters, |_| baseline.run());
                let per_thread = iters.div_ceil(count);
                let prefix = |t: u64| format!("r{round}t{t}-");
                for t in 0..count {
                    db.add_jobs(&prefix(t), 0, per_thread, false);
                }
                let start = Barrier::new(count as usize + 1);
                let (latencies, wall) = thread::scope(|scope| {
                    let workers: Vec<_> = (0..count)
                        .map(|t| {
                            let (db, start, prefix) = (&db.path, &start, prefix(t));
                            scope.spawn(move || {
                                let store = Store::open(db).expect("open a handle");
                                start.wait();
                                (0..per_thread)
                                    .map(|n| {
                                        let job = format!("{prefix}{n}");
                                        let started = Instant::now();
                                        let fence = store
                                            .claim(&job, "bench", 1.0, 10.0)
                                            .expect("claim under contention")
                                            .expect("a fresh job");
                                        assert!(store
                                            .complete(&job, "bench", fence, 2.0, "done")
                                            .expect("complete under contention"));
                                        started.elapsed()
                                    })
                                    .collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    start.wait();
                    let started = Instant::now();
                    let latencies: Vec<Duration> = workers
                        .into_iter()
                        .flat_map(|worker| worker.join().expect("a worker does not panic"))
                        .collect();
                    (latencies, started.elapsed())
                });
                round += 1;
                recorder.borrow_mut().record(&latencies, wall);
                // Criterion asked for `iters` cycles; ceil rounding ran a few more.
                wall.mul_f64(iters as f64 / (per_thread * count) as f64)
            })
        });
    }
    group.finish();
}

// ---------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------

/// A line about the machine: CPU, cores, kernel, and the file system that
/// holds the benchmark's databases.
fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|k| k.trim().to_string())
        .unwrap_or_else(|_| "unknown kernel".into());
    let temp = std::env::temp_dir()
        .canonicalize()
        .unwrap_or_else(|_| std::env::temp_dir());
    // The mount with the longest path that holds the temporary folder.
    let file_system = fs::read_to_string("/proc/mounts")
        .ok()
        .and_then(|mounts| {
            mounts
                .lines()
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    (fields.len() > 2 && temp.starts_with(fields[1]))
                        .then(|| (fields[1].len(), fields[2].to_string()))
                })
                .max()
                .map(|(_, kind)| kind)
        })
        .unwrap_or_else(|| "unknown".into());
    format!(
        "{cpu}, {cores} cores, Linux {kernel}, databases on {file_system} ({})",
        temp.display()
    )
}

fn format_duration(duration: Duration) -> String {
    let micros = duration.as_secs_f64() * 1e6;
    if micros >= 1000.0 {
        format!("{:.2} ms", micros / 1000.0)
    } else {
        format!("{micros:.0} µs")
    }
}

/// The table for the README: ops/s, p50/p99, and for each store call the
/// ratio of its time to that of the raw transactions paired with it, by
/// mean (which counts the slow fsyncs) and by median.
fn report(table: &Table) -> String {
    let mut text = String::new();
    writeln!(text, "Machine: {}", machine()).unwrap();
    writeln!(text).unwrap();
    writeln!(
        text,
        "| benchmark | ops/s | p50 | p99 | compared with | its p50 | ratio (mean) | ratio (p50) |\n\
         |---|---:|---:|---:|---|---:|---:|---:|"
    )
    .unwrap();
    for row in &table.rows {
        let stats = row.stats.borrow();
        if stats.latencies.is_empty() {
            continue;
        }
        let comparison = match &row.baseline {
            Some((raw, label)) => {
                let raw = raw.borrow();
                format!(
                    "{label} | {} | {:.2} | {:.2}",
                    format_duration(raw.percentile(0.5)),
                    stats.mean().as_secs_f64() / raw.mean().as_secs_f64(),
                    stats.percentile(0.5).as_secs_f64() / raw.percentile(0.5).as_secs_f64()
                )
            }
            None => "— | — | — | —".to_string(),
        };
        writeln!(
            text,
            "| {} | {:.0} | {} | {} | {comparison} |",
            row.name,
            stats.ops_per_second(),
            format_duration(stats.percentile(0.5)),
            format_duration(stats.percentile(0.99)),
        )
        .unwrap();
    }
    writeln!(text).unwrap();
    let targets = [
        "handle/cycle",
        "path/enqueue",
        "path/claim",
        "path/renew",
        "path/complete",
        "path/release",
        "path/cycle",
    ];
    for name in targets {
        let Some(row) = table.get(name) else { continue };
        let Some((raw, label)) = &row.baseline else {
            continue;
        };
        let ratio = row.stats.borrow().mean().as_secs_f64() / raw.borrow().mean().as_secs_f64();
        let verdict = if ratio <= 1.3 { "met" } else { "MISSED" };
        writeln!(
            text,
            "Target: {name} within 1.3× of {label} (by mean): {ratio:.2}×, {verdict}"
        )
        .unwrap();
    }
    text
}

fn main() {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args();
    let mut table = Table::default();
    raw_sqlite(&mut criterion, &mut table);
    operations(&mut criterion, &mut table, Form::Path);
    operations(&mut criterion, &mut table, Form::Handle);
    claim_many(&mut criterion, &mut table);
    threads(&mut criterion, &mut table);
    criterion.final_summary();

    let text = report(&table);
    println!("\n{text}");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let file = target.join("bench-store.md");
    match fs::write(&file, &text) {
        Ok(()) => println!("(written to {})", file.display()),
        Err(error) => eprintln!("cannot write {}: {error}", file.display()),
    }
}

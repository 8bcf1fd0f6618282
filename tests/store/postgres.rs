//! The store on PostgreSQL, on a throwaway cluster the lab starts: it
//! agrees with the contract's model over random boundary-heavy sequences,
//! racing claims of one row have one winner, `lab db --engine postgres`
//! drives it from the shell, and nothing of the cluster is left.
//!
//! Ignored by default: they need PostgreSQL's server programs, which
//! `.ci/run` installs when they are missing.

use crate::common::Sandbox;
use lease_lab::chaos::{Expected, JobModel};
use lease_lab::error::StoreError;
use lease_lab::job::Fence;
use lease_lab::operation::{Answer, Operation};
use lease_lab::pg_server::{call, Cluster};
use lease_lab::store_postgres::Postgres;
use std::collections::BTreeMap;

/// Asserts that `scratch` (a run's temporary folder) is empty: no cluster,
/// database or socket of the run is left in it.
fn assert_nothing_left_in(scratch: &std::path::Path) {
    let left: Vec<_> = std::fs::read_dir(scratch)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Held by a test that makes hosts of their own while it runs: each checks
/// that the namespaces it found are all that is left, which another test's
/// would upset.
static HOSTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The lab's network namespaces on this machine now (hosts of their own).
fn namespaces() -> Vec<String> {
    let listed = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter(|line| line.starts_with("lease-lab-"))
        .map(str::to_string)
        .collect()
}

/// A cluster in a folder of its own, under the system's temporary folder
/// (the server's user must reach it).
fn cluster() -> Cluster {
    Cluster::start(&std::env::temp_dir()).expect("a throwaway PostgreSQL cluster starts")
}

/// SplitMix64: a seeded stream, so that a failing sequence is reproduced by
/// its seed alone.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next() % items.len() as u64) as usize]
    }
}

/// An operation on one of three jobs, its times on a few lease boundaries
/// (a lease of 10 from 100 ends at 110: `now` 109.999, 110 and 110.001
/// are all drawn), with bad arguments now and then.
fn boundary_heavy(rng: &mut Seeded) -> Operation {
    let job_id = rng.pick(&["a", "b", "c", ""]).to_string();
    let owner = rng.pick(&["A", "B", "C", "A", ""]).to_string();
    let now = *rng.pick(&[
        100.0,
        105.0,
        109.999,
        110.0,
        110.001,
        115.0,
        120.0,
        125.0,
        130.0,
        200.0,
        f64::NAN,
    ]);
    let ttl = *rng.pick(&[10.0, 10.0, 5.0, 15.0, 0.0, -1.0, f64::INFINITY]);
    let fence = Fence(*rng.pick(&[0, 1, 2, 3, 4]));
    match rng.next() % 9 {
        0 => Operation::Enqueue { job_id },
        1 => Operation::State { job_id },
        2 | 3 => Operation::Claim {
            job_id,
            owner,
            now,
            ttl,
        },
        4 => Operation::Renew {
            job_id,
            owner,
            fence,
            now,
            ttl,
        },
        5 => Operation::Complete {
            job_id,
            owner,
            fence,
            now,
            result: format!("r{}", rng.next() % 100),
        },
        6 => Operation::Release {
            job_id,
            owner,
            fence,
        },
        7 => Operation::ClaimMany {
            job_id,
            owners: vec!["A".into(), "B".into(), "C".into()],
            now,
            ttl,
        },
        _ => Operation::InitDb,
    }
}

/// The store's answer as the model states it.
fn observed(answer: Result<Answer, StoreError>, operation: &Operation) -> Expected {
    match answer {
        Ok(answer) => Expected::Answer(answer),
        Err(StoreError::InvalidArgument(_)) => Expected::InvalidArgument,
        Err(other) => panic!("{operation:?} failed: {other}"),
    }
}

/// Checks `calls` answers, drawn from `seed` (boundary-heavy), against the
/// contract's model: each one the model allows in the state the calls
/// before it left, each job on its own (claim_many: any one owner may win).
/// `answer` makes the call; `where_` names what answered, for a failure.
/// Answers how many calls were on a job (init_db is on none).
fn agrees_with_the_model(
    seed: u64,
    calls: usize,
    where_: &str,
    mut answer: impl FnMut(&Operation) -> Expected,
) -> usize {
    let mut models: BTreeMap<String, JobModel> = BTreeMap::new();
    let mut rng = Seeded(seed);
    let mut compared = 0;
    for _ in 0..calls {
        let operation = boundary_heavy(&mut rng);
        let answer = answer(&operation);
        let Some(job) = operation.job_id() else {
            assert_eq!(answer, Expected::Answer(Answer::Done), "{where_}");
            continue;
        };
        let model = models.entry(job.to_string()).or_default();
        match model.step(&operation, &answer) {
            Some(next) => *model = next,
            None => panic!(
                "{where_}, seed {seed}: {operation:?} answered {answer:?}; the contract's \
                 model, in the state {model:?}, answers {:?}",
                model.apply(&operation).1
            ),
        }
        compared += 1;
    }
    compared
}

/// Drops the jobs table at `dsn`: the next sequence starts on none.
fn drop_the_table(dsn: &str) {
    let mut client = postgres::Client::connect(dsn, postgres::NoTls).unwrap();
    client.batch_execute("DROP TABLE IF EXISTS jobs").unwrap();
}

/// Over 3 seeds of 1,500 calls each, every answer of the PostgreSQL store
/// is one the contract's model allows in the state the calls before it
/// left, each job on its own (claim_many: any one owner may win).
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn the_postgres_store_agrees_with_the_contract_s_model() {
    let cluster = cluster();
    for seed in 1..=3 {
        let store = Postgres::connect(cluster.dsn()).expect("connects");
        store.init_db().expect("init_db");
        call(&store, &Operation::InitDb).expect("init_db again");
        let compared = agrees_with_the_model(seed, 1_500, "the store", |operation| {
            observed(call(&store, operation), operation)
        });
        assert!(compared > 1_000, "seed {seed}: {compared} calls on jobs");
        drop_the_table(cluster.dsn());
    }
}

/// `operation` as `lab db`'s words: its subcommand, arguments and options
/// (numbers as `--now=X`, so that a negative one or NaN is read as given).
fn lab_db_words(operation: &Operation) -> Vec<String> {
    let number = |name: &str, value: f64| format!("--{name}={value}");
    let mut words: Vec<String> = vec![operation.name().replace('_', "-")];
    match operation {
        Operation::InitDb => words = vec!["init".into()],
        Operation::Enqueue { job_id } | Operation::State { job_id } => {
            words.push(job_id.clone());
        }
        Operation::Claim {
            job_id,
            owner,
            now,
            ttl,
        } => words.extend([
            job_id.clone(),
            owner.clone(),
            number("now", *now),
            number("ttl", *ttl),
        ]),
        Operation::Renew {
            job_id,
            owner,
            fence,
            now,
            ttl,
        } => words.extend([
            job_id.clone(),
            owner.clone(),
            fence.to_string(),
            number("now", *now),
            number("ttl", *ttl),
        ]),
        Operation::Complete {
            job_id,
            owner,
            fence,
            now,
            result,
        } => words.extend([
            job_id.clone(),
            owner.clone(),
            fence.to_string(),
            number("now", *now),
            format!("--result={result}"),
        ]),
        Operation::Release {
            job_id,
            owner,
            fence,
        } => words.extend([job_id.clone(), owner.clone(), fence.to_string()]),
        Operation::ClaimMany {
            job_id,
            owners,
            now,
            ttl,
        } => {
            words.extend([number("now", *now), number("ttl", *ttl), job_id.clone()]);
            words.extend(owners.iter().cloned());
        }
    }
    words
}

/// `lab db --engine postgres --dsn URL`, on a cluster it is given (this
/// test's), agrees with the contract's model over 3 seeds of 400
/// boundary-heavy calls, each a run of `lab db`: its JSON answer (exit 0)
/// or its refusal of an invalid argument (exit 2, nothing on standard
/// output), and no other error.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn lab_db_on_a_given_server_agrees_with_the_contract_s_model() {
    let cluster = cluster();
    let store = Postgres::connect(cluster.dsn()).expect("connects");
    for seed in 11..=13 {
        store.init_db().expect("init_db");
        let compared = agrees_with_the_model(seed, 400, "lab db", |operation| {
            let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
                .args(["db", "--engine", "postgres", "--dsn", cluster.dsn()])
                .args(lab_db_words(operation))
                .env_remove(lease_lab::pg_server::DSN_VARIABLE)
                .output()
                .unwrap();
            let shown = || format!("{operation:?}: {output:?}");
            match output.status.code() {
                Some(0) => {
                    let value: serde_json::Value = serde_json::from_slice(&output.stdout)
                        .unwrap_or_else(|_| panic!("{}", shown()));
                    Expected::Answer(
                        Answer::from_json(operation.answers(), &value)
                            .unwrap_or_else(|_| panic!("{}", shown())),
                    )
                }
                Some(2) => {
                    assert!(output.stdout.is_empty(), "{}", shown());
                    assert!(
                        String::from_utf8_lossy(&output.stderr).contains("invalid argument"),
                        "{}",
                        shown()
                    );
                    Expected::InvalidArgument
                }
                _ => panic!("{}", shown()),
            }
        });
        assert!(compared > 250, "seed {seed}: {compared} calls on jobs");
        drop_the_table(cluster.dsn());
    }
}

/// Sixteen owners claim one expired job at once, twenty times: each time
/// exactly one is handed the next fence, under READ COMMITTED, PostgreSQL's
/// default isolation.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn racing_claims_of_one_row_have_one_winner() {
    let cluster = cluster();
    let store = Postgres::connect(cluster.dsn()).expect("connects");
    store.init_db().unwrap();
    assert!(store.enqueue("j").unwrap());
    let owners: Vec<String> = (0..16).map(|owner| format!("w{owner}")).collect();
    let owners: Vec<&str> = owners.iter().map(String::as_str).collect();
    for round in 0..20 {
        // Each round's lease (10 s) is over by the next round's time.
        let now = 100.0 + f64::from(round) * 20.0;
        let fences = store.claim_many("j", &owners, now, 10.0).unwrap();
        let won: Vec<Fence> = fences.into_iter().flatten().collect();
        assert_eq!(won, [Fence(i64::from(round) + 1)], "round {round}");
    }
    let row = store.state("j").unwrap().expect("the job");
    assert_eq!(row.fence, Fence(20));
}

/// `lab db --engine postgres` drives the store on the server given by
/// --dsn, or by LEASE_LAB_PG; without one it says what to give; a server
/// that is not there is named in the error; and the cluster's folder and
/// process are gone once it is dropped.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn lab_db_drives_the_postgres_store_and_the_cluster_leaves_nothing() {
    let cluster = cluster();
    let sandbox = Sandbox::new();
    let dsn = cluster.dsn().to_string();
    let db = |args: &[&str]| {
        let mut full = vec!["db", "--engine", "postgres", "--dsn", &dsn];
        full.extend_from_slice(args);
        sandbox.lab(&full)
    };
    // Before init_db: no table, and the error says what to do.
    let ran = db(&["state", "j"]);
    assert_eq!(ran.code, Some(1), "{}", ran.shown());
    assert!(
        ran.text().contains(
            "there is no jobs table here; create it with init_db (`lab db init --engine postgres`)"
        ),
        "{}",
        ran.shown()
    );
    for (args, said) in [
        (&["init"][..], "true"),
        (&["enqueue", "j"][..], "true"),
        (&["claim", "j", "A", "--now", "100", "--ttl", "10"][..], "1"),
        (&["claim", "j", "B", "--now", "110", "--ttl", "10"][..], "2"),
        (
            &[
                "complete", "j", "A", "1", "--now", "111", "--result", "late",
            ][..],
            "false",
        ),
        (
            &["complete", "j", "B", "2", "--now", "112", "--result", "B's"][..],
            "true",
        ),
    ] {
        let ran = db(args);
        assert!(ran.success(), "{}", ran.shown());
        assert_eq!(ran.stdout.trim(), said, "{args:?}");
    }
    let state = db(&["state", "j"]);
    let row: serde_json::Value = serde_json::from_str(&state.stdout).expect("JSON");
    assert_eq!(row["owner"], "B");
    assert_eq!(row["fence"], 2);
    assert_eq!(row["result"], "B's");
    assert_eq!(row["done"], true);
    // The same server through the environment.
    let mut command = sandbox.command(&["db", "--engine", "postgres", "state", "j"]);
    command.env("LEASE_LAB_PG", &dsn);
    let ran = command.output().unwrap();
    assert!(String::from_utf8_lossy(&ran.stdout).contains("\"B's\""));
    // Bad input: an empty id is refused (exit 2) and nothing changes.
    let ran = db(&["enqueue", ""]);
    assert_eq!(ran.code, Some(2), "{}", ran.shown());

    let mut command = sandbox.command(&["db", "--engine", "postgres", "state", "j"]);
    command.env_remove("LEASE_LAB_PG");
    let ran = crate::common::run_bounded(&mut command, crate::common::NO_HANG);
    assert_eq!(ran.code, Some(2), "{}", ran.shown());
    assert!(ran
        .text()
        .contains("needs a server: give --dsn URL or set LEASE_LAB_PG"));

    let gone = format!(
        "host={}/gone user=lab dbname=postgres",
        cluster.folder().display()
    );
    let ran = sandbox.lab(&["db", "--engine", "postgres", "--dsn", &gone, "state", "j"]);
    assert_eq!(ran.code, Some(3), "{}", ran.shown());
    assert!(
        ran.text()
            .contains("cannot connect (error connecting to server"),
        "{}",
        ran.shown()
    );

    // A server that answers but has no such database: its own words.
    let elsewhere = dsn.replace("dbname=postgres", "dbname=nope");
    let ran = sandbox.lab(&[
        "db", "--engine", "postgres", "--dsn", &elsewhere, "state", "j",
    ]);
    assert_eq!(ran.code, Some(3), "{}", ran.shown());
    assert!(
        ran.text()
            .contains("cannot connect (database \"nope\" does not exist (3D000))"),
        "{}",
        ran.shown()
    );

    let folder = cluster.folder().to_path_buf();
    drop(cluster);
    assert!(!folder.exists(), "the cluster's folder is removed");
    let left = std::process::Command::new("pgrep")
        .args(["-f", &folder.display().to_string()])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty(), "a server is left: {left:?}");
}

/// The contract suite, test by test, on the store on PostgreSQL: each test
/// on a schema of its own, each call on a connection of its own, its stored
/// rows read and written by another client, and its races queued behind
/// another client's row locks. Every test a store on a server runs passes:
/// the contract's but those that only mean something for a file, which say
/// why, and the server's own (a fence survives a crash of the server).
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn the_contract_suite_passes_on_postgres() {
    use lease_lab::job_store::JobStore;
    use lease_lab::suite::{on_a_server, Tag, CASES, ON_A_FILE_ONLY, ON_A_SERVER_ONLY};
    use std::sync::Arc;
    let cluster = cluster();
    let store: Arc<dyn JobStore> = Arc::new(lease_lab::pg_server::OnServer::new(cluster.dsn()));
    let scratch = tempfile::tempdir().unwrap();
    let mut not_passed = Vec::new();
    let cases = on_a_server();
    for case in &cases {
        let run = lease_lab::runner::run_case(
            case,
            Arc::clone(&store),
            scratch.path(),
            std::time::Duration::from_secs(30),
        );
        if run.outcome != lease_lab::outcome::Outcome::Pass {
            not_passed.push(format!("{}: {:?}", case.name, run.outcome));
        }
    }
    assert!(not_passed.is_empty(), "{not_passed:#?}");
    let contract = CASES
        .iter()
        .filter(|case| case.tag == Tag::Contract)
        .count();
    assert_eq!(
        cases.len(),
        contract - ON_A_FILE_ONLY.len() + ON_A_SERVER_ONLY.len()
    );
    for (name, why) in ON_A_FILE_ONLY {
        let case = lease_lab::suite::case(name).expect("a test of the suite");
        assert_eq!(case.tag, Tag::Contract, "{name}");
        assert!(!why.is_empty());
        assert!(!cases.iter().any(|case| case.name == name), "{name}");
    }
}

/// `lab matrix --engine postgres --check` on a throwaway cluster of its own:
/// it says where the store runs, passes, and kills every mutant of the
/// store on PostgreSQL by a test of its own step, the server's own among
/// them (the asynchronous commit by the crash, the check-then-act claims by
/// the race behind held rows); and it leaves no cluster behind, neither
/// the run's nor the crash test's.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn the_matrix_on_postgres_kills_every_mutant_and_leaves_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args([
            "matrix", "--engine", "postgres", "--check", "--format", "json",
        ])
        .env_remove(lease_lab::pg_server::DSN_VARIABLE)
        .env("TMPDIR", scratch.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("runs on a throwaway cluster, removed when the"),
        "{stderr}"
    );
    assert!(stderr.contains("lab matrix --check: ok"), "{stderr}");
    // What the lab says of the server fits a terminal of 80 columns.
    let said: Vec<&str> = stderr
        .lines()
        .take_while(|line| !line.starts_with("lab matrix"))
        .collect();
    assert!(!said.is_empty(), "{stderr}");
    assert!(
        said.iter().all(|line| line.chars().count() <= 80),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let variants = report["variants"].as_array().expect("variants");
    assert_eq!(variants[0]["id"], "reference");
    let mutants = &variants[1..];
    let ids: Vec<&str> = mutants.iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert!(
        mutants.iter().all(|m| m["status"] == "killed"),
        "{mutants:?}"
    );
    let compiled: Vec<&str> = lease_lab::variant::SERVER_MUTANTS
        .iter()
        .map(|mutant| mutant.id)
        .collect();
    assert_eq!(ids, compiled);
    assert!(ids.len() >= 15, "{ids:?}");
    let killers = |id: &str| -> Vec<String> {
        let mutant = mutants.iter().find(|m| m["id"] == id).unwrap();
        mutant["killed_by"]
            .as_array()
            .unwrap_or_else(|| panic!("{id}: {mutant}"))
            .iter()
            .map(|test| test.as_str().unwrap().to_string())
            .collect()
    };
    assert!(killers("pgs04b").contains(&"a_returned_fence_survives_a_server_crash".to_string()));
    for id in ["pgs08a", "pg08b"] {
        assert!(
            killers(id).contains(&"claims_queued_behind_a_writer_have_one_winner".to_string()),
            "{id}: {:?}",
            killers(id)
        );
    }
    assert_nothing_left_in(scratch.path());
}

/// Another client's row locks hold a claim until they are let go, and the
/// watch sees the claim wait for them: the server's form of the write lock
/// a race queues behind.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn held_rows_hold_a_claim_and_the_watch_sees_it_wait() {
    use lease_lab::job_store::JobStore;
    let cluster = cluster();
    let store = lease_lab::pg_server::OnServer::new(cluster.dsn());
    let db = std::path::Path::new("held");
    store.init_db(db).unwrap();
    assert!(store.enqueue(db, "j").unwrap());
    let held = store
        .hold_every_row(db)
        .expect("a store on a server holds rows")
        .expect("the rows are held");
    assert_eq!(held.waiting(), Ok(0));
    std::thread::scope(|scope| {
        let claim = scope.spawn(|| store.claim(db, "j", "A", 100.0, 10.0));
        let seen = (0..500).any(|_| {
            std::thread::sleep(std::time::Duration::from_millis(10));
            held.waiting() == Ok(1)
        });
        assert!(seen, "the claim was never seen waiting");
        assert!(!claim.is_finished(), "the claim went through a held row");
        held.let_go().expect("the rows are let go");
        let fence = claim
            .join()
            .expect("the claim's thread")
            .expect("the claim");
        assert_eq!(fence, Some(Fence(1)));
    });
}

/// The throwaway cluster's folder belongs to the `postgres` user when the
/// lab runs as root (the server refuses root), else to the lab's own user;
/// a schema's name that is not letters, digits and `_` is refused before
/// it reaches any SQL.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn the_cluster_runs_as_postgres_under_root_and_schema_names_are_checked() {
    use std::os::unix::fs::MetadataExt;
    let cluster = cluster();
    let owner = std::fs::metadata(cluster.folder()).unwrap().uid();
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let expected = if me == 0 {
        let id = std::process::Command::new("id")
            .args(["-u", "postgres"])
            .output()
            .expect("id runs");
        String::from_utf8_lossy(&id.stdout)
            .trim()
            .parse()
            .expect("a uid")
    } else {
        me
    };
    assert_eq!(owner, expected);
    for bad in ["", "two words", "x; DROP TABLE jobs", "dash-ed"] {
        assert!(
            matches!(
                Postgres::connect_in(cluster.dsn(), Some(bad)),
                Err(StoreError::InvalidArgument(_))
            ),
            "{bad:?}"
        );
    }
    let store = Postgres::connect_in(cluster.dsn(), Some("a_Schema_2")).expect("a good name");
    store.init_db().unwrap();
    assert!(store.enqueue("j").unwrap());
}

/// `lab __serve --on-server` serves a variant of the store on PostgreSQL
/// over the lab's protocol, as a chaos run's worker would, on the server
/// whose connection string is in its environment: a path is a schema of
/// that server. Without the variable it says what it needs.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn a_variant_on_the_server_is_served_over_the_protocol() {
    use std::io::{BufRead, BufReader, Write};
    let cluster = cluster();
    let serve = |variant: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(["__serve", "--variant", variant, "--on-server"])
            .env(lease_lab::pg_server::DSN_VARIABLE, cluster.dsn())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let answers = |variant: &str| -> Vec<serde_json::Value> {
        let mut child = serve(variant);
        let mut input = child.stdin.take().unwrap();
        for request in [
            r#"{"path": "served.db", "op": "init_db"}"#,
            r#"{"path": "served.db", "op": "enqueue", "job_id": "j"}"#,
            r#"{"path": "served.db", "op": "claim", "job_id": "j", "owner": "A", "now": 100, "ttl": 10}"#,
            r#"{"path": "served.db", "op": "claim", "job_id": "j", "owner": "B", "now": 105, "ttl": 10}"#,
        ] {
            writeln!(input, "{request}").unwrap();
        }
        drop(input);
        let lines: Vec<serde_json::Value> = BufReader::new(child.stdout.take().unwrap())
            .lines()
            .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
            .collect();
        assert!(child.wait().unwrap().success());
        lines
    };
    let reference = answers("reference");
    assert_eq!(reference[0]["protocol"], "lease-lab");
    let oks: Vec<&serde_json::Value> = reference[1..].iter().map(|line| &line["ok"]).collect();
    assert_eq!(
        oks,
        [
            &true.into(),
            &true.into(),
            &1.into(),
            &serde_json::Value::Null
        ]
    );
    // The server's clock takes the lease A still holds by the caller's.
    let mutant = answers("pgs04a");
    assert_eq!(mutant[4]["ok"], 2, "{mutant:?}");
    let without = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(["__serve", "--variant", "reference", "--on-server"])
        .env_remove(lease_lab::pg_server::DSN_VARIABLE)
        .output()
        .unwrap();
    assert_eq!(without.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&without.stderr).contains("LEASE_LAB_PG"));
}

/// `lab chaos --engine postgres`: workers of their own processes on a
/// throwaway cluster, the run's jobs on a cluster of the run's own that
/// crashes under them. The reference stays clean over three seeds, its
/// cut-off calls judged as unknown; a claim committed without waiting for
/// the disk (pgs04b) loses jobs and fences in the crash, and a completion
/// that ignores the fence (pg06) is caught as on SQLite; nothing is left.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn chaos_on_postgres_survives_a_server_crash_and_catches_what_it_loses() {
    let scratch = tempfile::tempdir().unwrap();
    let chaos = |variant: &str, seed: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(["chaos", "--engine", "postgres", "--variant", variant])
            .args(["--faults", "stalls,kills,server-crash", "--seed", seed])
            .args(["--operations", "500", "--no-shrink", "--color", "never"])
            .env_remove(lease_lab::pg_server::DSN_VARIABLE)
            .env("TMPDIR", scratch.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (output.status.code(), format!("{stdout}\n{stderr}"))
    };
    for seed in ["1", "2", "3"] {
        let (code, said) = chaos("reference", seed);
        assert_eq!(code, Some(0), "seed {seed}: {said}");
        assert!(
            said.contains("the store on PostgreSQL, reference, 8 workers, 500 calls"),
            "{said}"
        );
        assert!(
            said.contains("the server crashed once and restarted, cutting off"),
            "{said}"
        );
        assert!(said.contains("✓ no violation"), "{said}");
        assert!(!said.contains("the file sound"), "{said}");
    }
    let (code, said) = chaos("pgs04b", "1");
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("✗ fencing broken"), "{said}");
    assert!(
        said.contains("the job was added, and the server no longer holds it")
            || said.contains("handed out twice"),
        "{said}"
    );
    let (code, said) = chaos("pg06", "1");
    assert_eq!(code, Some(1), "{said}");
    assert!(said.contains("(step 6)"), "{said}");
    assert_nothing_left_in(scratch.path());
}

/// `lab chaos --engine postgres --hosts`: each worker in a network
/// namespace of its own, over TCP to the server in another, links cut
/// mid-call (`partition`) and the server crashed. The reference is clean
/// for three seeds with links really cut; the step-6 mutants that
/// `stale_completion_while_the_new_owner_works_is_refused` kills are
/// caught; no namespace, link or cluster is left after any run.
#[test]
#[ignore = "needs PostgreSQL, and root and ip for the namespaces; .ci/run has them"]
fn chaos_on_hosts_of_their_own_with_partitions_is_clean_and_catches_step_6() {
    let _alone = HOSTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = tempfile::tempdir().unwrap();
    let before = namespaces();
    let chaos = |variant: &str, seed: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
            .args([
                "chaos",
                "--engine",
                "postgres",
                "--hosts",
                "--variant",
                variant,
            ])
            .args([
                "--faults",
                "partition,stalls,kills,server-crash",
                "--seed",
                seed,
            ])
            .args(["--operations", "1000", "--no-shrink", "--color", "never"])
            .args(["--format", "json"])
            .env_remove(lease_lab::pg_server::DSN_VARIABLE)
            .env("TMPDIR", scratch.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|error| panic!("{variant} {seed}: {error}: {stderr}"));
        (output.status.code(), report, stderr)
    };
    // (A call's link is cut by chance, about 3 times in 1,000 calls; how
    // many calls a round makes depends on the answers, which depend on the
    // operating system: a seed's count varies, the three's total seldom 0.)
    let mut cut = Vec::new();
    for seed in ["1", "2", "3"] {
        let (code, report, stderr) = chaos("reference", seed);
        assert_eq!(code, Some(0), "seed {seed}: {stderr}");
        assert!(
            stderr.contains("each worker on a host of its own"),
            "{stderr}"
        );
        assert!(!stderr.contains("throwaway"), "no other cluster: {stderr}");
        let record = &report["judged"]["record"];
        cut.push(record["partitions"].as_u64().unwrap());
        assert_eq!(record["on_a_server"], true);
        assert_eq!(report["judged"]["violations"], serde_json::json!([]));
    }
    assert!(cut.iter().sum::<u64>() >= 1, "links cut by seed: {cut:?}");
    for mutant in ["pg06", "pgf06a", "pgf06b"] {
        let (code, report, stderr) = chaos(mutant, "1");
        assert_eq!(code, Some(1), "{mutant}: {stderr}");
        let steps: Vec<&serde_json::Value> = report["judged"]["violations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|violation| &violation["step"])
            .collect();
        assert!(
            steps.contains(&&serde_json::json!(6)),
            "{mutant}: {steps:?}"
        );
    }
    assert_eq!(namespaces(), before, "no namespace is left");
    assert_nothing_left_in(scratch.path());
}

/// The store on a server it was given keeps a schema per database path, and
/// lets go of each when told: the schema is dropped, and a path on a cluster
/// of its own stops that cluster. Another process's view that shares a
/// schema (as a chaos run's workers do) reads and writes the same table and
/// never drops it; the store, dropped, drops what is left.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn a_store_on_a_given_server_lets_go_of_its_schemas_and_its_own_clusters() {
    use lease_lab::job_store::JobStore;
    use lease_lab::pg_server::{OnServer, Server, REFERENCE};
    use std::path::Path;
    use std::sync::Arc;
    let cluster = cluster();
    let schemas = || -> Vec<String> {
        let mut client = postgres::Client::connect(cluster.dsn(), postgres::NoTls).unwrap();
        client
            .query(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'lab\\_%' ORDER BY nspname",
                &[],
            )
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect()
    };
    let store = OnServer::of(Arc::new(Server::given(cluster.dsn())), &REFERENCE);
    let (a, b, c) = (
        Path::new("/lab/a"),
        Path::new("/lab/b"),
        Path::new("/lab/c"),
    );
    for db in [a, b] {
        store.call(db, &Operation::InitDb).unwrap();
    }
    let (schema_a, schema_b) = (store.schema_of(a), store.schema_of(b));
    assert_ne!(schema_a, schema_b);
    assert_eq!(schemas(), [schema_a.clone(), schema_b.clone()]);
    store.let_go(a);
    assert_eq!(schemas(), vec![schema_b.clone()]);
    assert_ne!(
        store.schema_of(a),
        schema_a,
        "a path let go is a new database"
    );

    let sharing = store.sharing(&schema_b);
    assert_eq!(sharing.schema_of(Path::new("/elsewhere")), schema_b);
    let enqueue = Operation::Enqueue { job_id: "j".into() };
    assert_eq!(
        sharing.call(Path::new("/elsewhere"), &enqueue).unwrap(),
        Answer::Bool(true)
    );
    drop(sharing);
    let rows = store.stored_rows(b).unwrap().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        schemas(),
        vec![schema_b.clone()],
        "the sharer dropped nothing"
    );

    store.server_of_its_own(c).unwrap().unwrap();
    let own = store.dsn_of(c);
    assert_ne!(own, cluster.dsn());
    store.call(c, &Operation::InitDb).unwrap();
    assert!(postgres::Client::connect(&own, postgres::NoTls).is_ok());
    store.let_go(c);
    assert!(
        postgres::Client::connect(&own, postgres::NoTls).is_err(),
        "its own cluster stopped"
    );
    assert_eq!(schemas(), vec![schema_b.clone()]);
    drop(store);
    assert!(schemas().is_empty(), "{:?}", schemas());
}

/// `lab demo --engine postgres`: the worksheet's story on the server, A's
/// stale write refused by the reference; on River's and pg-boss's
/// completion (the job's state alone, `pgf06a`) it lands; nothing is left.
#[test]
#[ignore = "needs PostgreSQL; .ci/run installs it"]
fn lab_demo_tells_the_story_on_postgres() {
    let scratch = tempfile::tempdir().unwrap();
    let demo = |variant: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(["demo", "--engine", "postgres", "--variant", variant])
            .args(["--color", "never"])
            .env_remove(lease_lab::pg_server::DSN_VARIABLE)
            .env("TMPDIR", scratch.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let told = demo("reference");
    assert!(
        told.contains("The story on the reference store on PostgreSQL"),
        "{told}"
    );
    assert!(
        told.contains("A's stale write was refused; B's result stands."),
        "{told}"
    );
    assert!(
        told.contains("lab demo --engine postgres --variant pgf06a"),
        "{told}"
    );
    let told = demo("pgf06a");
    assert!(told.contains("The stale write LANDED"), "{told}");
    assert_nothing_left_in(scratch.path());
}

/// `lab demo --engine postgres --partition`: A and B are processes on hosts
/// of their own, and A's link to the server is really cut after its claim:
/// A's renewal gets no answer, B takes over, the link is mended, and A's
/// stale completion is refused by the reference; on River's and pg-boss's
/// completion (`pgf06a`), told in its order (A back while B works), it
/// lands. No namespace, cluster or file is left.
#[test]
#[ignore = "needs PostgreSQL, and root and ip for the namespaces; .ci/run has them"]
fn lab_demo_partition_cuts_a_real_link_and_the_fence_still_decides() {
    let _alone = HOSTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = tempfile::tempdir().unwrap();
    let before = namespaces();
    let demo = |variant: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(["demo", "--engine", "postgres", "--partition"])
            .args(["--variant", variant, "--color", "never"])
            .env_remove(lease_lab::pg_server::DSN_VARIABLE)
            .env("TMPDIR", scratch.path())
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("A and B each on a host of its own"),
            "{stderr}"
        );
        assert!(!stderr.contains("throwaway"), "no other cluster: {stderr}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let told = demo("reference");
    for line in [
        "The partition story on the reference store on PostgreSQL",
        "t=101   -  A's link to the server is cut",
        "t=105   A  renew with fence 1, ttl 10  -> no answer: the call failed",
        "t=110   B  claim, ttl 10  -> fence 2",
        "t=112   B  complete with fence 2, result \"B's result\"  -> accepted",
        "t=112   -  A's link is mended",
        "t=113   A  back, complete with its old fence 1",
        "final row: owner B, fence 2, done true, result \"B's result\"",
        "A's stale write was refused; B's result stands.",
        "lab demo --engine postgres --partition --variant pgf06a",
    ] {
        assert!(told.contains(line), "{line:?} in {told}");
    }
    let told = demo("pgf06a");
    for line in [
        "t=105   A  renew with fence 1, ttl 10  -> no answer: the call failed",
        "t=111   B  works on the job (its lease runs until 120)",
        "result \"A's stale result\"  ->\n             accepted",
        "t=115   B  complete with fence 2, result \"B's result\"  -> refused",
        "The stale write LANDED",
    ] {
        assert!(told.contains(line), "{line:?} in {told}");
    }
    assert_eq!(namespaces(), before, "no namespace is left");
    assert_nothing_left_in(scratch.path());
}

/// A run ended by Ctrl-C (SIGINT) or SIGTERM leaves nothing either, and
/// says so, exiting with 130: `lab chaos --hosts` interrupted mid-run
/// removes its namespaces and its cluster; `lab matrix --engine postgres`
/// interrupted as soon as its cluster's folder is made, while `initdb`
/// runs, removes that folder.
#[test]
#[ignore = "needs PostgreSQL, and root and ip for the namespaces; .ci/run has them"]
fn an_interrupted_run_removes_its_clusters_and_namespaces() {
    let _alone = HOSTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = tempfile::tempdir().unwrap();
    let before = namespaces();
    // In the scratch: a cluster's folder, and one whose server runs
    // (`postmaster.opts` is the server's own, not initdb's).
    let folders = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(scratch.path())
            .unwrap()
            .flatten()
            .map(|entry| entry.path())
            .collect()
    };
    let made = || !folders().is_empty();
    let running = || {
        folders()
            .iter()
            .any(|folder| folder.join("data/postmaster.opts").exists())
            && namespaces().iter().any(|name| name.ends_with("-server"))
    };
    /// A command, the signal that ends it, and when it is sent.
    type Interrupted<'a> = (&'a [&'a str], libc::c_int, &'a dyn Fn() -> bool);
    let runs: [Interrupted; 2] = [
        (
            &["chaos", "--engine", "postgres", "--hosts"],
            libc::SIGINT,
            &running,
        ),
        (&["matrix", "--engine", "postgres"], libc::SIGTERM, &made),
    ];
    for (args, signal, ready) in runs {
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_lab"))
            .args(args)
            .args(
                ["--operations", "1000000"]
                    .iter()
                    .filter(|_| args[0] == "chaos"),
            )
            .env_remove(lease_lab::pg_server::DSN_VARIABLE)
            .env("TMPDIR", scratch.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut waited = 0;
        while !ready() {
            assert!(waited < 6_000, "{args:?} never got there");
            std::thread::sleep(std::time::Duration::from_millis(10));
            waited += 1;
        }
        // SAFETY: kill(2) has no memory effects.
        unsafe { libc::kill(libc::pid_t::try_from(child.id()).unwrap(), signal) };
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(130), "{args:?}: {stderr}");
        assert!(
            stderr.contains("interrupted: removing the clusters and namespaces it made"),
            "{args:?}: {stderr}"
        );
        // (An initdb cut off may take a moment to fail.)
        std::thread::sleep(std::time::Duration::from_millis(500));
        assert_eq!(namespaces(), before, "{args:?}: no namespace is left");
        assert_nothing_left_in(scratch.path());
    }
}

/// Hosts of their own need root: run as a user without it, `lab chaos
/// --hosts` and `lab demo --partition` say so and what to do (exit 3), and
/// make nothing: no namespace, no cluster.
#[test]
#[ignore = "needs root, to run the lab as a user without it; .ci/run has it"]
fn without_root_hosts_of_their_own_say_why_and_make_nothing() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let _alone = HOSTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let scratch = tempfile::tempdir().unwrap();
    // The lab where that user may run it (the build's folder may be
    // closed to others).
    let bin = tempfile::tempdir().unwrap();
    let lab = bin.path().join("lab");
    std::fs::copy(env!("CARGO_BIN_EXE_lab"), &lab).unwrap();
    std::fs::set_permissions(bin.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = namespaces();
    for args in [
        &["chaos", "--engine", "postgres", "--hosts"][..],
        &["demo", "--engine", "postgres", "--partition"],
    ] {
        // (nobody: a user with no rights of its own.)
        let output = std::process::Command::new(&lab)
            .args(args)
            .env_remove(lease_lab::pg_server::DSN_VARIABLE)
            .env("TMPDIR", scratch.path())
            .uid(65534)
            .gid(65534)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        let said = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(output.status.code(), Some(3), "{args:?}: {stderr}");
        assert!(
            said.contains("are network namespaces, which need root: run the lab as root"),
            "{args:?}: {stderr}"
        );
        // (Nothing said of hosts it did not make.)
        assert!(!said.contains("on a host of its own"), "{stderr}");
        assert_eq!(namespaces(), before, "{args:?}");
        assert_nothing_left_in(scratch.path());
    }
}

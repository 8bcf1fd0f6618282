//! Cross-language interop: a client written in Python against the same
//! file, following the same contract with its own SQLite (`BEGIN
//! IMMEDIATE`, read `until`/`done`, set owner and `until`, `fence =
//! fence + 1`), races the Rust store for the same jobs. Exactly one of
//! them wins each round, and fences stay one sequence whoever hands them
//! out.
//!
//! Needs `python3` with its standard `sqlite3` module; without it the test
//! fails and says so (CI must provide it, it does not pass by skipping).

use lease_lab::{Fence, Store};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{mpsc, Barrier};
use std::thread;

/// The Python client: reads one JSON request a line, answers one JSON line.
/// Its claim and complete are the worksheet's contract, written anew.
const PYTHON_CLIENT: &str = r#"
import json, sqlite3, sys

conn = sqlite3.connect(sys.argv[1], timeout=10.0, isolation_level=None)
conn.execute("PRAGMA synchronous=FULL")

def claim(job, owner, now, ttl):
    if not ttl > 0:
        raise ValueError("ttl must be > 0")
    conn.execute("BEGIN IMMEDIATE")
    try:
        row = conn.execute("SELECT until, done FROM jobs WHERE id = ?", (job,)).fetchone()
        if row is None or row[1] != 0 or row[0] > now:
            conn.execute("ROLLBACK")
            return None
        conn.execute(
            "UPDATE jobs SET owner = ?, until = ?, fence = fence + 1 WHERE id = ?",
            (owner, now + ttl, job),
        )
        fence = conn.execute("SELECT fence FROM jobs WHERE id = ?", (job,)).fetchone()[0]
        conn.execute("COMMIT")
        return fence
    except BaseException:
        conn.execute("ROLLBACK")
        raise

def complete(job, owner, fence, now, result):
    cursor = conn.execute(
        "UPDATE jobs SET result = ?, done = 1"
        " WHERE id = ? AND owner = ? AND fence = ? AND done = 0 AND until > ?",
        (result, job, owner, fence, now),
    )
    return cursor.rowcount == 1

print(json.dumps({"ready": True, "sqlite": sqlite3.sqlite_version}), flush=True)
for line in iter(sys.stdin.readline, ""):
    request = json.loads(line)
    if request["op"] == "claim":
        answer = claim(request["job"], request["owner"], request["now"], request["ttl"])
    else:
        answer = complete(request["job"], request["owner"], request["fence"],
                          request["now"], request["result"])
    print(json.dumps({"answer": answer}), flush=True)
"#;

/// One running Python client.
struct Python {
    owner: String,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Python {
    fn start(db: &Path, owner: &str) -> Python {
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(PYTHON_CLIENT)
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot run python3 ({error}): the interop test needs CPython 3 with its \
                     sqlite3 module on PATH (Debian: apt-get install python3)"
                )
            });
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut python = Python {
            owner: owner.to_string(),
            child,
            stdin,
            stdout,
        };
        let hello = python.read();
        assert_eq!(
            hello["ready"], true,
            "the Python client did not start: {hello}"
        );
        eprintln!("{owner}: Python's SQLite {}", hello["sqlite"]);
        python
    }

    fn send(&mut self, request: Value) {
        writeln!(self.stdin, "{request}").expect("write to the Python client");
        self.stdin.flush().expect("flush to the Python client");
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("read from the Python client");
        assert!(!line.is_empty(), "the Python client {} exited", self.owner);
        serde_json::from_str(&line).expect("a JSON line from the Python client")
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Who answered what in one round.
type Answers = Vec<(String, Option<i64>)>;

/// Rounds of one claim race between two Python processes and two Rust
/// threads (one on the path functions, one on a kept handle). Each round's
/// job has been claimed 0 to 2 times before and its lease has run out, so
/// the winner's fence must be the next one. Proves, each round: exactly one
/// winner, with exactly the next fence; the stored owner is the winner;
/// the winner's completion is accepted through its own client, and the
/// previous holder's stale completion is refused through the other
/// language's; both languages win some rounds (the race is real).
#[test]
fn rust_and_python_clients_race_with_one_winner_per_round() {
    const ROUNDS: usize = 60;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("jobs.db");
    lease_lab::init_db(&db).unwrap();
    let mut pythons = [Python::start(&db, "py-0"), Python::start(&db, "py-1")];
    let start = Barrier::new(3);
    let (answers_tx, answers_rx) = mpsc::channel::<(String, Option<i64>)>();
    let mut wins: Vec<String> = Vec::new();

    thread::scope(|scope| {
        for rust in ["rust-path", "rust-handle"] {
            let (start, answers, db) = (&start, answers_tx.clone(), db.as_path());
            scope.spawn(move || {
                let handle = Store::open(db).unwrap();
                for round in 0..ROUNDS {
                    let job = format!("round-{round}");
                    start.wait();
                    let fence = if rust == "rust-path" {
                        lease_lab::claim(db, &job, rust, 100.0, 10.0)
                    } else {
                        handle.claim(&job, rust, 100.0, 10.0)
                    };
                    let fence = fence.expect("a Rust claim runs").map(|f| f.0);
                    answers.send((rust.to_string(), fence)).unwrap();
                }
            });
        }
        drop(answers_tx);

        for round in 0..ROUNDS {
            let job = format!("round-{round}");
            assert!(lease_lab::enqueue(&db, &job).unwrap());
            // Earlier leases, all over by now=100: the fence to beat.
            let earlier = (round % 3) as i64;
            for n in 0..earlier {
                let claimed = lease_lab::claim(&db, &job, "setup", n as f64, 1.0).unwrap();
                assert_eq!(claimed, Some(Fence(n + 1)));
            }
            // Whoever is told first has a head start of a few dozen
            // microseconds: take turns, so that both sides win rounds.
            let python_first = round % 2 == 0;
            if !python_first {
                start.wait();
            }
            for python in pythons.iter_mut() {
                let owner = python.owner.clone();
                python.send(
                    json!({"op": "claim", "job": job, "owner": owner, "now": 100.0, "ttl": 10.0}),
                );
            }
            if python_first {
                start.wait();
            }
            let mut answers: Answers = pythons
                .iter_mut()
                .map(|python| (python.owner.clone(), python.read()["answer"].as_i64()))
                .collect();
            answers.extend(answers_rx.iter().take(2));

            let winners: Vec<&(String, Option<i64>)> = answers
                .iter()
                .filter(|(_, fence)| fence.is_some())
                .collect();
            assert_eq!(
                winners.len(),
                1,
                "round {round}: not one winner: {answers:?}"
            );
            let (winner, fence) = winners[0].clone();
            let fence = fence.unwrap();
            assert_eq!(
                fence,
                earlier + 1,
                "round {round}: the fence after {earlier} claims"
            );
            let row = lease_lab::state(&db, &job).unwrap().unwrap();
            assert_eq!(row.owner.as_deref(), Some(winner.as_str()), "round {round}");
            assert_eq!(row.fence, Fence(fence), "round {round}");

            // The winner completes through its own client; a stale holder
            // (fence - 1, the setup's or nobody's) through the other one.
            let result = format!("{winner} won");
            let (accepted, stale) = if winner.starts_with("py") {
                let python = pythons.iter_mut().find(|p| p.owner == winner).unwrap();
                python.send(json!({"op": "complete", "job": job, "owner": winner, "fence": fence, "now": 105.0, "result": result}));
                let accepted = python.read()["answer"] == true;
                let stale =
                    lease_lab::complete(&db, &job, "setup", Fence(fence - 1), 105.0, "stale")
                        .unwrap();
                (accepted, stale)
            } else {
                let accepted =
                    lease_lab::complete(&db, &job, &winner, Fence(fence), 105.0, &result).unwrap();
                pythons[0].send(json!({"op": "complete", "job": job, "owner": "setup", "fence": fence - 1, "now": 105.0, "result": "stale"}));
                (accepted, pythons[0].read()["answer"] == true)
            };
            assert!(accepted, "round {round}: {winner}'s completion was refused");
            assert!(!stale, "round {round}: a stale completion was accepted");
            let row = lease_lab::state(&db, &job).unwrap().unwrap();
            assert_eq!(
                row.result.as_deref(),
                Some(result.as_str()),
                "round {round}"
            );
            wins.push(winner);
        }
    });

    let python_wins = wins.iter().filter(|w| w.starts_with("py")).count();
    eprintln!(
        "wins: Python {python_wins}, Rust {} of {ROUNDS}",
        ROUNDS - python_wins
    );
    assert!(
        python_wins > 0 && python_wins < ROUNDS,
        "one language won every round ({wins:?}): the clients did not really race"
    );
}

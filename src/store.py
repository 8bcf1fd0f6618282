"""The job store in Python, on SQLite: an ownership lease plus a fencing token.

The worksheet's eight operations, in its order, with the same contract as the
Rust store (crates/store/src/store.rs). Each one takes the database path and opens its own
connection for the one call. Time is a number of seconds given by the caller
(`now`), never read from the machine: a lease is valid while now < until.

Run as a program, the file speaks the lab's protocol (labs/protocol.md) on its
standard input and output, so that `lab` can run the contract suite against it:

    printf '%s\\n' '{"op":"init_db","path":"/tmp/x.db"}' | python3 src/store.py

Standard library only (Python 3.11 or later).
"""

import math
import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

# How long a call waits for another connection's write lock before it gives up
# with "database is locked": 5 seconds, or LEASE_LAB_BUSY_TIMEOUT_MS
# milliseconds.
_BUSY_MS = os.environ.get("LEASE_LAB_BUSY_TIMEOUT_MS", "").strip()
BUSY_TIMEOUT = int(_BUSY_MS) / 1000 if _BUSY_MS.isdigit() else 5.0

# A shorter wait for the calls of one thread, when a request asks for one
# (the lab's busy-lock test does, with "busy_timeout_ms").
_this_thread = threading.local()


def busy_timeout():
    return getattr(_this_thread, "busy_timeout", BUSY_TIMEOUT)

# The most threads claim_many runs at once; more owners share them. SQLite lets
# one writer in at a time: more threads would only add connections that wait.
MAX_CLAIM_THREADS = 16

# The keys of a job's row, in the table's column order.
FIELDS = ("id", "owner", "until", "fence", "result", "done")


# Why a call could not be carried out, beyond an invalid argument (a
# ValueError). Each class names its kind in the lab's protocol, which answers
# it as {"error": kind, "message": str(error)} (labs/protocol.md); the errors
# SQLite raises itself (a lock that stayed busy, a read-only file, a file that
# is not a database) get their kinds from SQLite's error code instead.
class StoreError(Exception):
    kind = "other"


class MissingFolder(StoreError, FileNotFoundError):
    kind = "missing-folder"


class NoDatabase(StoreError, FileNotFoundError):
    kind = "no-database"


class IsADirectory(StoreError, IsADirectoryError):
    kind = "is-a-directory"


class NotADatabase(StoreError, sqlite3.DatabaseError):
    kind = "not-a-database"


class NoJobsTable(StoreError, sqlite3.DatabaseError):
    kind = "no-jobs-table"


class IncompatibleSchema(StoreError, sqlite3.DatabaseError):
    kind = "incompatible-schema"


def check_args(job_id, owner=None, now=None, ttl=None):
    """The argument checks of every operation but init_db.

    Raises ValueError for the arguments the contract refuses: an empty job id
    or owner, a `now` that is not finite, and a lease that would not end after
    it starts (a ttl that is not finite or not above 0, now + ttl overflowing,
    or a ttl so small that now + ttl rounds back to now). Only the given ones
    are checked: enqueue(path, job_id) checks check_args(job_id), claim
    check_args(job_id, owner, now, ttl).
    """
    if not job_id:
        raise ValueError("job_id must not be empty")
    if owner is not None and not owner:
        raise ValueError("owner must not be empty: name the worker that holds the lease")
    if now is not None and not math.isfinite(now):
        raise ValueError(f"now must be a finite number of seconds (got {now})")
    if ttl is not None:
        if not math.isfinite(ttl) or ttl <= 0:
            raise ValueError(f"ttl must be a finite number of seconds above 0 (got {ttl})")
        if not math.isfinite(now + ttl):
            raise ValueError(f"now + ttl overflows ({now} + {ttl}); use a smaller clock or ttl")
        if now + ttl <= now:
            raise ValueError(f"ttl {ttl} is lost to rounding at now {now}: "
                             "the lease would end as it starts")


def check_schema(conn, path):
    """The schema check of every connection (connect calls it).

    Compares the file's jobs table with the worksheet's, as PRAGMA
    table_info(jobs) describes it: a row (cid, name, type, notnull,
    dflt_value, pk) a column. Returns whether the table exists. Raises
    IncompatibleSchema, naming both, when the table is not lease-lab's:
    other columns, types, defaults, NOT NULLs or primary key.
    """
    # name, declared type, NOT NULL, default value, position in the primary key
    expected = [
        ("id", "TEXT", 0, None, 1),
        ("owner", "TEXT", 0, None, 0),
        ("until", "REAL", 1, "0", 0),
        ("fence", "INTEGER", 1, "0", 0),
        ("result", "TEXT", 0, None, 0),
        ("done", "INTEGER", 1, "0", 0),
    ]
    found = [(name, kind.upper(), notnull, default, pk)
             for _, name, kind, notnull, default, pk in conn.execute("PRAGMA table_info(jobs)")]
    if found and found != expected:
        def describe(columns):
            return ", ".join(f"{name} {kind}" + " PRIMARY KEY" * bool(pk)
                             + " NOT NULL" * bool(notnull)
                             + ("" if default is None else f" DEFAULT {default}")
                             for name, kind, notnull, default, pk in columns)
        raise IncompatibleSchema(f"{path}: its columns are ({describe(found)}); "
                                 f"lease-lab's are ({describe(expected)})")
    return bool(found)


# Opens a connection for one call, in autocommit mode (transactions are begun
# explicitly), with synchronous=FULL: every commit waits until it is on disk, so
# a power failure cannot lose a fence that was handed out. Without `create`, the
# file must already be a lease-lab database: no file is created and a missing or
# foreign jobs table is refused before anything is written. This is plumbing,
# not a rule of the worksheet, so lab new's starter gives it whole; the schema
# check it calls is the worksheet's step 1, and the student's.
def connect(path, create=False):
    path = os.fspath(path)
    if not path:
        raise ValueError("the database path must not be empty: "
                         "name a database file")
    if os.path.isdir(path):
        raise IsADirectory(f"{path}: is a directory; "
                           "give the path of a database file inside it")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise MissingFolder(f"{path}: the folder {folder} does not exist; "
                            "create it or choose another path")
    if not create and not os.path.exists(path):
        raise NoDatabase(f"{path}: no database here; "
                         "create it first with init_db")
    conn = sqlite3.connect(path, timeout=busy_timeout(), isolation_level=None)
    try:
        conn.execute("PRAGMA synchronous=FULL")
        if not check_schema(conn, path) and not create:
            raise NoJobsTable(f"{path}: there is no jobs table here; "
                              "create it with init_db")
    except BaseException:
        conn.close()
        raise
    return conn


def init_db(path):
    """Step 1. Create the lease state table.

    Creates the database file if it is missing and, if it does not exist yet,
    the table

        jobs(id TEXT PRIMARY KEY, owner TEXT, until REAL NOT NULL DEFAULT 0,
             fence INTEGER NOT NULL DEFAULT 0, result TEXT,
             done INTEGER NOT NULL DEFAULT 0),

    and puts the file in WAL journal mode (readers never wait for a writer).
    Returns None.

    Idempotent: calling it again on a lease-lab database changes nothing, and
    above all never resets a fence (a reset would make old tokens valid again).
    An existing jobs table with other columns, or a file that is not an SQLite
    database, is an error and the file is left as it was. An empty path is a
    ValueError.
    """
    with closing(connect(path, create=True)) as conn:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise NotADatabase(f"{path}: it cannot use write-ahead logging "
                               f"(journal mode stays {mode})")
        conn.execute("CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, owner TEXT, "
                     "until REAL NOT NULL DEFAULT 0, fence INTEGER NOT NULL DEFAULT 0, "
                     "result TEXT, done INTEGER NOT NULL DEFAULT 0)")


def enqueue(path, job_id):
    """Step 2. Register only the first job.

    Inserts a job with this id in the default state (no owner, until 0,
    fence 0, no result, not done) and returns True. If a job with this id
    already exists, returns False and leaves it exactly as it was:
    re-registering must never reset a lease in progress or a fence.

    An empty job_id is a ValueError. The database must exist (init_db).
    """
    check_args(job_id)
    with closing(connect(path)) as conn:
        cursor = conn.execute("INSERT OR IGNORE INTO jobs (id) VALUES (?)", (job_id,))
        return cursor.rowcount == 1


def state(path, job_id):
    """Step 3. Read the current state.

    Returns the job's stored row as a dict with the keys id, owner, until,
    fence, result and done, or None when no job has this id. It reads
    through a connection opened for this call, so the answer is what the
    file holds now, whoever wrote it.

    An empty job_id is a ValueError.
    """
    check_args(job_id)
    with closing(connect(path)) as conn:
        row = conn.execute("SELECT id, owner, until, fence, result, done FROM jobs WHERE id=?",
                           (job_id,)).fetchone()
    return dict(zip(FIELDS, row)) if row else None


def claim(path, job_id, owner, now, ttl):
    """Step 4. Take an expired lease atomically.

    ttl <= 0 is a ValueError (so are an empty job_id or owner, a now or ttl
    that is not finite, and a now + ttl that overflows or rounds back to now);
    nothing is written. A job that does not exist, a completed job, or a job
    whose lease is still valid (until > now) gives None and changes nothing.
    Otherwise it stores owner and until = now + ttl, increments fence by
    exactly 1, and returns the new fence.

    The boundary now == until can be reassigned: a lease is over at its end.
    The lookup and the update run inside one BEGIN IMMEDIATE transaction, so
    no other claim can slip in between them.
    """
    check_args(job_id, owner, now, ttl)
    with closing(connect(path)) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT until, done FROM jobs WHERE id=?", (job_id,)).fetchone()
            if row is None or row[1] or row[0] > now:
                return None
            conn.execute("UPDATE jobs SET owner=?,until=?,fence=fence+1 WHERE id=?",
                         (owner, now + ttl, job_id))
            fence = conn.execute("SELECT fence FROM jobs WHERE id=?", (job_id,)).fetchone()[0]
            conn.execute("COMMIT")
            return fence
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")


def renew(path, job_id, owner, fence, now, ttl):
    """Step 5. Only the current generation renews the lease.

    ttl <= 0 is a ValueError, as for claim. Only when owner and fence are the
    stored ones, the job is not done (done=0) and the lease is still valid
    (until > now) does it set until = now + ttl and return True; otherwise it
    returns False and changes nothing. At now == until the lease is over and
    cannot be revived: another worker may claim it at that very instant.
    """
    check_args(job_id, owner, now, ttl)
    with closing(connect(path)) as conn:
        cursor = conn.execute("UPDATE jobs SET until=? WHERE id=? AND owner=? AND fence=?"
                              " AND done=0 AND until>?", (now+ttl, job_id, owner, fence, now))
        return cursor.rowcount == 1


def complete(path, job_id, owner, fence, now, result):
    """Step 6. Reject a stale completion.

    Stores result, sets done=1 and returns True only for the current lease:
    owner and fence are the stored ones, the job is not done yet (done=0), and
    until > now. Otherwise returns False and the stored row, its result above
    all, stays exactly as it was: a worker that stalled past its lease and
    comes back with an older fence cannot overwrite the newer owner's result,
    and a job is completed at most once.

    An empty job_id or owner, or a now that is not finite, is a ValueError.
    """
    check_args(job_id, owner, now)
    with closing(connect(path)) as conn:
        cursor = conn.execute("UPDATE jobs SET result=?,done=1 WHERE id=? AND owner=? AND fence=?"
                              " AND done=0 AND until>?", (result, job_id, owner, fence, now))
        return cursor.rowcount == 1


def release(path, job_id, owner, fence):
    """Step 7. Only the current worker returns the lease.

    When owner and fence are the stored ones and the job is not done (done=0),
    sets owner=NULL and until=0 and returns True; the job is then claimable
    at once. The fence is kept: were it reset, the next claim would hand out
    a number an old worker may still hold. Otherwise returns False and
    changes nothing.

    An empty job_id or owner is a ValueError.
    """
    check_args(job_id, owner)
    with closing(connect(path)) as conn:
        cursor = conn.execute("UPDATE jobs SET owner=NULL,until=0 WHERE id=? AND owner=?"
                              " AND fence=? AND done=0", (job_id, owner, fence))
        return cursor.rowcount == 1


def claim_many(path, job_id, owners, now, ttl):
    """Step 8. There is one winner among concurrent claims.

    Calls claim(path, job_id, owner, now, ttl) for every owner concurrently,
    with a ThreadPoolExecutor (each claim on its own connection), and returns
    a list of their return values in the order of owners: one entry per
    owner, an empty list for no owners. For a claimable job exactly one entry
    is a fence and the rest are None.

    The arguments are checked for every owner before any claim runs: a
    ValueError (ttl <= 0, an empty owner) claims nothing. If a claim fails,
    the first failure in the order of owners is raised.
    """
    for owner in owners:
        check_args(job_id, owner, now, ttl)
    with ThreadPoolExecutor(max_workers=max(1, min(len(owners), MAX_CLAIM_THREADS))) as pool:
        return list(pool.map(lambda owner: claim(path, job_id, owner, now, ttl), owners))


# --- The lab's protocol: nothing below needs changing ---

if __name__ == "__main__":
    # One JSON object a line: the greeting, then an answer to each request read
    # on standard input (labs/protocol.md).
    import faulthandler
    import json
    import platform
    import signal
    import sys
    import traceback

    # Answers go to the real standard output. Anything else printed (a print()
    # left in while debugging) goes to standard error instead, where the lab
    # cannot take it for an answer.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    write_lock = threading.Lock()
    # When a call runs out of time, the lab asks where it hung with SIGUSR1:
    # every thread's stack goes to standard error.
    faulthandler.register(signal.SIGUSR1, all_threads=True)

    class BadRequest(Exception):
        pass

    # The protocol's kinds of SQLite's primary result codes: SQLITE_BUSY and
    # SQLITE_LOCKED (the lock stayed taken past the busy timeout),
    # SQLITE_READONLY, SQLITE_CORRUPT and SQLITE_NOTADB.
    SQLITE_KINDS = {5: "busy", 6: "busy", 8: "read-only", 11: "not-a-database",
                    26: "not-a-database"}

    OPERATIONS = {
        "init_db": (init_db, ["path"]),
        "enqueue": (enqueue, ["path", "job_id"]),
        "state": (state, ["path", "job_id"]),
        "claim": (claim, ["path", "job_id", "owner", "now", "ttl"]),
        "renew": (renew, ["path", "job_id", "owner", "fence", "now", "ttl"]),
        "complete": (complete,
                     ["path", "job_id", "owner", "fence", "now", "result"]),
        "release": (release, ["path", "job_id", "owner", "fence"]),
        "claim_many": (claim_many, ["path", "job_id", "owners", "now", "ttl"]),
    }

    def send(message):
        line = json.dumps(message)
        with write_lock:
            try:
                answers.write(line + "\n")
                answers.flush()
            except OSError:
                # The lab has gone: the loop ends when standard input
                # closes.
                pass

    def argument(request, name):
        if name not in request:
            raise BadRequest(f"{request['op']} needs the field {name!r}")
        value = request[name]
        if name in ("now", "ttl"):
            # JSON cannot carry NaN or an infinity: the lab sends null, which
            # stands for a number that is not finite.
            if value is None:
                return math.nan
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise BadRequest(f"{name} must be a number or null, "
                                 f"not {json.dumps(value)}")
            try:
                return float(value)
            except OverflowError:
                raise BadRequest(
                    f"{name} is too large for a float: {value}") from None
        if name == "fence":
            if isinstance(value, bool) or not isinstance(value, int):
                raise BadRequest(
                    f"fence must be an integer, not {json.dumps(value)}")
            return value
        if name == "owners":
            if not isinstance(value, list) or not all(
                    isinstance(owner, str) for owner in value):
                raise BadRequest("owners must be a list of strings, "
                                 f"not {json.dumps(value)[:200]}")
            return value
        if not isinstance(value, str):
            raise BadRequest(
                f"{name} must be a string, not {json.dumps(value)[:200]}")
        return value

    def frames(error):
        # Where this file raised the error: its frames, outermost first, less
        # answer's own (the protocol's); the lab shows the last ones.
        raised = traceback.extract_tb(error.__traceback__)[1:]
        return [{"file": frame.filename, "line": frame.lineno,
                 "function": frame.name, "code": frame.line}
                for frame in raised if frame.filename == __file__][-3:]

    def plain(value):
        # JSON has no NaN or infinity either way: such a number is answered
        # as null.
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {key: plain(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(item) for item in value]
        return value

    def answer(request):
        request_id = request.get("id") if isinstance(request, dict) else None
        op = None
        try:
            if not isinstance(request, dict):
                raise BadRequest("a request must be a JSON object, "
                                 f"not {json.dumps(request)[:200]}")
            op = request.get("op")
            if op not in OPERATIONS:
                raise BadRequest(f"unknown op {json.dumps(op)}; "
                                 f"the ops are {', '.join(OPERATIONS)}")
            function, names = OPERATIONS[op]
            wait = request.get("busy_timeout_ms")
            if (isinstance(wait, int) and not isinstance(wait, bool)
                    and wait >= 0):
                _this_thread.busy_timeout = wait / 1000
            else:
                _this_thread.__dict__.pop("busy_timeout", None)
            value = function(*[argument(request, name) for name in names])
            reply = {"ok": True if op == "init_db" else plain(value)}
            try:
                json.dumps(reply)
            except (TypeError, ValueError) as error:
                raise TypeError(f"{op} returned {value!r}, "
                                f"which is not JSON ({error})") from None
        except BadRequest as error:
            reply = {"error": "other", "message": f"bad request: {error}"}
        except ValueError as error:
            reply = {"error": "invalid-argument", "message": str(error)}
        except NotImplementedError as error:
            reply = {"error": "not-implemented",
                     "message": str(error) or f"{op} is not implemented yet"}
        except StoreError as error:
            reply = {"error": error.kind, "message": str(error)}
        except sqlite3.Error as error:
            # SQLite's own refusals, by their primary result code.
            code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
            kind = SQLITE_KINDS.get(code, "sqlite" if code else "other")
            reply = {"error": kind, "message": str(error),
                     "frames": frames(error)}
            if kind == "busy":
                reply["waited_ms"] = round(busy_timeout() * 1000)
        except BaseException as error:
            reply = {"error": "other",
                     "message": f"{type(error).__name__}: {error}",
                     "frames": frames(error)}
        send(reply if request_id is None else {"id": request_id, **reply})

    name = os.path.basename(__file__)
    send({"protocol": "lease-lab", "version": 1,
          "name": f"{name} (Python {platform.python_version()})",
          "concurrent": True})
    # A request with an "id" runs on the pool, beside others; one without (as
    # typed by hand) is answered before the next line is read, so in order.
    with ThreadPoolExecutor(max_workers=64) as pool:
        for raw in sys.stdin.buffer:
            if not raw.strip():
                continue
            try:
                request = json.loads(raw)
            except ValueError as error:
                text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                send({"error": "other",
                      "message": "bad request: not a JSON line "
                                 f"({error}): {text[:200]!r}"})
                continue
            if isinstance(request, dict) and request.get("id") is not None:
                pool.submit(answer, request)
            else:
                answer(request)
    # Leaving the with block waited for every answer to be written.
    answers.close()
    sys.exit(0)

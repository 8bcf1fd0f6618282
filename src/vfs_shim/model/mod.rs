//! The disk model behind the shim, in plain Rust (no FFI): which databases
//! are tracked, what each tracked file held at its last sync, which writes
//! are still only in the "write cache", and what a power cut leaves.
//!
//! Writes go through to the real file at once; the model keeps, for every
//! write not yet made durable by a sync of its file, what the region held
//! before. A cut puts those bytes back, newest first, and truncates the file
//! to the length it had at its last sync; with tearing, some 512-byte
//! sectors of the lost writes are then put back in their new state.

use super::shared_log::SharedLog;
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Where an armed power cut falls, counted in I/O calls on the tracked
/// files since [`Disk::track`] (the first call is 1; see [`Disk::counts`]).
///
/// [`Disk::track`]: super::Disk::track
/// [`Disk::counts`]: super::Disk::counts
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutPoint {
    /// At the n-th sync, before it takes effect: everything it would have
    /// made durable is lost. The sync answers `SQLITE_IOERR_FSYNC`.
    BeforeSync(u64),
    /// Just after the n-th sync took effect: its file is durable, but the
    /// caller never hears of it (the sync answers `SQLITE_IOERR_FSYNC`).
    AfterSync(u64),
    /// Just after the n-th write, which is still unsynced (and is the one a
    /// [`Tearing::LastWrite`] cut tears). The write answers
    /// `SQLITE_IOERR_WRITE`.
    AfterWrite(u64),
}

/// Which unsynced sectors reach the disk after all at a cut.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tearing {
    /// None: every unsynced write is lost whole.
    #[default]
    None,
    /// The last unsynced write (of any tracked file) is torn: each of its
    /// 512-byte sectors is new or old, by a coin tossed from the seed, the
    /// file and the sector. Every earlier unsynced write is lost.
    LastWrite {
        /// Makes the tear reproducible.
        seed: u64,
    },
    /// Every unsynced sector of every tracked file is new or old by its own
    /// coin: the writes of a sync interval reached the disk in any order.
    AnySector {
        /// Makes the outcome reproducible.
        seed: u64,
    },
}

/// An injected I/O error: the n-th call of a kind on the tracked files,
/// counted since [`Disk::track`] (first is 1), fails once, without effect.
///
/// [`Disk::track`]: super::Disk::track
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoFault {
    /// The n-th read fails with `SQLITE_IOERR_READ`.
    Read(u64),
    /// The n-th write fails with `SQLITE_IOERR_WRITE`.
    Write(u64),
    /// The n-th write fails with `SQLITE_FULL`: the disk is full.
    DiskFull(u64),
    /// The n-th sync fails with `SQLITE_IOERR_FSYNC` (nothing is synced).
    Sync(u64),
    /// The n-th truncation fails with `SQLITE_IOERR_TRUNCATE`.
    Truncate(u64),
}

impl IoFault {
    fn op(self) -> IoOp {
        match self {
            IoFault::Read(_) => IoOp::Read,
            IoFault::Write(_) | IoFault::DiskFull(_) => IoOp::Write,
            IoFault::Sync(_) => IoOp::Sync,
            IoFault::Truncate(_) => IoOp::Truncate,
        }
    }

    fn nth(self) -> u64 {
        match self {
            IoFault::Read(n)
            | IoFault::Write(n)
            | IoFault::DiskFull(n)
            | IoFault::Sync(n)
            | IoFault::Truncate(n) => n,
        }
    }
}

/// How many I/O calls on the tracked files went through the shim since
/// [`super::Disk::track`]: the points [`CutPoint`] and [`IoFault`] count in.
/// Calls through dead handles are not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounts {
    /// xRead calls.
    pub reads: u64,
    /// xWrite calls.
    pub writes: u64,
    /// xSync calls: the sync points.
    pub syncs: u64,
    /// xTruncate calls.
    pub truncates: u64,
}

/// What one power cut did to the tracked files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CutReport {
    /// The armed point it fell at; `None` for [`super::Disk::cut`].
    pub point: Option<CutPoint>,
    /// The tearing it was made with.
    pub tearing: Tearing,
    /// Unsynced writes lost whole.
    pub writes_lost: usize,
    /// Unsynced writes that reached the disk whole after all (tearing).
    pub writes_kept: usize,
    /// Unsynced writes torn: some sectors new, some old.
    pub writes_torn: usize,
    /// Unsynced truncations undone.
    pub truncations_undone: usize,
    /// Set when a file could not be restored (the cut is then incomplete).
    pub error: Option<String>,
}

/// The granularity of a torn write.
const SECTOR: u64 = 512;

/// The suffixes of a database's files, by role: the database, its
/// write-ahead log, its rollback journal. (The WAL index, `-shm`, is shared
/// memory: SQLite never writes it through xWrite, and a cut forgets it.)
const SUFFIXES: [&str; 3] = ["", "-wal", "-journal"];

/// The role of the database file in [`SUFFIXES`].
pub(super) const MAIN_DB: usize = 0;

/// Bumped by every cut of any disk. A file handle is born with the value
/// at its opening; it is dead when its disk was cut after that.
static POWER: AtomicU64 = AtomicU64::new(0);

/// The tracked databases.
static DISKS: Mutex<Vec<Arc<Tracked>>> = Mutex::new(Vec::new());

/// Bumped whenever [`DISKS`] changes, so that an open file knows when to
/// look again whether it is tracked.
static VERSION: AtomicU64 = AtomicU64::new(0);

/// Every file open through the shim (tracked or not): its name as SQLite
/// gave it and its birth, keyed by the address of its `sqlite3_file`. The
/// reboot rule (see [`Tracked::admit`]) needs to see handles opened before
/// tracking began.
static OPEN: Mutex<BTreeMap<usize, OpenFile>> = Mutex::new(BTreeMap::new());

/// An entry of [`OPEN`].
struct OpenFile {
    name: Box<[u8]>,
    born: u64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic under one of these locks (a bug) leaves nothing the next
    // holder cannot use: a poisoned lock is taken as it is.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The power generation a file opened now is born in.
pub(super) fn power_generation() -> u64 {
    POWER.load(Ordering::SeqCst)
}

/// The tracking version now: an open file compares it with the one it saw.
pub(super) fn version() -> u64 {
    VERSION.load(Ordering::Acquire)
}

/// The disk tracking the file SQLite calls `name`, and the file's role.
pub(super) fn resolve(name: &[u8]) -> Option<(Arc<Tracked>, usize)> {
    lock(&DISKS)
        .iter()
        .find_map(|disk| disk.role_of(name).map(|role| (Arc::clone(disk), role)))
}

/// Records that a file was opened (for the reboot rule).
pub(super) fn opened(key: usize, name: &[u8], born: u64) {
    lock(&OPEN).insert(
        key,
        OpenFile {
            name: name.into(),
            born,
        },
    );
}

/// Records that a file was closed.
pub(super) fn closed(key: usize) {
    lock(&OPEN).remove(&key);
}

/// Starts tracking `tracked`; `false` when its database is tracked already.
pub(super) fn register(tracked: &Arc<Tracked>) -> bool {
    let mut disks = lock(&DISKS);
    if disks
        .iter()
        .any(|disk| disk.names[MAIN_DB] == tracked.names[MAIN_DB])
    {
        return false;
    }
    disks.push(Arc::clone(tracked));
    VERSION.fetch_add(1, Ordering::AcqRel);
    true
}

/// Stops tracking `tracked`.
pub(super) fn unregister(tracked: &Arc<Tracked>) {
    lock(&DISKS).retain(|disk| !Arc::ptr_eq(disk, tracked));
    VERSION.fetch_add(1, Ordering::AcqRel);
}

/// One kind of I/O call the model counts and can fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IoOp {
    Read,
    Write,
    Sync,
    Truncate,
}

/// One tracked database: its files' names and the model of its disk.
pub(super) struct Tracked {
    /// The names SQLite gives its files (full paths), by role.
    names: [Vec<u8>; 3],
    /// Handles born before this generation are dead (0: never cut).
    cut_generation: AtomicU64,
    state: Mutex<DiskState>,
}

/// What the disk holds and what is armed, under the [`Tracked`] lock.
pub(super) struct DiskState {
    files: [FileState; 3],
    counts: IoCounts,
    next_seq: u64,
    armed_cut: Option<(CutPoint, Tearing)>,
    faults: Vec<IoFault>,
    faults_fired: u64,
    reports: Vec<CutReport>,
    /// The undo log shared with other processes, if this disk is shared.
    shared: Option<SharedLog>,
}

/// One file of a tracked database.
struct FileState {
    path: PathBuf,
    /// The file's length at its last sync (or when tracking began).
    synced_len: u64,
    /// Writes and truncations since then, oldest first.
    pending: Vec<Pending>,
}

/// A write or truncation not yet made durable by a sync of its file.
struct Pending {
    /// Its place among all pending changes of the disk.
    seq: u64,
    /// Where the change starts.
    offset: u64,
    /// How many bytes the write put there (0 for a truncation).
    written: u64,
    /// What the file held from `offset` before the change, up to its end then.
    before: Vec<u8>,
}

impl Tracked {
    /// A model for the database SQLite calls `db` (its full path), taking
    /// everything now on disk as durable.
    pub(super) fn new(db: &[u8]) -> Tracked {
        let names = SUFFIXES.map(|suffix| [db, suffix.as_bytes()].concat());
        let files = names.clone().map(|name| {
            let path = PathBuf::from(std::ffi::OsStr::from_bytes(&name));
            let synced_len = std::fs::metadata(&path).map_or(0, |m| m.len());
            FileState {
                path,
                synced_len,
                pending: Vec::new(),
            }
        });
        Tracked {
            names,
            cut_generation: AtomicU64::new(0),
            state: Mutex::new(DiskState {
                files,
                counts: IoCounts::default(),
                next_seq: 0,
                armed_cut: None,
                faults: Vec::new(),
                faults_fired: 0,
                reports: Vec::new(),
                shared: None,
            }),
        }
    }

    /// The database's path as SQLite names it.
    pub(super) fn db_path(&self) -> PathBuf {
        PathBuf::from(std::ffi::OsStr::from_bytes(&self.names[MAIN_DB]))
    }

    fn role_of(&self, name: &[u8]) -> Option<usize> {
        self.names.iter().position(|own| own.as_slice() == name)
    }

    /// The model, locked. Every I/O call on a tracked file runs under it,
    /// so a cut never falls in the middle of one.
    pub(super) fn lock(&self) -> MutexGuard<'_, DiskState> {
        lock(&self.state)
    }

    /// Whether a handle born in generation `born` was opened before the
    /// last cut: it belongs to a process that died with the power.
    pub(super) fn is_dead(&self, born: u64) -> bool {
        born < self.cut_generation.load(Ordering::SeqCst)
    }

    /// The reboot rule, checked when SQLite opens one of the database's
    /// files: after a cut, no file may be opened while a handle opened
    /// before the cut is still open (they would share the stale WAL index
    /// in shared memory, which a reboot forgets). Once the rule lets an
    /// open through, no handle of this process maps `-shm`, so SQLite's
    /// unix VFS, finding no other holder of it, empties it as the first
    /// connection after a reboot does, and rebuilds the index from the
    /// log. `Err(())` refuses the open.
    pub(super) fn admit(&self, born: u64) -> Result<(), ()> {
        let cut = self.cut_generation.load(Ordering::SeqCst);
        if cut == 0 {
            return Ok(()); // never cut
        }
        if born < cut {
            // Opened by a handle the cut fell on between its birth and
            // this check: it is dead already, and its I/O fails as such.
            return Ok(());
        }
        let dead_open = lock(&OPEN)
            .values()
            .any(|file| file.born < cut && self.role_of(&file.name).is_some());
        if dead_open {
            Err(())
        } else {
            Ok(())
        }
    }

    /// Cuts the power now: every handle opened so far dies, and the files
    /// keep only what was synced (and, with tearing, some sectors more).
    pub(super) fn cut(
        &self,
        state: &mut DiskState,
        point: Option<CutPoint>,
        tearing: Tearing,
    ) -> CutReport {
        let generation = POWER.fetch_add(1, Ordering::SeqCst) + 1;
        self.cut_generation.store(generation, Ordering::SeqCst);
        let mut report = CutReport {
            point,
            tearing,
            ..CutReport::default()
        };
        let last_seq = state
            .files
            .iter()
            .flat_map(|file| &file.pending)
            .filter(|pending| pending.written > 0)
            .map(|pending| pending.seq)
            .max();
        for (role, file) in state.files.iter_mut().enumerate() {
            if let Err(error) = file.lose_unsynced(role, tearing, last_seq, &mut report) {
                report.error = Some(format!("{}: {error}", file.path.display()));
            }
        }
        state.reports.push(report.clone());
        report
    }
}

impl DiskState {
    /// Counts one call; answers the injected fault it must fail with, if any.
    pub(super) fn count(&mut self, op: IoOp) -> Option<IoFault> {
        let counter = match op {
            IoOp::Read => &mut self.counts.reads,
            IoOp::Write => &mut self.counts.writes,
            IoOp::Sync => &mut self.counts.syncs,
            IoOp::Truncate => &mut self.counts.truncates,
        };
        *counter += 1;
        let nth = *counter;
        let index = self
            .faults
            .iter()
            .position(|fault| fault.op() == op && fault.nth() == nth)?;
        self.faults_fired += 1;
        Some(self.faults.remove(index))
    }

    /// How many calls of each kind were counted so far.
    pub(super) fn counts(&self) -> IoCounts {
        self.counts
    }

    /// Remembers a write of `written` bytes at `offset` to the file of
    /// `role`, and what the region held before.
    pub(super) fn record_write(&mut self, role: usize, offset: u64, written: u64, before: Vec<u8>) {
        self.record(role, offset, written, before);
    }

    /// Remembers a truncation to `len`, and the bytes it cut off.
    pub(super) fn record_truncate(&mut self, role: usize, len: u64, removed: Vec<u8>) {
        self.record(role, len, 0, removed);
    }

    fn record(&mut self, role: usize, offset: u64, written: u64, before: Vec<u8>) {
        self.next_seq += 1;
        self.files[role].pending.push(Pending {
            seq: self.next_seq,
            offset,
            written,
            before,
        });
    }

    /// A sync of the file of `role` succeeded: it is durable at `len` bytes.
    pub(super) fn synced(&mut self, role: usize, len: u64) {
        let file = &mut self.files[role];
        file.synced_len = len;
        file.pending.clear();
    }

    /// Shares this disk with other processes through the undo log `log`:
    /// every change and sync of its files is logged there from now on.
    pub(super) fn share(&mut self, log: SharedLog) {
        self.shared = Some(log);
    }

    /// Logs in the shared undo log, if any, what the file of `role`
    /// (`file_len` bytes long) held from `offset` before a change. Called
    /// before the change reaches the file; if it fails, the change must
    /// not be made.
    pub(super) fn share_change(
        &self,
        role: usize,
        offset: u64,
        file_len: u64,
        before: &[u8],
    ) -> io::Result<()> {
        match &self.shared {
            Some(log) => log.write(&self.files[role].path, offset, file_len, before),
            None => Ok(()),
        }
    }

    /// Logs in the shared undo log, if any, that `len` bytes of the file
    /// of `role` are durable (after a sync, or 0 after a deletion).
    pub(super) fn share_sync(&self, role: usize, len: u64) -> io::Result<()> {
        match &self.shared {
            Some(log) => log.sync(&self.files[role].path, len),
            None => Ok(()),
        }
    }

    /// The file of `role` was deleted; deletion is durable at once, and a
    /// file made again under the name starts empty.
    pub(super) fn deleted(&mut self, role: usize) {
        self.synced(role, 0);
    }

    /// The cut armed for `point`, if any; it is disarmed.
    pub(super) fn take_cut(&mut self, point: CutPoint) -> Option<Tearing> {
        match self.armed_cut {
            Some((armed, tearing)) if armed == point => {
                self.armed_cut = None;
                Some(tearing)
            }
            _ => None,
        }
    }

    pub(super) fn arm_cut(&mut self, point: CutPoint, tearing: Tearing) {
        self.armed_cut = Some((point, tearing));
    }

    pub(super) fn disarm_cut(&mut self) {
        self.armed_cut = None;
    }

    pub(super) fn arm_fault(&mut self, fault: IoFault) {
        self.faults.push(fault);
    }

    pub(super) fn faults_fired(&self) -> u64 {
        self.faults_fired
    }

    pub(super) fn reports(&self) -> &[CutReport] {
        &self.reports
    }
}

impl FileState {
    /// Puts the file back to its state at its last sync, then lets the
    /// sectors that `tearing` keeps reach the disk after all.
    fn lose_unsynced(
        &mut self,
        role: usize,
        tearing: Tearing,
        last_seq: Option<u64>,
        report: &mut CutReport,
    ) -> io::Result<()> {
        if self.pending.is_empty() {
            // Nothing unsynced went through the shim. (Whatever reached the
            // file around it, from a connection opened before `install`,
            // is not the model's to undo.)
            return Ok(());
        }
        let file = match OpenOptions::new().read(true).write(true).open(&self.path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                self.pending.clear();
                self.synced_len = 0;
                return Ok(());
            }
            Err(error) => return Err(error),
        };
        let len = file.metadata()?.len();
        // What reaches the disk after all: the kept sectors' new bytes.
        let mut kept: Vec<(u64, Vec<u8>)> = Vec::new();
        for pending in self.pending.iter().filter(|p| p.written > 0) {
            let end = pending.offset + pending.written;
            // Whether some sector reached the disk, and whether some did not.
            let (mut some_kept, mut some_lost) = (false, false);
            for sector in pending.offset / SECTOR..end.div_ceil(SECTOR) {
                let from = pending.offset.max(sector * SECTOR);
                let to = end.min((sector + 1) * SECTOR).min(len);
                if from >= to {
                    continue;
                }
                if keeps(tearing, role, sector, Some(pending.seq) == last_seq) {
                    let mut bytes = vec![0; usize::try_from(to - from).unwrap_or(0)];
                    file.read_exact_at(&mut bytes, from)?;
                    kept.push((from, bytes));
                    some_kept = true;
                } else {
                    some_lost = true;
                }
            }
            match (some_kept, some_lost) {
                (false, _) => report.writes_lost += 1,
                (true, false) => report.writes_kept += 1,
                (true, true) => report.writes_torn += 1,
            }
        }
        report.truncations_undone += self.pending.iter().filter(|p| p.written == 0).count();
        for pending in self.pending.iter().rev() {
            file.write_all_at(&pending.before, pending.offset)?;
        }
        file.set_len(self.synced_len)?;
        for (offset, bytes) in &kept {
            file.write_all_at(bytes, *offset)?;
        }
        self.synced_len = file.metadata()?.len();
        self.pending.clear();
        Ok(())
    }
}

/// Whether `tearing` lets `sector` of the file of `role` reach the disk,
/// for a write that is (or is not) the last unsynced one.
fn keeps(tearing: Tearing, role: usize, sector: u64, last_write: bool) -> bool {
    match tearing {
        Tearing::None => false,
        Tearing::LastWrite { seed } => last_write && coin(seed, role, sector),
        Tearing::AnySector { seed } => coin(seed, role, sector),
    }
}

/// A fair coin from the seed, the file and the sector (splitmix64).
fn coin(seed: u64, role: usize, sector: u64) -> bool {
    let mut z = seed ^ (role as u64).rotate_left(56) ^ sector.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) & 1 == 1
}

#[cfg(test)]
mod tests;

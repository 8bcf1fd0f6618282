//! A shim over SQLite's default (unix) VFS for the lab's tests, installed
//! as the process's default so that the store and every compiled mutant
//! go through it without knowing. It does two things:
//!
//! - **power cuts and I/O errors** ([`Disk`]): for the files of a tracked
//!   database it remembers every write no sync has made durable, and can
//!   take them back as a power cut would, or make chosen calls fail;
//! - **a watch on the write lock** ([`WriteLockWatch`]): which connections
//!   have been refused a database's write lock, so that a test can let a
//!   race go only once every racer is waiting for the lock.
//!
//! Files of databases that nobody tracks or watches pass straight through.
//!
//! # Power cuts
//!
//! A simulated power cut for SQLite files, in the tradition of SQLite's own
//! crash tests (`test6.c`, `test_vfs.c`).
//!
//! `kill -9` cannot show what `synchronous=FULL` is for: the kernel keeps
//! every write a killed process made. Only a power cut loses the writes
//! that no `fsync` made durable. This module wraps SQLite's default (unix)
//! VFS in a shim that remembers, for the files of a tracked database, every
//! write no sync has made durable yet, and can take them back as a power
//! cut would.
//!
//! ```
//! use lease_lab::vfs_shim::Disk;
//!
//! let dir = tempfile::tempdir()?;
//! let db = dir.path().join("jobs.db");
//! lease_lab::init_db(&db)?;
//! lease_lab::enqueue(&db, "j")?;
//! let disk = Disk::track(&db)?;                 // what is on disk now is durable
//! let fence = lease_lab::claim(&db, "j", "A", 100.0, 10.0)?;
//! disk.cut()?;                                  // the power goes off, and on again
//! lease_lab::init_db(&db)?;                     // a restarted worker
//! let next = lease_lab::claim(&db, "j", "B", 120.0, 10.0)?;
//! assert!(next > fence);                        // never the same fence twice
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The model
//!
//! - **Durable** is what a file held when tracking began or at the last
//!   successful xSync *of that file*. Writes go through to the real file
//!   at once (reads need no special path); for each write the shim keeps
//!   what the region held before, and the file's length at its last sync.
//! - **A cut** puts back every unsynced write, newest first, and truncates
//!   each file to its synced length. With [`Tearing`], some 512-byte sectors
//!   of the lost writes reach the disk after all (only the bytes the write
//!   covered: SQLite's "powersafe overwrite"). The WAL index (`-shm`) is
//!   forgotten, as after a reboot: by the reboot rule below, no handle of
//!   the process maps it when the database is next opened, so SQLite's
//!   unix VFS empties it and rebuilds it from the log.
//! - **After a cut**, every file handle opened before it belongs to a dead
//!   process: its reads, writes, syncs, truncations and size queries fail
//!   with `SQLITE_IOERR_*`, so a caller in the middle of an operation gets
//!   an error, never a success the disk does not hold. (Its locks can still
//!   be released, and it can be closed.) Files opened after the cut work
//!   normally: that is the reboot.
//! - **The reboot rule**: after a cut, a file of the database can be opened
//!   only once every handle opened before the cut is closed (every process
//!   died with the power); until then the open fails with
//!   `SQLITE_CANTOPEN`. In a test: drop every connection and `Store`
//!   opened before the cut, then reopen.
//! - **Injected errors** ([`IoFault`]): the n-th read, write, sync or
//!   truncation of a tracked file fails, once, with `SQLITE_IOERR_READ`,
//!   `SQLITE_IOERR_WRITE`, `SQLITE_FULL`, `SQLITE_IOERR_FSYNC` or
//!   `SQLITE_IOERR_TRUNCATE`, without touching the file.
//!
//! # What it does not model
//!
//! - Disks whose write cache lies about fsync: a sync here is durable.
//! - The directory: creating, deleting or renaming a file is durable at
//!   once (SQLite's own directory syncs are passed through, not modelled).
//! - A write torn *inside* a sector, garbage written at a cut, and
//!   truncations are all-or-nothing (only writes tear).
//! - A sector that reached the disk in an older state than the last write
//!   to it: each sector is either durable-old or last-written-new.
//! - Other processes: the model of unsynced writes lives in this process,
//!   so a tracked database must be used from this process only.
//!
//! [`Tearing::AnySector`] does model the reordering of writes inside one
//! sync interval: any subset of the unsynced sectors may have reached the
//! disk, in any order.
//!
//! Connections opened before [`install`] bypass the shim, and files of
//! untracked databases pass straight through to the unix VFS (one atomic
//! load and an indirect call per I/O call). Memory-mapped I/O cannot bypass
//! it: the shim's io methods are version 2, without xFetch.

mod disk;
mod lock_watch;
mod model;
mod names;
mod shared_log;
mod vfs;

pub use disk::{install, Disk, ShimError};
pub use lock_watch::WriteLockWatch;
pub use model::{CutPoint, CutReport, IoCounts, IoFault, Tearing};
pub use shared_log::{replay, Replayed, SharedLog};

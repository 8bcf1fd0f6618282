//! A disk model shared by several processes: an undo log on disk.
//!
//! The in-process model ([`super::model`]) forgets everything when its
//! process dies, so it cannot take back the writes of a process that was
//! killed. For a power cut of several processes at once, each process
//! appends to one shared log, for the files of the database, *before* each
//! write reaches the file, what the region held and the file's length; and
//! after each successful sync of a file, a sync record with its length.
//!
//! Each record is appended with one `write()` on a descriptor opened with
//! `O_APPEND`, so records of different processes never interleave. A write
//! logged but never made (its process died in between) is undone to the
//! bytes it never changed: harmless. A sync that reached the disk but
//! whose record did not is treated as never made: its caller had not
//! heard of it yet, as if the power failed just before.
//!
//! [`replay`] is the cut: once every process is dead, for each file every
//! write after its last sync record is undone, newest first, and the file
//! truncated to its length at that sync (or, with no sync logged, to its
//! length before its first logged change). The log is then emptied.
//!
//! # Record format
//!
//! Each record is `len: u32` (bytes after this field), `kind: u8`
//! (`W` write or truncation, `S` sync), `path_len: u32`, the path's bytes,
//! then for `W`: `offset: u64`, `file_len: u64` (the file's length before
//! the change), and the bytes the region held (the rest of the record);
//! for `S`: `file_len: u64` (the length the sync made durable). Integers
//! are little-endian.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

const WRITE: u8 = b'W';
const SYNC: u8 = b'S';

/// The writing end of a shared undo log: an `O_APPEND` descriptor.
#[derive(Debug)]
pub struct SharedLog {
    file: File,
}

impl SharedLog {
    /// Opens (creating if need be) the log at `path` for appending.
    pub fn open(path: &Path) -> io::Result<SharedLog> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(SharedLog { file })
    }

    /// Logs that the file at `path`, `file_len` bytes long, held `before`
    /// from `offset` before a write or truncation changes it.
    pub fn write(&self, path: &Path, offset: u64, file_len: u64, before: &[u8]) -> io::Result<()> {
        let mut body = Vec::with_capacity(before.len() + 16);
        body.extend_from_slice(&offset.to_le_bytes());
        body.extend_from_slice(&file_len.to_le_bytes());
        body.extend_from_slice(before);
        self.append(WRITE, path, &body)
    }

    /// Logs that a sync of the file at `path` made `file_len` bytes durable.
    pub fn sync(&self, path: &Path, file_len: u64) -> io::Result<()> {
        self.append(SYNC, path, &file_len.to_le_bytes())
    }

    /// Appends one record with a single `write()`, so that it is never
    /// interleaved with another process's record.
    fn append(&self, kind: u8, path: &Path, body: &[u8]) -> io::Result<()> {
        let path = path.as_os_str().as_bytes();
        let len = 1 + 4 + path.len() + body.len();
        let mut record = Vec::with_capacity(4 + len);
        record.extend_from_slice(&to_u32(len)?.to_le_bytes());
        record.push(kind);
        record.extend_from_slice(&to_u32(path.len())?.to_le_bytes());
        record.extend_from_slice(path);
        record.extend_from_slice(body);
        let written = (&self.file).write(&record)?;
        if written != record.len() {
            return Err(io::Error::other(format!(
                "the undo log took {written} of a record's {} bytes",
                record.len()
            )));
        }
        Ok(())
    }
}

fn to_u32(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| io::Error::other("an undo log record over 4 GiB"))
}

/// One record read back from the log.
#[derive(Debug, PartialEq)]
enum Record {
    Write {
        path: PathBuf,
        offset: u64,
        file_len: u64,
        before: Vec<u8>,
    },
    Sync {
        path: PathBuf,
        file_len: u64,
    },
}

/// One file's durable length (if known yet) and its changes since, oldest
/// first, each as where it starts and what the region held before.
type FileLog = (Option<u64>, Vec<(u64, Vec<u8>)>);

/// What a replay did, for each file it touched.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replayed {
    /// Writes and truncations undone, over all files.
    pub undone: usize,
    /// The files put back, with the length each was truncated to.
    pub files: BTreeMap<PathBuf, u64>,
}

/// The power cut: undoes, for each file named in the log at `log`, every
/// change after its last sync, newest first, truncates it to its durable
/// length, and empties the log. A file that no longer exists is skipped
/// (its deletion was durable). Call it only once every process writing to
/// the log is dead.
///
/// Errors: the log cannot be read or is malformed (nothing is changed),
/// or a file cannot be put back.
pub fn replay(log: &Path) -> io::Result<Replayed> {
    let bytes = std::fs::read(log)?;
    let records = parse(&bytes)?;
    // For each file: its durable length and the changes since, in order.
    let mut files: BTreeMap<PathBuf, FileLog> = BTreeMap::new();
    for record in records {
        match record {
            Record::Write {
                path,
                offset,
                file_len,
                before,
            } => {
                let entry = files.entry(path).or_insert((None, Vec::new()));
                // With no sync yet, the file was durable as the log began:
                // at its length before its first logged change.
                entry.0.get_or_insert(file_len);
                entry.1.push((offset, before));
            }
            Record::Sync { path, file_len } => {
                files.insert(path, (Some(file_len), Vec::new()));
            }
        }
    }
    let mut replayed = Replayed::default();
    for (path, (durable, pending)) in files {
        let file = match OpenOptions::new().write(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for (offset, before) in pending.iter().rev() {
            file.write_all_at(before, *offset)?;
            replayed.undone += 1;
        }
        let len = durable.unwrap_or(0);
        file.set_len(len)?;
        file.sync_all()?;
        replayed.files.insert(path, len);
    }
    OpenOptions::new().write(true).truncate(true).open(log)?;
    Ok(replayed)
}

/// The records of a log, oldest first.
fn parse(mut bytes: &[u8]) -> io::Result<Vec<Record>> {
    let malformed = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    let mut records = Vec::new();
    while !bytes.is_empty() {
        let (len, rest) = take_u32(bytes).ok_or_else(|| malformed("a cut record length"))?;
        let len = len as usize;
        if rest.len() < len || len < 5 {
            return Err(malformed("a record cut short"));
        }
        let (record, rest) = rest.split_at(len);
        bytes = rest;
        let kind = record[0];
        let (path_len, body) = take_u32(&record[1..]).ok_or_else(|| malformed("a path length"))?;
        let path_len = path_len as usize;
        if body.len() < path_len {
            return Err(malformed("a path cut short"));
        }
        let (path, body) = body.split_at(path_len);
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(path));
        let (first, body) = take_u64(body).ok_or_else(|| malformed("a length cut short"))?;
        records.push(match kind {
            SYNC if body.is_empty() => Record::Sync {
                path,
                file_len: first,
            },
            WRITE => {
                let (file_len, before) =
                    take_u64(body).ok_or_else(|| malformed("a write cut short"))?;
                Record::Write {
                    path,
                    offset: first,
                    file_len,
                    before: before.to_vec(),
                }
            }
            _ => return Err(malformed("an unknown record")),
        });
    }
    Ok(records)
}

fn take_u32(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<4>()?;
    Some((u32::from_le_bytes(*head), rest))
}

fn take_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*head), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `bytes` at `offset`, logging first, as the shim does.
    fn logged_write(log: &SharedLog, path: &Path, offset: u64, bytes: &[u8]) {
        let file = OpenOptions::new()
            .write(true)
            .read(true)
            .open(path)
            .unwrap();
        let len = file.metadata().unwrap().len();
        let end = (offset + bytes.len() as u64).min(len);
        let mut before = vec![0; end.saturating_sub(offset) as usize];
        file.read_exact_at(&mut before, offset).unwrap();
        log.write(path, offset, len, &before).unwrap();
        file.write_all_at(bytes, offset).unwrap();
    }

    fn logged_sync(log: &SharedLog, path: &Path) {
        log.sync(path, std::fs::metadata(path).unwrap().len())
            .unwrap();
    }

    fn logged_truncate(log: &SharedLog, path: &Path, len: u64) {
        let old = std::fs::read(path).unwrap();
        log.write(path, len, old.len() as u64, &old[len as usize..])
            .unwrap();
        File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_len(len)
            .unwrap();
    }

    #[test]
    fn writes_after_the_last_sync_are_undone_and_those_before_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (path, log_path) = (dir.path().join("db"), dir.path().join("log"));
        std::fs::write(&path, b"aaaa").unwrap();
        let log = SharedLog::open(&log_path).unwrap();
        logged_write(&log, &path, 0, b"bb");
        logged_sync(&log, &path);
        logged_write(&log, &path, 2, b"cccc");
        logged_write(&log, &path, 0, b"d");
        assert_eq!(std::fs::read(&path).unwrap(), b"dbcccc");
        let replayed = replay(&log_path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"bbaa");
        assert_eq!(replayed.undone, 2);
        assert_eq!(std::fs::metadata(&log_path).unwrap().len(), 0);
    }

    #[test]
    fn with_no_sync_a_file_goes_back_to_what_it_held_when_the_log_began() {
        let dir = tempfile::tempdir().unwrap();
        let (path, log_path) = (dir.path().join("db"), dir.path().join("log"));
        std::fs::write(&path, b"xy").unwrap();
        let log = SharedLog::open(&log_path).unwrap();
        logged_write(&log, &path, 1, b"zzz");
        logged_write(&log, &path, 0, b"w");
        replay(&log_path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"xy");
    }

    #[test]
    fn a_truncation_after_the_last_sync_is_undone() {
        let dir = tempfile::tempdir().unwrap();
        let (path, log_path) = (dir.path().join("db"), dir.path().join("log"));
        std::fs::write(&path, b"0123456789").unwrap();
        let log = SharedLog::open(&log_path).unwrap();
        logged_sync(&log, &path);
        logged_truncate(&log, &path, 3);
        logged_write(&log, &path, 3, b"ab");
        assert_eq!(std::fs::read(&path).unwrap(), b"012ab");
        replay(&log_path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789");
    }

    #[test]
    fn a_synced_truncation_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (path, log_path) = (dir.path().join("db"), dir.path().join("log"));
        std::fs::write(&path, b"0123456789").unwrap();
        let log = SharedLog::open(&log_path).unwrap();
        logged_truncate(&log, &path, 4);
        logged_sync(&log, &path);
        logged_write(&log, &path, 4, b"ab");
        replay(&log_path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"0123");
    }

    #[test]
    fn records_of_two_processes_in_one_log_each_follow_their_own_file_s_sync() {
        let dir = tempfile::tempdir().unwrap();
        let (db, wal) = (dir.path().join("db"), dir.path().join("db-wal"));
        let log_path = dir.path().join("log");
        std::fs::write(&db, b"dddd").unwrap();
        std::fs::write(&wal, b"").unwrap();
        // Two descriptors, as two processes would hold.
        let (one, two) = (
            SharedLog::open(&log_path).unwrap(),
            SharedLog::open(&log_path).unwrap(),
        );
        logged_write(&one, &wal, 0, b"frame1");
        logged_sync(&one, &wal);
        logged_write(&two, &wal, 6, b"frame2");
        logged_write(&one, &db, 0, b"DD");
        logged_sync(&one, &db);
        logged_write(&two, &db, 2, b"EE");
        replay(&log_path).unwrap();
        assert_eq!(std::fs::read(&wal).unwrap(), b"frame1");
        assert_eq!(std::fs::read(&db).unwrap(), b"DDdd");
    }

    #[test]
    fn a_malformed_log_is_refused_and_nothing_is_changed() {
        let dir = tempfile::tempdir().unwrap();
        let (path, log_path) = (dir.path().join("db"), dir.path().join("log"));
        std::fs::write(&path, b"aaaa").unwrap();
        let log = SharedLog::open(&log_path).unwrap();
        logged_write(&log, &path, 0, b"bb");
        (&log.file).write_all(&[9, 0, 0]).unwrap();
        let error = replay(&log_path).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert_eq!(std::fs::read(&path).unwrap(), b"bbaa");
        assert_ne!(std::fs::metadata(&log_path).unwrap().len(), 0);
    }

    #[test]
    fn a_file_deleted_since_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let (path, log_path) = (dir.path().join("db"), dir.path().join("log"));
        std::fs::write(&path, b"aaaa").unwrap();
        let log = SharedLog::open(&log_path).unwrap();
        logged_write(&log, &path, 0, b"bb");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(replay(&log_path).unwrap().undone, 0);
        assert!(!path.exists());
    }
}

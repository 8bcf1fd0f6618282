//! The FFI half of the shim: an `sqlite3_vfs` registered as the process's
//! default, wrapping the unix VFS that was the default before.
//!
//! Every file the shim opens is an [`ShimFile`] header followed, in the
//! same allocation, by the unix VFS's own file object, to which every call
//! is forwarded. Calls on files of a tracked database also go through the
//! disk model ([`super::model`]) under its lock; for any other file the
//! extra work is one atomic load and one indirect call.
//!
//! The io methods are version 2: SQLite then never asks for memory-mapped
//! pages (xFetch), so every read and write of the database and its log
//! passes through xRead and xWrite. The WAL index (`-shm`) is shared
//! memory mapped by the unix VFS; xShmMap, xShmLock, xShmBarrier and
//! xShmUnmap are forwarded unchanged.
//!
//! No panic crosses into SQLite: each entry point runs its body under
//! `catch_unwind` and answers an error code if it panicked.

use super::lock_watch;
use super::model::{self, CutPoint, IoFault, IoOp, Tracked};
use super::names::NAME;
use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::{mem, ptr};

/// The open-file object SQLite allocates for the shim (`szOsFile` bytes):
/// this header, then the unix file at [`REAL_OFFSET`].
#[repr(C)]
struct ShimFile {
    /// What SQLite sees: `pMethods` points at [`METHODS`].
    base: ffi::sqlite3_file,
    /// The wrapped unix file, inside this same allocation.
    real: *mut ffi::sqlite3_file,
    /// The power generation the file was opened in.
    born: u64,
    /// A number no other handle opened in this process has.
    serial: u64,
    /// The tracking version [`ShimFile::tracked`] was looked up at.
    seen_version: u64,
    /// The name SQLite opened the file under (`None` for a temporary file).
    name: Option<Box<[u8]>>,
    /// The disk tracking this file and the file's role, if any.
    tracked: Option<(Arc<Tracked>, usize)>,
}

/// The serial number the next opened file gets.
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(0);

/// Where the unix file starts in the shim's allocation (8-aligned, as
/// SQLite's allocations are).
const REAL_OFFSET: usize = mem::size_of::<ShimFile>().next_multiple_of(8);
const _: () = assert!(mem::align_of::<ShimFile>() <= 8);

/// The shim's io methods: version 2, everything forwarded.
static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 2,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: None,
    xUnfetch: None,
};

/// Registers the shim as the default VFS, once for the process. The
/// answer (`Err` with why not) is the same for every call.
pub(super) fn install() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED.get_or_init(register).clone()
}

fn register() -> Result<(), String> {
    // SAFETY: sqlite3_initialize may be called any number of times, from
    // any thread; sqlite3_vfs_find(NULL) answers the default VFS (or null),
    // which SQLite never frees.
    let unix = unsafe {
        let rc = ffi::sqlite3_initialize();
        if rc != ffi::SQLITE_OK {
            return Err(format!("sqlite3_initialize failed with code {rc}"));
        }
        ffi::sqlite3_vfs_find(ptr::null())
    };
    if unix.is_null() {
        return Err("SQLite has no default VFS".into());
    }
    // SAFETY: `unix` is a registered VFS object: valid and never freed.
    let mut vfs = unsafe { *unix };
    // SAFETY: a registered VFS's name is a valid C string.
    let wrapped = unsafe { CStr::from_ptr(vfs.zName) };
    if wrapped != c"unix" {
        return Err(format!(
            "the default VFS is {wrapped:?}; the shim wraps only \"unix\""
        ));
    }
    let size = usize::try_from(vfs.szOsFile).map_err(|_| "a negative szOsFile".to_string())?;
    vfs.szOsFile = c_int::try_from(REAL_OFFSET + size).map_err(|e| e.to_string())?;
    vfs.pNext = ptr::null_mut();
    vfs.zName = NAME.as_ptr();
    vfs.pAppData = unix.cast();
    // Every other method is the unix VFS's own, called with the shim's
    // pointer: in os_unix.c they all ignore their VFS argument (it is named
    // `NotUsed`); only xOpen reads it (its pAppData), and xOpen is ours.
    vfs.xOpen = Some(x_open);
    vfs.xDelete = Some(x_delete);
    let vfs = Box::leak(Box::new(vfs));
    // SAFETY: `vfs` is a complete VFS object that lives for ever (leaked);
    // registering makes it the default for connections opened from now on.
    let rc = unsafe { ffi::sqlite3_vfs_register(vfs, 1) };
    if rc != ffi::SQLITE_OK {
        return Err(format!("sqlite3_vfs_register failed with code {rc}"));
    }
    Ok(())
}

/// Runs an entry point's body, answering `failed` if it panicked.
fn guard(failed: c_int, body: impl FnOnce() -> c_int) -> c_int {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(failed)
}

/// The SQLite error an injected fault answers.
fn fault_code(fault: IoFault) -> c_int {
    match fault {
        IoFault::Read(_) => ffi::SQLITE_IOERR_READ,
        IoFault::Write(_) => ffi::SQLITE_IOERR_WRITE,
        IoFault::DiskFull(_) => ffi::SQLITE_FULL,
        IoFault::Sync(_) => ffi::SQLITE_IOERR_FSYNC,
        IoFault::Truncate(_) => ffi::SQLITE_IOERR_TRUNCATE,
    }
}

impl ShimFile {
    /// The disk tracking this file, looked up again whenever the set of
    /// tracked databases has changed since the last look.
    fn tracking(&mut self) -> Option<(Arc<Tracked>, usize)> {
        let now = model::version();
        if now != self.seen_version {
            self.seen_version = now;
            self.tracked = self.name.as_deref().and_then(model::resolve);
        }
        self.tracked.clone()
    }
}

/// The shim file behind a pointer SQLite passes to an io method.
///
/// # Safety
/// `file` must be a file opened by [`x_open`] and not yet closed, not used
/// by another thread during the call (SQLite uses each file object from
/// one connection, one call at a time).
unsafe fn shim<'a>(file: *mut ffi::sqlite3_file) -> &'a mut ShimFile {
    // SAFETY: per the contract above, `file` points at a live ShimFile.
    unsafe { &mut *file.cast::<ShimFile>() }
}

/// Calls the wrapped file's method `$method`, or answers `$missing` when
/// the unix file has none.
macro_rules! forward {
    ($real:expr, $method:ident, $missing:expr $(, $arg:expr)*) => {{
        let real = $real;
        // SAFETY: `real` is the unix file opened by x_open, alive until
        // x_close; its methods table is the unix VFS's static one.
        match unsafe { (*(*real).pMethods).$method } {
            // SAFETY: the arguments are SQLite's own, passed on unchanged.
            Some(method) => unsafe { method(real $(, $arg)*) },
            None => $missing,
        }
    }};
}

unsafe extern "C" fn x_open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    guard(ffi::SQLITE_CANTOPEN, || {
        let shim = file.cast::<ShimFile>();
        // SAFETY: SQLite passes `szOsFile` writable bytes at `file`; with
        // pMethods null, SQLite will not call xClose if the open fails.
        unsafe { (*shim).base.pMethods = ptr::null() };
        let own_name = (!name.is_null()).then(|| {
            // SAFETY: a non-null name is a C string valid until xClose.
            Box::<[u8]>::from(unsafe { CStr::from_ptr(name) }.to_bytes())
        });
        let born = model::power_generation();
        let seen_version = model::version();
        let tracked = own_name.as_deref().and_then(model::resolve);
        if let Some((disk, _)) = &tracked {
            if disk.admit(born).is_err() {
                return ffi::SQLITE_CANTOPEN;
            }
        }
        // SAFETY: pAppData is the unix VFS (set by `register`); the unix
        // file goes at REAL_OFFSET inside the same allocation, which has
        // room for it (szOsFile was enlarged by REAL_OFFSET).
        let (unix, real) = unsafe {
            let real = file
                .cast::<u8>()
                .add(REAL_OFFSET)
                .cast::<ffi::sqlite3_file>();
            (*real).pMethods = ptr::null();
            ((*vfs).pAppData.cast::<ffi::sqlite3_vfs>(), real)
        };
        // SAFETY: the unix VFS object lives for ever.
        let Some(open) = (unsafe { (*unix).xOpen }) else {
            return ffi::SQLITE_CANTOPEN;
        };
        // SAFETY: SQLite's own arguments, but for the unix file's place.
        // The name is SQLite's own pointer: the unix VFS keeps it, and
        // reads the URI parameters and the database's name stored after it.
        let rc = unsafe { open(unix, name, real, flags, out_flags) };
        if rc != ffi::SQLITE_OK {
            // SAFETY: a unix file left with methods must still be closed.
            if !unsafe { (*real).pMethods }.is_null() {
                forward!(real, xClose, ffi::SQLITE_OK);
            }
            return rc;
        }
        if let Some(name) = &own_name {
            model::opened(file as usize, name, born);
        }
        let header = ShimFile {
            base: ffi::sqlite3_file { pMethods: &METHODS },
            real,
            born,
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            seen_version,
            name: own_name,
            tracked,
        };
        // SAFETY: `shim` has room for a ShimFile and holds none yet (a
        // plain write, nothing dropped); from here SQLite may call xClose.
        unsafe { ptr::write(shim, header) };
        rc
    })
}

unsafe extern "C" fn x_delete(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    guard(ffi::SQLITE_IOERR_DELETE, || {
        // SAFETY: SQLite passes a valid C string; pAppData is the unix VFS.
        let (bytes, unix) = unsafe {
            (
                CStr::from_ptr(name).to_bytes(),
                (*vfs).pAppData.cast::<ffi::sqlite3_vfs>(),
            )
        };
        let tracked = model::resolve(bytes);
        // Deleting a file is durable at once: the model forgets its
        // unsynced writes while holding the lock, so no cut runs between.
        let mut state = tracked.as_ref().map(|(disk, _)| disk.lock());
        if let (Some(state), Some((_, role))) = (state.as_mut(), &tracked) {
            if state.share_sync(*role, 0).is_err() {
                return ffi::SQLITE_IOERR_DELETE;
            }
            state.deleted(*role);
        }
        // SAFETY: the unix VFS's own xDelete, with SQLite's own arguments.
        unsafe {
            match (*unix).xDelete {
                Some(delete) => delete(unix, name, sync_dir),
                None => ffi::SQLITE_IOERR_DELETE,
            }
        }
    })
}

unsafe extern "C" fn x_close(file: *mut ffi::sqlite3_file) -> c_int {
    guard(ffi::SQLITE_IOERR_CLOSE, || {
        let shim = file.cast::<ShimFile>();
        // SAFETY: SQLite closes each file it opened exactly once.
        let rc = forward!(unsafe { (*shim).real }, xClose, ffi::SQLITE_OK);
        // Only now is the file no longer open, for the reboot rule.
        model::closed(file as usize);
        // SAFETY: the ShimFile was written by x_open and is dropped once,
        // here; SQLite forgets the file after xClose.
        unsafe { ptr::drop_in_place(shim) };
        rc
    })
}

unsafe extern "C" fn x_read(
    file: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    guard(ffi::SQLITE_IOERR_READ, || {
        // SAFETY: SQLite calls io methods on a file it opened, one at a time.
        let file = unsafe { shim(file) };
        let (real, born) = (file.real, file.born);
        let Some((disk, _)) = file.tracking() else {
            return forward!(real, xRead, ffi::SQLITE_IOERR_READ, buf, amount, offset);
        };
        let mut state = disk.lock();
        if disk.is_dead(born) {
            return ffi::SQLITE_IOERR_READ;
        }
        if let Some(fault) = state.count(IoOp::Read) {
            return fault_code(fault);
        }
        forward!(real, xRead, ffi::SQLITE_IOERR_READ, buf, amount, offset)
    })
}

/// The file's size as the unix file reports it.
fn real_size(real: *mut ffi::sqlite3_file) -> Result<u64, c_int> {
    let mut size: ffi::sqlite3_int64 = 0;
    let rc = forward!(real, xFileSize, ffi::SQLITE_IOERR_FSTAT, &mut size);
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    u64::try_from(size).map_err(|_| ffi::SQLITE_IOERR_FSTAT)
}

/// What the unix file holds from `offset` for up to `amount` bytes, cut
/// short at its end.
fn read_existing(real: *mut ffi::sqlite3_file, offset: u64, amount: u64) -> Result<Vec<u8>, c_int> {
    let size = real_size(real)?;
    let length = amount.min(size.saturating_sub(offset));
    if length == 0 {
        // All of it lies past the end: nothing to read, nothing to put back.
        return Ok(Vec::new());
    }
    let mut bytes = vec![0u8; usize::try_from(length).map_err(|_| ffi::SQLITE_NOMEM)?];
    let rc = forward!(
        real,
        xRead,
        ffi::SQLITE_IOERR_READ,
        bytes.as_mut_ptr().cast(),
        c_int::try_from(length).map_err(|_| ffi::SQLITE_IOERR_READ)?,
        i64::try_from(offset).map_err(|_| ffi::SQLITE_IOERR_READ)?
    );
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    Ok(bytes)
}

unsafe extern "C" fn x_write(
    file: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    guard(ffi::SQLITE_IOERR_WRITE, || {
        // SAFETY: SQLite calls io methods on a file it opened, one at a time.
        let file = unsafe { shim(file) };
        let (real, born) = (file.real, file.born);
        let Some((disk, role)) = file.tracking() else {
            return forward!(real, xWrite, ffi::SQLITE_IOERR_WRITE, buf, amount, offset);
        };
        let mut state = disk.lock();
        if disk.is_dead(born) {
            return ffi::SQLITE_IOERR_WRITE;
        }
        if let Some(fault) = state.count(IoOp::Write) {
            return fault_code(fault);
        }
        let (Ok(at), Ok(length)) = (u64::try_from(offset), u64::try_from(amount)) else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        let file_len = match real_size(real) {
            Ok(size) => size,
            Err(rc) => return rc,
        };
        match read_existing(real, at, length) {
            Ok(before) => {
                // Logged for other processes before the write is made.
                if state.share_change(role, at, file_len, &before).is_err() {
                    return ffi::SQLITE_IOERR_WRITE;
                }
                state.record_write(role, at, length, before);
            }
            Err(rc) => return rc,
        }
        let rc = forward!(real, xWrite, ffi::SQLITE_IOERR_WRITE, buf, amount, offset);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let point = CutPoint::AfterWrite(state.counts().writes);
        if let Some(tearing) = state.take_cut(point) {
            disk.cut(&mut state, Some(point), tearing);
            return ffi::SQLITE_IOERR_WRITE;
        }
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    guard(ffi::SQLITE_IOERR_TRUNCATE, || {
        // SAFETY: SQLite calls io methods on a file it opened, one at a time.
        let file = unsafe { shim(file) };
        let (real, born) = (file.real, file.born);
        let Some((disk, role)) = file.tracking() else {
            return forward!(real, xTruncate, ffi::SQLITE_IOERR_TRUNCATE, size);
        };
        let mut state = disk.lock();
        if disk.is_dead(born) {
            return ffi::SQLITE_IOERR_TRUNCATE;
        }
        if let Some(fault) = state.count(IoOp::Truncate) {
            return fault_code(fault);
        }
        let Ok(length) = u64::try_from(size) else {
            return ffi::SQLITE_IOERR_TRUNCATE;
        };
        match read_existing(real, length, u64::MAX) {
            Ok(removed) if !removed.is_empty() => {
                let file_len = length + removed.len() as u64;
                if state
                    .share_change(role, length, file_len, &removed)
                    .is_err()
                {
                    return ffi::SQLITE_IOERR_TRUNCATE;
                }
                state.record_truncate(role, length, removed);
            }
            Ok(_) => {}
            Err(rc) => return rc,
        }
        forward!(real, xTruncate, ffi::SQLITE_IOERR_TRUNCATE, size)
    })
}

unsafe extern "C" fn x_sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    guard(ffi::SQLITE_IOERR_FSYNC, || {
        // SAFETY: SQLite calls io methods on a file it opened, one at a time.
        let file = unsafe { shim(file) };
        let (real, born) = (file.real, file.born);
        let Some((disk, role)) = file.tracking() else {
            return forward!(real, xSync, ffi::SQLITE_IOERR_FSYNC, flags);
        };
        let mut state = disk.lock();
        if disk.is_dead(born) {
            return ffi::SQLITE_IOERR_FSYNC;
        }
        if let Some(fault) = state.count(IoOp::Sync) {
            return fault_code(fault);
        }
        let nth = state.counts().syncs;
        let before = CutPoint::BeforeSync(nth);
        if let Some(tearing) = state.take_cut(before) {
            disk.cut(&mut state, Some(before), tearing);
            return ffi::SQLITE_IOERR_FSYNC;
        }
        let rc = forward!(real, xSync, ffi::SQLITE_IOERR_FSYNC, flags);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        match real_size(real) {
            Ok(size) => {
                // Logged before the caller hears of the sync, so no other
                // process can see what it made durable before the log does.
                if state.share_sync(role, size).is_err() {
                    return ffi::SQLITE_IOERR_FSYNC;
                }
                state.synced(role, size);
            }
            Err(rc) => return rc,
        }
        let after = CutPoint::AfterSync(nth);
        if let Some(tearing) = state.take_cut(after) {
            // The sync reached the disk, but the caller never hears of it.
            disk.cut(&mut state, Some(after), tearing);
            return ffi::SQLITE_IOERR_FSYNC;
        }
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    guard(ffi::SQLITE_IOERR_FSTAT, || {
        // SAFETY: SQLite calls io methods on a file it opened, one at a time.
        let file = unsafe { shim(file) };
        let (real, born) = (file.real, file.born);
        if let Some((disk, _)) = file.tracking() {
            if disk.is_dead(born) {
                return ffi::SQLITE_IOERR_FSTAT;
            }
        }
        forward!(real, xFileSize, ffi::SQLITE_IOERR_FSTAT, size)
    })
}

unsafe extern "C" fn x_file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    guard(ffi::SQLITE_ERROR, || {
        // SAFETY: SQLite calls io methods on a file it opened, one at a time.
        let file = unsafe { shim(file) };
        let real = file.real;
        // A size hint may make the unix VFS grow the file by itself
        // (fallocate, or ftruncate for memory mapping), unseen by xWrite
        // and xTruncate. It is only a hint: for tracked files, ignore it.
        if op == ffi::SQLITE_FCNTL_SIZE_HINT && file.tracking().is_some() {
            return ffi::SQLITE_OK;
        }
        forward!(real, xFileControl, ffi::SQLITE_NOTFOUND, op, arg)
    })
}

/// Io methods that touch no file data: forwarded as they are, for every
/// file, dead or alive (a dead connection must still release its locks).
macro_rules! pass_through {
    ($name:ident, $method:ident, $failed:expr, ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> $ret {
            let failed: $ret = $failed;
            // SAFETY: SQLite calls io methods on a file it opened.
            let real = unsafe { shim(file) }.real;
            catch_unwind(AssertUnwindSafe(|| forward!(real, $method, failed $(, $arg)*)))
                .unwrap_or(failed)
        }
    };
}

pass_through!(x_lock, xLock, ffi::SQLITE_IOERR_LOCK, (level: c_int) -> c_int);
pass_through!(x_unlock, xUnlock, ffi::SQLITE_IOERR_UNLOCK, (level: c_int) -> c_int);
pass_through!(x_check_reserved_lock, xCheckReservedLock, ffi::SQLITE_IOERR_CHECKRESERVEDLOCK, (out: *mut c_int) -> c_int);
pass_through!(x_sector_size, xSectorSize, 4096, () -> c_int);
pass_through!(x_device_characteristics, xDeviceCharacteristics, 0, () -> c_int);
pass_through!(x_shm_map, xShmMap, ffi::SQLITE_IOERR_SHMMAP, (region: c_int, size: c_int, extend: c_int, out: *mut *mut c_void) -> c_int);

/// The WAL's write lock: slot 0 of the shared-memory locks.
const WAL_WRITE_LOCK: c_int = 0;

unsafe extern "C" fn x_shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: SQLite calls io methods on a file it opened.
    let shim = unsafe { shim(file) };
    let real = shim.real;
    guard(ffi::SQLITE_IOERR_SHMLOCK, || {
        let rc = forward!(real, xShmLock, ffi::SQLITE_IOERR_SHMLOCK, offset, n, flags);
        let wants_write_lock =
            offset == WAL_WRITE_LOCK && flags == ffi::SQLITE_SHM_LOCK | ffi::SQLITE_SHM_EXCLUSIVE;
        let answer = match rc {
            ffi::SQLITE_OK => Some(lock_watch::LockAnswer::Granted),
            ffi::SQLITE_BUSY => Some(lock_watch::LockAnswer::Refused),
            _ => None,
        };
        if let (true, Some(answer), Some(name)) = (wants_write_lock, answer, shim.name.as_deref()) {
            lock_watch::note_write_lock(name, shim.serial, answer);
        }
        rc
    })
}
pass_through!(x_shm_unmap, xShmUnmap, ffi::SQLITE_IOERR_SHMMAP, (delete: c_int) -> c_int);

unsafe extern "C" fn x_shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: SQLite calls io methods on a file it opened.
    let real = unsafe { shim(file) }.real;
    let _ = catch_unwind(AssertUnwindSafe(|| forward!(real, xShmBarrier, ())));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_file_has_room_for_the_shim_s_header_and_the_unix_file() {
        install().unwrap();
        // SAFETY: both VFSs are registered (the shim above) and never freed.
        let (shim, unix) = unsafe {
            (
                ffi::sqlite3_vfs_find(NAME.as_ptr()),
                ffi::sqlite3_vfs_find(c"unix".as_ptr()),
            )
        };
        assert!(!shim.is_null() && !unix.is_null());
        // SAFETY: as above.
        let (shim_size, unix_size) = unsafe { ((*shim).szOsFile, (*unix).szOsFile) };
        assert_eq!(
            usize::try_from(shim_size).unwrap(),
            REAL_OFFSET + usize::try_from(unix_size).unwrap()
        );
    }
}

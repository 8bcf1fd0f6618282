//! The names the shim goes by: its own, and the full path SQLite opens a
//! database's files under, which is how tracked and watched databases are
//! recognised.

use rusqlite::ffi;
use std::ffi::{c_int, CStr};

/// The name the shim registers under.
pub(super) const NAME: &CStr = c"lease-lab-vfs-shim";

/// The full path SQLite gives a database opened as `path`: the name its
/// files are opened under.
pub(super) fn full_pathname(path: &[u8]) -> Result<Vec<u8>, String> {
    let path = std::ffi::CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: called after `install` succeeded, so the default VFS is the
    // shim, whose pAppData is the unix VFS; both live for ever.
    let unix = unsafe {
        let shim = ffi::sqlite3_vfs_find(NAME.as_ptr());
        if shim.is_null() {
            return Err("the shim is not installed".into());
        }
        (*shim).pAppData.cast::<ffi::sqlite3_vfs>()
    };
    // SAFETY: as above; `mxPathname` is the documented size of the output
    // buffer xFullPathname may fill (with its terminating zero).
    unsafe {
        let size = usize::try_from((*unix).mxPathname).unwrap_or(0) + 1;
        let mut out = vec![0u8; size];
        let full = (*unix)
            .xFullPathname
            .ok_or("the unix VFS has no xFullPathname")?;
        let rc = full(
            unix,
            path.as_ptr(),
            c_int::try_from(size).unwrap_or(c_int::MAX),
            out.as_mut_ptr().cast(),
        );
        if rc != ffi::SQLITE_OK && rc != ffi::SQLITE_OK_SYMLINK {
            return Err(format!("xFullPathname failed with code {rc}"));
        }
        Ok(CStr::from_bytes_until_nul(&out)
            .map_err(|e| e.to_string())?
            .to_bytes()
            .to_vec())
    }
}

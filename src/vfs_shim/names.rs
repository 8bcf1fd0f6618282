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

#[cfg(test)]
mod tests {
    use super::full_pathname;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    /// SQLite's unix VFS names paths of up to `mxPathname - 1` bytes
    /// (SQLite asks with a buffer of `mxPathname + 1`, as the shim does).
    const LONGEST: usize = 511;

    fn named(path: &Path) -> Result<Vec<u8>, String> {
        crate::vfs_shim::install().expect("the shim installs");
        full_pathname(path.as_os_str().as_bytes())
    }

    /// `folder` (which exists), then as many not-yet-existing folders as
    /// it takes to make a path of exactly `length` bytes.
    fn path_of_length(folder: &Path, length: usize) -> std::path::PathBuf {
        let mut path = folder.to_path_buf();
        while path.as_os_str().len() < length {
            // Each name stays well under the file system's 255 bytes.
            let room = length - path.as_os_str().len() - 1;
            path.push("d".repeat(room.min(200)));
        }
        assert_eq!(path.as_os_str().len(), length);
        path
    }

    #[test]
    fn a_relative_path_is_named_from_the_current_folder() {
        let here = std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .unwrap();
        assert_eq!(
            named(Path::new("no-such-folder/jobs.db")).unwrap(),
            here.join("no-such-folder/jobs.db").as_os_str().as_bytes()
        );
    }

    #[test]
    fn the_longest_path_sqlite_names_comes_back_whole_and_a_longer_one_is_refused() {
        let folder = tempfile::tempdir().unwrap();
        let folder = std::fs::canonicalize(folder.path()).unwrap();
        let longest = path_of_length(&folder, LONGEST);
        assert_eq!(named(&longest).unwrap(), longest.as_os_str().as_bytes());
        let error = named(&path_of_length(&folder, LONGEST + 1)).unwrap_err();
        assert!(error.contains("xFullPathname failed"), "{error}");
    }

    #[test]
    fn a_path_with_a_zero_byte_cannot_be_named() {
        crate::vfs_shim::install().expect("the shim installs");
        assert!(full_pathname(b"jobs\0.db").is_err());
    }
}

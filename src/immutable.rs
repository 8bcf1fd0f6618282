//! The immutable flag of a file, which binds root too.
//!
//! Root ignores permission bits, so a test that needs a file nobody can
//! write marks it immutable, as `chattr +i` does, but from this process:
//! no program is started and none needs to be installed.

use std::os::fd::AsRawFd;
use std::path::Path;

/// The inode flag that makes a file immutable (Linux's `FS_IMMUTABLE_FL`,
/// which the libc crate does not name).
const IMMUTABLE_FLAG: libc::c_int = 0x10;

/// Sets (`true`) or clears (`false`) the immutable flag of `file`.
///
/// Answers whether the flag is now as asked: false when the file cannot be
/// opened, when its file system keeps no such flag, or when this user may
/// not change it (only root, or a process with `CAP_LINUX_IMMUTABLE`, may).
pub fn set(file: &Path, immutable: bool) -> bool {
    let Ok(handle) = std::fs::File::open(file) else {
        return false;
    };
    let fd = handle.as_raw_fd();
    let mut flags: libc::c_int = 0;
    // SAFETY: both requests take a pointer to an int, which the kernel
    // reads or writes; `fd` stays open for as long as `handle` lives.
    unsafe {
        if libc::ioctl(fd, libc::FS_IOC_GETFLAGS, &raw mut flags) != 0 {
            return false;
        }
        flags = if immutable {
            flags | IMMUTABLE_FLAG
        } else {
            flags & !IMMUTABLE_FLAG
        };
        libc::ioctl(fd, libc::FS_IOC_SETFLAGS, &raw const flags) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the flag can be set, it stops even root from writing, and
    /// clearing it lets writes through again; where it cannot, `set`
    /// says so and the file stays writable.
    #[test]
    fn the_flag_stops_writes_until_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let writable = || std::fs::OpenOptions::new().write(true).open(&file).is_ok();
        if set(&file, true) {
            assert!(!writable(), "an immutable file opened for writing");
            assert!(set(&file, false), "the flag could be set but not cleared");
            assert!(writable(), "the file stayed read-only after clearing");
        } else {
            assert!(writable(), "set failed but left the file unwritable");
        }
    }
}

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
    // Never through a link: the file may be in a folder a program under
    // test writes (see crate::shared_files).
    let Ok(handle) = crate::shared_files::handle(file) else {
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

    /// Root may set the flag (on the file systems Linux gives one: ext4,
    /// xfs, btrfs, tmpfs), and then even root cannot write the file until
    /// it is cleared; setting it twice leaves it set. Another user may
    /// not: `set` says so and the file stays writable.
    #[test]
    fn the_flag_stops_writes_until_cleared() {
        /// Clears the flag however the test ends, so that the folder can go.
        struct Cleared<'a>(&'a Path);
        impl Drop for Cleared<'_> {
            fn drop(&mut self) {
                set(self.0, false);
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let _cleared = Cleared(&file);
        let writable = || std::fs::OpenOptions::new().write(true).open(&file).is_ok();
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        if !root {
            assert!(!set(&file, true) || set(&file, false));
            assert!(writable(), "a failed set left the file unwritable");
            return;
        }
        assert!(
            set(&file, true),
            "root could not set the immutable flag of a file in {}: a file system without it?",
            dir.path().display()
        );
        assert!(!writable(), "an immutable file opened for writing");
        assert!(set(&file, true), "setting the flag a second time failed");
        assert!(!writable(), "setting the flag a second time cleared it");
        assert!(set(&file, false), "the flag could be set but not cleared");
        assert!(writable(), "the file stayed read-only after clearing");
        assert!(set(&file, false), "clearing a clear flag failed");
        assert!(writable(), "clearing a clear flag set it");
    }
}

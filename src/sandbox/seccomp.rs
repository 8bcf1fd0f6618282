//! The sandbox's seccomp filters: the system calls a submission never
//! needs and could use to reach past its sandbox, refused with `EPERM`.
//! The filters are compiled to BPF by `seccompiler` (rust-vmm's, as
//! Firecracker uses it) and handed to bubblewrap, which loads them in the
//! sandbox's first process before the program runs, so that they hold for
//! every process the program starts.
//!
//! Refused: tracing or reading another process (`ptrace`,
//! `process_vm_readv`/`writev`, `pidfd_getfd`, `kcmp`); the kernel's
//! keyrings; mounts and every call that makes or enters a namespace
//! (`unshare`, `setns`, `clone` with a `CLONE_NEW*` flag); the terminal
//! ioctls that type into a terminal's input or drive its console
//! (`TIOCSTI`, `TIOCLINUX`); and the calls no store needs that widen the
//! kernel's surface (`bpf`, `perf_event_open`, `userfaultfd`, `io_uring`,
//! modules, `kexec`, `reboot`, swap, `syslog`, handles to files by
//! number). `clone3`, whose flags seccomp cannot read, answers `ENOSYS`,
//! so that the C library falls back to `clone`, whose flags it can. On
//! x86-64, every call of the x32 ABI answers `ENOSYS`: its numbers are
//! the 64-bit calls' plus a bit, which a filter of 64-bit numbers would
//! let through.

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::io::{Seek, Write};
use std::os::fd::{FromRawFd, OwnedFd};

/// The system calls refused whatever their arguments.
fn refused_calls() -> Vec<libc::c_long> {
    let mut calls = vec![
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_getfd,
        libc::SYS_kcmp,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_syslog,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    calls
}

/// The `clone` flags that make a namespace.
const NAMESPACE_FLAGS: [libc::c_int; 7] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The terminal ioctls refused: typing into a terminal's input, and the
/// Linux console's own commands.
// (An ioctl request's type is the C library's: `unsigned long` in glibc,
// `int` in musl; the cast is a no-op on the first only.)
#[allow(clippy::unnecessary_cast)]
const TERMINAL_IOCTLS: [u64; 2] = [libc::TIOCSTI as u64, libc::TIOCLINUX as u64];

/// Why the filters could not be made: this machine's architecture has no
/// filter, or the filter could not be written for bubblewrap.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    /// seccompiler refused the rules or the architecture.
    #[error("the seccomp filter could not be compiled for {arch}: {reason}")]
    Compile {
        /// The machine's architecture.
        arch: &'static str,
        /// seccompiler's reason.
        reason: String,
    },
    /// The memory file that carries a filter to bubblewrap.
    #[error("the seccomp filter could not be handed to bubblewrap: {0}")]
    Io(#[from] std::io::Error),
}

/// The filters, compiled, in the order bubblewrap loads them: the refusals
/// (`EPERM`), `clone3` (`ENOSYS`), and on x86-64 the x32 guard.
pub fn programs() -> Result<Vec<BpfProgram>, FilterError> {
    let arch = std::env::consts::ARCH;
    let compile_error = |reason: String| FilterError::Compile { arch, reason };
    let target = TargetArch::try_from(arch).map_err(|error| compile_error(format!("{error:?}")))?;
    let mut refusals: BTreeMap<i64, Vec<SeccompRule>> = refused_calls()
        .into_iter()
        .map(|call| (call, Vec::new()))
        .collect();
    let rule = |index: u8, value: u64, mask: u64| {
        SeccompCondition::new(
            index,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::MaskedEq(mask),
            value,
        )
        .and_then(|condition| SeccompRule::new(vec![condition]))
    };
    let namespaces = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| rule(0, flag as u64, flag as u64))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| compile_error(error.to_string()))?;
    refusals.insert(libc::SYS_clone, namespaces);
    let ioctls = TERMINAL_IOCTLS
        .iter()
        .map(|&request| rule(1, request, u64::from(u32::MAX)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| compile_error(error.to_string()))?;
    refusals.insert(libc::SYS_ioctl, ioctls);
    let compile = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: u32| {
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno),
            target,
        )
        .and_then(BpfProgram::try_from)
        .map_err(|error| compile_error(error.to_string()))
    };
    let mut programs = vec![
        compile(refusals, libc::EPERM as u32)?,
        compile(
            BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
            libc::ENOSYS as u32,
        )?,
    ];
    if cfg!(target_arch = "x86_64") {
        programs.push(x32_guard());
    }
    Ok(programs)
}

/// The kernel's `AUDIT_ARCH_X86_64`.
const AUDIT_ARCH_X86_64: u32 = 62 | 0x8000_0000 | 0x4000_0000;

/// The bit an x32 system call's number carries (`__X32_SYSCALL_BIT`).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// A filter seccompiler cannot express, as it matches numbers exactly:
/// every call numbered at or above the x32 bit answers `ENOSYS` on
/// x86-64. Six instructions: load the architecture; on x86-64 load the
/// number and compare it; refuse or allow.
fn x32_guard() -> BpfProgram {
    use seccompiler::sock_filter;
    let statement = |code: u32, k: u32| sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    // Offsets in the kernel's `struct seccomp_data`.
    let (nr, arch) = (0, 4);
    vec![
        statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, arch),
        // Another architecture: allowed here, refused by the first filter.
        jump(
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            AUDIT_ARCH_X86_64,
            0,
            3,
        ),
        statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, nr),
        jump(
            libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K,
            X32_SYSCALL_BIT,
            0,
            1,
        ),
        statement(
            libc::BPF_RET | libc::BPF_K,
            libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32,
        ),
        statement(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW),
    ]
}

/// `program` as bubblewrap reads it from a file descriptor: the raw
/// `struct sock_filter` array, in a memory file of its own at offset 0
/// (closed on exec unless the caller clears the flag for bubblewrap).
pub fn memory_file(program: &BpfProgram) -> Result<OwnedFd, FilterError> {
    let bytes: Vec<u8> = program
        .iter()
        .flat_map(|instruction| {
            let mut raw = [0u8; 8];
            raw[..2].copy_from_slice(&instruction.code.to_ne_bytes());
            raw[2] = instruction.jt;
            raw[3] = instruction.jf;
            raw[4..].copy_from_slice(&instruction.k.to_ne_bytes());
            raw
        })
        .collect();
    // SAFETY: memfd_create(2) reads the static name and answers a new
    // descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"lease-lab-seccomp".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.write_all(&bytes)?;
    file.rewind()?;
    Ok(file.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict of `program` on a call: the kernel's BPF interpreter
    /// is not at hand in a test, so the filter is interpreted here as the
    /// kernel would, for the instructions the filters use.
    fn verdict(program: &BpfProgram, nr: u32, arch: u32, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[..4].copy_from_slice(&nr.to_ne_bytes());
        data[4..8].copy_from_slice(&arch.to_ne_bytes());
        for (index, arg) in args.iter().enumerate() {
            data[16 + index * 8..24 + index * 8].copy_from_slice(&arg.to_ne_bytes());
        }
        let (mut accumulator, mut pc) = (0u32, 0usize);
        loop {
            let instruction = &program[pc];
            let code = u32::from(instruction.code);
            match code & 0x07 {
                0x00 => {
                    let at = instruction.k as usize;
                    accumulator = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                    pc += 1;
                }
                0x04 => {
                    assert_eq!(code & 0xf0, 0x50, "only AND is used");
                    accumulator &= instruction.k;
                    pc += 1;
                }
                0x05 => {
                    let taken = match code & 0xf0 {
                        0x00 => {
                            pc += 1 + instruction.k as usize;
                            continue;
                        }
                        0x10 => accumulator == instruction.k,
                        0x20 => accumulator > instruction.k,
                        0x30 => accumulator >= instruction.k,
                        other => panic!("jump {other:#x}"),
                    };
                    pc += 1 + usize::from(if taken {
                        instruction.jt
                    } else {
                        instruction.jf
                    });
                }
                0x06 => return instruction.k,
                other => panic!("class {other:#x}"),
            }
        }
    }

    fn all(programs: &[BpfProgram], nr: i64, args: [u64; 6]) -> u32 {
        let arch = if cfg!(target_arch = "x86_64") {
            AUDIT_ARCH_X86_64
        } else {
            return libc::SECCOMP_RET_ALLOW;
        };
        // Of several filters, the kernel takes the most restrictive
        // verdict: the lowest action, compared as a signed number (so that
        // killing the process comes first and allowing last).
        programs
            .iter()
            .map(|program| verdict(program, nr as u32, arch, args))
            .min_by_key(|verdict| (verdict & libc::SECCOMP_RET_ACTION_FULL) as i32)
            .unwrap()
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::unnecessary_cast)]
    fn the_filters_refuse_what_reaches_out_and_allow_what_a_store_does() {
        let programs = programs().unwrap();
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let enosys = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        let allow = libc::SECCOMP_RET_ALLOW;
        let none = [0; 6];
        for call in [
            libc::SYS_ptrace,
            libc::SYS_process_vm_readv,
            libc::SYS_pidfd_getfd,
            libc::SYS_keyctl,
            libc::SYS_mount,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_io_uring_setup,
        ] {
            assert_eq!(all(&programs, call, none), eperm, "call {call}");
        }
        let clone =
            |flags: libc::c_int| all(&programs, libc::SYS_clone, [flags as u64, 0, 0, 0, 0, 0]);
        // A thread, and a fork, as the C library makes them.
        assert_eq!(
            clone(libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND),
            allow
        );
        assert_eq!(clone(libc::SIGCHLD), allow);
        assert_eq!(clone(libc::CLONE_NEWUSER | libc::SIGCHLD), eperm);
        assert_eq!(clone(libc::CLONE_NEWNET), eperm);
        assert_eq!(all(&programs, libc::SYS_clone3, none), enosys);
        let ioctl = |request: u64| all(&programs, libc::SYS_ioctl, [1, request, 0, 0, 0, 0]);
        assert_eq!(ioctl(libc::TIOCSTI as u64), eperm);
        assert_eq!(ioctl(libc::TIOCLINUX as u64), eperm);
        // The upper half of the request is not part of it.
        assert_eq!(ioctl((1 << 32) | libc::TIOCSTI as u64), eperm);
        assert_eq!(ioctl(libc::TCGETS as u64), allow);
        for call in [
            libc::SYS_read,
            libc::SYS_openat,
            libc::SYS_fcntl,
            libc::SYS_fdatasync,
            libc::SYS_futex,
            libc::SYS_execve,
        ] {
            assert_eq!(all(&programs, call, none), allow, "call {call}");
        }
        // The x32 ABI's ptrace, and any x32 call.
        assert_eq!(all(&programs, 0x4000_0000 | 521, none), enosys);
        assert_eq!(all(&programs, 0x4000_0000, none), enosys);
        // Another architecture (i386's int 0x80) ends the process.
        assert_eq!(
            verdict(&programs[0], 26, 0x4000_0003, none),
            libc::SECCOMP_RET_KILL_PROCESS
        );
    }

    #[test]
    fn a_filter_reaches_bubblewrap_as_raw_instructions_from_the_start() {
        use std::io::Read;
        let program = x32_guard();
        let fd = memory_file(&program).unwrap();
        let mut bytes = Vec::new();
        std::fs::File::from(fd).read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes.len(), program.len() * 8);
        assert_eq!(
            u32::from_ne_bytes(bytes[bytes.len() - 4..].try_into().unwrap()),
            libc::SECCOMP_RET_ALLOW
        );
    }
}

use super::*;

fn sandbox() -> Sandbox {
    Sandbox {
        shown: vec!["/usr".into(), "/home/ada/.pyenv".into()],
        writable: vec!["/tmp/lease-lab-room-1".into()],
        env: vec![("PATH".into(), "/usr/bin".into())],
        limits: Limits::default(),
        cgroup: None,
        programs: vec![("python3".into(), "/usr/bin/python3.11".into())],
    }
}

/// The words of `args` as text, for searching.
fn words(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect()
}

/// Where `pair` (two words in a row) first occurs in `words`.
fn at(words: &[String], pair: [&str; 2]) -> usize {
    words
        .windows(2)
        .position(|two| two[0] == pair[0] && two[1] == pair[1])
        .unwrap_or_else(|| panic!("{pair:?} in {words:?}"))
}

#[test]
fn a_program_runs_with_namespaces_filters_and_limits_of_its_own() {
    let sandbox = sandbox();
    let args = sandbox.args(
        &["python3".into(), "store.py".into()],
        Path::new("/tmp/lease-lab-room-1/code"),
        &[("PYTHONDONTWRITEBYTECODE".into(), "1".into())],
        &[7, 8],
    );
    let words = words(&args);
    for flag in [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ] {
        assert!(words.contains(&flag.to_string()), "{flag} in {words:?}");
    }
    // The environment: the sandbox's, then the command's, nothing else.
    let set: Vec<&str> = words
        .windows(3)
        .filter(|three| three[0] == "--setenv")
        .map(|three| three[1].as_str())
        .collect();
    assert_eq!(set, ["PATH", "PYTHONDONTWRITEBYTECODE"]);
    at(&words, ["--ro-bind", "/home/ada/.pyenv"]);
    // /tmp is made before the writable folder inside it is bound, which
    // it would otherwise cover.
    assert!(at(&words, ["--tmpfs", "/tmp"]) < at(&words, ["--bind", "/tmp/lease-lab-room-1"]));
    let tmp = at(&words, ["--tmpfs", "/tmp"]);
    assert_eq!(words[tmp - 1], (256u64 << 20).to_string(), "its size");
    at(&words, ["--tmpfs", "/dev/shm"]);
    at(&words, ["--add-seccomp-fd", "7"]);
    at(&words, ["--add-seccomp-fd", "8"]);
    at(&words, ["--chdir", "/tmp/lease-lab-room-1/code"]);
    // The program last, behind prlimit and its limits.
    let end = words.iter().rposition(|word| word == "--").unwrap();
    assert_eq!(&words[end + 1..], ["python3", "store.py"]);
    let prlimit = words.iter().position(|word| word == "prlimit").unwrap();
    assert_eq!(
        &words[prlimit + 1..end],
        [
            format!("--as={}", 3u64 << 30),
            "--nproc=256".into(),
            "--cpu=120".into(),
            "--nofile=1024".into(),
            format!("--fsize={}", 256u64 << 20),
            "--core=0".into(),
        ]
    );
}

#[test]
fn a_home_folder_is_never_shown_whole() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let home = root.join("ada");
    for dir in [
        ".pyenv/shims",
        ".cargo/bin",
        ".cargo/registry",
        ".rustup/toolchains",
        ".local/bin",
        "notes",
    ] {
        std::fs::create_dir_all(home.join(dir)).unwrap();
    }
    std::fs::write(home.join(".cargo/credentials.toml"), "token").unwrap();
    std::fs::write(home.join(".rustup/settings.toml"), "").unwrap();
    let elsewhere = root.join("opt/tool/bin");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let path = std::env::join_paths([
        home.join(".pyenv/shims"),
        PathBuf::from("/usr/bin"),
        home.join(".cargo/bin"),
        home.join(".local/bin"),
        home.join(".missing/bin"),
        elsewhere.clone(),
        home.clone(),
    ])
    .unwrap();
    let shown = tools_shown(&path, std::slice::from_ref(&home));
    assert_eq!(
        shown,
        vec![
            home.join(".pyenv"),
            home.join(".cargo/bin"),
            home.join(".cargo/registry"),
            home.join(".rustup/toolchains"),
            home.join(".rustup/settings.toml"),
            home.join(".local/bin"),
            elsewhere,
        ]
    );
    // Not the home itself, though it is on the PATH, nor cargo's folder
    // with its credentials.
    assert!(!shown.contains(&home) && !shown.contains(&home.join(".cargo")));
}

#[test]
fn a_limit_is_named_from_the_error_that_met_it() {
    let limits = Limits::default();
    let met = |said: &str| limit_met(said, &limits);
    assert_eq!(
        met("Traceback ...\nMemoryError\n").as_deref(),
        Some("memory (3 GiB of address space a process)")
    );
    assert_eq!(
        met("BlockingIOError: [Errno 11] Resource temporarily unavailable").as_deref(),
        Some("processes (256 processes and threads)")
    );
    assert_eq!(
        met("OSError: [Errno 27] File too large").as_deref(),
        Some("file size (256 MiB)")
    );
    assert_eq!(
        met("OSError: [Errno 28] No space left on device").as_deref(),
        Some("disk (512 MiB for its files, 256 MiB of /tmp)")
    );
    assert_eq!(
        met("killed by SIGXCPU").as_deref(),
        Some("CPU time (120 s a process)")
    );
    assert_eq!(met("NameError: name 'resutl' is not defined"), None);
}

#[test]
fn sizes_are_said_in_whole_units() {
    assert_eq!(size(2 << 30), "2 GiB");
    assert_eq!(size(512 << 20), "512 MiB");
    assert_eq!(size(1536 << 20), "1536 MiB");
    assert_eq!(size(0), "0 MiB");
}

/// A program runs in the sandbox, sees only what it is shown, and writes
/// only its folder.
#[test]
#[ignore = "needs bubblewrap (apt install bubblewrap); .ci/run installs it"]
fn a_sandboxed_program_sees_and_writes_only_what_it_is_given() {
    let room = tempfile::tempdir().unwrap();
    let room = room.path().canonicalize().unwrap();
    let sandbox = Sandbox::for_programs(vec![room.clone()], Limits::default(), Some("test"));
    let home = std::env::var("HOME").unwrap_or_default();
    let script = "echo mine > mine.txt; \
        for entry in $(ls -A \"$OUTER_HOME\" 2>/dev/null) $(ls -A /home 2>/dev/null); do echo \"home: $entry\"; done; \
        if echo x > /usr/x 2>/dev/null; then echo WROTE-USR; fi; \
        if [ -e /etc/passwd ]; then echo SAW-ETC; fi; \
        echo \"uid=$(id -u) pid=$$ env=$(env | wc -l)\"";
    let mut prepared = sandbox
        .command(
            &["sh".into(), "-c".into(), script.into()],
            &room,
            &[("OUTER_HOME".into(), home)],
        )
        .unwrap();
    let output = prepared.command.output().unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(room.join("mine.txt")).unwrap(),
        "mine\n"
    );
    for leak in ["WROTE-USR", "SAW-ETC"] {
        assert!(!said.contains(leak), "{said}");
    }
    // Of the homes, only the tool folders on the PATH.
    for line in said.lines().filter_map(|line| line.strip_prefix("home: ")) {
        assert!([".pyenv", ".cargo", ".rustup"].contains(&line), "{said}");
    }
    // User 1000 inside, the first process of its own namespace, and the
    // environment it was given (PATH, HOME, TMPDIR, LANG) and the shell's
    // own few.
    assert!(said.contains("uid=1000 pid=1 "), "{said}");
}

/// A process that spins past its CPU time is ended by the kernel
/// (SIGXCPU, then SIGKILL), whatever its wall time.
#[test]
#[ignore = "needs bubblewrap (apt install bubblewrap); .ci/run installs it"]
fn a_process_past_its_cpu_time_is_ended() {
    let limits = Limits {
        cpu_seconds: 1,
        ..Limits::default()
    };
    let sandbox = Sandbox::for_programs(Vec::new(), limits, Some("test-cpu"));
    let mut prepared = sandbox
        .command(
            &["sh".into(), "-c".into(), "while :; do :; done".into()],
            Path::new("/"),
            &[],
        )
        .unwrap();
    let status = prepared.command.status().unwrap();
    // bubblewrap ends as its program did: by a signal, which it reports as
    // 128 and its number.
    let signal = status.code().map(|code| code - 128);
    assert!(
        matches!(signal, Some(libc::SIGXCPU | libc::SIGKILL)),
        "{status}"
    );
}

/// Where a control group can be made (as root here), the memory of all a
/// sandbox's processes is capped together, and the kernel's kill for it is
/// seen.
#[test]
#[ignore = "needs bubblewrap and a control group it may write (root on cgroup v1, or a delegated v2 group); .ci/run runs it"]
fn the_memory_of_all_processes_is_capped_together() {
    let limits = Limits {
        memory: 64 << 20,
        ..Limits::default()
    };
    let sandbox = Sandbox::for_programs(Vec::new(), limits, Some("test-memory"));
    assert!(sandbox.cgroup.is_some(), "a control group can be made here");
    // Each process stays under its address space, but together the four
    // pass the group's 64 MiB.
    let script = "for i in 1 2 3 4; do python3 -c 'x = bytearray(30 << 20); import time; time.sleep(5)' & done; wait";
    let mut prepared = sandbox
        .command(
            &["sh".into(), "-c".into(), script.into()],
            Path::new("/"),
            &[],
        )
        .unwrap();
    prepared.command.status().unwrap();
    assert!(sandbox.memory_met(), "the group's cap was met");
}

/// A plain sandbox shows the system's folders and the tools of the
/// `PATH`, and its `PATH` keeps only the entries it shows: never one of a
/// folder it hides.
#[test]
fn a_sandbox_s_path_keeps_only_what_it_shows() {
    let sandbox = Sandbox::plain(Vec::new(), Limits::default());
    assert!(sandbox.shown.contains(&PathBuf::from("/usr")));
    assert!(sandbox.cgroup.is_none() && sandbox.programs.is_empty());
    let path = &sandbox
        .env
        .iter()
        .find(|(name, _)| name == "PATH")
        .expect("a PATH")
        .1;
    for entry in std::env::split_paths(path) {
        assert!(
            is_system(&entry) || sandbox.shown.iter().any(|shown| entry.starts_with(shown)),
            "{} is on the PATH but not shown",
            entry.display()
        );
    }
    let outer = std::env::var_os("PATH").unwrap_or_default();
    let shown_entries = std::env::split_paths(&outer)
        .filter(|entry| is_system(entry))
        .count();
    assert!(
        std::env::split_paths(path).count() >= shown_entries,
        "the system's entries stay: {path}"
    );
    // The system's own folders: a folder that is a link into /usr is made
    // again as a link, never shown as a folder.
    for (link, target) in merged_links() {
        assert!(target.to_string_lossy().contains("usr"));
        assert!(!system_files().contains(&link), "{} shown", link.display());
    }
    for folder in system_files() {
        assert!(folder.exists(), "{}", folder.display());
        if !folder.starts_with("/etc") {
            assert!(!folder.is_symlink(), "{} is a link", folder.display());
        }
    }
}

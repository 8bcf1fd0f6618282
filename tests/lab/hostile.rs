//! `lab grade --impl-dir` runs a class's code, which the lab does not
//! trust: each submission in a sandbox of its own. Each hostile submission
//! here is the Python store behind an attack it makes at import: when the
//! attack works, it stops at once (a row that could not start, saying
//! which attack); when the sandbox refuses it, it goes on as the store and
//! passes every step. So a hostile row of 8 of 8 is the sandbox refusing
//! the attack, and the same class graded with `--no-sandbox` shows that
//! each attack is real.

use crate::common::{Ran, Sandbox};
use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The Python store, behind `attack` (Python run at import, which calls
/// `worked(what)` when the attack worked).
fn hostile(attack: &str) -> String {
    format!(
        "import os, sys\n\ndef worked(what):\n    raise SystemExit('ATTACK WORKED: ' + what)\n\n{attack}\n\n{}",
        lease_lab::subject::PYTHON_SOURCE
    )
}

/// A marker no other process's command line or file name holds (one per
/// test, `test`): the leftover process of `leaver.py` carries it, and the
/// file `writer.py` writes in /tmp is named for it.
fn marker(test: &str) -> String {
    format!("lease-lab-{test}-{}", std::process::id())
}

/// The class: `ada.py`, the store as it is, beside one submission per
/// attack. `outside` is a file no submission may write, `port` one a test
/// listens on, on this machine.
fn hostile_class(lab: &Sandbox, outside: &Path, port: u16, marker: &str) -> PathBuf {
    let class = lab.path("class");
    std::fs::create_dir(&class).unwrap();
    let ada = class.join("ada.py");
    std::fs::write(&ada, lease_lab::subject::PYTHON_SOURCE).unwrap();
    // SAFETY: getuid(2) cannot fail.
    let instructor = unsafe { libc::getuid() };
    let namespaces: Vec<(String, String)> = ["mnt", "net", "pid", "ipc", "uts"]
        .iter()
        .map(|kind| {
            let link = std::fs::read_link(format!("/proc/self/ns/{kind}")).unwrap();
            (kind.to_string(), link.display().to_string())
        })
        .collect();
    let namespaces = namespaces
        .iter()
        .map(|(kind, link)| format!("({kind:?}, {link:?})"))
        .collect::<Vec<_>>()
        .join(", ");
    let namespaces = format!("[{namespaces}]");
    let attacks = [
        (
            "writer",
            // The file outside, and one in /tmp, which the sandbox lets it
            // write in a /tmp of its own that this machine never sees.
            format!(
                "open('/tmp/{marker}-written', 'w').write('x')\ntry:\n    open({outside:?}, 'w').write('x')\nexcept OSError:\n    pass\nelse:\n    worked('wrote ' + {outside:?})"
            ),
        ),
        (
            "reader",
            format!(
                "try:\n    text = open({ada:?}).read()\nexcept OSError:\n    pass\nelse:\n    worked('read another submission')\ntry:\n    names = os.listdir({class:?})\nexcept OSError:\n    names = []\nif 'ada.py' in names:\n    worked('listed the other submissions')"
            ),
        ),
        (
            "connector",
            format!(
                "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\nexcept OSError:\n    pass\nelse:\n    worked('connected to port {port}')"
            ),
        ),
        (
            "instructor",
            format!("if os.getuid() in (0, {instructor}) or os.geteuid() in (0, {instructor}):\n    worked('ran as uid %d' % os.getuid())"),
        ),
        (
            // Every namespace the sandbox makes is not the machine's.
            "namespaces",
            format!(
                "for kind, machine in {namespaces}:\n    if os.readlink('/proc/self/ns/' + kind) == machine:\n        worked('shared the machine\\'s ' + kind + ' namespace')"
            ),
        ),
        (
            // No handle of the lab's on a folder outside its mounts (an
            // O_PATH descriptor would reach the machine's files).
            "inheritor",
            "for fd in os.listdir('/proc/self/fd'):\n    try:\n        info = open('/proc/self/fdinfo/' + fd).read()\n    except OSError:\n        continue\n    flags = int(info.split('flags:')[1].split()[0], 8)\n    if flags & 0o10000000:\n        worked('inherited an open path: ' + os.readlink('/proc/self/fd/' + fd))".to_string(),
        ),
        (
            // The only mounts it may write: its private /tmp, its folder,
            // its own code and /proc, none with set-user programs or
            // devices (and /proc running nothing).
            "auditor",
            // (Of mounts stacked at one place, the last is the one seen.)
            "mine = {'/tmp', os.getcwd(), os.path.abspath(__file__), '/proc'}\nseen = {}\nfor line in open('/proc/self/mountinfo'):\n    fields = line.split()\n    seen[fields[4]] = set(fields[5].split(','))\nfor point, options in seen.items():\n    if 'rw' in options and point not in mine:\n        worked('a mount it may write: ' + point)\nif not {'nosuid', 'nodev', 'noexec'} <= seen['/proc']:\n    worked('/proc mounted ' + ','.join(sorted(seen['/proc'])))\nfor point in mine:\n    if not {'nosuid', 'nodev'} <= seen[point]:\n        worked(point + ' mounted ' + ','.join(sorted(seen[point])))".to_string(),
        ),
        (
            "forker",
            "import signal, time\nkids = []\ntry:\n    for _ in range(500):\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(600)\n            os._exit(0)\n        kids.append(pid)\nexcept OSError:\n    refused = True\nelse:\n    refused = False\nfor pid in kids:\n    os.kill(pid, signal.SIGKILL)\n    os.waitpid(pid, 0)\nif not refused:\n    worked('forked 500 times')".to_string(),
        ),
        (
            "hog",
            "try:\n    hoard = bytearray(4 << 30)\nexcept MemoryError:\n    pass\nelse:\n    worked('allocated 4 GiB')".to_string(),
        ),
        (
            "leaver",
            format!(
                "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', {marker:?}])\n    os._exit(0)\nos.wait()"
            ),
        ),
    ];
    for (name, attack) in attacks {
        std::fs::write(class.join(format!("{name}.py")), hostile(&attack)).unwrap();
    }
    // One that meets a limit and does not catch it: its row says which.
    std::fs::write(
        class.join("greedy.py"),
        format!(
            "hoard = bytearray(4 << 30)\n{}",
            lease_lab::subject::PYTHON_SOURCE
        ),
    )
    .unwrap();
    class
}

/// The processes of this machine whose command line holds `marker`.
fn processes_marked(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(marker))
        })
        .collect()
}

/// The rows of `lab grade --impl-dir class --format csv`, by student:
/// steps passed, steps checked, result.
fn rows(ran: &Ran) -> Vec<(String, [String; 3])> {
    let mut reader = csv::Reader::from_reader(ran.stdout.as_bytes());
    reader
        .records()
        .map(|row| {
            let row = row.unwrap();
            (
                row[0].to_string(),
                [row[2].to_string(), row[3].to_string(), row[4].to_string()],
            )
        })
        .collect()
}

fn grade(lab: &Sandbox, more: &[&str]) -> Ran {
    let mut args = vec![
        "grade",
        "--impl-dir",
        "class",
        "--time-limit-s",
        "60",
        "--format",
        "csv",
    ];
    args.extend_from_slice(more);
    crate::common::run_bounded(&mut lab.command(&args), Duration::from_secs(300))
}

/// Hostile submissions graded beside a good one: every attack is refused
/// (each passes 8 of 8 only then), nothing is written outside a
/// submission's folder, no connection reaches a port of this machine, no
/// process is left, and the one that meets the memory limit uncaught has
/// a row that says so.
#[test]
fn each_submission_is_sandboxed_and_hostile_ones_cannot_reach_out() {
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        // Without root there is no sandbox: grading refuses (tested as
        // another user below, where root is at hand).
        return;
    }
    // Outside /tmp, which the sandbox replaces whole: the class and the
    // file no submission may write are hidden or read-only by the
    // sandbox's own doing.
    let lab = Sandbox {
        dir: tempfile::tempdir_in("/var/tmp").unwrap(),
    };
    let outside = lab.path("outside.txt");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let marker = marker("sandboxed");
    hostile_class(&lab, &outside, port, &marker);
    let ran = grade(&lab, &[]);
    ran.assert_success();
    let rows = rows(&ran);
    for (student, [passed, through, result]) in &rows {
        if student == "greedy" {
            continue;
        }
        assert_eq!(
            (passed.as_str(), through.as_str()),
            ("8", "8"),
            "{student}: {result}\n{}",
            ran.shown()
        );
    }
    assert_eq!(rows.len(), 12, "{rows:?}");
    let greedy = &rows
        .iter()
        .find(|(student, _)| student == "greedy")
        .unwrap()
        .1;
    assert!(
        greedy[2].starts_with("could not start: ")
            && greedy[2].contains("MemoryError")
            && greedy[2].ends_with("met the sandbox's limit on memory (3 GiB of address space)"),
        "{greedy:?}"
    );
    assert!(
        !outside.exists(),
        "a submission wrote {}",
        outside.display()
    );
    let written = PathBuf::from(format!("/tmp/{marker}-written"));
    assert!(
        !written.exists(),
        "a submission wrote {}",
        written.display()
    );
    assert_eq!(
        listener.accept().map(|_| ()).map_err(|error| error.kind()),
        Err(ErrorKind::WouldBlock),
        "a submission connected to port {port}"
    );
    assert_eq!(
        processes_marked(&marker),
        Vec::<u32>::new(),
        "processes left"
    );
}

/// The same class with `--no-sandbox`: a warning first, then each attack
/// works (the attacks of this file are real), and grading goes on.
#[test]
fn without_the_sandbox_the_same_attacks_work_after_a_warning() {
    let lab = Sandbox::new();
    let outside = lab.path("outside.txt");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let marker = marker("unsandboxed");
    let class = hostile_class(&lab, &outside, port, &marker);
    // Not the hog and the fork bomb, which would take this machine's
    // memory and processes, nor the one that would leave a process.
    for spared in ["hog", "forker", "leaver", "greedy"] {
        std::fs::remove_file(class.join(format!("{spared}.py"))).unwrap();
    }
    let ran = grade(&lab, &["--no-sandbox"]);
    ran.assert_success();
    assert!(
        ran.stderr
            .contains("warning: --no-sandbox: every submission runs as you"),
        "{}",
        ran.shown()
    );
    let rows = rows(&ran);
    let result = |student: &str| {
        rows.iter()
            .find(|(name, _)| name == student)
            .unwrap_or_else(|| panic!("no row for {student}: {rows:?}"))
            .1[2]
            .clone()
    };
    assert_eq!(result("ada"), "every step passes");
    for (student, attack) in [
        ("writer", "wrote "),
        ("reader", "read another submission"),
        ("connector", "connected to port"),
        ("instructor", "ran as uid"),
        ("namespaces", "shared the machine's mnt namespace"),
    ] {
        let said = result(student);
        assert!(
            said.contains(&format!("ATTACK WORKED: {attack}")),
            "{student}: {said}"
        );
    }
    assert!(outside.exists());
    let written = PathBuf::from(format!("/tmp/{marker}-written"));
    assert!(written.exists());
    std::fs::remove_file(written).unwrap();
}

/// Without root no sandbox can be made: grading refuses before it starts,
/// says why and what to do, and runs nothing. (Run as another user, with
/// a copy of the lab that user may run.)
#[test]
fn without_root_grading_refuses_and_says_what_to_do() {
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let lab = Sandbox::new();
    let open = |path: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    open(lab.dir.path());
    let copy = lab.path("lab");
    std::fs::copy(env!("CARGO_BIN_EXE_lab"), &copy).unwrap();
    let class = lab.path("class");
    std::fs::create_dir(&class).unwrap();
    open(&class);
    let marker = lab.path("ran");
    std::fs::write(
        class.join("ada.py"),
        format!("open({marker:?}, 'w').write('ran')\n"),
    )
    .unwrap();
    let ran = crate::common::run_bounded(
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&copy)
            .args(["grade", "--impl-dir", "class"])
            .current_dir(lab.dir.path())
            .env("COLUMNS", "1000"),
        Duration::from_secs(60),
    );
    ran.assert_code(3);
    assert!(
        ran.stderr.contains(
            "lab grade: cannot sandbox the submissions: it runs each submission as a user of its own, which needs root; run lab grade as root"
        ) && ran.stderr.contains("or pass --no-sandbox"),
        "{}",
        ran.shown()
    );
    assert!(!marker.exists(), "a submission ran");
}

/// A sandbox that cannot be made runs nothing and says which step failed:
/// a folder shown over a file, and a folder to write that does not exist.
#[test]
fn a_sandbox_that_cannot_be_made_says_which_step_and_runs_nothing() {
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let lab = Sandbox::new();
    for (sandbox, step) in [
        (
            r#"{"uid": 1000000, "hidden": [], "writable": [], "shown": [["/usr", "/etc/hostname"]]}"#,
            "showing /etc/hostname",
        ),
        (
            r#"{"uid": 1000000, "hidden": [], "writable": [["/no/such/folder", "/no/such/folder"]], "shown": []}"#,
            "opening /no/such/folder",
        ),
    ] {
        let ran = crate::common::run_bounded(
            &mut lab.command(&[
                "__sandbox",
                "--sandbox",
                sandbox,
                "--",
                "/bin/echo",
                "the program ran",
            ]),
            Duration::from_secs(60),
        );
        ran.assert_code(lease_lab::sandbox::NOT_MADE);
        assert!(
            ran.stderr
                .contains(&format!("lab: the sandbox could not be made: {step}: ")),
            "{}",
            ran.shown()
        );
        assert_eq!(ran.stdout, "", "the program ran");
    }
}

/// `lab __sandbox` ends as its program does: with its exit code, or 128
/// and the number of the signal that ended it, as a shell says. (The
/// program is its namespace's first process, which a signal from inside
/// does not end: the test sends it from outside.)
#[test]
fn a_sandbox_ends_with_its_program_s_exit_code_or_signal() {
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return;
    }
    let lab = Sandbox::new();
    let sandbox = r#"{"uid": 1000000, "hidden": [], "writable": [], "shown": []}"#;
    let exited = crate::common::run_bounded(
        &mut lab.command(&[
            "__sandbox",
            "--sandbox",
            sandbox,
            "--",
            "/bin/sh",
            "-c",
            "exit 7",
        ]),
        Duration::from_secs(60),
    );
    exited.assert_code(7);
    // SIGKILL: the one signal an ancestor namespace delivers to a first
    // process that set no handler.
    let mut running = lab
        .command(&["__sandbox", "--sandbox", sandbox, "--", "/bin/sleep", "60"])
        .spawn()
        .unwrap();
    let children = format!("/proc/{0}/task/{0}/children", running.id());
    let program = (0..200)
        .find_map(|_| {
            std::thread::sleep(Duration::from_millis(10));
            let listed = std::fs::read_to_string(&children).ok()?;
            listed
                .split_whitespace()
                .next()?
                .parse::<libc::pid_t>()
                .ok()
        })
        .expect("the sandbox's program started");
    // SAFETY: kill(2) touches no memory of this process.
    unsafe { libc::kill(program, libc::SIGKILL) };
    assert_eq!(running.wait().unwrap().code(), Some(128 + 9));
}

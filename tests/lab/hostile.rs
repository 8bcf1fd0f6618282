//! The red team: `lab grade --impl-dir` runs a class's code, which the lab
//! does not trust. Each hostile submission here is the Python store behind
//! an attack it makes at import: when the attack works, it stops at once
//! (a row that could not start, saying `ATTACK WORKED` and what); when the
//! sandbox refuses it, it notes the refusal and goes on as the store, and
//! passes every step. So a hostile row of 8 of 8 is the sandbox refusing
//! the attack, graded beside an honest submission that gets 8 of 8 too;
//! the same class graded with `--no-sandbox` shows that each attack is
//! real. Other entries are what a class's folder may hold besides code: a
//! link, a FIFO, a hidden file, a program that hangs, floods its output or
//! meets a limit. Nothing may be forged, read, reached or left behind.
//!
//! These tests need bubblewrap (`apt install bubblewrap`), which
//! `.ci/run` installs; one machine-wide resource (the control groups) is
//! checked around each, so they run one at a time.

use crate::common::{run_bounded, Ran, Sandbox};
use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// One sandboxed grading at a time: each checks that it left no control
/// group behind.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The Python store, behind `attack` (Python run at import, which calls
/// `worked(what)` when the attack worked and `refused(what)` for each
/// refusal it met, which the program's greeting then names).
fn hostile(attack: &str) -> String {
    let greeting = "\"name\": f\"{name} (Python {platform.python_version()})\"";
    assert_eq!(
        lease_lab::subject::PYTHON_SOURCE.matches(greeting).count(),
        1
    );
    let store = lease_lab::subject::PYTHON_SOURCE
        .replace(greeting, "\"name\": \"refused: \" + \"; \".join(REFUSED)");
    format!(
        "import os, sys\nREFUSED = []\n\ndef worked(what):\n    raise SystemExit('ATTACK WORKED: ' + what)\n\ndef refused(what, error=None):\n    REFUSED.append(what + (': ' + str(error) if error else ''))\n\n{attack}\n\n{store}"
    )
}

/// What a class's hostile tests reach for on this machine: a file no
/// submission may write, a TCP port and a socket file this test listens
/// on, a file in the machine's `/dev/shm`, and a secret in the lab's
/// environment.
struct Targets {
    outside: PathBuf,
    port: u16,
    socket: PathBuf,
    shm: PathBuf,
    marker: String,
    tcp: TcpListener,
    unix_listener: UnixListener,
}

impl Targets {
    fn new(lab: &Sandbox, test: &str) -> Targets {
        let marker = format!("lease-lab-{test}-{}", std::process::id());
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        tcp.set_nonblocking(true).unwrap();
        // A socket file in a folder anyone may write, as X11's and many
        // daemons' are.
        let socket = PathBuf::from(format!("/tmp/{marker}.sock"));
        let _ = std::fs::remove_file(&socket);
        let unix = UnixListener::bind(&socket).unwrap();
        unix.set_nonblocking(true).unwrap();
        set_mode(&socket, 0o777);
        let shm = PathBuf::from(format!("/dev/shm/{marker}"));
        std::fs::write(&shm, "the machine's shared memory").unwrap();
        Targets {
            outside: lab.path("outside.txt"),
            port: tcp.local_addr().unwrap().port(),
            socket,
            shm,
            marker,
            tcp,
            unix_listener: unix,
        }
    }

    /// Whether anything connected to this test's port or socket.
    fn reached(&self) -> bool {
        let waiting = |accepted: Result<(), std::io::Error>| matches!(accepted, Err(error) if error.kind() == ErrorKind::WouldBlock);
        !waiting(self.tcp.accept().map(drop)) || !waiting(self.unix_listener.accept().map(drop))
    }
}

impl Drop for Targets {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
        let _ = std::fs::remove_file(&self.shm);
        let _ = std::fs::remove_file(format!("/tmp/{}-written", self.marker));
    }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Each attack: its submission's name, its Python, whether it must be
/// spared a run without the sandbox (it would take this machine's memory,
/// disk or processes, or kill them), and what its row says when it works
/// (ways that come first on one machine or another are split by `|`).
fn attacks(lab: &Sandbox, targets: &Targets) -> Vec<(&'static str, String, bool, &'static str)> {
    let Targets {
        outside,
        port,
        socket,
        shm,
        marker,
        ..
    } = targets;
    let class = lab.path("class");
    let ada = class.join("ada.py");
    let checkout = env!("CARGO_MANIFEST_DIR");
    // SAFETY: getuid(2) cannot fail.
    let instructor = unsafe { libc::getuid() };
    let namespaces = ["mnt", "net", "pid", "ipc", "uts", "user"]
        .iter()
        .map(|kind| {
            let link = std::fs::read_link(format!("/proc/self/ns/{kind}")).unwrap();
            format!("({kind:?}, {:?})", link.display().to_string())
        })
        .collect::<Vec<_>>()
        .join(", ");
    let fill = |folder: &str| {
        format!(
            "path = os.path.join({folder}, 'filler-' + os.urandom(8).hex())\nwritten = 0\ntry:\n    with open(path, 'wb') as out:\n        block = b'x' * (16 << 20)\n        while written < (4 << 30):\n            out.write(block)\n            written += len(block)\nexcept OSError as error:\n    refused('filling ' + {folder}, error)\nelse:\n    worked('wrote 4 GiB in ' + {folder})\nfinally:\n    if os.path.exists(path):\n        os.remove(path)"
        )
    };
    vec![
        (
            "writer",
            format!(
                "open('/tmp/{marker}-written', 'w').write('x')\ntry:\n    open({outside:?}, 'w').write('x')\nexcept OSError as error:\n    refused('writing outside', error)\nelse:\n    worked('wrote ' + {outside:?})"
            ),
            false,
            "wrote ",
        ),
        (
            "reader",
            format!(
                "for path in [{ada:?}, {shm:?}, os.path.join({checkout:?}, 'Cargo.toml')]:\n    try:\n        open(path).read()\n    except OSError as error:\n        refused('reading ' + path, error)\n    else:\n        worked('read ' + path)\nfor folder in [{class:?}, os.path.dirname({class:?})]:\n    try:\n        names = os.listdir(folder)\n    except OSError as error:\n        refused('listing ' + folder, error)\n        continue\n    if 'ada.py' in names or 'class' in names:\n        worked('listed ' + folder)",
                class = class.display().to_string(),
            ),
            false,
            "read ",
        ),
        (
            "connector",
            format!(
                "import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\nexcept OSError as error:\n    refused('a connection to port {port}', error)\nelse:\n    worked('connected to port {port}')"
            ),
            false,
            "connected to port",
        ),
        (
            "unix",
            format!(
                "import socket\nfor address in [{socket:?}, '\\0' + {socket:?}]:\n    client = socket.socket(socket.AF_UNIX)\n    try:\n        client.connect(address)\n    except OSError as error:\n        refused('a connection to ' + repr(address), error)\n    else:\n        worked('connected to ' + address)\n    finally:\n        client.close()"
            ),
            false,
            "connected to ",
        ),
        (
            "instructor",
            format!(
                "outermost = open('/proc/self/uid_map').read().split() == ['0', '0', '4294967295']\nif outermost and os.getuid() == {instructor}:\n    worked('ran as the instructor, uid %d' % os.getuid())"
            ),
            false,
            "ran as the instructor",
        ),
        (
            "namespaces",
            format!(
                "for kind, machine in [{namespaces}]:\n    if os.readlink('/proc/self/ns/' + kind) == machine:\n        worked('shared the machine\\'s ' + kind + ' namespace')"
            ),
            false,
            "shared the machine's mnt namespace",
        ),
        (
            // No descriptor of the lab's (a handle on a folder outside the
            // sandbox, a pipe of the judge's) reaches the program.
            "inheritor",
            "for fd in os.listdir('/proc/self/fd'):\n    if int(fd) > 2:\n        try:\n            target = os.readlink('/proc/self/fd/' + fd)\n        except OSError:\n            continue\n        if not target.startswith('/proc/'):\n            worked('inherited descriptor %s: %s' % (fd, target))".to_string(),
            false,
            "inherited descriptor",
        ),
        (
            // The judge: tracing it, taking its descriptors (its report),
            // reading them through /proc.
            "forger",
            "import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\nme = os.getpid()\nothers = [int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) not in (me, os.getppid())]\nif os.getppid():\n    others.insert(0, os.getppid())\nfor pid in others:\n    if libc.ptrace(0x4206, pid, 0, 0) == 0:\n        worked('traced process %d' % pid)\n    pidfd = libc.syscall(434, pid, 0)\n    if pidfd >= 0:\n        for fd in range(3):\n            if libc.syscall(438, pidfd, fd, 0) >= 0:\n                worked('took descriptor %d of process %d' % (fd, pid))\n    try:\n        fds = os.listdir('/proc/%d/fd' % pid)\n    except OSError:\n        fds = []\n    for fd in fds:\n        try:\n            os.close(os.open('/proc/%d/fd/%s' % (pid, fd), os.O_WRONLY))\n        except OSError:\n            continue\n        worked('opened descriptor %s of process %d' % (fd, pid))\nrefused('seeing any process but its own: %d seen' % len(others))\nif libc.ptrace(0x4206, me, 0, 0) != 0:\n    refused('ptrace', errno.errorcode[ctypes.get_errno()])\nown = libc.syscall(434, me, 0)\nif own < 0 or libc.syscall(438, own, 0, 0) < 0:\n    refused('pidfd_getfd', errno.errorcode[ctypes.get_errno()])".to_string(),
            false,
            // Which way in the row reports is a race: the judge starts a
            // program's next copies ahead of need, a process has one tracer
            // at a time, and a copy that finds the judge traced already
            // takes its descriptors instead.
            "traced process|took descriptor|opened descriptor",
        ),
        (
            "killer",
            "import signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError as error:\n    refused('kill -9 -1', error)\nelse:\n    refused('kill -9 -1 reached no process but its own')".to_string(),
            true,
            "",
        ),
        (
            "secrets",
            "leaked = [name for name in os.environ if 'SECRET' in name or 'TOKEN' in name]\nif leaked:\n    worked('read ' + ', '.join(leaked) + ' in its environment')\nrefused('the instructor\\'s environment: %d variables given' % len(os.environ))".to_string(),
            false,
            "read LEASE_LAB_TEST_SECRET_TOKEN",
        ),
        (
            // The only mounts it may write: its own temporary folders, the
            // room it shares with the judge, /proc and /dev of its own with
            // the harmless devices bubblewrap puts there (/dev/null, ...);
            // none with set-user programs or devices.
            "auditor",
            "room = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\ndevices = {'/dev/' + name for name in ('null', 'zero', 'full', 'random', 'urandom', 'tty')}\nmine = {'/tmp', '/dev/shm', room, '/proc', '/dev', '/dev/pts', '/dev/mqueue'} | devices\nseen = {}\nfor line in open('/proc/self/mountinfo'):\n    fields = line.split()\n    seen[fields[4]] = set(fields[5].split(','))\nfor point, options in seen.items():\n    if 'rw' in options and point not in mine:\n        worked('a mount it may write: ' + point)\nfor point in (mine - devices - {'/dev', '/dev/pts'}) & set(seen):\n    if 'rw' in seen[point] and not {'nosuid', 'nodev'} <= seen[point]:\n        worked(point + ' mounted ' + ','.join(sorted(seen[point])))".to_string(),
            false,
            "a mount it may write",
        ),
        (
            "forker",
            "import signal, time\nkids = []\ntry:\n    for _ in range(500):\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(600)\n            os._exit(0)\n        kids.append(pid)\nexcept OSError as error:\n    refused('forking 500 times', error)\nfor pid in kids:\n    os.kill(pid, signal.SIGKILL)\n    os.waitpid(pid, 0)\nif len(kids) == 500:\n    worked('forked 500 times')".to_string(),
            true,
            "",
        ),
        (
            "hog",
            "try:\n    hoard = bytearray(4 << 30)\nexcept MemoryError as error:\n    refused('4 GiB of memory', error)\nelse:\n    worked('allocated 4 GiB')".to_string(),
            true,
            "",
        ),
        (
            "leaver",
            format!(
                "if os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(600)', {marker:?}])\n    os._exit(0)\nos.wait()"
            ),
            true,
            "",
        ),
        ("shm", fill("'/dev/shm'"), true, ""),
        ("tmp", fill("'/tmp'"), true, ""),
        ("disk", fill("os.getcwd()"), true, ""),
    ]
}

/// Where the Python store's protocol begins: a store redefined before it
/// answers as redefined.
const PROTOCOL: &str = "# --- The lab's protocol: nothing below needs changing ---";

/// The class: `ada.py`, the store as it is, beside one submission per
/// attack and the entries a class's folder may hold besides code.
fn hostile_class(lab: &Sandbox, targets: &Targets, sandboxed: bool) -> PathBuf {
    let class = lab.path("class");
    std::fs::create_dir(&class).unwrap();
    let ada = class.join("ada.py");
    std::fs::write(&ada, lease_lab::subject::PYTHON_SOURCE).unwrap();
    for (name, attack, spared, _) in attacks(lab, targets) {
        if sandboxed || !spared {
            std::fs::write(class.join(format!("{name}.py")), hostile(&attack)).unwrap();
        }
    }
    if !sandboxed {
        return class;
    }
    let store = lease_lab::subject::PYTHON_SOURCE;
    let entries = [
        // Meets the memory limit and does not catch it: its row says which.
        ("greedy.py", format!("hoard = bytearray(4 << 30)\n{store}")),
        (
            "chatty.py",
            format!(
                "import sys\nfor _ in range(1024):\n    sys.stdout.write('x' * (1 << 20))\n{store}"
            ),
        ),
        ("syntax.py", "def broken(:\n    pass\n".to_string()),
        (
            "hanger.py",
            store.replacen(
                PROTOCOL,
                &format!("import time\n\ndef init_db(path):\n    time.sleep(3600)\n\n\n{PROTOCOL}"),
                1,
            ),
        ),
        (".sneaky.py", store.to_string()),
        // Escape sequences in a file name, and in what a program says on
        // standard error before it ends: a row, inert.
        ("\u{1b}]0;pwned\u{7}.py", store.to_string()),
        (
            "shouter.py",
            "import sys\nsys.stderr.write('\\x1b]0;pwned\\x07\\x1b[1A\\x1b[2K\\n')\nraise SystemExit(1)\n".to_string(),
        ),
    ];
    for (name, text) in entries {
        std::fs::write(class.join(name), text).unwrap();
    }
    std::os::unix::fs::symlink(&ada, class.join("copycat.py")).unwrap();
    std::os::unix::fs::symlink("/etc/shadow", class.join("shadow.py")).unwrap();
    std::os::unix::fs::symlink("/root", class.join("vault")).unwrap();
    mkfifo(&class.join("pipe.py"));
    let project = class.join("plumber");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    mkfifo(&project.join("src/store.rs"));
    class
}

fn mkfifo(path: &Path) {
    let name = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo(3) reads the string, which lives for the call.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o644) }, 0);
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

/// The control groups the lab made that are still there.
fn lab_cgroups() -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if !entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                continue;
            }
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("lease-lab-")
            {
                found.push(path);
            } else if depth > 0 {
                walk(&path, depth - 1, found);
            }
        }
    }
    let mut found = Vec::new();
    walk(Path::new("/sys/fs/cgroup"), 4, &mut found);
    found
}

/// The rows of `lab grade --format csv`, by student: steps passed, steps
/// checked, result.
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

/// `lab grade --impl-dir class` as CSV, with `more`, a secret in its
/// environment and a temporary folder of its own, `tmp`.
fn grade(lab: &Sandbox, tmp: &Path, more: &[&str]) -> Ran {
    let mut args = vec![
        "grade",
        "--impl-dir",
        "class",
        "--time-limit-s",
        "60",
        "--timeout-ms",
        "3000",
        "--format",
        "csv",
    ];
    args.extend_from_slice(more);
    let mut command = lab.command(&args);
    command
        .env("TMPDIR", tmp)
        .env("LEASE_LAB_TEST_SECRET_TOKEN", "hunter2");
    // The lab is given a handle it may pass on (a folder outside the
    // class, as descriptor 9, not closed on exec), as a shell or a CI
    // runner may leave one open: whether a submission gets it must depend
    // on the sandbox, not on what the lab happened to inherit.
    let outside = std::fs::File::open(lab.dir.path()).unwrap();
    {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let handle = outside.as_raw_fd();
        // SAFETY: dup2(2) on an open descriptor, between fork and exec;
        // the copy it makes does not close on exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(handle, 9) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let ran = run_bounded(&mut command, Duration::from_secs(600));
    drop(outside);
    ran
}

/// Hostile submissions graded beside an honest one, each in a sandbox of
/// its own: every attack is refused (each then passes 8 of 8), the other
/// entries are rows that say what they are, the judge's report is the
/// submission's own, and nothing is written, reached or left behind.
#[test]
#[ignore = "needs bubblewrap (apt install bubblewrap); .ci/run installs it"]
fn a_hostile_class_is_graded_honestly_and_reaches_nothing() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before = lab_cgroups();
    let lab = Sandbox {
        dir: tempfile::tempdir_in("/var/tmp").unwrap(),
    };
    let targets = Targets::new(&lab, "sandboxed");
    hostile_class(&lab, &targets, true);
    let tmp = lab.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let ran = grade(&lab, &tmp, &[]);
    ran.assert_success();
    let rows = rows(&ran);
    let row = |student: &str| {
        rows.iter()
            .find(|(name, _)| name == student)
            .unwrap_or_else(|| panic!("no row for {student}: {}", ran.shown()))
            .1
            .clone()
    };
    for (student, ..) in
        attacks(&lab, &targets)
            .into_iter()
            .chain([("ada", String::new(), false, "")])
    {
        let [passed, through, result] = row(student);
        assert_eq!(
            (passed.as_str(), through.as_str()),
            ("8", "8"),
            "{student}: {result}\n{}",
            ran.shown()
        );
    }
    let result = |student: &str| row(student)[2].clone();
    let says = |student: &str, expected: &[&str]| {
        let said = result(student);
        assert!(
            expected.iter().all(|part| said.contains(part)),
            "{student}: {said:?} lacks {expected:?}"
        );
    };
    says(
        "greedy",
        &[
            "could not start: ",
            "MemoryError",
            "met the sandbox's limit on memory",
        ],
    );
    says(
        "chatty",
        &[
            "could not start: ",
            "output too large (a line of more than 1 MiB on its standard output)",
        ],
    );
    says("syntax", &["could not start: ", "SyntaxError"]);
    let hanger = row("hanger");
    assert_eq!(
        (hanger[0].as_str(), hanger[1].as_str()),
        ("0", "8"),
        "{hanger:?}"
    );
    says(
        ".sneaky",
        &["hidden (its name begins with a dot): not checked"],
    );
    let [passed, ..] = row("\\x1b]0;pwned\\x07");
    assert_eq!(passed, "8", "the escaped name is checked like any other");
    says(
        "shouter",
        &["could not start: ", "\\x1b]0;pwned\\x07\\x1b[1A"],
    );
    for stream in [&ran.stdout, &ran.stderr] {
        assert!(
            !stream.contains(['\u{1b}', '\u{7}']),
            "a control character reached the instructor's terminal: {}",
            ran.shown()
        );
    }
    for link in ["copycat", "shadow", "vault"] {
        says(link, &["a symbolic link, not followed"]);
    }
    says("pipe", &["a named pipe (FIFO), not opened"]);
    says(
        "plumber",
        &["src/store.rs is a named pipe (FIFO), not opened"],
    );
    assert!(
        !ran.stdout.contains("/etc/shadow") && !ran.stdout.contains("/root"),
        "{}",
        ran.shown()
    );
    // A hang earns nothing, in Gradescope's results too, and a program
    // that cannot start has its results, scored 0, saying why.
    let some = lab.path("some");
    std::fs::create_dir(&some).unwrap();
    for name in ["hanger.py", "syntax.py"] {
        std::fs::copy(lab.path("class").join(name), some.join(name)).unwrap();
    }
    let mut command = lab.command(&[
        "grade",
        "--impl-dir",
        "some",
        "--timeout-ms",
        "1000",
        "--format",
        "gradescope",
        "--results-dir",
        "out",
    ]);
    command.env("TMPDIR", &tmp);
    run_bounded(&mut command, Duration::from_secs(300)).assert_success();
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(lab.path("out/hanger/results.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(results["score"].as_f64(), Some(0.0), "{results:#}");
    let syntax: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(lab.path("out/syntax/results.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(syntax["score"].as_f64(), Some(0.0));
    assert!(
        syntax["output"].as_str().unwrap().contains("SyntaxError"),
        "{syntax:#}"
    );
    // Nothing written, reached or left behind.
    assert!(!targets.outside.exists(), "a submission wrote outside");
    assert!(!PathBuf::from(format!("/tmp/{}-written", targets.marker)).exists());
    assert!(
        !targets.reached(),
        "a submission reached a port or socket of this machine"
    );
    assert_eq!(
        processes_marked(&targets.marker),
        Vec::<u32>::new(),
        "processes left"
    );
    assert_eq!(
        processes_marked(&tmp.display().to_string()),
        Vec::<u32>::new(),
        "processes left"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left in the temporary folder: {left:?}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !mounts.contains("lease-lab-room") && !mounts.contains(&tmp.display().to_string()),
        "{mounts}"
    );
    assert_eq!(lab_cgroups(), before, "control groups left");
    // The judge's report is the forger's own, and its greeting says what
    // the sandbox refused it.
    let check = lab.command(&[
        "check",
        "--sandbox",
        "--format",
        "json",
        "--impl",
        "class/forger.py",
    ]);
    let checked = run_bounded(&mut { check }, Duration::from_secs(120));
    let report = checked.json();
    assert_eq!(report["steps_passed"], 8);
    let greeting = report["greeting"].as_str().unwrap_or_default();
    for refusal in [
        "seeing any process but its own: 0 seen",
        "ptrace: EPERM",
        "pidfd_getfd: EPERM",
    ] {
        assert!(greeting.contains(refusal), "{greeting}");
    }
}

/// The same class without the sandbox (but for the attacks that would take
/// this machine's memory, disk or processes): a warning first, then each
/// attack works, and grading goes on.
#[test]
#[ignore = "runs hostile code as this user, on purpose; .ci/run runs it"]
fn without_the_sandbox_the_same_attacks_work_after_a_warning() {
    let lab = Sandbox::new();
    let targets = Targets::new(&lab, "unsandboxed");
    hostile_class(&lab, &targets, false);
    let tmp = lab.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let ran = grade(&lab, &tmp, &["--no-sandbox"]);
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
    for (student, _, spared, attack) in attacks(&lab, &targets) {
        if spared {
            continue;
        }
        let said = result(student);
        assert!(
            attack
                .split('|')
                .any(|way| said.contains(&format!("ATTACK WORKED: {way}"))),
            "{student}: {said}"
        );
    }
    assert!(targets.outside.exists());
}

/// Where no sandbox can be made (here: bubblewrap is not on the `PATH`),
/// grading stops before any submission runs, in one line that says what
/// to install or pass; an autograder's check still writes its results
/// file, scoring nothing and saying why.
#[test]
fn without_bubblewrap_grading_says_what_to_install_and_runs_nothing() {
    let lab = Sandbox::new();
    let class = lab.path("class");
    std::fs::create_dir(&class).unwrap();
    let ran_marker = lab.path("ran");
    std::fs::write(
        class.join("ada.py"),
        format!("open({ran_marker:?}, 'w').write('ran')\n"),
    )
    .unwrap();
    let mut command = lab.command(&["grade", "--impl-dir", "class"]);
    command.env("PATH", lab.path("no-tools"));
    let ran = run_bounded(&mut command, Duration::from_secs(60));
    ran.assert_code(3);
    assert_eq!(
        ran.stderr.trim_end(),
        "lab grade: cannot sandbox the submissions: bubblewrap (bwrap) is not installed: install it (Debian and Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap); or pass --no-sandbox to run every submission as you, with your files and network",
        "{}",
        ran.shown()
    );
    assert!(!ran_marker.exists(), "a submission ran");
    for (format, field) in [("gradescope", "output"), ("prairielearn", "message")] {
        let mut command = lab.command(&["check", "--impl", "class/ada.py", "--format", format]);
        command.env("PATH", lab.path("no-tools"));
        let ran = run_bounded(&mut command, Duration::from_secs(60));
        ran.assert_code(3);
        let results: serde_json::Value = serde_json::from_str(&ran.stdout)
            .unwrap_or_else(|error| panic!("{error}: {}", ran.shown()));
        assert_eq!(results["score"].as_f64(), Some(0.0), "{results:#}");
        assert!(
            results[field]
                .as_str()
                .is_some_and(|why| why.contains("bubblewrap (bwrap) is not installed")),
            "{results:#}"
        );
        if format == "prairielearn" {
            assert_eq!(results["gradable"], false);
        }
        assert!(!ran_marker.exists(), "a submission ran");
    }
}

/// A program that cannot start, or that hangs, earns nothing in an
/// autograder's results: the results file is there all the same, with the
/// score 0 and why (Gradescope), or not gradable (PrairieLearn) when it
/// could not start; a hang is graded, every test not run counting 0.
#[test]
fn a_program_that_cannot_start_or_hangs_earns_nothing_in_every_format() {
    let lab = Sandbox::new();
    std::fs::write(lab.path("syntax.py"), "def broken(:\n    pass\n").unwrap();
    let hanger = lease_lab::subject::PYTHON_SOURCE.replacen(
        PROTOCOL,
        &format!("import time\n\ndef init_db(path):\n    time.sleep(3600)\n\n\n{PROTOCOL}"),
        1,
    );
    std::fs::write(lab.path("hanger.py"), hanger).unwrap();
    let check = |file: &str, format: &str| {
        lab.lab(&[
            "check",
            "--impl",
            file,
            "--format",
            format,
            "--no-sandbox",
            "--timeout-ms",
            "2000",
        ])
    };
    // (A program that does not greet is a problem found in it: exit 1.)
    let gradescope = check("syntax.py", "gradescope");
    gradescope.assert_code(1);
    let results: serde_json::Value = serde_json::from_str(&gradescope.stdout).unwrap();
    assert_eq!(results["score"].as_f64(), Some(0.0));
    assert!(
        results["output"].as_str().unwrap().contains("SyntaxError"),
        "{results:#}"
    );
    let prairielearn = check("syntax.py", "prairielearn");
    prairielearn.assert_code(1);
    let results: serde_json::Value = serde_json::from_str(&prairielearn.stdout).unwrap();
    assert_eq!(results["gradable"], false);
    assert!(
        results["message"].as_str().unwrap().contains("SyntaxError"),
        "{results:#}"
    );
    // The hang: no test passed, in either autograder's score.
    let hung = check("hanger.py", "gradescope");
    hung.assert_code(1);
    let results: serde_json::Value = serde_json::from_str(&hung.stdout).unwrap();
    assert_eq!(results["score"].as_f64(), Some(0.0), "{results:#}");
    let tests = results["tests"].as_array().unwrap();
    assert!(tests.iter().all(|test| test["score"].as_f64() == Some(0.0)));
    assert!(
        tests.iter().any(|test| {
            let output = test["output"].as_str().unwrap();
            output.contains("gave no answer within 1.8 s")
                || output.contains("ran out of time (2 s a test)")
        }),
        "the time limit given reached the check: {results:#}"
    );
    assert!(tests
        .iter()
        .any(|test| test["output"].as_str().unwrap().starts_with("not run: ")));
    let hung = check("hanger.py", "prairielearn");
    let results: serde_json::Value = serde_json::from_str(&hung.stdout).unwrap();
    assert_eq!(
        (results["gradable"].clone(), results["score"].as_f64()),
        (true.into(), Some(0.0))
    );
}

/// A pseudo-terminal, as the instructor's: the master end this test
/// reads, and the slave end that becomes the grading's controlling
/// terminal.
struct Terminal {
    master: std::fs::File,
    slave: std::fs::File,
}

impl Terminal {
    fn open() -> Terminal {
        use std::os::fd::FromRawFd;
        use std::os::unix::fs::OpenOptionsExt;
        // SAFETY: posix_openpt(3), grantpt(3), unlockpt(3) and ptsname(3)
        // on the descriptor opened here; ptsname's answer is copied at once.
        unsafe {
            let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
            assert!(master >= 0);
            assert_eq!(libc::grantpt(master), 0);
            assert_eq!(libc::unlockpt(master), 0);
            let name = std::ffi::CStr::from_ptr(libc::ptsname(master))
                .to_string_lossy()
                .into_owned();
            let slave = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(name)
                .unwrap();
            Terminal {
                master: std::fs::File::from_raw_fd(master),
                slave,
            }
        }
    }

    /// `command` with this terminal as its controlling terminal, its
    /// output written there.
    fn attach(&self, command: &mut std::process::Command) {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let slave = self.slave.as_raw_fd();
        command
            .stdout(self.slave.try_clone().unwrap())
            .stderr(self.slave.try_clone().unwrap());
        // SAFETY: setsid(2) and ioctl(2) on an open descriptor, between
        // fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(slave, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// What is waiting in the terminal's input, as the instructor's shell
    /// would read it next.
    fn typed(&self) -> String {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl(2) on an open descriptor.
        unsafe { libc::fcntl(self.slave.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        let mut bytes = [0u8; 4096];
        let read = (&self.slave).read(&mut bytes).unwrap_or(0);
        String::from_utf8_lossy(&bytes[..read]).into_owned()
    }

    /// What was written to the terminal.
    fn shown(&self) -> String {
        use std::io::Read;
        use std::os::fd::AsRawFd;
        // SAFETY: fcntl(2) on an open descriptor.
        unsafe { libc::fcntl(self.master.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        let mut shown = Vec::new();
        let mut bytes = [0u8; 65536];
        while let Ok(read @ 1..) = (&self.master).read(&mut bytes) {
            shown.extend_from_slice(&bytes[..read]);
        }
        String::from_utf8_lossy(&shown).into_owned()
    }
}

/// The instructor's terminal: a submission that opens `/dev/tty`, sets
/// the window's title and types a line into the terminal's input with
/// `TIOCSTI` reaches nothing in its sandbox (it has no controlling
/// terminal, and the filter refuses the ioctl); without the sandbox, the
/// line waits in the terminal for the instructor's shell to run.
#[test]
#[ignore = "needs bubblewrap (apt install bubblewrap); .ci/run installs it"]
fn a_submission_cannot_type_into_the_instructor_s_terminal() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let attack = "import fcntl, termios\ntry:\n    tty = os.open('/dev/tty', os.O_RDWR)\nexcept OSError as error:\n    refused('/dev/tty', error)\nelse:\n    os.write(tty, b'\\x1b]0;pwned\\x07')\n    for byte in b'echo pwned\\n':\n        fcntl.ioctl(tty, termios.TIOCSTI, bytes([byte]))\n    worked('typed into the instructor\\'s terminal')\nfor fd in (0, 1, 2):\n    try:\n        fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n    except OSError as error:\n        refused('TIOCSTI on %d' % fd, error)\n    else:\n        worked('typed with TIOCSTI on descriptor %d' % fd)";
    for sandboxed in [true, false] {
        let lab = Sandbox::new();
        let class = lab.path("class");
        std::fs::create_dir(&class).unwrap();
        std::fs::write(class.join("ada.py"), lease_lab::subject::PYTHON_SOURCE).unwrap();
        std::fs::write(class.join("typist.py"), hostile(attack)).unwrap();
        let terminal = Terminal::open();
        let mut args = vec!["grade", "--impl-dir", "class", "--format", "csv"];
        if !sandboxed {
            args.push("--no-sandbox");
        }
        let mut command = lab.command(&args);
        terminal.attach(&mut command);
        let status = command.status().unwrap();
        assert!(status.success(), "{}", terminal.shown());
        let (shown, typed) = (terminal.shown(), terminal.typed());
        if sandboxed {
            assert!(
                shown.contains("\"typist\",\"class/typist.py\",\"8\",\"8\","),
                "{shown}"
            );
            assert!(!shown.contains("\u{1b}]0;pwned"), "{shown:?}");
            assert_eq!(typed, "", "typed into the instructor's terminal");
        } else {
            assert!(
                shown.contains("ATTACK WORKED: typed into the instructor's terminal"),
                "{shown}"
            );
            assert!(typed.contains("echo pwned"), "{typed:?}");
        }
    }
}

/// Grading as an ordinary user, where the kernel lets users make
/// namespaces (as this machine's does): the honest submission gets 8 of 8,
/// attacks are refused as they are for root, and the sandbox's caps hold
/// without a control group (only root may make one here). Run as user
/// 65534 with a copy of the lab that user may run, and the system's
/// Python.
#[test]
#[ignore = "needs bubblewrap and root (to become another user); .ci/run runs it"]
fn an_ordinary_user_grades_in_sandboxes_too() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Sandbox {
        dir: tempfile::tempdir_in("/var/tmp").unwrap(),
    };
    let targets = Targets::new(&lab, "ordinary");
    hostile_class(&lab, &targets, false);
    let class = lab.path("class");
    // The user's own folders: where the lab is, a temporary folder.
    set_mode(lab.dir.path(), 0o755);
    set_mode(&class, 0o755);
    for entry in std::fs::read_dir(&class).unwrap() {
        set_mode(&entry.unwrap().path(), 0o644);
    }
    let copy = lab.path("lab");
    std::fs::copy(env!("CARGO_BIN_EXE_lab"), &copy).unwrap();
    set_mode(&copy, 0o755);
    let tmp = lab.path("tmp");
    std::fs::create_dir(&tmp).unwrap();
    set_mode(&tmp, 0o1777);
    let mut command = std::process::Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(&copy)
        .args([
            "grade",
            "--impl-dir",
            "class",
            "--format",
            "csv",
            "--timeout-ms",
            "3000",
        ])
        .current_dir(lab.dir.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &tmp)
        .env("TMPDIR", &tmp)
        .env("LEASE_LAB_TEST_SECRET_TOKEN", "hunter2");
    let ran = run_bounded(&mut command, Duration::from_secs(300));
    ran.assert_success();
    let rows = rows(&ran);
    assert_eq!(
        rows.len(),
        1 + attacks(&lab, &targets).iter().filter(|a| !a.2).count()
    );
    for (student, [passed, through, result]) in &rows {
        assert_eq!(
            (passed.as_str(), through.as_str()),
            ("8", "8"),
            "{student}: {result}"
        );
    }
    assert!(!targets.outside.exists(), "a submission wrote outside");
    assert!(
        !targets.reached(),
        "a submission reached a port or socket of this machine"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "left in the temporary folder: {left:?}");
}

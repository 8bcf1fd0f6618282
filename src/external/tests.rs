use super::*;
use crate::error::Faulted;

/// A store of a shell script that greets, then does what `script` says
/// with each request line (`$line`).
fn scripted(script: &str, limit: Duration) -> ExternalStore {
    let program = format!(
        "echo '{{\"protocol\":\"lease-lab\",\"version\":1,\"name\":\"script\"}}'; while read line; do {script}; done"
    );
    ExternalStore::new(
        ImplCommand {
            argv: vec!["sh".into(), "-c".into(), program],
            dir: None,
            env: Vec::new(),
        },
        limit,
    )
}

fn fault_of(store: &ExternalStore, operation: &Operation) -> ImplementationFault {
    store
        .ask(Path::new("x.db"), operation)
        .expect_err("the call faults")
}

/// A fault reaches the caller of `call` as a value: its message, and
/// how long the call waited when the program hung.
#[test]
fn a_call_returns_the_programs_fault_as_an_error() {
    let store = scripted("echo not json", Duration::from_secs(5));
    match store.call(Path::new("x.db"), &enqueue()) {
        Err(StoreError::Fault(Faulted { message, hang })) => {
            assert!(message.contains("not json"), "{message}");
            assert_eq!(hang, None);
        }
        other => panic!("the call returns the fault, but it answered {other:?}"),
    }
    let silent = scripted("sleep 5", Duration::from_millis(200));
    match silent.call(Path::new("x.db"), &enqueue()) {
        Err(StoreError::Fault(Faulted { hang, .. })) => {
            assert_eq!(hang, Some(Duration::from_millis(200)));
        }
        other => panic!("the call returns the hang, but it answered {other:?}"),
    }
    silent.abandon();
}

fn enqueue() -> Operation {
    Operation::Enqueue { job_id: "j".into() }
}

#[test]
fn answers_and_errors_come_back_as_the_store_s() {
    let store = scripted(
        r#"case "$line" in *enqueue*) echo '{"ok": true}';; *) echo '{"error": "invalid-argument", "message": "ttl must be above 0"}';; esac"#,
        Duration::from_secs(5),
    );
    assert!(store.enqueue(Path::new("x.db"), "j").unwrap());
    let error = store
        .claim(Path::new("x.db"), "j", "A", 1.0, 0.0)
        .unwrap_err();
    assert!(
        matches!(error, StoreError::InvalidArgument(message) if message == "ttl must be above 0")
    );
    assert_eq!(store.name().unwrap(), "script");
    assert!(!store.in_this_process());
}

#[test]
fn every_way_of_breaking_the_protocol_is_a_fault_that_says_which() {
    let limit = Duration::from_millis(500);
    /// A script, the fault it must give, and words of its message.
    type Case<'a> = (&'a str, fn(&FaultKind) -> bool, &'a str);
    let cases: [Case; 5] = [
        (
            "echo 'not json'",
            |k| matches!(k, FaultKind::NotJson(_)),
            "not JSON: `not json`",
        ),
        (
            r#"echo '{"answer": 1}'"#,
            |k| matches!(k, FaultKind::WrongShape(_)),
            "is neither",
        ),
        (
            r#"echo '{"ok": "yes"}'"#,
            |k| matches!(k, FaultKind::WrongType { .. }),
            "enqueue answers expected true or false",
        ),
        (
            "sleep 5",
            |k| matches!(k, FaultKind::Hang(..)),
            "gave no answer within 500 ms",
        ),
        (
            "echo 'dying' >&2; exit 3",
            |k| matches!(k, FaultKind::Exited(_)),
            "exited with code 3 in the middle of the run",
        ),
    ];
    for (script, is_kind, says) in &cases {
        let store = scripted(script, limit);
        let fault = fault_of(&store, &enqueue());
        assert!(is_kind(&fault.kind), "{script}: {fault}");
        assert!(fault.to_string().contains(says), "{script}: {fault}");
        assert_eq!(
            fault.request.as_deref(),
            Some(r#"{"op":"enqueue","job_id":"j","path":"x.db"}"#),
            "{script}"
        );
    }
    let dying = fault_of(&scripted("echo 'dying' >&2; exit 3", limit), &enqueue());
    assert_eq!(dying.stderr, ["dying"], "{dying}");
}

/// What the program writes on standard error between the opening and
/// the closing of a window is the window's, even across a restart; the
/// lines before it are not.
#[test]
fn a_window_holds_what_the_program_wrote_on_standard_error_meanwhile() {
    let store = scripted(
        r#"case "$line" in *state*) echo "dying" >&2; exit 1;; *) echo "trace $line" >&2; echo '{"ok": true}';; esac"#,
        Duration::from_secs(5),
    );
    let db = Path::new("x.db");
    assert!(store.enqueue(db, "before").unwrap());
    store.open_stderr_window();
    assert!(store.enqueue(db, "during").unwrap());
    assert!(store.state(db, "j").is_err(), "it ends");
    assert!(store.enqueue(db, "again").unwrap(), "it starts again");
    let window = store.close_stderr_window(5);
    let during: Vec<&str> = window.last.iter().map(String::as_str).collect();
    assert_eq!(during.len(), 3, "{during:?}");
    assert!(during[0].contains(r#""job_id":"during""#), "{during:?}");
    assert_eq!(during[1], "dying");
    assert!(during[2].contains(r#""job_id":"again""#), "{during:?}");
    assert_eq!(window.earlier, 0);
    assert_eq!(
        store.close_stderr_window(5),
        StderrWindow::default(),
        "closed"
    );
    store.open_stderr_window();
    assert_eq!(
        store.close_stderr_window(5),
        StderrWindow::default(),
        "nothing written"
    );
}

#[test]
fn a_line_that_answers_no_request_is_stray_output() {
    // A print after an answer is heard by the next call.
    let chatty = scripted(
        r#"echo '{"ok": true}'; echo 'done!'"#,
        Duration::from_secs(5),
    );
    assert!(chatty.enqueue(Path::new("x.db"), "j").unwrap());
    std::thread::sleep(Duration::from_millis(200));
    let fault = fault_of(&chatty, &enqueue());
    assert_eq!(fault.kind, FaultKind::NotJson("done!".into()), "{fault}");
    // An answer with an id no request has.
    let program = r#"echo '{"protocol":"lease-lab","version":1,"concurrent":true}'; while read line; do echo '{"id": 999, "ok": true}'; done"#;
    let wrong_id = ExternalStore::new(
        ImplCommand {
            argv: vec!["sh".into(), "-c".into(), program.into()],
            dir: None,
            env: Vec::new(),
        },
        Duration::from_secs(5),
    );
    let fault = fault_of(&wrong_id, &enqueue());
    assert_eq!(
        fault.kind,
        FaultKind::Stray(r#"{"id": 999, "ok": true}"#.into()),
        "{fault}"
    );
    assert!(
        fault.to_string().contains("print traces on standard error"),
        "{fault}"
    );
}

#[test]
fn a_wrong_greeting_or_program_is_said_plainly() {
    let wrong = ExternalStore::new(
        ImplCommand {
            argv: vec!["sh".into(), "-c".into(), "echo hello; sleep 5".into()],
            dir: None,
            env: Vec::new(),
        },
        Duration::from_secs(5),
    );
    let fault = wrong.name().unwrap_err();
    assert_eq!(fault.kind, FaultKind::WrongGreeting("hello".into()));
    assert!(
        fault.to_string().contains("is it the right program?"),
        "{fault}"
    );
    let missing = ExternalStore::new(
        ImplCommand::parse("/no/such/program --flag").unwrap(),
        Duration::from_secs(1),
    );
    let fault = missing.name().unwrap_err();
    assert!(matches!(fault.kind, FaultKind::NotStarted(_)), "{fault}");
    assert!(
        fault
            .to_string()
            .starts_with("/no/such/program --flag could not be started"),
        "{fault}"
    );
}

/// A line after the last answer is told once, as a fault of the test
/// that ran meanwhile, and the program starts again for the next.
#[test]
fn a_fault_between_calls_is_taken_once_and_ends_the_run() {
    let store = scripted(
        r#"echo '{"ok": true}'; echo 'done!'"#,
        Duration::from_secs(5),
    );
    assert_eq!(store.fault_between_calls(), None, "not started");
    assert!(store.enqueue(Path::new("x.db"), "j").unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let fault = loop {
        if let Some(fault) = store.fault_between_calls() {
            break fault;
        }
        assert!(std::time::Instant::now() < deadline, "the line never came");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(fault.message.contains("done!"), "{}", fault.message);
    assert_eq!(store.fault_between_calls(), None, "told once");
    assert!(store.program_pid().is_none(), "the run ended");
    assert!(
        store.enqueue(Path::new("x.db"), "j").unwrap(),
        "a new run answers"
    );
    assert!(store.program_pid().is_some());
}

#[test]
fn after_a_fault_the_next_call_starts_the_program_again() {
    let store = scripted(
        r#"case "$line" in *state*) exit 1;; *) echo '{"ok": true}';; esac"#,
        Duration::from_secs(5),
    );
    let fault = fault_of(&store, &Operation::State { job_id: "j".into() });
    assert!(matches!(fault.kind, FaultKind::Exited(_)), "{fault}");
    assert!(
        store.enqueue(Path::new("x.db"), "j").unwrap(),
        "a new process answers"
    );
}

#[test]
fn a_command_line_is_read_as_a_shell_would() {
    let command = ImplCommand::parse(r#"python3 "my store.py" --fast"#).unwrap();
    assert_eq!(command.argv, ["python3", "my store.py", "--fast"]);
    assert_eq!(command.display(), "python3 'my store.py' --fast");
    assert!(ImplCommand::parse("  ").is_err());
    assert!(ImplCommand::parse("python3 'open").is_err());
}

#[test]
fn only_the_protocol_s_greeting_is_one() {
    assert_eq!(
        read_greeting(
            r#"{"protocol": "lease-lab", "version": 1, "name": "mine", "concurrent": true}"#
        ),
        Some(("mine".into(), true))
    );
    assert_eq!(
        read_greeting(r#"{"protocol": "lease-lab", "version": 1}"#),
        Some((String::new(), false))
    );
    assert_eq!(
        read_greeting(r#"{"protocol": "lease-lab", "version": 2}"#),
        None
    );
    assert_eq!(
        read_greeting(r#"{"protocol": "other", "version": 1}"#),
        None
    );
    assert_eq!(
        read_greeting(r#"{"protocol": "lease-lab", "version": 1, "concurrent": "yes"}"#),
        None
    );
    assert_eq!(read_greeting("hello"), None);
}

#[test]
fn a_thread_s_busy_timeout_goes_with_its_requests() {
    let store = scripted(
        r#"case "$line" in *'"busy_timeout_ms":50'*) echo '{"ok": true}';; *) echo '{"ok": false}';; esac"#,
        Duration::from_secs(5),
    );
    assert!(!store.enqueue(Path::new("x.db"), "j").unwrap());
    store.set_thread_busy_timeout(Some(Duration::from_millis(50)));
    assert!(store.enqueue(Path::new("x.db"), "j").unwrap());
    store.set_thread_busy_timeout(None);
    assert!(!store.enqueue(Path::new("x.db"), "j").unwrap());
}

#[test]
fn abandoning_a_program_ends_the_call_that_waits_on_it() {
    let store = std::sync::Arc::new(scripted("sleep 100", Duration::from_secs(20)));
    let waiting = std::sync::Arc::clone(&store);
    let call = std::thread::spawn(move || fault_of(&waiting, &enqueue()));
    // Abandon only once the call waits on the program: before, there
    // would be nothing to stop, however slow the machine is to start it.
    let waits = || {
        let session = store.session.lock().unwrap().clone();
        session.is_some_and(|session| !session.waiting.lock().unwrap().is_empty())
    };
    while !waits() {
        assert!(!call.is_finished(), "the call ended before it waited");
        std::thread::sleep(Duration::from_millis(10));
    }
    store.abandon();
    let fault = call.join().unwrap();
    assert!(
        matches!(&fault.kind, FaultKind::Exited(how) if how.starts_with("was stopped by the lab")),
        "the call ends when the program is stopped, not at its limit: {fault}"
    );
}

#[test]
fn an_id_from_a_program_that_is_not_concurrent_answers_no_request() {
    // Its requests carry no id, so an answer with one (even the id the
    // lab numbered the call with inside) is not an answer to them.
    let store = scripted(r#"echo '{"id": 1, "ok": true}'"#, Duration::from_secs(5));
    let fault = fault_of(&store, &enqueue());
    assert_eq!(
        fault.kind,
        FaultKind::Stray(r#"{"id": 1, "ok": true}"#.into()),
        "{fault}"
    );
}

#[test]
fn an_answer_without_an_id_from_a_concurrent_program_answers_no_request() {
    let program = r#"echo '{"protocol":"lease-lab","version":1,"concurrent":true}'; while read line; do echo '{"ok": true}'; done"#;
    let store = ExternalStore::new(
        ImplCommand {
            argv: vec!["sh".into(), "-c".into(), program.into()],
            dir: None,
            env: Vec::new(),
        },
        Duration::from_secs(5),
    );
    let fault = fault_of(&store, &enqueue());
    assert_eq!(
        fault.kind,
        FaultKind::Stray(r#"{"ok": true}"#.into()),
        "{fault}"
    );
}

#[test]
fn a_program_that_is_not_concurrent_gets_one_request_at_a_time() {
    // Its answers carry no id: two requests in flight could not be told
    // apart, so calls from several threads wait their turn.
    let store = std::sync::Arc::new(scripted(
        r#"sleep 0.2; echo '{"ok": true}'"#,
        Duration::from_secs(10),
    ));
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let store = std::sync::Arc::clone(&store);
            std::thread::spawn(move || store.enqueue(Path::new("x.db"), "j").unwrap())
        })
        .collect();
    for call in calls {
        assert!(call.join().expect("no fault: each call got its own answer"));
    }
}

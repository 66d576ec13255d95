//! The child-process runner survives workers that abort, hang or answer: each costs one
//! verdict, and the next case gets a fresh worker. The workers here are shell scripts that
//! speak the worker protocol (one JSON request per line in, one verdict per line out).

use difffuzz::oracle::Class;
use difffuzz::runner::Runner;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn script(name: &str, body: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("difffuzz-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    path
}

#[test]
fn an_abort_is_a_crash_and_the_next_case_gets_a_fresh_worker() {
    // Answers the first request of each process, then aborts on the second.
    let exe = script(
        "aborts",
        r#"read line
echo '{"class":"agree","signature":"","detail":""}'
read line
echo "fatal: something broke" >&2
kill -ABRT $$"#,
    );
    let mut r = Runner::new(exe, None, Duration::from_secs(20));
    assert_eq!(r.eval("a", "{}").class, Class::Agree);
    let v = r.eval("b", "{}");
    assert_eq!(v.class, Class::Crash, "{v:?}");
    assert!(v.detail.contains("fatal: something broke"), "{}", v.detail);
    assert_eq!(r.eval("c", "{}").class, Class::Agree, "a fresh worker after the crash");
}

#[test]
fn a_hang_is_a_timeout() {
    let exe = script(
        "hangs",
        r#"read line
sleep 30"#,
    );
    let mut r = Runner::new(exe, None, Duration::from_millis(500));
    let t = Instant::now();
    let v = r.eval("a", "{}");
    assert_eq!(v.class, Class::Timeout, "{v:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "took {:?}", t.elapsed());
}

#[test]
fn a_garbled_answer_is_a_crash() {
    let exe = script(
        "garbles",
        r#"read line
echo 'not json'"#,
    );
    let mut r = Runner::new(exe, None, Duration::from_secs(20));
    assert_eq!(r.eval("a", "{}").class, Class::Crash);
}

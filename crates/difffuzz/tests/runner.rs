//! The child-process runner survives workers that abort, hang or answer: each costs one
//! verdict, and the next case gets a fresh worker. The workers here are shell scripts that
//! speak the worker protocol (one JSON request per line in, one verdict per line out).

use difffuzz::oracle::Class;
use difffuzz::runner::Runner;
use std::path::PathBuf;
use std::time::Duration;

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

/// A worker that never answers (nor ends) is a timeout, and is killed: the case's verdict comes
/// back although the worker would sleep for a day.
#[test]
fn a_hang_is_a_timeout() {
    let pid_file = std::env::temp_dir().join(format!("difffuzz-runner-{}-hang.pid", std::process::id()));
    let exe = script(
        "hangs",
        &format!(
            r#"echo $$ > {}
read line
exec sleep 86400"#,
            pid_file.display()
        ),
    );
    let mut r = Runner::new(exe, None, Duration::from_millis(500));
    let v = r.eval("a", "{}");
    assert_eq!(v.class, Class::Timeout, "{v:?}");
    let pid = std::fs::read_to_string(&pid_file).expect("the worker wrote its pid");
    assert!(
        !std::path::Path::new(&format!("/proc/{}", pid.trim())).exists(),
        "the hung worker {} was killed and reaped",
        pid.trim()
    );
    let _ = std::fs::remove_file(&pid_file);
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

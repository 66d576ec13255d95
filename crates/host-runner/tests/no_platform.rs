//! With no OpenCL platform, `devices()` must return an error rather than panic.
//!
//! The ICD loader reads `OCL_ICD_VENDORS` once per process, and tests run in parallel
//! threads, so the check runs in a child process: this test binary itself, filtered to
//! the helper test below, with `OCL_ICD_VENDORS` pointing at an empty directory. The same
//! check by hand: `OCL_ICD_VENDORS=/nonexistent lift devices`.

use std::process::Command;

const CHILD_ENV: &str = "LIFT_HOST_RUNNER_NO_PLATFORM_CHILD";

#[test]
fn devices_without_a_platform_is_an_error() {
    let empty = std::env::temp_dir().join(format!("lift-hr-no-icd-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args(["--exact", "child_without_platform", "--nocapture", "--test-threads=1"])
        .env("OCL_ICD_VENDORS", &empty)
        // Both loaders (ocl-icd, Khronos) also accept explicit driver lists, which would
        // bypass the empty vendor directory.
        .env_remove("OCL_ICD_FILENAMES")
        .env_remove("OPENCL_VENDOR_PATH")
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&empty);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("CHILD-OK"), "child did not run:\n{stdout}\n{stderr}");
}

/// Does nothing unless started by the test above.
#[test]
fn child_without_platform() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let err = host_runner::devices().unwrap_err();
    assert!(matches!(err, host_runner::Error::NoPlatform(_)), "{err:?}");
    assert!(err.to_string().starts_with("no OpenCL platform found"), "{err}");
    let err = host_runner::Session::open(None).err().unwrap();
    assert!(matches!(err, host_runner::Error::NoPlatform(_)), "{err:?}");
    println!("{err}");
    println!("CHILD-OK");
}

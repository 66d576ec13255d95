//! Tests against a real OpenCL device (PoCL in CI). Each test skips itself, with a message,
//! when the machine has no OpenCL device, so `cargo test` passes everywhere.

use std::path::PathBuf;

use host_runner::*;

const SRC: &str = r#"
kernel void vadd(const global float* restrict a, const global float* restrict b,
                 global float* c, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = a[i] + b[i];
}

kernel void scale(global float* c, float s, int n) {
    int i = get_global_id(0);
    if (i < n) c[i] = c[i] * s;
}

// One work-item filter, like LIFT's FilterSeq: the result length lives on the device.
kernel void filter_pos(const global float* xs, global float* out, global int* count, int n) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (xs[i] > 0.0f) out[k++] = xs[i];
    }
    count[1] = k;
}

kernel void set_count(global int* count, int i, int v) { count[i] = v; }

kernel void bump(global int* x) { x[get_global_id(0)] += 1; }

kernel void group_sum(const global float* xs, global float* sums, local float* tmp) {
    int l = get_local_id(0);
    tmp[l] = xs[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (int j = 0; j < (int)get_local_size(0); j++) s += tmp[j];
        sums[get_group_id(0)] = s;
    }
}
"#;

/// Opens the default device, or returns `None` (and says so) when there is none.
fn session(cache: Option<PathBuf>) -> Option<Session> {
    match devices() {
        Err(e) => {
            host_runner::skip_without_device(&e.to_string());
            return None;
        }
        Ok(d) if d.is_empty() => {
            host_runner::skip_without_device("no OpenCL device");
            return None;
        }
        Ok(_) => {}
    }
    Some(Session::open_with_cache_dir(None, cache).expect("a listed device must open"))
}

fn floats(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn to_floats(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn to_ints(bytes: &[u8]) -> Vec<i32> {
    bytes
        .chunks_exact(4)
        .map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn buf(name: &str, bytes: usize, init: BufferInit) -> BufferSpec {
    BufferSpec {
        name: name.into(),
        bytes,
        init,
    }
}

fn plan(buffers: Vec<BufferSpec>, launches: Vec<Launch>, reads: Vec<ReadSpec>) -> Plan {
    Plan {
        source: SRC.into(),
        build_options: "-cl-std=CL1.2".into(),
        buffers,
        launches,
        reads,
    }
}

fn launch(kernel: &str, args: Vec<KernelArg>, global: usize, local: Option<usize>) -> Launch {
    Launch {
        kernel: kernel.into(),
        args,
        global: vec![global],
        local: local.map(|l| vec![l]),
    }
}

fn temp_dir(tag: &str) -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("lift-hr-{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const ONCE: RunOptions = RunOptions {
    profile: false,
    repeats: 1,
};

fn vadd_plan(n: usize) -> (Plan, Vec<f32>) {
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let expect = a.iter().zip(&b).map(|(x, y)| (x + y) * 2.0).collect();
    let bytes = n * 4;
    let global = n.div_ceil(64) * 64;
    let p = plan(
        vec![
            buf("a", bytes, BufferInit::Data(floats(&a))),
            buf("b", bytes, BufferInit::Data(floats(&b))),
            buf("c", bytes, BufferInit::Uninit),
        ],
        vec![
            launch(
                "vadd",
                vec![
                    KernelArg::Buffer(0),
                    KernelArg::Buffer(1),
                    KernelArg::Buffer(2),
                    KernelArg::I32(n as i32),
                ],
                global,
                Some(64),
            ),
            launch(
                "scale",
                vec![KernelArg::Buffer(2), KernelArg::F32(2.0), KernelArg::I32(n as i32)],
                global,
                None,
            ),
        ],
        vec![ReadSpec::Whole(2)],
    );
    (p, expect)
}

#[test]
fn vector_add_then_scale_with_profiling() {
    let Some(mut s) = session(None) else { return };
    let (p, expect) = vadd_plan(1000);
    let r = s
        .run(
            &p,
            &RunOptions {
                profile: true,
                repeats: 3,
            },
        )
        .unwrap();
    assert_eq!(to_floats(&r.reads[0]), expect);
    let names: Vec<&str> = r.kernel_times_ns.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["vadd", "scale"]);
    assert!(r.kernel_times_ns.iter().all(|&(_, t)| t > 0), "{:?}", r.kernel_times_ns);
    assert!(!r.build_cached);

    let r = s.run(&p, &ONCE).unwrap();
    assert!(r.kernel_times_ns.is_empty());
    assert!(
        r.build_cached,
        "the second run of the same source uses the in-memory program"
    );
    assert_eq!(to_floats(&r.reads[0]), expect);
}

#[test]
fn counted_read_returns_only_the_filtered_prefix() {
    let Some(mut s) = session(None) else { return };
    let xs = [1.0f32, -2.0, 3.0, -4.0, 5.0, 0.0, 7.0];
    let filter = |extra: Vec<Launch>| {
        let mut launches = vec![launch(
            "filter_pos",
            vec![
                KernelArg::Buffer(0),
                KernelArg::Buffer(1),
                KernelArg::Buffer(2),
                KernelArg::I32(xs.len() as i32),
            ],
            1,
            Some(1),
        )];
        launches.extend(extra);
        plan(
            vec![
                buf("xs", 28, BufferInit::Data(floats(&xs))),
                buf("out", 28, BufferInit::Uninit),
                buf("count", 8, BufferInit::Zeroed),
            ],
            launches,
            vec![
                ReadSpec::Counted {
                    data: 1,
                    count: 2,
                    count_index: 1,
                    elem_bytes: 4,
                },
                ReadSpec::Whole(2),
            ],
        )
    };
    let r = s.run(&filter(vec![]), &ONCE).unwrap();
    assert_eq!(to_floats(&r.reads[0]), [1.0, 3.0, 5.0, 7.0]);
    assert_eq!(to_ints(&r.reads[1]), [0, 4]);

    let set = |v: i32| {
        launch(
            "set_count",
            vec![KernelArg::Buffer(2), KernelArg::I32(1), KernelArg::I32(v)],
            1,
            None,
        )
    };
    let r = s.run(&filter(vec![set(0)]), &ONCE).unwrap();
    assert!(r.reads[0].is_empty());
    for bad in [-1, 8] {
        match s.run(&filter(vec![set(bad)]), &ONCE) {
            Err(e @ Error::BadCount { .. }) => assert!(e.to_string().contains("`out`"), "{e}"),
            other => panic!("count {bad}: expected BadCount, got {other:?}"),
        }
    }
}

#[test]
fn syntax_error_gives_the_build_log() {
    let Some(mut s) = session(None) else { return };
    let mut p = plan(vec![], vec![], vec![]);
    p.source = "kernel void broken(global float* x) { x[0] = ; }".into();
    match s.run(&p, &ONCE) {
        Err(Error::Build { log }) => assert!(!log.trim().is_empty()),
        other => panic!("expected a build error, got {other:?}"),
    }
}

#[test]
fn disk_cache_is_hit_by_a_second_session() {
    let dir = temp_dir("cache");
    let Some(mut first) = session(Some(dir.clone())) else {
        return;
    };
    let (mut p, expect) = vadd_plan(100);
    // Unique source text: the cache must not be satisfied by some other test's program.
    p.source = format!("// cache test {}\n{}", dir.display(), SRC);
    let r = first.run(&p, &ONCE).unwrap();
    assert!(!r.build_cached);
    let files: Vec<_> = std::fs::read_dir(dir.join("opencl")).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one binary written: {files:?}");
    drop(first);

    let mut second = Session::open_with_cache_dir(None, Some(dir.clone())).unwrap();
    let r = second.run(&p, &ONCE).unwrap();
    assert!(r.build_cached, "the binary from the first session is reused");
    assert_eq!(to_floats(&r.reads[0]), expect);

    // Different options are a different program.
    p.build_options = "-cl-std=CL1.2 -DUNUSED=1".into();
    assert!(!second.run(&p, &ONCE).unwrap().build_cached);

    // A corrupted cache file falls back to a source build.
    for f in std::fs::read_dir(dir.join("opencl")).unwrap().flatten() {
        let mut bytes = std::fs::read(f.path()).unwrap();
        let n = bytes.len();
        bytes.truncate(n - n / 2);
        std::fs::write(f.path(), bytes).unwrap();
    }
    let mut third = Session::open_with_cache_dir(None, Some(dir.clone())).unwrap();
    let r = third.run(&p, &ONCE).unwrap();
    assert!(!r.build_cached);
    assert_eq!(to_floats(&r.reads[0]), expect);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unwritable_cache_dir_is_not_an_error() {
    let file = temp_dir("nocache").join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let Some(mut s) = session(Some(file.clone())) else {
        return;
    };
    let (p, expect) = vadd_plan(10);
    let r = s.run(&p, &ONCE).unwrap();
    assert_eq!(to_floats(&r.reads[0]), expect);
    let _ = std::fs::remove_dir_all(file.parent().unwrap());
}

#[test]
fn limits_are_checked_before_allocating() {
    let Some(mut s) = session(None) else { return };
    let max = s.info().max_alloc_bytes as usize;
    let p = plan(vec![buf("huge", max + 1, BufferInit::Uninit)], vec![], vec![]);
    match s.run(&p, &ONCE) {
        Err(e @ Error::TooLarge { .. }) => assert!(e.to_string().contains("`huge`"), "{e}"),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    let wg = s.info().max_work_group_size;
    let p = plan(
        vec![buf("x", 4, BufferInit::Zeroed)],
        vec![launch("bump", vec![KernelArg::Buffer(0)], wg * 4, Some(wg * 2))],
        vec![],
    );
    assert!(matches!(s.run(&p, &ONCE), Err(Error::WorkGroup { launch: 0, .. })));
    let p = plan(
        vec![buf("x", 4, BufferInit::Zeroed)],
        vec![launch("bump", vec![KernelArg::Buffer(0)], 10, Some(4))],
        vec![],
    );
    assert!(matches!(s.run(&p, &ONCE), Err(Error::WorkGroup { .. })));
    let p = plan(vec![], vec![launch("nope", vec![], 1, None)], vec![]);
    assert!(matches!(s.run(&p, &ONCE), Err(Error::UnknownKernel { .. })));
    let p = plan(vec![], vec![launch("bump", vec![], 1, None)], vec![]);
    assert!(matches!(s.run(&p, &ONCE), Err(Error::InvalidPlan(_))));
}

#[test]
fn zero_sizes_are_harmless() {
    let Some(mut s) = session(None) else { return };
    let p = plan(
        vec![
            buf("empty", 0, BufferInit::Zeroed),
            buf("empty2", 0, BufferInit::Data(vec![])),
        ],
        vec![launch("bump", vec![KernelArg::Buffer(0)], 0, Some(4))],
        vec![ReadSpec::Whole(0), ReadSpec::Whole(1)],
    );
    let r = s
        .run(
            &p,
            &RunOptions {
                profile: true,
                repeats: 2,
            },
        )
        .unwrap();
    assert_eq!(r.reads, [Vec::<u8>::new(), Vec::new()]);
    assert_eq!(r.kernel_times_ns, [("bump".to_string(), 0)]);
}

#[test]
fn repeats_start_from_the_initial_buffers() {
    let Some(mut s) = session(None) else { return };
    let p = plan(
        vec![
            buf("x", 16, BufferInit::Zeroed),
            buf("y", 8, BufferInit::Data(to_bytes(&[10, 20]))),
        ],
        vec![
            launch("bump", vec![KernelArg::Buffer(0)], 4, None),
            launch("bump", vec![KernelArg::Buffer(1)], 2, None),
        ],
        vec![ReadSpec::Whole(0), ReadSpec::Whole(1)],
    );
    let r = s
        .run(
            &p,
            &RunOptions {
                profile: true,
                repeats: 5,
            },
        )
        .unwrap();
    assert_eq!(to_ints(&r.reads[0]), [1, 1, 1, 1]);
    assert_eq!(to_ints(&r.reads[1]), [11, 21]);
}

fn to_bytes(xs: &[i32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

#[test]
fn local_memory_arguments() {
    let Some(mut s) = session(None) else { return };
    let xs: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let p = plan(
        vec![
            buf("xs", 256, BufferInit::Data(floats(&xs))),
            buf("sums", 16, BufferInit::Uninit),
        ],
        vec![launch(
            "group_sum",
            vec![KernelArg::Buffer(0), KernelArg::Buffer(1), KernelArg::Local(16 * 4)],
            64,
            Some(16),
        )],
        vec![ReadSpec::Whole(1)],
    );
    let r = s.run(&p, &ONCE).unwrap();
    let expect: Vec<f32> = (0..4).map(|g| (g * 16..g * 16 + 16).map(|i| i as f32).sum()).collect();
    assert_eq!(to_floats(&r.reads[0]), expect);
}

#[test]
fn device_selection_by_id_and_name() {
    if session(None).is_none() {
        return;
    }
    let devs = devices().expect("a device opened, so the devices are listed");
    let first = devs.first().expect("a device opened");
    let s = Session::open_with_cache_dir(Some(&first.id), None).unwrap();
    assert_eq!(s.info(), first);
    let needle = first.name.to_uppercase();
    let s = Session::open_with_cache_dir(Some(&needle[..needle.len().min(6)]), None).unwrap();
    assert!(s.info().name.to_uppercase().starts_with(&needle[..needle.len().min(6)]));
    match Session::open_with_cache_dir(Some("99:99"), None) {
        Err(e @ Error::UnknownDevice { .. }) => assert!(e.to_string().contains(&first.id), "{e}"),
        other => panic!("expected UnknownDevice, got {:?}", other.map(|s| s.info().clone())),
    }
    let table = describe_devices(&devs);
    assert!(table.lines().nth(1).unwrap().starts_with(&first.id));
}

#[test]
fn copy_baseline_measures_something() {
    let Some(mut s) = session(None) else { return };
    let ns = s.copy_baseline(1 << 20, 3).unwrap();
    assert!(ns > 0.0, "{ns}");
    assert!(s.copy_baseline(0, 1).unwrap() >= 0.0);
}

/// `LIFT_GPU` is defined for every program: 1 on a GPU, 0 on any other device (the filter
/// kernel picks its shape by it), unless `LIFT_GPU_PATHS` forces it.
#[test]
fn programs_see_whether_their_device_is_a_gpu() {
    let Some(mut s) = session(None) else { return };
    let p = Plan {
        source: "kernel void kind(global int* o) { o[0] = LIFT_GPU; }".into(),
        build_options: "-cl-std=CL1.2".into(),
        buffers: vec![buf("o", 4, BufferInit::Zeroed)],
        launches: vec![launch("kind", vec![KernelArg::Buffer(0)], 1, None)],
        reads: vec![ReadSpec::Whole(0)],
    };
    let out = s.run(&p, &ONCE).expect("runs");
    let gpu = match std::env::var(host_runner::GPU_PATHS_VAR).ok().as_deref() {
        Some("1") => 1,
        Some("0") => 0,
        _ => i32::from(matches!(s.info().kind, DeviceKind::Gpu)),
    };
    assert_eq!(to_ints(&out.reads[0]), vec![gpu]);
}

//! Device-free tests: plan checks, device selection and the device table. The tests that
//! need an OpenCL device live in `tests/opencl.rs`.

use crate::device::{select, Found};
use crate::plan::{check_plan, median_u64};
use crate::*;

fn fake(id: &str, name: &str, platform: &str, kind: DeviceKind) -> DeviceInfo {
    DeviceInfo {
        id: id.into(),
        platform: platform.into(),
        name: name.into(),
        kind,
        version: "OpenCL 3.0".into(),
        driver_version: "1.0".into(),
        max_alloc_bytes: 1 << 20,
        global_mem_bytes: 3 << 20,
        local_mem_bytes: 1024,
        max_work_group_size: 256,
        max_work_item_sizes: vec![256, 64, 8],
        compute_units: 4,
        compute_capability: None,
    }
}

fn found(info: DeviceInfo) -> Found {
    Found {
        info,
        id: std::ptr::null_mut(),
        platform_version: String::new(),
    }
}

fn buffer(bytes: usize) -> BufferSpec {
    BufferSpec {
        name: format!("b{bytes}"),
        bytes,
        init: BufferInit::Uninit,
    }
}

fn plan_with(buffers: Vec<BufferSpec>, launches: Vec<Launch>, reads: Vec<ReadSpec>) -> Plan {
    Plan {
        source: String::new(),
        build_options: String::new(),
        buffers,
        launches,
        reads,
    }
}

fn launch(global: Vec<usize>, local: Option<Vec<usize>>, args: Vec<KernelArg>) -> Launch {
    Launch {
        kernel: "k".into(),
        args,
        global,
        local,
    }
}

const ONCE: RunOptions = RunOptions {
    profile: false,
    repeats: 1,
};

fn check(p: &Plan) -> Result<(), Error> {
    check_plan(p, &fake("0:0", "gpu", "plat", DeviceKind::Gpu), &ONCE)
}

#[test]
fn buffer_limits() {
    assert!(check(&plan_with(vec![buffer(1 << 20)], vec![], vec![])).is_ok());
    let e = check(&plan_with(vec![buffer((1 << 20) + 1)], vec![], vec![])).unwrap_err();
    assert!(matches!(e, Error::TooLarge { limit: 1048576, .. }), "{e}");
    let four = vec![buffer(1 << 20), buffer(1 << 20), buffer(1 << 20), buffer(1)];
    let e = check(&plan_with(four, vec![], vec![])).unwrap_err();
    assert!(matches!(e, Error::TooLarge { limit: 3145728, .. }), "{e}");
}

#[test]
fn data_length_must_match() {
    let b = BufferSpec {
        name: "x".into(),
        bytes: 8,
        init: BufferInit::Data(vec![0; 4]),
    };
    let e = check(&plan_with(vec![b], vec![], vec![])).unwrap_err();
    assert!(matches!(e, Error::InvalidPlan(_)), "{e}");
}

#[test]
fn work_group_shape() {
    let ok = launch(vec![512, 64], Some(vec![128, 2]), vec![]);
    assert!(check(&plan_with(vec![], vec![ok], vec![])).is_ok());
    for bad in [
        launch(vec![100], Some(vec![64]), vec![]),         // not divisible
        launch(vec![1024], Some(vec![512]), vec![]),       // over max work-group size
        launch(vec![64, 128], Some(vec![1, 128]), vec![]), // over max item size in dim 1
        launch(vec![64], Some(vec![8, 8]), vec![]),        // dimension mismatch
        launch(vec![], None, vec![]),                      // no dimension
        launch(vec![1, 1, 1, 1], None, vec![]),            // four dimensions
        launch(vec![64], Some(vec![0]), vec![]),           // zero local
    ] {
        let e = check(&plan_with(vec![], vec![bad.clone()], vec![])).unwrap_err();
        assert!(matches!(e, Error::WorkGroup { .. }), "{bad:?}: {e}");
    }
    // No local size: the driver picks one, and a zero global size is a skipped launch.
    assert!(check(&plan_with(vec![], vec![launch(vec![100], None, vec![])], vec![])).is_ok());
    assert!(check(&plan_with(vec![], vec![launch(vec![0], Some(vec![4]), vec![])], vec![])).is_ok());
}

#[test]
fn local_memory_sum() {
    let args = vec![KernelArg::Local(512), KernelArg::Local(512)];
    assert!(check(&plan_with(vec![], vec![launch(vec![1], None, args)], vec![])).is_ok());
    let args = vec![KernelArg::Local(512), KernelArg::Local(513)];
    let e = check(&plan_with(vec![], vec![launch(vec![1], None, args)], vec![])).unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooLarge {
                bytes: 1025,
                limit: 1024,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn static_local_arrays_are_checked_before_launch() {
    let source = "kernel void K(global float* a) {\n  local float v_lt_2[200];\n  local float4 v_q[10];\n}\n\
                  kernel void J(global float* a) {\n  local float v_big[100000];\n}\n";
    let mut p = plan_with(vec![], vec![launch(vec![1], None, vec![])], vec![]);
    p.source = source.into();
    p.launches[0].kernel = "K".into();
    // 800 + 160 bytes fit the fake device's 1024.
    assert!(check(&p).is_ok());
    p.launches[0].args = vec![KernelArg::Local(100)];
    assert!(check(&p).is_err(), "static and dynamic local memory add up");
    p.launches[0].args = vec![];
    p.launches[0].kernel = "J".into();
    let e = check(&p).unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooLarge {
                bytes: 400000,
                limit: 1024,
                ..
            }
        ),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("`v_big`") && msg.contains("100000 x float") && msg.contains("`J`"),
        "{msg}"
    );
}

#[test]
fn indices_are_checked() {
    let l = launch(vec![1], None, vec![KernelArg::Buffer(1)]);
    let e = check(&plan_with(vec![buffer(4)], vec![l], vec![])).unwrap_err();
    assert!(matches!(e, Error::InvalidPlan(_)), "{e}");
    let e = check(&plan_with(vec![buffer(4)], vec![], vec![ReadSpec::Whole(3)])).unwrap_err();
    assert!(matches!(e, Error::InvalidPlan(_)), "{e}");
    let counted = |count_index| ReadSpec::Counted {
        data: 0,
        count: 1,
        count_index,
        elem_bytes: 4,
    };
    let bufs = || vec![buffer(16), buffer(8)];
    assert!(check(&plan_with(bufs(), vec![], vec![counted(1)])).is_ok());
    let e = check(&plan_with(bufs(), vec![], vec![counted(2)])).unwrap_err();
    assert!(matches!(e, Error::InvalidPlan(_)), "{e}");
    let e = check(&plan_with(bufs(), vec![], vec![counted(usize::MAX)])).unwrap_err();
    assert!(matches!(e, Error::InvalidPlan(_)), "{e}");
}

#[test]
fn nul_bytes_and_zero_repeats_are_rejected() {
    let mut p = plan_with(vec![], vec![], vec![]);
    p.build_options = "-D X\0".into();
    assert!(matches!(check(&p), Err(Error::InvalidPlan(_))));
    let mut l = launch(vec![1], None, vec![]);
    l.kernel = "a\0b".into();
    assert!(matches!(
        check(&plan_with(vec![], vec![l], vec![])),
        Err(Error::InvalidPlan(_))
    ));
    let p = plan_with(vec![], vec![], vec![]);
    let opts = RunOptions {
        profile: true,
        repeats: 0,
    };
    let dev = fake("0:0", "gpu", "plat", DeviceKind::Gpu);
    assert!(matches!(check_plan(&p, &dev, &opts), Err(Error::InvalidPlan(_))));
}

#[test]
fn device_selection() {
    let found = vec![
        found(fake(
            "0:0",
            "pthread-cpu",
            "Portable Computing Language",
            DeviceKind::Cpu,
        )),
        found(fake("1:0", "NVIDIA H100", "NVIDIA CUDA", DeviceKind::Gpu)),
        found(fake("1:1", "NVIDIA H100", "NVIDIA CUDA", DeviceKind::Gpu)),
    ];
    assert_eq!(select(&found, None).unwrap(), 1, "first GPU wins");
    assert_eq!(select(&found, Some("  ")).unwrap(), 1);
    assert_eq!(select(&found[..1], None).unwrap(), 0, "else the first device");
    assert_eq!(select(&found, Some("1:1")).unwrap(), 2);
    assert!(select(&found, Some("pocl"))
        .unwrap_err()
        .to_string()
        .contains("\"pocl\""));
    assert_eq!(select(&found, Some("portable")).unwrap(), 0);
    assert_eq!(select(&found, Some("h100")).unwrap(), 1);
    match select(&found, Some("2:0")).unwrap_err() {
        Error::UnknownDevice { wanted, available } => {
            assert_eq!(wanted, "2:0");
            assert_eq!(available, ["0:0", "1:0", "1:1"]);
        }
        e => panic!("unexpected {e:?}"),
    }
    assert!(matches!(select(&[], None), Err(Error::NoDevice(_))));
}

#[test]
fn device_table_is_aligned() {
    let devs = [
        fake("0:0", "pthread-cpu", "Portable Computing Language", DeviceKind::Cpu),
        fake("1:0", "NVIDIA H100 80GB HBM3", "NVIDIA CUDA", DeviceKind::Gpu),
    ];
    let table = describe_devices(&devs);
    let expected = "\
ID   TYPE  NAME                   PLATFORM                     VERSION     GLOBAL MEM  MAX ALLOC  LOCAL MEM  MAX WG  CUs
0:0  CPU   pthread-cpu            Portable Computing Language  OpenCL 3.0     3.0 MiB    1.0 MiB    1.0 KiB     256    4
1:0  GPU   NVIDIA H100 80GB HBM3  NVIDIA CUDA                  OpenCL 3.0     3.0 MiB    1.0 MiB    1.0 KiB     256    4
";
    assert_eq!(table, expected);
    assert_eq!(describe_devices(&[]), "no OpenCL devices found\n");
}

#[test]
fn medians() {
    assert_eq!(median_u64(&mut [5]), 5);
    assert_eq!(median_u64(&mut [9, 1, 5]), 5);
    assert_eq!(median_u64(&mut [4, 1, 3, 2]), 2);
    assert_eq!(median_u64(&mut [u64::MAX, u64::MAX]), u64::MAX);
    assert_eq!(median_u64(&mut []), 0);
}

#[test]
fn error_messages() {
    let e = Error::Cl {
        call: "clFinish",
        code: -5,
    };
    assert_eq!(
        e.to_string(),
        "OpenCL call clFinish failed with CL_OUT_OF_RESOURCES (-5)"
    );
    let e = Error::Build {
        log: "x.cl:1:1: error: boom\n".into(),
    };
    assert_eq!(
        e.to_string(),
        "the OpenCL program failed to build; build log:\nx.cl:1:1: error: boom"
    );
    let e = Error::NoPlatform("CL_PLATFORM_NOT_FOUND_KHR".into());
    assert!(e.to_string().starts_with("no OpenCL platform found"));
}

#[test]
fn session_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Session>();
    send_sync::<Error>();
}

#[test]
fn a_required_device_turns_skipping_into_failure() {
    use crate::skip_decision;
    assert!(skip_decision(None, "no OpenCL device").is_ok());
    assert!(skip_decision(Some(""), "no OpenCL device").is_ok());
    assert!(skip_decision(Some("0"), "no OpenCL device").is_ok());
    let e = skip_decision(Some("1"), "no OpenCL device").unwrap_err();
    assert!(
        e.contains("LIFT_REQUIRE_OPENCL=1") && e.contains("no OpenCL device"),
        "{e}"
    );
}

/// Oclgrind calls its simulator a GPU; the filter must still read its status words with atomics
/// there (volatile reads of words other groups write with atomics are races it reports).
#[test]
fn oclgrind_is_no_gpu_device() {
    use crate::device::gpu_device;
    assert_eq!(
        gpu_device(&fake("0:0", "NVIDIA H200", "NVIDIA CUDA", DeviceKind::Gpu)),
        1
    );
    assert_eq!(
        gpu_device(&fake("0:0", "Oclgrind Simulator", "Oclgrind", DeviceKind::Gpu)),
        0
    );
    assert_eq!(
        gpu_device(&fake("0:0", "cpu", "Portable Computing Language", DeviceKind::Cpu)),
        0
    );
}

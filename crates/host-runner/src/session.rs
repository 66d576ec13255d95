//! A device opened for running plans: context, profiling queue and program cache.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::ptr;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_mem, CL_BLOCKING, CL_NON_BLOCKING};

use crate::cache;
use crate::device::{self, DeviceInfo};
use crate::error::{cl, Error};
use crate::plan::{alloc_bytes, check_plan, median_u64, BufferInit, KernelArg, Plan, ReadSpec, RunOptions, RunResult};
mod ranges;

// Stable OpenCL ABI values; spelled out to avoid depending on opencl3's re-export paths.
const CL_BUILD_PROGRAM_FAILURE: i32 = -11;
const CL_INVALID_BUILD_OPTIONS: i32 = -43;
const CL_INVALID_KERNEL_NAME: i32 = -46;

/// Sessions kept between runs when [`keep_sessions`] was called (`None`: every run opens its
/// own). Opening a context costs NVIDIA's driver about a fifth of a second under a lock that
/// serialises the processes of a machine: a process running thousands of small programs (the
/// differential fuzzer's worker) keeps one per device instead.
static POOL: std::sync::Mutex<Option<HashMap<String, Session>>> = std::sync::Mutex::new(None);

/// Makes [`Session::keep`] keep sessions for [`Session::reuse`], for the rest of the process.
pub fn keep_sessions() {
    POOL.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new);
}

pub struct Session {
    // Field order is drop order: buffers, programs and the queue go before their context.
    resident: Vec<(Buffer<u8>, usize)>,
    programs: HashMap<(String, String), Program>,
    queue: CommandQueue,
    context: Context,
    // opencl3's `Device` (unlike a bare cl_device_id) is Send + Sync, and so is Session.
    device: Device,
    info: DeviceInfo,
    platform_version: String,
    cache_dir: Option<PathBuf>,
}

impl Session {
    /// Opens a device with the default on-disk program cache (see [`crate::default_cache_dir`]).
    ///
    /// `None` picks the first GPU, else the first device. `Some(id)` is either a `P:D` id
    /// from [`crate::devices`] or a case-insensitive substring of a device or platform name.
    pub fn open(device: Option<&str>) -> Result<Session, Error> {
        Session::open_with_cache_dir(device, cache::default_cache_dir())
    }

    /// Like [`Session::open`] with an explicit program-cache directory; `None` turns the
    /// on-disk cache off (the in-memory one stays).
    pub fn open_with_cache_dir(device: Option<&str>, cache_dir: Option<PathBuf>) -> Result<Session, Error> {
        let mut found = device::enumerate()?;
        let index = device::select(&found, device)?;
        let chosen = found.swap_remove(index);
        let context = Context::from_device(&Device::new(chosen.id)).map_err(cl("clCreateContext"))?;
        // clCreateCommandQueue is the 1.2 entry point; NVIDIA's 3.0 driver still accepts it.
        #[allow(deprecated)]
        let queue =
            CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE).map_err(cl("clCreateCommandQueue"))?;
        Ok(Session {
            resident: Vec::new(),
            programs: HashMap::new(),
            queue,
            context,
            device: Device::new(chosen.id),
            info: chosen.info,
            platform_version: chosen.platform_version,
            cache_dir,
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// A session for `device`: one kept by [`Session::keep`] if [`keep_sessions`] is on and one
    /// was kept for the same device string, else a newly opened one.
    pub fn reuse(device: Option<&str>) -> Result<Session, Error> {
        let key = device.unwrap_or("").to_string();
        let kept = POOL
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_mut()
            .and_then(|p| p.remove(&key));
        match kept {
            Some(s) => Ok(s),
            None => Session::open(device),
        }
    }

    /// Hands a session back after a run that succeeded, for [`Session::reuse`]: its buffers
    /// and programs are released, its context and queue kept. Without [`keep_sessions`] (or
    /// if the queue cannot be drained) the session is simply dropped.
    pub fn keep(mut self, device: Option<&str>) {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = pool.as_mut() {
            if self.finish().is_ok() {
                self.resident.clear();
                self.programs.clear();
                p.insert(device.unwrap_or("").to_string(), self);
            }
        }
    }

    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    /// Runs a plan: checks it against the device limits, builds (or fetches) the program,
    /// uploads, launches `opts.repeats` times and reads back.
    pub fn run(&mut self, plan: &Plan, opts: &RunOptions) -> Result<RunResult, Error> {
        check_plan(plan, &self.info, opts)?;
        let build_cached = self.ensure_program(&plan.source, &plan.build_options)?;
        let key = (plan.source.clone(), plan.build_options.clone());
        let program = &self.programs[&key];

        let mut kernels: HashMap<&str, Kernel> = HashMap::new();
        for (li, l) in plan.launches.iter().enumerate() {
            if !kernels.contains_key(l.kernel.as_str()) {
                let k = Kernel::create(program, &l.kernel).map_err(|e| {
                    if e.0 == CL_INVALID_KERNEL_NAME {
                        Error::UnknownKernel {
                            launch: li,
                            kernel: l.kernel.clone(),
                        }
                    } else {
                        Error::Cl {
                            call: "clCreateKernel",
                            code: e.0,
                        }
                    }
                })?;
                kernels.insert(&l.kernel, k);
            }
            check_kernel_fit(
                li,
                l,
                &kernels[l.kernel.as_str()],
                self.device.id(),
                self.info.local_mem_bytes,
            )?;
        }

        let mut buffers = Vec::with_capacity(plan.buffers.len());
        for b in &plan.buffers {
            // SAFETY: no host pointer is passed, so the driver owns the allocation.
            let buf = unsafe {
                Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, alloc_bytes(b.bytes), ptr::null_mut())
            }
            .map_err(cl("clCreateBuffer"))?;
            buffers.push(buf);
        }

        let mut times: Vec<Vec<u64>> = vec![Vec::new(); plan.launches.len()];
        for _ in 0..opts.repeats {
            self.init_buffers(plan, &mut buffers)?;
            let mut events: Vec<Option<Event>> = Vec::with_capacity(plan.launches.len());
            for l in &plan.launches {
                let kernel = &kernels[l.kernel.as_str()];
                events.push(self.enqueue_launch(kernel, l, &buffers)?);
            }
            self.queue.finish().map_err(cl("clFinish"))?;
            if opts.profile {
                for (t, ev) in times.iter_mut().zip(&events) {
                    t.push(match ev {
                        Some(ev) => event_ns(ev)?,
                        None => 0,
                    });
                }
            }
        }

        let mut reads = Vec::with_capacity(plan.reads.len());
        for r in &plan.reads {
            reads.push(self.read(plan, &buffers, *r)?);
        }
        let kernel_times_ns = if opts.profile {
            plan.launches
                .iter()
                .zip(&mut times)
                .map(|(l, t)| (l.kernel.clone(), median_u64(t)))
                .collect()
        } else {
            Vec::new()
        };
        Ok(RunResult {
            reads,
            kernel_times_ns,
            build_cached,
        })
    }

    /// Builds (or fetches) a program and creates its kernels once, for launches on
    /// [`Resident`] buffers that run many times (host sections: a loop's kernels are made
    /// once, then launched every step with their arguments set anew).
    pub fn prepare(&mut self, source: &str, build_options: &str, kernels: &[&str]) -> Result<Prepared, Error> {
        // The kernels live in the returned value (kernel objects are not `Sync`, the session is).
        self.ensure_program(source, build_options)?;
        let program = &self.programs[&(source.to_string(), build_options.to_string())];
        let mut made = HashMap::new();
        for (li, name) in kernels.iter().enumerate() {
            if made.contains_key(*name) {
                continue;
            }
            let k = Kernel::create(program, name).map_err(|e| {
                if e.0 == CL_INVALID_KERNEL_NAME {
                    Error::UnknownKernel {
                        launch: li,
                        kernel: name.to_string(),
                    }
                } else {
                    Error::Cl {
                        call: "clCreateKernel",
                        code: e.0,
                    }
                }
            })?;
            made.insert(name.to_string(), k);
        }
        Ok(Prepared(made))
    }

    /// A device buffer that stays allocated until the session ends.
    pub fn alloc(&mut self, name: &str, bytes: usize) -> Result<Resident, Error> {
        let size = alloc_bytes(bytes);
        if size as u64 > self.info.max_alloc_bytes {
            return Err(Error::TooLarge {
                what: format!("buffer `{name}`"),
                bytes: size as u64,
                limit: self.info.max_alloc_bytes,
            });
        }
        // SAFETY: no host pointer is passed, so the driver owns the allocation.
        let buf = unsafe { Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, size, ptr::null_mut()) }
            .map_err(cl("clCreateBuffer"))?;
        self.resident.push((buf, bytes));
        Ok(Resident(self.resident.len() - 1))
    }

    pub fn bytes_of(&self, r: Resident) -> usize {
        self.resident[r.0].1
    }

    /// Blocking upload of exactly the buffer's size.
    pub fn upload(&mut self, r: Resident, data: &[u8]) -> Result<(), Error> {
        let (buf, bytes) = &mut self.resident[r.0];
        if data.len() != *bytes {
            return Err(Error::InvalidPlan(format!(
                "upload of {} bytes into a buffer of {bytes}",
                data.len()
            )));
        }
        if !data.is_empty() {
            // SAFETY: blocking write of `data.len()` bytes into a buffer of that size.
            unsafe { self.queue.enqueue_write_buffer(buf, CL_BLOCKING, 0, data, &[]) }
                .map_err(cl("clEnqueueWriteBuffer"))?;
        }
        Ok(())
    }

    /// Enqueues zeroing a buffer (counters and error flags before a launch).
    pub fn zero(&mut self, r: Resident) -> Result<(), Error> {
        let (buf, bytes) = &mut self.resident[r.0];
        let size = alloc_bytes(*bytes);
        let width = [16usize, 8, 4, 2, 1]
            .into_iter()
            .find(|&w| size.is_multiple_of(w))
            .unwrap_or(1);
        let pattern = vec![0u8; width];
        // SAFETY: fills exactly the allocated size; OpenCL copies the pattern at enqueue time.
        unsafe { self.queue.enqueue_fill_buffer(buf, &pattern, 0, size, &[]) }.map_err(cl("clEnqueueFillBuffer"))?;
        Ok(())
    }

    /// Enqueues a device-to-device copy of `src` into `dst` (of at least its size).
    pub fn copy(&mut self, src: Resident, dst: Resident) -> Result<(), Error> {
        let bytes = self.resident[src.0].1;
        if bytes == 0 {
            return Ok(());
        }
        if self.resident[dst.0].1 < bytes || src == dst {
            return Err(Error::InvalidPlan(format!(
                "copy of {bytes} bytes between buffers {} and {}",
                src.0, dst.0
            )));
        }
        let (lo, hi) = self.resident.split_at_mut(src.0.max(dst.0));
        let (s, d) = if src.0 < dst.0 {
            (&lo[src.0].0, &mut hi[0].0)
        } else {
            (&hi[0].0, &mut lo[dst.0].0)
        };
        // SAFETY: both buffers hold at least `bytes` bytes (checked above).
        unsafe { self.queue.enqueue_copy_buffer(s, d, 0, 0, bytes, &[]) }.map_err(cl("clEnqueueCopyBuffer"))?;
        Ok(())
    }

    /// Checks one launch of prepared kernels against the kernel's own limits (once per
    /// distinct launch, before the first).
    pub fn check_launch(&self, p: &Prepared, l: &crate::plan::Launch) -> Result<(), Error> {
        let kernel = p.0.get(&l.kernel).ok_or_else(|| Error::UnknownKernel {
            launch: 0,
            kernel: l.kernel.clone(),
        })?;
        check_kernel_fit(0, l, kernel, self.device.id(), self.info.local_mem_bytes)
    }

    /// Enqueues one launch of a prepared kernel whose `KernelArg::Buffer`s are [`Resident`]
    /// indices; nothing waits. `None` when it has no work.
    pub fn enqueue_resident(&self, p: &Prepared, l: &crate::plan::Launch) -> Result<Option<LaunchEvent>, Error> {
        let kernel = p.0.get(&l.kernel).ok_or_else(|| Error::UnknownKernel {
            launch: 0,
            kernel: l.kernel.clone(),
        })?;
        if let Some(bad) = l.args.iter().find_map(|a| match a {
            KernelArg::Buffer(b) if *b >= self.resident.len() => Some(*b),
            _ => None,
        }) {
            return Err(Error::InvalidPlan(format!(
                "launch of `{}` names buffer {bad}, which does not exist",
                l.kernel
            )));
        }
        let bufs: Vec<&Buffer<u8>> = self.resident.iter().map(|(b, _)| b).collect();
        Ok(self.enqueue_on(kernel, l, &bufs)?.map(LaunchEvent))
    }

    /// Starts reading `len` bytes at `offset` of a resident buffer without waiting: the read
    /// follows the launches before it on the in-order queue, and later launches can be
    /// enqueued before its result is asked for.
    pub fn read_later(&self, r: Resident, offset: usize, len: usize) -> Result<PendingRead, Error> {
        let (buf, bytes) = &self.resident[r.0];
        if offset + len > *bytes {
            return Err(Error::InvalidPlan(format!(
                "read of {len} bytes at {offset} of a buffer of {bytes}"
            )));
        }
        let mut data = vec![0u8; len.max(1)].into_boxed_slice();
        // SAFETY: `data` is heap memory owned by the returned `PendingRead`, which waits for
        // the event before giving it out or dropping it, so the driver writes into live memory.
        let event = unsafe {
            self.queue
                .enqueue_read_buffer(buf, CL_NON_BLOCKING, offset, &mut data[..len], &[])
        }
        .map_err(cl("clEnqueueReadBuffer"))?;
        self.queue.flush().map_err(cl("clFlush"))?;
        Ok(PendingRead {
            data,
            len,
            event: Some(event),
        })
    }

    /// Blocking read of a whole resident buffer.
    pub fn read_resident(&self, r: Resident, offset: usize, len: usize) -> Result<Vec<u8>, Error> {
        let (buf, bytes) = &self.resident[r.0];
        if offset + len > *bytes {
            return Err(Error::InvalidPlan(format!(
                "read of {len} bytes at {offset} of a buffer of {bytes}"
            )));
        }
        self.read_bytes(buf, offset, len)
    }

    /// Hands the enqueued work to the device without waiting.
    pub fn flush(&self) -> Result<(), Error> {
        self.queue.flush().map_err(cl("clFlush"))
    }

    /// Waits for everything enqueued.
    pub fn finish(&self) -> Result<(), Error> {
        self.queue.finish().map_err(cl("clFinish"))
    }

    /// Median time in nanoseconds of a device-to-device copy of `bytes` bytes, after one
    /// warm-up copy: the memory-bandwidth baseline that benchmark results are compared to.
    pub fn copy_baseline(&mut self, bytes: usize, repeats: usize) -> Result<f64, Error> {
        let size = alloc_bytes(bytes);
        if size as u64 > self.info.max_alloc_bytes {
            return Err(Error::TooLarge {
                what: "the copy-baseline buffer".into(),
                bytes: size as u64,
                limit: self.info.max_alloc_bytes,
            });
        }
        if (size as u64).saturating_mul(2) > self.info.global_mem_bytes {
            return Err(Error::TooLarge {
                what: "the two copy-baseline buffers".into(),
                bytes: (size as u64).saturating_mul(2),
                limit: self.info.global_mem_bytes,
            });
        }
        let create = || {
            // SAFETY: no host pointer is passed.
            unsafe { Buffer::<u8>::create(&self.context, CL_MEM_READ_WRITE, size, ptr::null_mut()) }
                .map_err(cl("clCreateBuffer"))
        };
        let src = create()?;
        let mut dst = create()?;
        let mut samples = Vec::with_capacity(repeats.max(1));
        for i in 0..=repeats.max(1) {
            // SAFETY: both buffers are `size` bytes long and outlive the event wait below.
            let ev = unsafe { self.queue.enqueue_copy_buffer(&src, &mut dst, 0, 0, size, &[]) }
                .map_err(cl("clEnqueueCopyBuffer"))?;
            ev.wait().map_err(cl("clWaitForEvents"))?;
            if i > 0 {
                samples.push(event_ns(&ev)?);
            }
        }
        samples.sort_unstable();
        let n = samples.len();
        Ok(if n % 2 == 1 {
            samples[n / 2] as f64
        } else {
            (samples[n / 2 - 1] as f64 + samples[n / 2] as f64) / 2.0
        })
    }

    /// Makes sure `(source, options)` is in the in-memory cache; returns whether it came
    /// from a cache (memory or disk) rather than from the compiler.
    fn ensure_program(&mut self, source: &str, options: &str) -> Result<bool, Error> {
        let key = (source.to_string(), options.to_string());
        if self.programs.contains_key(&key) {
            return Ok(true);
        }
        // Kernels that choose a code path by the kind of device read `LIFT_GPU` (the filter's
        // tile shape, vector loads and prefetch are for GPUs).
        let gpu = crate::device::gpu_paths(self.info.kind);
        // `LIFT_GPU_DEVICE`: the device really is a GPU (whatever `LIFT_GPU_PATHS` forces, and
        // not Oclgrind's simulator, which says it is one): the filter reads its look-back's
        // status words with plain volatile loads there, atomics elsewhere (plain loads of words
        // that other groups write with atomics are races in OpenCL 1.2's terms, which Oclgrind
        // checks).
        let device = crate::device::gpu_device(&self.info);
        let options = &format!("{options} -D LIFT_GPU={gpu} -D LIFT_GPU_DEVICE={device}");
        // A diagnostic aid beside `LIFT_DUMP_BINARY`: extra driver options (`-cl-nv-verbose`
        // makes NVIDIA's build log name each kernel's registers and shared memory).
        let options = &match std::env::var("LIFT_EXTRA_BUILD_OPTIONS") {
            Ok(extra) if !extra.trim().is_empty() => format!("{options} {extra}"),
            _ => options.clone(),
        };
        let disk_key = cache::Key::new(&[
            &self.info.name,
            &self.info.driver_version,
            &self.info.version,
            &self.info.platform,
            &self.platform_version,
            options,
            source,
        ]);
        if let Some(dir) = &self.cache_dir {
            if let Some(binary) = cache::load(dir, &disk_key) {
                if let Some(program) = self.build_from_binary(&binary, options) {
                    self.programs.insert(key, program);
                    return Ok(true);
                }
            }
        }
        let started = std::time::Instant::now();
        let program = self.build_from_source(source, options)?;
        dump_build(&program, source, options, started.elapsed());
        if let Some(dir) = &self.cache_dir {
            if let Ok(mut binaries) = program.get_binaries() {
                if let Some(binary) = binaries.pop().filter(|b| !b.is_empty()) {
                    cache::store(dir, &disk_key, &binary);
                }
            }
        }
        self.programs.insert(key, program);
        Ok(false)
    }

    /// Any failure means "not usable": the caller falls back to building from source.
    fn build_from_binary(&self, binary: &[u8], options: &str) -> Option<Program> {
        // SAFETY: `self.device` belongs to `self.context`.
        let mut program = unsafe { Program::create_from_binary(&self.context, &[self.device.id()], &[binary]) }.ok()?;
        program.build(&[self.device.id()], options).ok()?;
        Some(program)
    }

    fn build_from_source(&self, source: &str, options: &str) -> Result<Program, Error> {
        let mut program =
            Program::create_from_source(&self.context, source).map_err(cl("clCreateProgramWithSource"))?;
        match program.build(&[self.device.id()], options) {
            Ok(()) => Ok(program),
            Err(e) if e.0 == CL_BUILD_PROGRAM_FAILURE => {
                let log = program.get_build_log(self.device.id()).unwrap_or_default();
                let log = if log.trim().is_empty() {
                    "(the driver gave no build log)".to_string()
                } else {
                    log
                };
                Err(Error::Build { log })
            }
            Err(e) if e.0 == CL_INVALID_BUILD_OPTIONS => Err(Error::Build {
                log: format!("the driver rejected the build options {options:?}"),
            }),
            Err(e) => Err(Error::Cl {
                call: "clBuildProgram",
                code: e.0,
            }),
        }
    }

    fn init_buffers(&self, plan: &Plan, buffers: &mut [Buffer<u8>]) -> Result<(), Error> {
        for (spec, buf) in plan.buffers.iter().zip(buffers.iter_mut()) {
            match &spec.init {
                BufferInit::Data(data) if !data.is_empty() => {
                    // SAFETY: blocking write of `data.len() == spec.bytes` bytes (checked by
                    // check_plan) into a buffer at least that large.
                    unsafe { self.queue.enqueue_write_buffer(buf, CL_BLOCKING, 0, data, &[]) }
                        .map_err(cl("clEnqueueWriteBuffer"))?;
                }
                BufferInit::Zeroed => {
                    let size = alloc_bytes(spec.bytes);
                    // The fill size must be a multiple of the pattern size; a wider pattern
                    // lets drivers fill faster.
                    let width = [16usize, 8, 4, 2, 1]
                        .into_iter()
                        .find(|&w| size.is_multiple_of(w))
                        .unwrap_or(1);
                    let pattern = vec![0u8; width];
                    // SAFETY: fills exactly the allocated size; the in-order queue keeps the
                    // pattern's use before the later `finish`, and OpenCL copies the pattern
                    // at enqueue time.
                    unsafe { self.queue.enqueue_fill_buffer(buf, &pattern, 0, size, &[]) }
                        .map_err(cl("clEnqueueFillBuffer"))?;
                }
                BufferInit::Data(_) | BufferInit::Uninit => {}
            }
        }
        Ok(())
    }

    /// Enqueues one launch; `None` when it has no work (a zero global size), which OpenCL 1.2
    /// would reject.
    fn enqueue_launch(
        &self,
        kernel: &Kernel,
        l: &crate::plan::Launch,
        buffers: &[Buffer<u8>],
    ) -> Result<Option<Event>, Error> {
        let bufs: Vec<&Buffer<u8>> = buffers.iter().collect();
        self.enqueue_on(kernel, l, &bufs)
    }

    fn enqueue_on(
        &self,
        kernel: &Kernel,
        l: &crate::plan::Launch,
        buffers: &[&Buffer<u8>],
    ) -> Result<Option<Event>, Error> {
        if l.global.contains(&0) {
            return Ok(None);
        }
        for (i, arg) in l.args.iter().enumerate() {
            let i = i as u32;
            let set = cl("clSetKernelArg");
            // SAFETY: argument sizes match the OpenCL C types the compiler emits for each
            // variant; the count was checked against CL_KERNEL_NUM_ARGS.
            unsafe {
                match *arg {
                    KernelArg::Buffer(b) => {
                        let mem: cl_mem = buffers[b].get();
                        kernel.set_arg(i, &mem)
                    }
                    KernelArg::Local(bytes) => kernel.set_arg_local_buffer(i, bytes.max(1)),
                    KernelArg::I32(v) => kernel.set_arg(i, &v),
                    KernelArg::U32(v) => kernel.set_arg(i, &v),
                    KernelArg::I64(v) => kernel.set_arg(i, &v),
                    KernelArg::U64(v) => kernel.set_arg(i, &v),
                    KernelArg::F32(v) => kernel.set_arg(i, &v),
                    KernelArg::F64(v) => kernel.set_arg(i, &v),
                }
            }
            .map_err(set)?;
        }
        let local_ptr = match &l.local {
            Some(local) => local.as_ptr(),
            None => ptr::null(),
        };
        // SAFETY: `global` and `local` have `global.len()` entries (checked by check_plan)
        // and live until the call returns; OpenCL copies them.
        let ev = unsafe {
            self.queue.enqueue_nd_range_kernel(
                kernel.get(),
                l.global.len() as u32,
                ptr::null(),
                l.global.as_ptr(),
                local_ptr,
                &[],
            )
        }
        .map_err(cl("clEnqueueNDRangeKernel"))?;
        Ok(Some(ev))
    }

    fn read(&self, plan: &Plan, buffers: &[Buffer<u8>], spec: ReadSpec) -> Result<Vec<u8>, Error> {
        match spec {
            ReadSpec::Whole(b) => self.read_bytes(&buffers[b], 0, plan.buffers[b].bytes),
            ReadSpec::Counted {
                data,
                count,
                count_index,
                elem_bytes,
            } => {
                let raw = self.read_bytes(&buffers[count], count_index * 4, 4)?;
                let n = i32::from_ne_bytes([raw[0], raw[1], raw[2], raw[3]]);
                let capacity = plan.buffers[data].bytes;
                let bad = || Error::BadCount {
                    buffer: plan.buffers[data].name.clone(),
                    count: i64::from(n),
                    elem_bytes,
                    buffer_bytes: capacity,
                };
                let n = usize::try_from(n).map_err(|_| bad())?;
                let len = n
                    .checked_mul(elem_bytes)
                    .filter(|&len| len <= capacity)
                    .ok_or_else(bad)?;
                self.read_bytes(&buffers[data], 0, len)
            }
        }
    }

    fn read_bytes(&self, buf: &Buffer<u8>, offset: usize, len: usize) -> Result<Vec<u8>, Error> {
        let mut out = vec![0u8; len];
        if len > 0 {
            // SAFETY: blocking read of `len` bytes at `offset`; callers keep that within the
            // buffer (check_plan / the count check).
            unsafe { self.queue.enqueue_read_buffer(buf, CL_BLOCKING, offset, &mut out, &[]) }
                .map_err(cl("clEnqueueReadBuffer"))?;
        }
        Ok(out)
    }
}

/// Limits that only exist once the kernel is created: its argument count and its own
/// maximum work-group size, which register use can push below the device's.
fn check_kernel_fit(
    li: usize,
    l: &crate::plan::Launch,
    kernel: &Kernel,
    device: cl_device_id,
    local_limit: u64,
) -> Result<(), Error> {
    let n = kernel.num_args().map_err(cl("clGetKernelInfo"))? as usize;
    if n != l.args.len() {
        return Err(Error::InvalidPlan(format!(
            "launch {li}: kernel `{}` takes {n} arguments but the plan passes {}",
            l.kernel,
            l.args.len()
        )));
    }
    // The driver's own count of the kernel's static local memory covers element types that
    // check_plan cannot size from the source.
    let dynamic = l.args.iter().fold(0u64, |acc, a| match *a {
        KernelArg::Local(bytes) => acc.saturating_add(bytes as u64),
        _ => acc,
    });
    let used = kernel
        .get_local_mem_size(device)
        .map_err(cl("clGetKernelWorkGroupInfo"))?
        .saturating_add(dynamic);
    if used > local_limit {
        return Err(Error::TooLarge {
            what: format!("the local memory of launch {li} (kernel `{}`)", l.kernel),
            bytes: used,
            limit: local_limit,
        });
    }
    if let Some(local) = &l.local {
        let max = kernel
            .get_work_group_size(device)
            .map_err(cl("clGetKernelWorkGroupInfo"))?;
        let product = local.iter().try_fold(1usize, |acc, &x| acc.checked_mul(x));
        if let Some(product) = product.filter(|&p| p > max) {
            return Err(Error::WorkGroup {
                launch: li,
                kernel: l.kernel.clone(),
                reason: format!(
                    "the local size {local:?} has {product} work-items, but this kernel allows \
                     at most {max} on this device"
                ),
            });
        }
    }
    Ok(())
}

fn event_ns(ev: &Event) -> Result<u64, Error> {
    let start = ev.profiling_command_start().map_err(cl("clGetEventProfilingInfo"))?;
    let end = ev.profiling_command_end().map_err(cl("clGetEventProfilingInfo"))?;
    Ok(end.saturating_sub(start))
}

/// A buffer allocated by [`Session::alloc`], valid for the session's life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Resident(pub usize);

/// Kernels made by [`Session::prepare`], used with the session that made them.
pub struct Prepared(HashMap<String, Kernel>);

/// The event of one enqueued launch, for its device time once the queue has run it.
pub struct LaunchEvent(Event);

impl LaunchEvent {
    /// Device time of the launch (profiling queue); call after the queue finished it.
    pub fn ns(&self) -> Result<u64, Error> {
        event_ns(&self.0)
    }
    /// When the launch started and ended on the device's clock.
    pub fn span_ns(&self) -> Result<(u64, u64), Error> {
        let start = self
            .0
            .profiling_command_start()
            .map_err(cl("clGetEventProfilingInfo"))?;
        let end = self.0.profiling_command_end().map_err(cl("clGetEventProfilingInfo"))?;
        Ok((start, end))
    }
}

/// A read started by [`Session::read_later`].
pub struct PendingRead {
    data: Box<[u8]>,
    len: usize,
    event: Option<Event>,
}

impl PendingRead {
    /// Waits for the read and returns its bytes.
    pub fn wait(mut self) -> Result<Vec<u8>, Error> {
        if let Some(ev) = self.event.take() {
            ev.wait().map_err(cl("clWaitForEvents"))?;
        }
        Ok(self.data[..self.len].to_vec())
    }
}

impl Drop for PendingRead {
    fn drop(&mut self) {
        // The driver may still be writing into `data`: it must outlive the read.
        if let Some(ev) = self.event.take() {
            let _ = ev.wait();
        }
    }
}

/// `LIFT_DUMP_BINARY=DIR` writes each program built from source (its OpenCL C, and the driver's
/// binary: PTX on NVIDIA, which is how we check what the driver made of a kernel: vector loads,
/// fused multiply-adds, registers) and appends the driver's build time to `DIR/builds.tsv`.
/// A diagnostic aid only: failures to write are ignored.
fn dump_build(program: &Program, source: &str, options: &str, took: std::time::Duration) {
    let Some(dir) = std::env::var_os("LIFT_DUMP_BINARY") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let key = format!("{:016x}", cache::fnv1a64(format!("{options}\n{source}").as_bytes()));
    let _ = std::fs::write(dir.join(format!("{key}.cl")), source);
    if let Ok(mut binaries) = program.get_binaries() {
        if let Some(binary) = binaries.pop().filter(|b| !b.is_empty()) {
            let _ = std::fs::write(dir.join(format!("{key}.bin")), binary);
        }
    }
    if let Some(device) = program.get_devices().ok().and_then(|d| d.first().copied()) {
        if let Ok(log) = program.get_build_log(device as opencl3::types::cl_device_id) {
            let _ = std::fs::write(dir.join(format!("{key}.log")), log);
        }
    }
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("builds.tsv"))
    {
        let _ = writeln!(
            f,
            "{key}\t{:.1}\t{}\t{options}",
            took.as_secs_f64() * 1e3,
            source.lines().count()
        );
    }
}

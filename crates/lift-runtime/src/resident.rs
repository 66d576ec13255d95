//! One compiled program kept on one device across many runs (the multi-device planner's host
//! loops, `lift bench --devices`): kernels built once, inputs in resident buffers uploaded only
//! when they change.

use crate::host::HostVal;
use crate::launch::*;
use codegen_opencl::KernelPlan;
use ir::interp::Value;
use ir::Type;
use lift_compile::Error;
use lift_data::layout::{decode_dims, encode, layout};
use lift_data::Inputs;
use memalloc::Role;
use std::collections::BTreeMap;

/// One compiled program kept on one device across many runs (`devices`' host loops): its
/// kernels built once, every input in a resident buffer that is uploaded only when it changes,
/// and its result read back after each launch.
pub struct Resident {
    pub(crate) session: host_runner::Session,
    pub(crate) plan: KernelPlan,
    pub(crate) prepared: host_runner::Prepared,
    pub(crate) env: Env,
    /// Per parameter: its buffer (arrays) or value (scalars).
    pub(crate) params: Vec<HostVal>,
    /// Per plan buffer that is neither input nor output: its storage, and which are zeroed.
    pub(crate) fixed: BTreeMap<usize, host_runner::Resident>,
    pub(crate) zeroed: Vec<host_runner::Resident>,
    pub(crate) out: host_runner::Resident,
    pub(crate) out_dims: Vec<usize>,
    pub(crate) out_elem: Type,
    pub(crate) flag: host_runner::Resident,
}

impl Resident {
    /// Opens `device`, builds `plan`'s kernels, makes its buffers at `inputs`' sizes and
    /// uploads every input.
    pub fn new(plan: &KernelPlan, ty: &Type, inputs: &Inputs, device: Option<&str>) -> Result<Resident, Error> {
        let mut r = Resident::open(plan, ty, &inputs.sizes, device)?;
        for (k, v) in inputs.values.iter().enumerate() {
            let hv = r.make_param(k, v)?;
            r.params.push(hv);
        }
        Ok(r)
    }

    /// [`Resident::new`] from each parameter's buffer bytes as they are (an MPI rank receives
    /// its slice as bytes and never makes values of it): `params[k]` is parameter `k`'s.
    pub fn with_bytes(
        plan: &KernelPlan,
        ty: &Type,
        sizes: &BTreeMap<String, i64>,
        params: Vec<ParamData>,
        device: Option<&str>,
    ) -> Result<Resident, Error> {
        let mut r = Resident::open(plan, ty, sizes, device)?;
        for (k, p) in params.into_iter().enumerate() {
            let hv = match (p, r.param_type(k)) {
                (ParamData::Bytes(data), Some(_)) => {
                    let want = r.param_bytes(k)?;
                    if data.len() != want {
                        return Err(Error::plain(format!(
                            "internal: parameter {k} has {} bytes, its buffer {want}",
                            data.len()
                        )));
                    }
                    let b = r.session.alloc("parameter", data.len().max(1)).map_err(run_error)?;
                    r.session.upload(b, &data).map_err(run_error)?;
                    HostVal::Dev(b)
                }
                (ParamData::Value(v), _) => r.make_param(k, &v)?,
                // (an array the kernels never read has no buffer: nothing to upload)
                (ParamData::Bytes(_), None) => HostVal::Scalar(Value::Array(vec![])),
            };
            r.params.push(hv);
        }
        Ok(r)
    }

    /// Whether parameter `k` has a buffer (an array the kernels read).
    pub fn reads_param(&self, k: usize) -> bool {
        self.param_type(k).is_some()
    }

    /// The bytes of parameter `k`'s buffer at this program's sizes.
    fn param_bytes(&self, k: usize) -> Result<usize, Error> {
        let b = self
            .plan
            .memory
            .buffers
            .iter()
            .find(|b| b.role == Role::Input(k))
            .ok_or_else(|| Error::plain(format!("internal: parameter {k} has no buffer")))?;
        let n = self.env.eval(&b.len, &format!("the length of buffer {}", b.name))?;
        Ok(n * layout(&b.elem).0)
    }

    /// Opens `device`, builds the kernels and makes every buffer but the parameters'.
    fn open(
        plan: &KernelPlan,
        ty: &Type,
        sizes: &BTreeMap<String, i64>,
        device: Option<&str>,
    ) -> Result<Resident, Error> {
        let mut session = host_runner::Session::open(device).map_err(run_error)?;
        if plan.result.lengths.is_some() {
            return Err(Error::plain("internal: a resident program returning a filter result"));
        }
        let env = Env::of_plan(plan, sizes)?;
        let names: Vec<&str> = plan.kernels.iter().map(|k| k.name.as_str()).collect();
        let prepared = session
            .prepare(&plan.source, "-cl-std=CL1.2", &names)
            .map_err(run_error)?;
        let (fixed, zeroed, out_bytes) = resident_buffers(&mut session, plan, &env)?;
        let out = session.alloc("result", out_bytes.max(1)).map_err(run_error)?;
        let flag = session.alloc("e_flag", 4).map_err(run_error)?;
        session.zero(flag).map_err(run_error)?;
        let (out_dims, out_elem) = shape(ty, sizes)?;
        Ok(Resident {
            session,
            plan: plan.clone(),
            prepared,
            env,
            params: vec![],
            fixed,
            zeroed,
            out,
            out_dims,
            out_elem,
            flag,
        })
    }

    pub(crate) fn param_type(&self, k: usize) -> Option<Type> {
        self.plan.memory.buffers.iter().find_map(|b| match b.role {
            Role::Input(p) if p == k => Some(b.elem.clone()),
            _ => None,
        })
    }

    pub(crate) fn make_param(&mut self, k: usize, v: &Value) -> Result<HostVal, Error> {
        match self.param_type(k) {
            Some(elem) => {
                let mut data = vec![];
                encode(v, &elem, &mut data)?;
                let r = self.session.alloc("parameter", data.len().max(1)).map_err(run_error)?;
                self.session.upload(r, &data).map_err(run_error)?;
                Ok(HostVal::Dev(r))
            }
            // A parameter without a buffer is a scalar argument (or unused).
            None => Ok(HostVal::Scalar(v.clone())),
        }
    }

    /// Replaces parameter `k`'s value (same length) on the device.
    pub fn set(&mut self, k: usize, v: &Value) -> Result<(), Error> {
        match self.params[k].clone() {
            HostVal::Dev(r) => {
                let elem = self.param_type(k).expect("a buffer parameter has a type");
                let mut data = Vec::with_capacity(self.session.bytes_of(r));
                encode(v, &elem, &mut data)?;
                self.session.upload(r, &data).map_err(run_error)
            }
            HostVal::Scalar(_) => {
                self.params[k] = HostVal::Scalar(v.clone());
                Ok(())
            }
            HostVal::Exist(..) => Err(Error::plain(format!("internal: parameter {k} is a filter result"))),
        }
    }

    /// Runs every kernel once and reads the result back.
    pub fn launch(&mut self) -> Result<Value, Error> {
        let bytes = self.launch_bytes()?;
        Ok(decode_dims(&bytes, &self.out_dims, &self.out_elem))
    }

    /// [`Resident::launch`] without decoding: the result buffer's bytes (an MPI host loop
    /// moves rows of them between ranks and uploads them with [`Resident::upload_param`]).
    pub fn launch_bytes(&mut self) -> Result<Vec<u8>, Error> {
        self.enqueue_kernels()?;
        let bytes = self
            .session
            .read_resident(self.out, 0, self.session.bytes_of(self.out))
            .map_err(run_error)?;
        self.check_flag()?;
        Ok(bytes)
    }

    /// Zeroes what must start at zero and enqueues every kernel once: their events.
    pub(crate) fn enqueue_kernels(&mut self) -> Result<Vec<host_runner::LaunchEvent>, Error> {
        for r in &self.zeroed {
            self.session.zero(*r).map_err(run_error)?;
        }
        let mut events = vec![];
        for k in &self.plan.kernels {
            let launch = launch_of(
                &self.plan,
                k,
                &self.env,
                host_runner::KernelArg::Buffer(self.flag.0),
                |b| {
                    let r = match self.plan.memory.buffers[b].role {
                        Role::Input(p) => match &self.params[p] {
                            HostVal::Dev(r) => *r,
                            HostVal::Scalar(_) | HostVal::Exist(..) => {
                                return Err(Error::plain(format!("internal: input {p} is not on the device")))
                            }
                        },
                        Role::Output => self.out,
                        _ => *self.fixed.get(&b).ok_or_else(|| {
                            Error::plain(format!("internal: buffer {b} of a resident program has no storage"))
                        })?,
                    };
                    Ok(host_runner::KernelArg::Buffer(r.0))
                },
                |p| match &self.params[p] {
                    HostVal::Scalar(v) => scalar_arg(v),
                    v => Err(Error::plain(format!("internal: parameter value {v:?} is not a scalar"))),
                },
            )?;
            self.session.check_launch(&self.prepared, &launch).map_err(run_error)?;
            events.extend(
                self.session
                    .enqueue_resident(&self.prepared, &launch)
                    .map_err(run_error)?,
            );
        }
        Ok(events)
    }

    /// The error of the device-side checks, read after the kernels ran.
    pub(crate) fn check_flag(&self) -> Result<(), Error> {
        if self.plan.uses_error_flag() {
            let b = self.session.read_resident(self.flag, 0, 4).map_err(run_error)?;
            let flag = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            flag_error(&self.plan, flag, &self.env, |b| {
                read_int(&self.session, self.fixed.get(&b).copied())
            })?;
        }
        Ok(())
    }
}

/// A host loop over MPI ranks: each step's result stays on the device, its own rows go to the
/// next step's input there, and only the halo rows cross the host.
impl Resident {
    /// Runs every kernel once and leaves the result on the device.
    pub fn launch_resident(&mut self) -> Result<(), Error> {
        self.enqueue_kernels()?;
        self.check_flag()
    }

    /// The bytes of the result buffer.
    pub fn result_len(&self) -> usize {
        self.session.bytes_of(self.out)
    }

    /// `len` bytes of the result from byte `offset` (blocking).
    pub fn read_result(&self, offset: usize, len: usize) -> Result<Vec<u8>, Error> {
        self.session.read_resident(self.out, offset, len).map_err(run_error)
    }

    /// Writes `data` into parameter `k`'s buffer from byte `offset`.
    pub fn write_param_at(&mut self, k: usize, offset: usize, data: &[u8]) -> Result<(), Error> {
        match self.params.get(k) {
            Some(HostVal::Dev(r)) => self.session.write_at(*r, offset, data).map_err(run_error),
            _ => Err(Error::plain(format!("internal: parameter {k} has no buffer"))),
        }
    }

    /// Copies `len` bytes of the result from byte `from` into parameter `k`'s buffer at `to`,
    /// on the device.
    pub fn copy_result_to_param(&mut self, k: usize, from: usize, to: usize, len: usize) -> Result<(), Error> {
        match self.params.get(k) {
            Some(HostVal::Dev(r)) => self.session.copy_range(self.out, from, *r, to, len).map_err(run_error),
            _ => Err(Error::plain(format!("internal: parameter {k} has no buffer"))),
        }
    }
}

/// A parameter's first value for [`Resident::with_bytes`].
pub enum ParamData {
    /// The bytes of its buffer, as `lift_data::layout::encode` makes them of its value with
    /// [`elem_of`] its type.
    Bytes(Vec<u8>),
    /// A value: a scalar argument (or an array, encoded here).
    Value(Value),
}

/// The element type of the buffer that holds a value of type `t` (its arrays' innermost
/// elements, row-major): what [`ParamData::Bytes`] and [`decode_as`] read.
pub fn elem_of(t: &Type) -> Type {
    memalloc::dims_of(t).1
}

/// The value of type `t` at `sizes` whose buffer bytes are `bytes` (what
/// [`Resident::launch_bytes`] returns, or the concatenation of the bytes of consecutive parts).
pub fn decode_as(t: &Type, sizes: &BTreeMap<String, i64>, bytes: &[u8]) -> Result<Value, Error> {
    let (dims, elem) = shape(t, sizes)?;
    let want = dims.iter().product::<usize>() * layout(&elem).0;
    if bytes.len() != want {
        return Err(Error::plain(format!(
            "internal: a result of {} bytes where its type {t} has {want}",
            bytes.len()
        )));
    }
    Ok(decode_dims(bytes, &dims, &elem))
}

/// What one profiled launch of a [`Resident`] program took: its kernels on the device's
/// clock, and on the host the blocking read of its result and the decoding of those bytes.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResidentTimes {
    pub kernel_ns: u64,
    pub download_ms: f64,
    pub decode_ms: f64,
}

/// Measured runs (`lift bench --devices`): an input's bytes are made once, before the timed
/// runs, so that a timed upload is the blocking write alone.
impl Resident {
    /// Parameter `k`'s value as the bytes of its buffer (`None`: a scalar argument).
    pub fn encode_param(&self, k: usize, v: &Value) -> Result<Option<Vec<u8>>, Error> {
        match self.params.get(k) {
            Some(HostVal::Dev(r)) => {
                let elem = self.param_type(k).expect("a buffer parameter has a type");
                let mut data = Vec::with_capacity(self.session.bytes_of(*r));
                encode(v, &elem, &mut data)?;
                Ok(Some(data))
            }
            Some(HostVal::Scalar(_)) => Ok(None),
            Some(HostVal::Exist(..)) | None => Err(Error::plain(format!(
                "internal: a resident program has no parameter {k}"
            ))),
        }
    }

    /// Blocking upload of bytes made by [`Resident::encode_param`] into parameter `k`'s buffer.
    pub fn upload_param(&mut self, k: usize, data: &[u8]) -> Result<(), Error> {
        match self.params.get(k) {
            Some(HostVal::Dev(r)) => self.session.upload(*r, data).map_err(run_error),
            _ => Err(Error::plain(format!("internal: parameter {k} has no buffer"))),
        }
    }

    /// [`Resident::launch`] with each phase timed: the queue is drained after the kernels so
    /// that the read that follows is the transfer alone.
    pub fn launch_profiled(&mut self) -> Result<(Value, ResidentTimes), Error> {
        let events = self.enqueue_kernels()?;
        self.session.finish().map_err(run_error)?;
        let mut times = ResidentTimes::default();
        for e in &events {
            times.kernel_ns += e.ns().map_err(run_error)?;
        }
        let t = std::time::Instant::now();
        let bytes = self
            .session
            .read_resident(self.out, 0, self.session.bytes_of(self.out))
            .map_err(run_error)?;
        times.download_ms = t.elapsed().as_secs_f64() * 1e3;
        self.check_flag()?;
        let t = std::time::Instant::now();
        let value = decode_dims(&bytes, &self.out_dims, &self.out_elem);
        times.decode_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok((value, times))
    }
}

/// The buffers a plan keeps on the device for a resident run: temporaries, and lengths and
/// scratch (to be zeroed before every launch) by plan buffer index; and the output's size in bytes
/// (inputs and the output are bound per launch).
pub(crate) type ResidentBuffers = (
    BTreeMap<usize, host_runner::Resident>,
    Vec<host_runner::Resident>,
    usize,
);

pub(crate) fn resident_buffers(
    session: &mut host_runner::Session,
    plan: &KernelPlan,
    env: &Env,
) -> Result<ResidentBuffers, Error> {
    let mut fixed = BTreeMap::new();
    let mut zeroed = vec![];
    let mut out_bytes = 0;
    for (i, b) in plan.global_buffers() {
        let n = env.eval(&b.len, &format!("the length of buffer {}", b.name))?;
        let (esz, _) = layout(&b.elem);
        let bytes = n
            .checked_mul(esz)
            .ok_or_else(|| Error::plain(format!("buffer {} is too large", b.name)))?;
        match b.role {
            Role::Input(_) | Role::InputLength(_) => {}
            Role::Output => out_bytes = bytes,
            Role::Temp => {
                fixed.insert(i, session.alloc(&b.name, bytes).map_err(run_error)?);
            }
            Role::OutputLength | Role::TempLength | Role::Scratch => {
                let r = session.alloc(&b.name, bytes).map_err(run_error)?;
                fixed.insert(i, r);
                zeroed.push(r);
            }
        }
    }
    Ok((fixed, zeroed, out_bytes))
}

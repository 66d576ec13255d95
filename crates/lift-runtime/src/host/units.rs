//! Launching a host program's units: their buffers made on first launch and kept for the run,
//! their device-side checks read back, and their profiled times.

use super::*;
use crate::resident::resident_buffers;

impl HostExec<'_> {
    pub(crate) fn launch_unit(&mut self, u: usize, dest: Option<HostVal>) -> Result<HostVal, Error> {
        let unit = &self.hp.units[u];
        let plan = unit
            .compiled
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: a unit without kernels"))?;
        if self.units[u].is_none() {
            let rt = self.make_unit(u, plan)?;
            self.units[u] = Some(rt);
        }
        let mut rt = self.units[u].take().expect("made above");
        let r = self.launch_with(u, plan, &mut rt, dest);
        self.units[u] = Some(rt);
        if self.check_each && r.is_ok() {
            self.check_unit_flag(u)?;
        }
        r
    }

    /// A direct unit (`HostProgram::direct`): its arguments read back, the unit run as a
    /// program of its own on this session, its value kept on the host.
    pub(crate) fn run_direct(&mut self, u: usize) -> Result<HostVal, Error> {
        let unit = &self.hp.units[u];
        let plan = unit
            .compiled
            .plan
            .as_ref()
            .ok_or_else(|| Error::plain("internal: a unit without kernels"))?;
        let values = unit.args.iter().map(|a| self.read_back(*a)).collect::<Result<_, _>>()?;
        let inputs = Inputs {
            values,
            sizes: self.inputs.sizes.clone(),
        };
        let prepared = crate::plan::Prepared::default();
        let m = crate::plan::run_on(plan, &inputs, &prepared, &mut self.session, false, 1, false)?;
        Ok(HostVal::Scalar(m.value))
    }

    pub(crate) fn make_unit(&mut self, u: usize, plan: &KernelPlan) -> Result<UnitRt, Error> {
        let env = Env::of_plan(plan, &self.unit_sizes(u)?)?;
        let exist_out = matches!(plan.result.ty, Type::Exists(_));
        if plan.result.lengths.is_some() && !exist_out {
            // `validate` refuses arrays of filter results that cross a section.
            return Err(Error::plain(format!(
                "internal: a part of a host program returns a filter result\n{}",
                codegen_opencl::BUG_NOTE
            )));
        }
        let names: Vec<&str> = plan.kernels.iter().map(|k| k.name.as_str()).collect();
        let prepared = self
            .session
            .prepare(&plan.source, "-cl-std=CL1.2", &names)
            .map_err(run_error)?;
        let (fixed, zeroed, out_bytes) = resident_buffers(&mut self.session, plan, &env)?;
        let mut zeroed_from = vec![];
        // The output's length (a filter result's) is zeroed too, whichever buffer holds it.
        let sized: Vec<(Option<host_runner::Resident>, usize)> = zeroed
            .iter()
            .map(|r| (Some(*r), self.session.bytes_of(*r)))
            .chain(exist_out.then_some((None, 4)))
            .collect();
        for (r, bytes) in sized {
            let zeros = self.session.alloc("zeros", bytes).map_err(run_error)?;
            self.session.upload(zeros, &vec![0; bytes]).map_err(run_error)?;
            zeroed_from.push((r, zeros));
        }
        let flag = self.session.alloc("e_flag", 4).map_err(run_error)?;
        self.session.zero(flag).map_err(run_error)?;
        Ok(UnitRt {
            prepared,
            fixed,
            zeroed: zeroed_from.iter().filter_map(|(r, z)| r.map(|r| (r, *z))).collect(),
            len_zeros: zeroed_from.iter().find(|(r, _)| r.is_none()).map(|(_, z)| *z),
            outs: [None, None],
            out_lens: [None, None],
            exist_out,
            out_bytes,
            turn: 0,
            flag,
            env,
            checked: false,
        })
    }

    pub(crate) fn launch_with(
        &mut self,
        u: usize,
        plan: &KernelPlan,
        rt: &mut UnitRt,
        dest: Option<HostVal>,
    ) -> Result<HostVal, Error> {
        let unit = &self.hp.units[u];
        let (out, out_len) = match dest {
            Some(HostVal::Dev(d)) => (d, None),
            Some(HostVal::Exist(d, l)) => (d, Some(l)),
            Some(HostVal::Scalar(_)) => return Err(Error::plain("internal: a unit writes into a scalar")),
            None => {
                rt.turn ^= 1;
                let out = match rt.outs[rt.turn] {
                    Some(r) => r,
                    None => {
                        let r = self.session.alloc("result", rt.out_bytes).map_err(run_error)?;
                        rt.outs[rt.turn] = Some(r);
                        r
                    }
                };
                let len = match (rt.exist_out, rt.out_lens[rt.turn]) {
                    (false, _) => None,
                    (true, Some(l)) => Some(l),
                    (true, None) => {
                        let l = self.session.alloc("result length", 4).map_err(run_error)?;
                        rt.out_lens[rt.turn] = Some(l);
                        Some(l)
                    }
                };
                (out, len)
            }
        };
        if rt.exist_out != out_len.is_some() {
            return Err(Error::plain(format!(
                "internal: unit {u}'s result and its destination disagree on being a filter result"
            )));
        }
        let len_zeroed = out_len.zip(rt.len_zeros);
        for (r, zeros) in rt.zeroed.iter().chain(&len_zeroed) {
            self.session.copy(*zeros, *r).map_err(run_error)?;
        }
        for k in &plan.kernels {
            let launch = launch_of(
                plan,
                k,
                &rt.env,
                host_runner::KernelArg::Buffer(rt.flag.0),
                |b| {
                    let r = match plan.memory.buffers[b].role {
                        Role::Input(p) => self.dev(unit.args[p])?,
                        Role::InputLength(p) => self.len_buf(unit.args[p])?,
                        Role::Output => out,
                        Role::OutputLength if out_len.is_some() => out_len.expect("checked"),
                        _ => *rt
                            .fixed
                            .get(&b)
                            .ok_or_else(|| Error::plain(format!("internal: buffer {b} of a unit has no storage")))?,
                    };
                    Ok(host_runner::KernelArg::Buffer(r.0))
                },
                |p| match self.val(unit.args[p])? {
                    HostVal::Scalar(v) => scalar_arg(&v),
                    v => Err(Error::plain(format!("internal: parameter value {v:?} is not a scalar"))),
                },
            )?;
            if !rt.checked {
                self.session.check_launch(&rt.prepared, &launch).map_err(run_error)?;
            }
            if let Some(ev) = self
                .session
                .enqueue_resident(&rt.prepared, &launch)
                .map_err(run_error)?
            {
                if self.profile {
                    self.events
                        .push((self.at.0, self.at.1, format!("unit {u} {}", k.name), ev));
                }
            }
        }
        rt.checked = true;
        Ok(match out_len {
            Some(l) => HostVal::Exist(out, l),
            None => HostVal::Dev(out),
        })
    }

    /// The device-side checks of every unit, read once at the end (when `check_each` is not
    /// set). A failure sets `flag_failed`: the length it names may be a later step's, so
    /// `run_host` runs again checking every launch for the first failure and its own length.
    pub(crate) fn check_flags(&mut self) -> Result<(), Error> {
        for u in 0..self.units.len() {
            let r = self.check_unit_flag(u);
            if r.is_err() {
                self.flag_failed = true;
            }
            r?;
        }
        Ok(())
    }

    /// Decodes unit `u`'s error flag (every check `lift run` decodes), reading the failing
    /// length from the unit's buffer as it is now.
    pub(crate) fn check_unit_flag(&mut self, u: usize) -> Result<(), Error> {
        let (Some(rt), Some(plan)) = (&self.units[u], self.hp.units[u].compiled.plan.as_ref()) else {
            return Ok(());
        };
        if !plan.uses_error_flag() {
            return Ok(());
        }
        let b = self.session.read_resident(rt.flag, 0, 4).map_err(run_error)?;
        let flag = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let args = &self.hp.units[u].args;
        flag_error(plan, flag, &rt.env, |b| {
            // A checked length of a filter-result argument is in that argument's buffers.
            let r = match plan.memory.buffers[b].role {
                Role::InputLength(p) => Some(self.len_buf(args[p])?),
                _ => rt.fixed.get(&b).copied(),
            };
            read_int(&self.session, r)
        })
    }

    /// `--time` for a host program: per-kernel totals, each loop's steps and per-step device
    /// times, and the host's wall time against the sum of the kernels'.
    pub(crate) fn timing(&self, wall: std::time::Duration) -> Result<HostMeasure, Error> {
        let ms = |ns: u64| ns as f64 / 1e6;
        let mut per_kernel: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
        let mut total = 0u64;
        let mut per_step: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut first_start = u64::MAX;
        let mut last_end = 0u64;
        for (l, st, k, ev) in &self.events {
            let ns = ev.ns().map_err(run_error)?;
            let (a, b) = ev.span_ns().map_err(run_error)?;
            first_start = first_start.min(a);
            last_end = last_end.max(b);
            total += ns;
            let e = per_kernel.entry(k.as_str()).or_default();
            e.0 += 1;
            e.1 += ns;
            if *l != usize::MAX {
                *per_step.entry((*l, *st)).or_default() += ns;
            }
        }
        Ok(HostMeasure {
            device: self.session.info().name.clone(),
            per_kernel: per_kernel
                .iter()
                .map(|(k, (n, ns))| (k.to_string(), *n, ms(*ns)))
                .collect(),
            loops: self
                .loops
                .iter()
                .enumerate()
                .map(|(l, (kind, steps))| {
                    let times = per_step.range((l, 0)..(l, *steps)).map(|(_, t)| ms(*t)).collect();
                    (*kind, *steps, times)
                })
                .collect(),
            kernel_ms: ms(total),
            span_ms: (last_end > first_start).then(|| ms(last_end - first_start)),
            wall_ms: wall.as_secs_f64() * 1e3,
        })
    }
}

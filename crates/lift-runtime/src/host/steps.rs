//! Walking a host program's steps: blocks, host loops over two state buffers, fused loops and
//! host `if`s.

use super::*;

impl HostExec<'_> {
    pub(crate) fn val(&self, s: lift_compile::host::Slot) -> Result<HostVal, Error> {
        self.vals[s]
            .clone()
            .ok_or_else(|| Error::plain(format!("internal: host value s{s} used before it is computed")))
    }

    pub(crate) fn dev(&self, s: lift_compile::host::Slot) -> Result<host_runner::Resident, Error> {
        match self.val(s)? {
            HostVal::Dev(r) | HostVal::Exist(r, _) => Ok(r),
            HostVal::Scalar(_) => Err(Error::plain(format!("internal: host value s{s} is not on the device"))),
        }
    }

    /// The length buffer of the filter result in slot `s`.
    pub(crate) fn len_buf(&self, s: lift_compile::host::Slot) -> Result<host_runner::Resident, Error> {
        match self.val(s)? {
            HostVal::Exist(_, l) => Ok(l),
            HostVal::Dev(_) | HostVal::Scalar(_) => Err(Error::plain(format!(
                "internal: host value s{s} is not a filter result"
            ))),
        }
    }

    /// The sizes of unit `u`: the program's, and the capacity of each filter-result argument.
    pub(crate) fn unit_sizes(&self, u: usize) -> Result<BTreeMap<String, i64>, Error> {
        let mut sizes = self.inputs.sizes.clone();
        for (k, a) in self.hp.units[u].args.iter().enumerate() {
            if let Some(cap) = &self.hp.caps[*a] {
                sizes.insert(codegen_opencl::capacity_size(k), self.eval_cap(cap)?);
            }
        }
        Ok(sizes)
    }

    pub(crate) fn eval_cap(&self, cap: &arith::ArithExpr) -> Result<i64, Error> {
        cap.eval(&|n| self.inputs.sizes.get(n).copied())
            .map_err(|e| Error::plain(format!("cannot evaluate the capacity {cap}: {e}")))
    }

    pub(crate) fn bytes_of_type(&self, t: &Type) -> Result<usize, Error> {
        let (dims, elem) = shape(t, &self.inputs.sizes)?;
        let (esz, _) = layout(&elem);
        Ok(dims.iter().product::<usize>() * esz)
    }

    /// Runs a block; with `dest`, its value ends in that buffer (a loop's state buffer).
    pub(crate) fn block(&mut self, b: &lift_compile::host::Block, dest: Option<HostVal>) -> Result<usize, Error> {
        use lift_compile::host::Step;
        let last = b.steps.len();
        for (i, st) in b.steps.iter().enumerate() {
            // The step that makes the block's value writes straight into `dest`.
            let into = match st {
                Step::Kernels { out, .. } if i + 1 == last && *out == b.result => dest.clone(),
                _ => None,
            };
            match st {
                Step::Kernels { out, unit } if self.hp.direct.contains(unit) => {
                    let r = self.run_direct(*unit)?;
                    self.vals[*out] = Some(r);
                }
                Step::Kernels { out, unit } => {
                    let r = self.launch_unit(*unit, into)?;
                    self.vals[*out] = Some(r);
                }
                Step::Iterate {
                    out,
                    count,
                    init,
                    state,
                    body,
                    span,
                    fusion,
                } => {
                    let k = count.eval(&|n| self.inputs.sizes.get(n).copied()).map_err(|e| {
                        Error::Source(Diagnostic::new(
                            *span,
                            format!("cannot evaluate the count {count}: {e}"),
                        ))
                    })?;
                    let k = usize::try_from(k).map_err(|_| {
                        Error::Source(Diagnostic::new(*span, format!("the count {count} is negative ({k})")))
                    })?;
                    match fusion {
                        Some(f) => self.run_fused(f, *init, *state, body, *out, k)?,
                        None => {
                            let r = self.run_loop(*init, *state, body, None, k, "iterate")?;
                            self.vals[*out] = Some(r);
                        }
                    }
                }
                Step::Until {
                    out,
                    max,
                    init,
                    state,
                    body,
                    prev,
                    next,
                    cond,
                    span,
                } => {
                    let k = max
                        .eval(&|n| self.inputs.sizes.get(n).copied())
                        .map_err(|e| Error::Source(Diagnostic::new(*span, format!("cannot evaluate {max}: {e}"))))?;
                    let k = usize::try_from(k).unwrap_or(0);
                    let r = self.run_loop(*init, *state, body, Some((*prev, *next, *cond)), k, "iterate-until")?;
                    self.vals[*out] = Some(r);
                }
                Step::If { out, cond, then, els } => {
                    let c = match self.val(*cond)? {
                        HostVal::Scalar(Value::Bool(b)) => b,
                        HostVal::Scalar(v) => {
                            return Err(Error::plain(format!("internal: condition {v:?} is not a bool")))
                        }
                        HostVal::Exist(..) => return Err(Error::plain("internal: a condition is a filter result")),
                        HostVal::Dev(r) => {
                            let pending = self.session.read_later(r, 0, 4).map_err(run_error)?;
                            let bytes = pending.wait().map_err(run_error)?;
                            bytes.iter().any(|b| *b != 0)
                        }
                    };
                    let v = self.block(if c { then } else { els }, None)?;
                    self.assign(*out, v)?;
                }
            }
        }
        match (dest, self.vals[b.result].clone()) {
            (Some(HostVal::Dev(d)), Some(HostVal::Dev(r))) if r != d => self.session.copy(r, d).map_err(run_error)?,
            (Some(HostVal::Exist(d, dl)), Some(HostVal::Exist(r, rl))) if r != d => {
                self.session.copy(r, d).map_err(run_error)?;
                self.session.copy(rl, dl).map_err(run_error)?;
            }
            (Some(HostVal::Dev(_) | HostVal::Exist(..)), Some(HostVal::Dev(_) | HostVal::Exist(..))) | (None, _) => {}
            (Some(d), v) => {
                return Err(Error::plain(format!(
                    "internal: a block's value {v:?} cannot be written into {d:?}"
                )))
            }
        }
        Ok(b.result)
    }

    /// Slot `to` takes the value of slot `from` (a host `if`'s value its branch's), a tuple
    /// holding arrays component by component.
    pub(crate) fn assign(&mut self, to: usize, from: usize) -> Result<(), Error> {
        match (self.hp.tuples.get(&to), self.hp.tuples.get(&from)) {
            (Some(t), Some(f)) if t.len() == f.len() => {
                for (a, b) in t.iter().zip(f) {
                    self.assign(*a, *b)?;
                }
                Ok(())
            }
            (None, None) => {
                let value = self.val(from)?;
                self.vals[to] = Some(self.existential(from, value, to)?);
                Ok(())
            }
            _ => Err(Error::plain(format!(
                "internal: host value s{from} and s{to} are tuples of different shapes"
            ))),
        }
    }

    /// A host loop over two state buffers: step `i` reads the state of step `i - 1` and writes
    /// the other buffer. With a condition, step `i + 1` is enqueued before the condition of
    /// step `i` is waited for, so the device never idles on the read; the extra step only
    /// writes the buffer that does not hold the result.
    pub(crate) fn run_loop(
        &mut self,
        init: usize,
        state: usize,
        body: &lift_compile::host::Block,
        cond: Option<(usize, usize, usize)>,
        steps: usize,
        kind: &'static str,
    ) -> Result<HostVal, Error> {
        let first = self.existential(init, self.val(init)?, state)?;
        if steps == 0 {
            return Ok(first);
        }
        let bufs = self.state_buffers(state)?;
        let loop_id = self.loops.len();
        self.loops.push((kind, 0));
        let outer = self.at;
        // A step run ahead of its condition could fail where the interpreter never runs it:
        // `run_host` then runs again without running ahead.
        let ahead = self.ahead;
        let mut pending: Option<(usize, host_runner::PendingRead)> = None;
        let mut done = None;
        for i in 0..steps {
            self.at = (loop_id, i);
            let cur = if i == 0 {
                first.clone()
            } else {
                bufs[(i - 1) % 2].clone()
            };
            self.vals[state] = Some(cur.clone());
            self.block(body, Some(bufs[i % 2].clone()))?;
            if let Some((prev, next, unit)) = cond {
                self.vals[prev] = Some(cur);
                self.vals[next] = Some(bufs[i % 2].clone());
                let c = match self.launch_unit(unit, None)? {
                    HostVal::Dev(c) => c,
                    v => return Err(Error::plain(format!("internal: a condition is {v:?}"))),
                };
                let read = self.session.read_later(c, 0, 4).map_err(run_error)?;
                if let Some((j, p)) = pending.take() {
                    if p.wait().map_err(run_error)?.iter().any(|b| *b != 0) {
                        done = Some(j);
                        break;
                    }
                }
                if ahead {
                    pending = Some((i, read));
                } else if read.wait().map_err(run_error)?.iter().any(|b| *b != 0) {
                    done = Some(i);
                    break;
                }
            } else {
                self.session.flush().map_err(run_error)?;
            }
        }
        if done.is_none() {
            if let Some((j, p)) = pending.take() {
                let _ = p.wait().map_err(run_error)?;
                done = Some(j);
            }
        }
        drop(pending);
        let last = done.unwrap_or(steps - 1);
        self.loops[loop_id].1 = last + 1;
        self.at = outer;
        Ok(bufs[last % 2].clone())
    }

    /// The value `v` of slot `from` as a value of slot `to`'s type: an array `[T]n` where a
    /// filter result is wanted (a loop's initial state, a branch of an `if`) gets a length
    /// buffer holding `n`, made and uploaded once per slot, so a loop reaching it again neither
    /// allocates nor waits.
    pub(crate) fn existential(&mut self, from: usize, v: HostVal, to: usize) -> Result<HostVal, Error> {
        match (&v, &self.hp.slots[from], &self.hp.slots[to]) {
            (HostVal::Dev(data), Type::Array(_, n), Type::Exists(_)) => {
                if let Some(len) = self.array_lens.get(&from) {
                    return Ok(HostVal::Exist(*data, *len));
                }
                let n = self.eval_cap(n)?;
                let n = i32::try_from(n).map_err(|_| Error::plain(format!("the length {n} does not fit an int")))?;
                let len = self.session.alloc("length", 4).map_err(run_error)?;
                self.session.upload(len, &n.to_le_bytes()).map_err(run_error)?;
                self.array_lens.insert(from, len);
                Ok(HostVal::Exist(*data, len))
            }
            _ => Ok(v),
        }
    }

    /// A loop's two state buffers, made on its first run: a loop inside another one runs
    /// again every outer step, on the same buffers (its previous value is dead by then). A
    /// filter result's buffers have the capacity of the loop's initial state, and a length
    /// each.
    pub(crate) fn state_buffers(&mut self, state: usize) -> Result<[HostVal; 2], Error> {
        if let Some(b) = self.loop_bufs.get(&state) {
            return Ok(b.clone());
        }
        let b = match (&self.hp.slots[state], &self.hp.caps[state]) {
            (Type::Exists(elem), Some(cap)) => {
                let (esz, _) = layout(elem);
                let cap = usize::try_from(self.eval_cap(cap)?)
                    .map_err(|_| Error::plain(format!("the capacity {cap} is negative")))?;
                let bytes = cap
                    .checked_mul(esz)
                    .ok_or_else(|| Error::plain("a loop's state is too large"))?;
                let mut one = || -> Result<HostVal, Error> {
                    Ok(HostVal::Exist(
                        self.session.alloc("state", bytes).map_err(run_error)?,
                        self.session.alloc("state length", 4).map_err(run_error)?,
                    ))
                };
                [one()?, one()?]
            }
            (t, _) => {
                let bytes = self.bytes_of_type(t)?;
                [
                    HostVal::Dev(self.session.alloc("state", bytes).map_err(run_error)?),
                    HostVal::Dev(self.session.alloc("state", bytes).map_err(run_error)?),
                ]
            }
        };
        self.loop_bufs.insert(state, b.clone());
        Ok(b)
    }

    /// A host `iterate` with maps fused into its first and last steps (`host::Fusion`).
    pub(crate) fn run_fused(
        &mut self,
        f: &lift_compile::host::Fusion,
        init: usize,
        state: usize,
        body: &lift_compile::host::Block,
        out: usize,
        steps: usize,
    ) -> Result<(), Error> {
        if steps == 0 {
            // Nothing to fuse with: the maps run on their own.
            if let Some((pre, _)) = f.pre {
                let r = self.launch_unit(pre, None)?;
                self.vals[init] = Some(r);
            }
            self.vals[out] = Some(self.val(init)?);
            if let Some((post, _, o)) = f.post {
                let r = self.launch_unit(post, None)?;
                self.vals[o] = Some(r);
            }
            return Ok(());
        }
        let loop_id = self.loops.len();
        self.loops.push(("iterate", steps));
        let outer = self.at;
        if let (1, Some(both), Some((_, _, o))) = (steps, f.both, f.post) {
            self.at = (loop_id, 0);
            let r = self.launch_unit(both, None)?;
            self.vals[o] = Some(r);
            self.at = outer;
            return Ok(());
        }
        let bufs = self.state_buffers(state)?;
        for i in 0..steps {
            self.at = (loop_id, i);
            let previous = |x: &Self| -> Result<HostVal, Error> {
                if i == 0 {
                    x.val(init)
                } else {
                    Ok(bufs[(i - 1) % 2].clone())
                }
            };
            match (f.pre, f.post) {
                (_, Some((_, last, o))) if i + 1 == steps => {
                    self.vals[state] = Some(previous(self)?);
                    let r = self.launch_unit(last, None)?;
                    self.vals[o] = Some(r);
                }
                (Some((_, first)), _) if i == 0 => {
                    self.launch_unit(first, Some(bufs[0].clone()))?;
                }
                _ => {
                    self.vals[state] = Some(previous(self)?);
                    self.block(body, Some(bufs[i % 2].clone()))?;
                }
            }
            self.session.flush().map_err(run_error)?;
        }
        self.vals[out] = Some(bufs[(steps - 1) % 2].clone());
        self.at = outer;
        Ok(())
    }
}

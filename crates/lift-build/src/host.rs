//! A host program (`lift_compile::host`: a host `iterate`, `iterate-until` or `if`) in a library:
//! `lr_host`, its step tree written as C loops and branches over the slots' device buffers, each
//! unit's kernels launched inline (every unit is one of the runtime's variants: its own OpenCL
//! program, built with the context). Only an `iterate-until`'s condition and a host `if`'s on the
//! device are read back (4 bytes each); every other value stays on the device.
//!
//! As `lift run` runs it (`lift_runtime::host`): a loop's state alternates between two buffers and
//! a unit's result between two of its own, so that no launch overwrites a value still to be read.
//! Maps fused across a loop's boundary (`host::Fusion`) run unfused here, as `lift run` runs them
//! for a count of 0: the same values, one launch more. Filter results crossing a section are
//! refused (not supported yet).

use crate::gen::{c_type, Kind, Shape};
use crate::launch::{elem_bytes, Lengths};
use arith::ArithExpr;
use codegen_opencl::{KernelArg, KernelPlan};
use ir::Type;
use lift_compile::host::{Block, HostProgram, Slot, Step};
use lift_compile::Error;
use memalloc::Role;
use std::collections::BTreeMap;
use std::fmt::Write;

/// What [`host_function`] writes.
pub(crate) struct HostSpec<'a> {
    pub hp: &'a HostProgram,
    /// The program's lengths, by the program's size names.
    pub lengths: Lengths,
    /// The size conditions checked before the run (the program's and its units').
    pub checks: Vec<&'a typeck::SizeCheck>,
    /// What `lift` compiled, as `<prog>_used` and `<prog>_compiled_as` say it.
    pub description: String,
}

impl HostSpec<'_> {
    pub(crate) fn plans(&self) -> Result<Vec<&KernelPlan>, Error> {
        self.hp
            .units
            .iter()
            .map(|u| {
                u.compiled
                    .plan
                    .as_ref()
                    .ok_or_else(|| Error::plain("internal: a unit of a host program without kernels"))
            })
            .collect()
    }
}

/// The buffers a run owns, each in one entry of the C array `lr_own` (released at its end).
struct Owned {
    /// Per unit: the first of its two result buffers, and of its temporaries (by plan buffer).
    outs: Vec<usize>,
    temps: Vec<BTreeMap<usize, usize>>,
    /// Per loop state slot: the first of its two buffers.
    states: BTreeMap<Slot, usize>,
    count: usize,
}

struct Gen<'a> {
    spec: &'a HostSpec<'a>,
    plans: Vec<&'a KernelPlan>,
    /// Per unit: the program's sizes under the unit plan's names too.
    unit_lengths: Vec<Lengths>,
    params: &'a [(String, Shape)],
    /// Scalar parameters' slots, and their C variables.
    scalars: BTreeMap<Slot, String>,
    own: Owned,
    c: String,
    /// Loop nesting, for the names of the loops' C variables.
    depth: usize,
}

/// `lr_host(ctx, out, params…)`: runs the host program on checked handles, the lock held.
pub(crate) fn host_function(
    c: &mut String,
    spec: &HostSpec,
    params: &[(String, Shape)],
    result: &(Kind, Vec<ArithExpr>),
    kind_id: &dyn Fn(Kind) -> usize,
) -> Result<(), Error> {
    let hp = spec.hp;
    if !hp.direct.is_empty() {
        return Err(crate::not_supported(
            "values stored in several buffers (arrays of tuples holding arrays, rows of filter results) in a program with host sections",
        ));
    }
    if !hp.tuples.is_empty() {
        return Err(crate::not_supported(
            "tuples holding arrays in a program with host sections",
        ));
    }
    let plans = spec.plans()?;
    let mut unit_lengths = vec![];
    for plan in &plans {
        unit_lengths.push(for_plan(&spec.lengths, plan));
        if plan.result.lengths.is_some() || plan.global_buffers().any(|(_, b)| is_length(b.role)) {
            return Err(crate::not_supported("filters in a program with host sections"));
        }
    }
    let mut scalars = BTreeMap::new();
    for (k, slot) in hp.params.iter().enumerate() {
        if let Shape::Scalar(_) = params[k].1 {
            scalars.insert(*slot, params[k].0.clone());
        }
    }
    // Every buffer a run may own gets its entry: two results per unit, its temporaries, two
    // buffers per loop state.
    let mut own = Owned {
        outs: vec![],
        temps: vec![],
        states: BTreeMap::new(),
        count: 0,
    };
    for plan in &plans {
        own.outs.push(own.count);
        own.count += 2;
        let mut t = BTreeMap::new();
        for (i, b) in plan.global_buffers() {
            if matches!(b.role, Role::Temp | Role::Scratch) {
                t.insert(i, own.count);
                own.count += 1;
            }
        }
        own.temps.push(t);
    }
    collect_states(&hp.main, &mut own);
    let mut sig = String::new();
    for (n, s) in params {
        match s {
            Shape::Scalar(sc) => {
                let _ = write!(sig, ", {} {n}", c_type(*sc));
            }
            Shape::Array(..) => {
                let _ = write!(sig, ", const struct lr_array* {n}");
            }
        }
    }
    let mut g = Gen {
        spec,
        plans,
        unit_lengths,
        params,
        scalars,
        own,
        c: String::new(),
        depth: 0,
    };
    let _ = writeln!(
        g.c,
        "\n/* {} */\nstatic int lr_host(struct lr_ctx* ctx, struct lr_array** out{sig}) {{",
        spec.description.replace("*/", "* /").replace('\n', " ")
    );
    crate::launch::generic_prologue(&mut g.c, &spec.lengths, &spec.checks, params)?;
    let (ns, no) = (hp.slots.len().max(1), g.own.count.max(1));
    let _ = writeln!(
        g.c,
        "    int lr_rc = 1;\n    int32_t lr_flag = 0;\n    cl_mem lr_s[{ns}] = {{0}};\n    cl_mem lr_own[{no}] = {{0}};\n    size_t \
         lr_ownb[{no}] = {{0}};\n    struct lr_array* lr_result = NULL;\n    cl_mem lr_out_last = NULL;\n    (void)lr_out_last;"
    );
    for u in 0..g.plans.len() {
        let _ = writeln!(g.c, "    int lr_t{u} = 0;\n    (void)lr_t{u};");
    }
    for (k, slot) in hp.params.iter().enumerate() {
        if let Shape::Array(..) = params[k].1 {
            let _ = writeln!(g.c, "    lr_s[{slot}] = {}->mem;", params[k].0);
        }
    }
    let checks = g.plans.iter().any(|p| p.uses_error_flag());
    if checks {
        let _ = writeln!(g.c, "    if (lr_flag_clear(ctx)) goto done;");
    }
    g.block(&hp.main, None)?;
    // The result: a new array, copied on the device from the buffer the run left it in (a
    // parameter's, for a loop of no steps, or one the run owns).
    let dims = result
        .1
        .iter()
        .map(|d| spec.lengths.c(d))
        .collect::<Result<Vec<_>, _>>()?;
    let r = hp.main.result;
    let _ = writeln!(
        g.c,
        "    {{\n        int64_t lr_shape[{}] = {{{}}};\n        lr_result = lr_array_alloc(ctx, {}, {}, lr_shape, sizeof({}));\n        if \
         (!lr_result) goto done;\n        if (lr_copy(ctx, lr_s[{r}], lr_result->mem, lr_result->bytes)) goto done;\n    }}",
        dims.len().max(1),
        if dims.is_empty() { "0".to_string() } else { dims.join(", ") },
        kind_id(result.0),
        dims.len(),
        c_type(result.0.elem),
    );
    let _ = writeln!(g.c, "    if (lr_wait(ctx, {}, &lr_flag)) goto done;", i32::from(checks));
    // The flag holds a check's index + 1 in whichever unit failed: its message where every unit
    // with that index agrees on it.
    let mut messages = String::new();
    let most = g.plans.iter().map(|p| p.checks.len()).max().unwrap_or(0);
    for i in 0..most {
        let mut kinds: Vec<&str> = g
            .plans
            .iter()
            .filter(|p| i < p.checks.len())
            .map(|p| {
                if p.division_checks.contains(&i) {
                    "integer division by zero"
                } else {
                    "index out of range in `at`"
                }
            })
            .collect();
        kinds.dedup();
        if let [one] = kinds[..] {
            let _ = writeln!(
                messages,
                "        if (lr_flag == {}) lr_fail(ctx, \"{one} (detected on the device)\");",
                i + 1
            );
        }
    }
    let _ = writeln!(
        g.c,
        "    if (lr_flag != 0) {{\n        lr_fail(ctx, \"a check failed on the device (flag %d)\", (int)lr_flag);\n{messages}        goto \
         done;\n    }}\n    *out = lr_result;\n    lr_result = NULL;\n    lr_rc = 0;\ndone:\n    for (int lr_i = 0; lr_i < {no}; lr_i++)\n        \
         if (lr_own[lr_i]) lr_release(ctx->dev, lr_own[lr_i], lr_ownb[lr_i]);\n    if (lr_result) lr_array_free(lr_result);\n    return \
         lr_rc;\n}}"
    );
    c.push_str(&g.c);
    Ok(())
}

fn is_length(r: Role) -> bool {
    matches!(r, Role::OutputLength | Role::TempLength | Role::InputLength(_))
}

/// The lengths of a unit's plan: the program's sizes under the plan's C names too.
fn for_plan(lengths: &Lengths, plan: &KernelPlan) -> Lengths {
    let mut out = lengths.clone();
    match &mut out {
        Lengths::Fixed(env) => {
            for (user, c) in &plan.sizes {
                if let Some(v) = env.get(user).copied() {
                    env.insert(c.clone(), v);
                }
            }
        }
        Lengths::Generic { vars, .. } => {
            for (user, c) in &plan.sizes {
                if let Some(v) = vars.get(user).cloned() {
                    vars.insert(c.clone(), v);
                }
            }
        }
    }
    out
}

fn collect_states(b: &Block, own: &mut Owned) {
    for st in &b.steps {
        match st {
            Step::Kernels { .. } => {}
            Step::Iterate { state, body, .. } | Step::Until { state, body, .. } => {
                own.states.entry(*state).or_insert_with(|| {
                    own.count += 2;
                    own.count - 2
                });
                collect_states(body, own);
            }
            Step::If { then, els, .. } => {
                collect_states(then, own);
                collect_states(els, own);
            }
        }
    }
}

impl Gen<'_> {
    /// The C expression of the bytes of a value of slot `s`.
    fn slot_bytes(&self, s: Slot) -> Result<String, Error> {
        let t = &self.spec.hp.slots[s];
        let (dims, elem) = memalloc::dims_of(t);
        if matches!(t, Type::Exists(_)) || !matches!(elem, Type::Scalar(_) | Type::Tuple(_) | Type::Vector(..)) {
            return Err(crate::not_supported("filters in a program with host sections"));
        }
        let mut n = format!("(size_t){}", elem_bytes(&elem)?);
        for d in &dims {
            let _ = write!(n, " * (size_t)({})", self.spec.lengths.c(d)?);
        }
        Ok(n)
    }

    /// Makes sure entry `i` of `lr_own` holds a buffer of `bytes`.
    fn ensure(&mut self, i: usize, bytes: &str, what: &str) {
        let _ = writeln!(
            self.c,
            "    if (!lr_own[{i}]) {{\n        lr_ownb[{i}] = {bytes};\n        lr_own[{i}] = lr_alloc(ctx, lr_ownb[{i}], \"{what}\");\n        if \
             (!lr_own[{i}]) goto done;\n    }}"
        );
    }

    /// Runs a block; with `dest`, its value ends in that buffer (a loop's state buffer).
    fn block(&mut self, b: &Block, dest: Option<&str>) -> Result<(), Error> {
        let last = b.steps.len();
        for (i, st) in b.steps.iter().enumerate() {
            match st {
                Step::Kernels { out, unit } => {
                    let into = (i + 1 == last && *out == b.result).then_some(dest).flatten();
                    self.launch(*unit, *out, into)?;
                }
                Step::Iterate {
                    out,
                    count,
                    init,
                    state,
                    body,
                    fusion,
                    ..
                } => {
                    // Fused maps run on their own: the map before the loop computes its initial
                    // state, the map after it reads its result.
                    if let Some((pre, _)) = fusion.as_ref().and_then(|f| f.pre) {
                        self.launch(pre, *init, None)?;
                    }
                    let k = self.spec.lengths.c(count)?;
                    self.state_loop(*out, &k, *init, *state, body, None)?;
                    if let Some((post, _, o)) = fusion.as_ref().and_then(|f| f.post) {
                        self.launch(post, o, None)?;
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
                    ..
                } => {
                    let k = self.spec.lengths.c(max)?;
                    self.state_loop(*out, &k, *init, *state, body, Some((*prev, *next, *cond)))?;
                }
                Step::If { out, cond, then, els } => {
                    let test = match self.scalars.get(cond) {
                        Some(name) => format!("({name}) != 0"),
                        None => {
                            let _ = writeln!(
                                self.c,
                                "    {{\n        int32_t lr_c = 0;\n        if (lr_read_int(ctx, lr_s[{cond}], &lr_c)) goto done;\n        lr_s[{out}] = NULL;\n        \
                                 if (lr_c != 0) {{"
                            );
                            self.branches(*out, then, els)?;
                            continue;
                        }
                    };
                    let _ = writeln!(self.c, "    {{\n        if ({test}) {{");
                    self.branches(*out, then, els)?;
                }
            }
        }
        if let Some(d) = dest {
            let bytes = self.slot_bytes(b.result)?;
            let _ = writeln!(
                self.c,
                "    if (lr_s[{r}] != {d} && lr_copy(ctx, lr_s[{r}], {d}, {bytes})) goto done;",
                r = b.result
            );
        }
        Ok(())
    }

    /// The two branches of a host `if`, after `if (…) {` is written.
    fn branches(&mut self, out: Slot, then: &Block, els: &Block) -> Result<(), Error> {
        self.block(then, None)?;
        let _ = writeln!(self.c, "    lr_s[{out}] = lr_s[{}];\n    }} else {{", then.result);
        self.block(els, None)?;
        let _ = writeln!(self.c, "    lr_s[{out}] = lr_s[{}];\n    }}\n    }}", els.result);
        Ok(())
    }

    /// A host loop of at most `count` steps over two state buffers; with a condition unit (on
    /// the previous and next state), it stops at the first step whose condition is true.
    fn state_loop(
        &mut self,
        out: Slot,
        count: &str,
        init: Slot,
        state: Slot,
        body: &Block,
        cond: Option<(Slot, Slot, usize)>,
    ) -> Result<(), Error> {
        let d = self.depth;
        self.depth += 1;
        let first = self.own.states[&state];
        let bytes = self.slot_bytes(state)?;
        let _ = writeln!(
            self.c,
            "    {{\n    int64_t lr_k{d} = {count};\n    int64_t lr_last{d} = lr_k{d} - 1;\n    if (lr_k{d} > 0) {{"
        );
        self.ensure(first, &bytes, "a loop's state");
        self.ensure(first + 1, &bytes, "a loop's state");
        let _ = writeln!(
            self.c,
            "    }}\n    for (int64_t lr_i{d} = 0; lr_i{d} < lr_k{d}; lr_i{d}++) {{\n    cl_mem lr_cur{d} = lr_i{d} == 0 ? lr_s[{init}] : \
             lr_own[{first} + (lr_i{d} - 1) % 2];\n    cl_mem lr_next{d} = lr_own[{first} + lr_i{d} % 2];\n    lr_s[{state}] = lr_cur{d};"
        );
        self.block(body, Some(&format!("lr_next{d}")))?;
        if let Some((prev, next, unit)) = cond {
            let _ = writeln!(self.c, "    lr_s[{prev}] = lr_cur{d};\n    lr_s[{next}] = lr_next{d};");
            // The condition goes to the unit's own result buffers and is read at once.
            self.launch_into(unit, None)?;
            let _ = writeln!(
                self.c,
                "    {{\n        int32_t lr_c = 0;\n        if (lr_read_int(ctx, lr_out_last, &lr_c)) goto done;\n        if (lr_c != 0) {{\n            \
                 lr_last{d} = lr_i{d};\n            break;\n        }}\n    }}"
            );
        }
        let _ = writeln!(
            self.c,
            "    }}\n    lr_s[{out}] = lr_k{d} <= 0 ? lr_s[{init}] : lr_own[{first} + lr_last{d} % 2];\n    }}"
        );
        self.depth -= 1;
        Ok(())
    }

    /// Launches unit `u` with its result in slot `out`.
    fn launch(&mut self, u: usize, out: Slot, into: Option<&str>) -> Result<(), Error> {
        self.launch_into(u, into)?;
        let _ = writeln!(self.c, "    lr_s[{out}] = lr_out_last;");
        Ok(())
    }

    /// Launches unit `u` into `into`, else the next of its two result buffers; the buffer is
    /// `lr_out_last` after it.
    fn launch_into(&mut self, u: usize, into: Option<&str>) -> Result<(), Error> {
        let plan = self.plans[u];
        let lengths = self.unit_lengths[u].clone();
        let unit = &self.spec.hp.units[u];
        let base = self.own.outs[u];
        let out_buf = plan
            .global_buffers()
            .find(|(i, _)| *i == plan.result.data)
            .map(|(_, b)| b)
            .ok_or_else(|| Error::plain("internal: a unit without a result buffer"))?;
        let out_bytes = format!(
            "(size_t)({}) * {}",
            lengths.c(&out_buf.len)?,
            elem_bytes(&out_buf.elem)?
        );
        let _ = writeln!(self.c, "    /* unit {u} */");
        match into {
            Some(d) => {
                let _ = writeln!(self.c, "    lr_out_last = {d};");
            }
            None => {
                let _ = writeln!(self.c, "    lr_t{u} ^= 1;");
                for t in 0..2 {
                    let _ = writeln!(self.c, "    if (lr_t{u} == {t}) {{");
                    self.ensure(base + t, &out_bytes, "a result of a part of the program");
                    let _ = writeln!(self.c, "    }}");
                }
                let _ = writeln!(self.c, "    lr_out_last = lr_own[{base} + lr_t{u}];");
            }
        }
        let temps = self.own.temps[u].clone();
        for (b, i) in &temps {
            let buf = &plan.memory.buffers[*b];
            let bytes = format!("(size_t)({}) * {}", lengths.c(&buf.len)?, elem_bytes(&buf.elem)?);
            self.ensure(*i, &bytes, "a temporary");
            if buf.role == Role::Scratch {
                let _ = writeln!(
                    self.c,
                    "    if (lr_zero_fill(ctx, lr_own[{i}], lr_ownb[{i}])) goto done;"
                );
            }
        }
        for (ki, k) in plan.kernels.iter().enumerate() {
            let _ = writeln!(self.c, "    {{");
            for (ai, a) in k.args.iter().enumerate() {
                let (size, value) = match a {
                    KernelArg::Buffer(bi) => {
                        let b = &plan.memory.buffers[*bi];
                        let mem = match b.role {
                            Role::Input(p) => format!("lr_s[{}]", unit.args[p]),
                            Role::Output => "lr_out_last".to_string(),
                            Role::Temp | Role::Scratch => format!("lr_own[{}]", temps[bi]),
                            Role::OutputLength | Role::TempLength | Role::InputLength(_) => {
                                return Err(crate::not_supported("filters in a program with host sections"))
                            }
                        };
                        let _ = writeln!(self.c, "        cl_mem lr_m{ai} = {mem};");
                        ("sizeof(cl_mem)".to_string(), format!("&lr_m{ai}"))
                    }
                    KernelArg::ErrorFlag => ("sizeof(cl_mem)".to_string(), "&ctx->flag".to_string()),
                    KernelArg::Local(bi) => {
                        let lb = &plan.memory.buffers[*bi];
                        let bytes = format!("(size_t)({}) * {}", lengths.c(&lb.len)?, elem_bytes(&lb.elem)?);
                        (format!("{bytes} ? {bytes} : 1"), "NULL".to_string())
                    }
                    KernelArg::Size(cn) => {
                        let v = lengths.c(&ArithExpr::size_var(cn))?;
                        let _ = writeln!(self.c, "        int32_t lr_z_{ai} = (int32_t)({v});");
                        ("sizeof(int32_t)".to_string(), format!("&lr_z_{ai}"))
                    }
                    KernelArg::Param(p) => {
                        let slot = unit.args[*p];
                        let name = self.scalars.get(&slot).ok_or_else(|| {
                            Error::plain(format!(
                                "internal: the scalar argument s{slot} of unit {u} is not a parameter"
                            ))
                        })?;
                        let sc = self
                            .params
                            .iter()
                            .find_map(|(n, s)| match s {
                                Shape::Scalar(sc) if n == name => Some(*sc),
                                _ => None,
                            })
                            .ok_or_else(|| Error::plain("internal: a scalar parameter without its type"))?;
                        (format!("sizeof({})", c_type(sc)), format!("&{name}"))
                    }
                };
                let _ = writeln!(
                    self.c,
                    "        if (lr_arg(ctx, {u}, {ki}, {ai}, {size}, {value})) goto done;"
                );
            }
            let global = k.global.iter().map(|g| lengths.c(g)).collect::<Result<Vec<_>, _>>()?;
            let local = match &k.local {
                Some(l) => {
                    let l: Vec<String> = l.iter().map(usize::to_string).collect();
                    let _ = writeln!(self.c, "        size_t lr_l[{}] = {{{}}};", l.len(), l.join(", "));
                    "lr_l"
                }
                None => "NULL",
            };
            let global: Vec<String> = global.iter().map(|g| format!("(size_t)({g})")).collect();
            let _ = writeln!(
                self.c,
                "        size_t lr_g[{}] = {{{}}};\n        if (lr_launch(ctx, {u}, {ki}, {}, lr_g, {local})) goto done;\n    }}",
                global.len(),
                global.join(", "),
                global.len()
            );
        }
        Ok(())
    }
}

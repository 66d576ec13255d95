//! One variant's launch function in the generated C (`lr_run<v>`): its sizes, the buffers, the
//! kernels launched in the plan's order, the error flag decoded, the result array.
//!
//! The variant built for the library's sizes has every length a constant. The generic variant
//! reads each size from the first argument dimension that is that size alone, checks every
//! other dimension and the program's size conditions (`split` divisibility, minimum lengths)
//! against them with the message `lift run` gives, and evaluates the plan's lengths as C
//! expressions of them, passing the sizes to the kernels as arguments.

use crate::gen::{c_type, Kind, Shape, Variant};
use arith::ArithExpr;
use codegen_opencl::{KernelArg, KernelPlan};
use ir::Type;
use lift_compile::Error;
use memalloc::Role;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write;
use typeck::CheckKind;

/// How a variant's lengths are written in C.
#[derive(Clone)]
pub(crate) enum Lengths {
    /// The sizes built in, by the program's and by the plan's names.
    Fixed(BTreeMap<String, i64>),
    /// Size name (the program's and the plan's) to the C variable holding it at run time, and
    /// per size (program's name, C variable) where it is read from: (parameter, dimension).
    Generic {
        vars: BTreeMap<String, String>,
        from: Vec<(String, String, usize, usize)>,
    },
}

impl Lengths {
    /// The C expression of `e` (an `int64_t`).
    pub(crate) fn c(&self, e: &ArithExpr) -> Result<String, Error> {
        match self {
            Lengths::Fixed(sizes) => e
                .eval(&|n| sizes.get(n).copied())
                .map(|v| v.to_string())
                .map_err(|err| Error::plain(format!("internal: cannot evaluate {e}: {err}"))),
            Lengths::Generic { vars, .. } => {
                let unknown = RefCell::new(None);
                let renamed = e.map_vars(&|n, _, _| match vars.get(n) {
                    Some(v) => Some(ArithExpr::size_var(v)),
                    None => {
                        unknown.replace(Some(n.to_string()));
                        None
                    }
                });
                if let Some(n) = unknown.into_inner() {
                    return Err(Error::plain(format!(
                        "internal: the length {e} mentions `{n}`, which is not known at run time"
                    )));
                }
                // The printer writes OpenCL C's integer `min`, `max` and `pow`; the runtime
                // defines them as `lr_` functions (variables are `lr_z…`, so nothing else matches).
                Ok(format!("(int64_t){renamed}")
                    .replace("min(", "lr_min(")
                    .replace("max(", "lr_max(")
                    .replace("pow(", "lr_pow("))
            }
        }
    }
}

impl Lengths {
    /// These lengths with the capacities of a plan's run-time lengths (filter results: C name,
    /// capacity over the sizes) known too, and the C declarations that compute them.
    pub(crate) fn with_capacities(&self, caps: &[(String, ArithExpr)]) -> Result<(Lengths, String), Error> {
        let mut out = self.clone();
        let mut decls = String::new();
        for (i, (name, cap)) in caps.iter().enumerate() {
            match &mut out {
                Lengths::Fixed(env) => {
                    let v = cap
                        .eval(&|n| env.get(n).copied())
                        .map_err(|e| Error::plain(format!("internal: cannot evaluate the capacity {cap}: {e}")))?;
                    env.insert(name.clone(), v);
                }
                Lengths::Generic { .. } => {
                    let value = out.c(cap)?;
                    let _ = writeln!(decls, "    int64_t lr_cap{i} = {value};");
                    if let Lengths::Generic { vars, .. } = &mut out {
                        vars.insert(name.clone(), format!("lr_cap{i}"));
                    }
                }
            }
        }
        Ok((out, decls))
    }
}

/// A one-line C string literal of `text`.
pub(crate) fn literal(text: &str) -> String {
    crate::gen::c_string(&text.replace('\n', " ")).trim().to_string()
}

/// The size checks of the generic variant: sizes from the shapes, every dimension, the range
/// the kernels' 32-bit size arguments take, the program's conditions.
pub(crate) fn generic_prologue(
    c: &mut String,
    lengths: &Lengths,
    checks: &[&typeck::SizeCheck],
    params: &[(String, Shape)],
) -> Result<(), Error> {
    let Lengths::Generic { from, .. } = lengths else {
        return Ok(());
    };
    for (user, var, p, d) in from {
        let _ = writeln!(
            c,
            "    int64_t {var} = {}->shape[{d}];\n    if ({var} > 2147483647) {{\n        lr_fail(ctx, \"size {user}=%lld \
             is larger than the kernels' 32-bit sizes\", (long long){var});\n        return 1;\n    }}",
            params[*p].0
        );
    }
    let sizes_fmt: Vec<String> = from.iter().map(|(u, ..)| format!("{u}=%lld")).collect();
    let sizes_args: String = from.iter().map(|(_, v, ..)| format!(", (long long){v}")).collect();
    for (n, s) in params {
        let Shape::Array(_, dims) = s else { continue };
        let want = dims.iter().map(|d| lengths.c(d)).collect::<Result<Vec<_>, _>>()?;
        let cond: Vec<String> = want
            .iter()
            .enumerate()
            .map(|(i, w)| format!("{n}->shape[{i}] != {w}"))
            .collect();
        let fmt: Vec<&str> = dims.iter().map(|_| "%lld").collect();
        let got: String = (0..dims.len())
            .map(|i| format!(", (long long){n}->shape[{i}]"))
            .collect();
        let wanted: String = want.iter().map(|w| format!(", (long long)({w})")).collect();
        let _ = writeln!(
            c,
            "    if ({}) {{\n        lr_fail(ctx, \"argument `{n}` has shape [{f}], but the sizes the arguments give ({}) \
             make it [{f}]\"{got}{sizes_args}{wanted});\n        return 1;\n    }}",
            cond.join(" || "),
            sizes_fmt.join(", "),
            f = fmt.join(", "),
        );
    }
    let mut seen = vec![];
    for check in checks {
        let (len, other, what, divisible) = match &check.kind {
            CheckKind::Divisible { len, by, what } => (len, by, what, true),
            CheckKind::AtLeast { len, min, what } => (len, min, what, false),
            // Lengths from 32-bit sizes of a program of rank at most 4 fit 64 bits.
            CheckKind::Fits { .. } => continue,
        };
        let (Ok(l), Ok(o)) = (lengths.c(len), lengths.c(other)) else {
            // A condition on a length unknown before the run (an existential) is the kernels'.
            continue;
        };
        let key = (l.clone(), o.clone(), divisible);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        // The message of `typeck::SizeCheck::verify`, as `lift run` prints it.
        let shown = if len.as_cst().is_some() {
            String::new()
        } else {
            format!(" ({len})")
        };
        if divisible {
            let _ = writeln!(
                c,
                "    if (({o}) == 0 || ({l}) % ({o}) != 0) {{\n        lr_fail(ctx, \"%s of an array of length %lld%s: %lld is \
                 not a multiple of %lld\", {}, (long long)({l}), {}, (long long)({l}), (long long)({o}));\n        return \
                 1;\n    }}",
                literal(what),
                literal(&shown)
            );
        } else {
            let _ = writeln!(
                c,
                "    if (({l}) < ({o})) {{\n        lr_fail(ctx, \"%s needs an array of length at least %lld, but it has length \
                 %lld%s\", {}, (long long)({o}), (long long)({l}), {});\n        return 1;\n    }}",
                literal(what),
                literal(&shown)
            );
        }
    }
    Ok(())
}

/// `static int lr_ok<v>(params…)`: whether the generic variant's own conditions (those of the
/// variant chosen beyond the program's, e.g. a `split #128` the rewrite added) hold at the
/// arguments' sizes; where they do not, the program as written runs instead.
pub(crate) fn condition_function(
    c: &mut String,
    vi: usize,
    var: &Variant,
    params: &[(String, Shape)],
) -> Result<(), Error> {
    let Lengths::Generic { from, .. } = &var.lengths else {
        return Ok(());
    };
    let sig: Vec<String> = params
        .iter()
        .map(|(n, s)| match s {
            Shape::Scalar(sc) => format!("{} {n}", c_type(*sc)),
            Shape::Array(..) => format!("const struct lr_array* {n}"),
        })
        .collect();
    let _ = writeln!(
        c,
        "
static int lr_ok{vi}({}) {{",
        if sig.is_empty() {
            "void".to_string()
        } else {
            sig.join(", ")
        }
    );
    for (n, _) in params {
        let _ = writeln!(c, "    (void){n};");
    }
    for (_, var_name, p, d) in from {
        let _ = writeln!(
            c,
            "    int64_t {var_name} = {}->shape[{d}];\n    (void){var_name};",
            params[*p].0
        );
    }
    let mut conds = vec![];
    for check in &var.extra {
        let (len, other, divisible) = match &check.kind {
            CheckKind::Divisible { len, by, .. } => (len, by, true),
            CheckKind::AtLeast { len, min, .. } => (len, min, false),
            CheckKind::Fits { .. } => continue,
        };
        let (Ok(l), Ok(o)) = (var.lengths.c(len), var.lengths.c(other)) else {
            continue;
        };
        conds.push(if divisible {
            format!("(({o}) != 0 && ({l}) % ({o}) == 0)")
        } else {
            format!("(({l}) >= ({o}))")
        });
    }
    let _ = writeln!(
        c,
        "    return {};
}}",
        if conds.is_empty() {
            "1".to_string()
        } else {
            conds.join(" && ")
        }
    );
    Ok(())
}

/// `static int lr_run<v>(ctx, out, params…)`: runs variant `v` on checked handles, the lock held.
pub(crate) fn variant_function(
    c: &mut String,
    vi: usize,
    var: &Variant,
    params: &[(String, Shape)],
    result: &(Kind, Vec<ArithExpr>),
    kind_id: &dyn Fn(Kind) -> usize,
) -> Result<(), Error> {
    let plan: &KernelPlan = var.plan;
    // The capacities of run-time lengths (filter results) are lengths like the sizes.
    let (lengths, capacities) = var.lengths.with_capacities(&plan.capacities)?;
    let lengths = &lengths;
    // A filter result: its array is made at its capacity, its length read after the run.
    let counted = plan.result.lengths;
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
    let _ = writeln!(
        c,
        "\n/* {} */\nstatic int lr_run{vi}(struct lr_ctx* ctx, struct lr_array** out{sig}) {{",
        var.description.replace("*/", "* /").replace('\n', " ")
    );
    generic_prologue(c, &var.lengths, &var.checks, params)?;
    c.push_str(&capacities);
    // Buffers: inputs are the arguments' memory, the result a new array, the rest temporaries.
    let globals: Vec<(usize, &memalloc::Buffer)> = plan.global_buffers().collect();
    let index: BTreeMap<usize, usize> = globals.iter().enumerate().map(|(j, (i, _))| (*i, j)).collect();
    let nb = globals.len().max(1);
    let _ = writeln!(
        c,
        "    cl_mem lr_b[{nb}] = {{0}};\n    size_t lr_bytes[{nb}] = {{0}};\n    int lr_owned[{nb}] = {{0}};\n    struct lr_array* lr_result = NULL;\n    int lr_rc = \
         1;\n    int32_t lr_flag = 0;"
    );
    for (j, (i, b)) in globals.iter().enumerate() {
        let esz = elem_bytes(&b.elem)?;
        match b.role {
            Role::Input(k) => {
                let (n, _) = &params[k];
                let _ = writeln!(c, "    lr_b[{j}] = {n}->mem;");
            }
            Role::Output if *i == plan.result.data => {
                let dims = if counted.is_some() {
                    vec![lengths.c(&b.len)?]
                } else {
                    result.1.iter().map(|d| lengths.c(d)).collect::<Result<Vec<_>, _>>()?
                };
                let _ = writeln!(
                    c,
                    "    {{\n        int64_t lr_shape[{}] = {{{}}};\n        lr_result = lr_array_alloc(ctx, {}, {}, lr_shape, \
                     sizeof({}));\n        if (!lr_result) goto done;\n        lr_b[{j}] = lr_result->mem;\n    }}",
                    dims.len().max(1),
                    if dims.is_empty() { "0".to_string() } else { dims.join(", ") },
                    kind_id(result.0),
                    dims.len(),
                    // The result's scalar: a vector's lanes or a tuple's components are its
                    // last dimension.
                    c_type(result.0.elem),
                );
            }
            Role::Output | Role::Temp | Role::Scratch | Role::OutputLength | Role::TempLength => {
                let _ = writeln!(
                    c,
                    "    lr_bytes[{j}] = (size_t)({}) * {esz};\n    lr_b[{j}] = {}(ctx, lr_bytes[{j}], \"temporary `{}`\");\n    \
                     if (!lr_b[{j}]) goto done;\n    lr_owned[{j}] = 1;",
                    lengths.c(&b.len)?,
                    // Scratch and the counters of filter results start at zero.
                    if matches!(b.role, Role::Scratch | Role::OutputLength | Role::TempLength) {
                        "lr_alloc_zeroed"
                    } else {
                        "lr_alloc"
                    },
                    b.name
                );
            }
            Role::InputLength(_) => return Err(crate::not_supported("parameters that are filter results")),
        }
    }
    let checks = plan.uses_error_flag();
    if checks {
        let _ = writeln!(c, "    if (lr_flag_clear(ctx)) goto done;");
    }
    for (ki, k) in plan.kernels.iter().enumerate() {
        let _ = writeln!(c, "    /* {} */\n    {{", k.name);
        for (ai, a) in k.args.iter().enumerate() {
            let (size, value) = match a {
                KernelArg::Buffer(bi) => ("sizeof(cl_mem)".to_string(), format!("&lr_b[{}]", index[bi])),
                KernelArg::ErrorFlag => ("sizeof(cl_mem)".to_string(), "&ctx->flag".to_string()),
                KernelArg::Local(bi) => {
                    let lb = &plan.memory.buffers[*bi];
                    let bytes = format!("(size_t)({}) * {}", lengths.c(&lb.len)?, elem_bytes(&lb.elem)?);
                    (format!("{bytes} ? {bytes} : 1"), "NULL".to_string())
                }
                KernelArg::Size(cn) => {
                    let v = lengths.c(&ArithExpr::size_var(cn))?;
                    let _ = writeln!(c, "        int32_t lr_s{ai} = (int32_t)({v});");
                    ("sizeof(int32_t)".to_string(), format!("&lr_s{ai}"))
                }
                KernelArg::Param(p) => {
                    let (n, s) = &params[*p];
                    let Shape::Scalar(sc) = s else {
                        return Err(Error::plain(format!("internal: parameter {n} passed as a scalar")));
                    };
                    (format!("sizeof({})", c_type(*sc)), format!("&{n}"))
                }
            };
            let _ = writeln!(
                c,
                "        if (lr_arg(ctx, {vi}, {ki}, {ai}, {size}, {value})) goto done;"
            );
        }
        let global = k.global.iter().map(|g| lengths.c(g)).collect::<Result<Vec<_>, _>>()?;
        let local = match &k.local {
            Some(l) => {
                let l: Vec<String> = l.iter().map(usize::to_string).collect();
                let _ = writeln!(c, "        size_t lr_l[{}] = {{{}}};", l.len(), l.join(", "));
                "lr_l"
            }
            None => "NULL",
        };
        let global: Vec<String> = global.iter().map(|g| format!("(size_t)({g})")).collect();
        let _ = writeln!(
            c,
            "        size_t lr_g[{}] = {{{}}};\n        if (lr_launch(ctx, {vi}, {ki}, {}, lr_g, {local})) goto done;\n    }}",
            global.len(),
            global.join(", "),
            global.len()
        );
    }
    // Waiting for the launches (reading the flag, where there is one); a set flag names the
    // failed check.
    let _ = writeln!(c, "    if (lr_wait(ctx, {}, &lr_flag)) goto done;", i32::from(checks));
    let mut messages = String::new();
    for lc in &plan.length_checks {
        length_check_message(&mut messages, lc, lengths, &index)?;
    }
    for (i, _) in plan.checks.iter().enumerate() {
        if plan.length_checks.iter().any(|lc| lc.flag == i) {
            continue;
        }
        let what = if plan.division_checks.contains(&i) {
            "integer division by zero"
        } else {
            "index out of range in `at`"
        };
        let _ = writeln!(
            messages,
            "        if (lr_flag == {}) lr_fail(ctx, \"{what} (detected on the device)\");",
            i + 1
        );
    }
    // A filter result's array takes the length its kernels counted.
    let count = match counted {
        Some(l) => {
            let esz = elem_bytes(&plan.memory.buffers[plan.result.data].elem)?;
            format!(
                "    {{
        int32_t lr_n = 0;
        cl_int lr_e = clEnqueueReadBuffer(ctx->dev->queue, lr_b[{}], CL_TRUE, 0, 4, &lr_n, 0, NULL, NULL);
        ctx->dev->moved += 4;
        if (lr_e != CL_SUCCESS) {{
            lr_fail(ctx, \"reading the length of the filter's result failed: error %d\", (int)lr_e);
            goto done;
        }}
        if (lr_n < 0) lr_n = 0;
        if ((int64_t)lr_n < lr_result->shape[0]) lr_result->shape[0] = lr_n;
        lr_result->bytes = (size_t)lr_result->shape[0] * {esz};
    }}
",
                index[&l]
            )
        }
        None => String::new(),
    };
    let _ = writeln!(
        c,
        "    if (lr_flag != 0) {{\n        lr_fail(ctx, \"a check failed on the device (flag %d)\", (int)lr_flag);\n{messages}        \
         goto done;\n    }}\n{}    *out = lr_result;\n    lr_result = NULL;\n    lr_rc = 0;\ndone:\n    for (int lr_i = 0; lr_i < {nb}; \
         lr_i++)\n        if (lr_owned[lr_i]) lr_release(ctx->dev, lr_b[lr_i], lr_bytes[lr_i]);\n    if (lr_result) lr_array_free(lr_result);\n    return \
         lr_rc;\n}}",
        count
    );
    Ok(())
}

/// The message of a failed condition on a filter result's length (`split #4` of it), as `lift
/// run` words it: the length is read from its buffer when the flag names the condition.
fn length_check_message(
    messages: &mut String,
    lc: &codegen_opencl::LengthCheck,
    lengths: &Lengths,
    index: &BTreeMap<usize, usize>,
) -> Result<(), Error> {
    let Some(j) = index.get(&lc.length.1) else {
        return Err(Error::plain("internal: a checked length outside global memory"));
    };
    let is_length = |e: &ArithExpr| e.as_var().is_some_and(|(v, _)| v == lc.length.0);
    // The other side of the condition, over the sizes (the length itself is never on it).
    let (fmt, value) = match &lc.check.kind {
        CheckKind::Divisible { len, by, what } => {
            (
                if is_length(len) {
                    format!("the result of filterGlb has %d elements, not a multiple of %lld as {what} needs")
                } else {
                    format!("the result of filterGlb has %d elements, so {what} gets a length that is not a multiple of %lld")
                },
                Some(lengths.c(by)?),
            )
        }
        CheckKind::AtLeast { len, min, what } => (
            if is_length(len) {
                format!("the result of filterGlb has %d elements, fewer than the %lld that {what} needs")
            } else {
                format!("the result of filterGlb has %d elements, so {what} gets a length below %lld")
            },
            Some(lengths.c(min)?),
        ),
        CheckKind::Fits { len } => (
            format!("the result of filterGlb has %d elements, and the length {len} does not fit a 64-bit integer"),
            None,
        ),
    };
    let value: String = value.map(|v| format!(", (long long)({v})")).unwrap_or_default();
    let _ = writeln!(
        messages,
        "        if (lr_flag == {}) {{
            int32_t lr_n = 0;
            clEnqueueReadBuffer(ctx->dev->queue, lr_b[{j}], CL_TRUE, 0, 4, &lr_n, 0, NULL, NULL);
            ctx->dev->moved += 4;
            lr_fail(ctx, {}, (int)lr_n{value});
        }}",
        lc.flag + 1,
        literal(&fmt)
    );
    Ok(())
}

/// Bytes of a buffer element, as the kernels lay it out.
pub(crate) fn elem_bytes(t: &Type) -> Result<i64, Error> {
    i64::try_from(lift_data::layout::layout(t).0).map_err(|_| Error::plain("internal: an element too large"))
}

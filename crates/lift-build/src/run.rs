//! `<prog>_run`, the typed entry point: it checks the handles (their context, element type and
//! rank), picks the variant by the arguments' shapes (the kernels built for the library's sizes,
//! else the generic ones, else the generic ones as written where the chosen variant's own
//! conditions fail) or, for a host program, builds every unit's kernels, and runs it under the
//! context's lock.

use crate::gen::{run_params, Kind, Shape, Spec};
use std::fmt::Write;

/// The arguments of `<prog>_run` passed on to a variant's functions.
pub(crate) fn call_args(spec: &Spec) -> String {
    let args: Vec<String> = spec
        .params
        .iter()
        .map(|(n, s)| match s {
            Shape::Scalar(_) => n.clone(),
            Shape::Array(..) => format!("(const struct lr_array*){n}"),
        })
        .collect();
    args.join(", ")
}

/// `<prog>_run` of a host program: checks the handles (and with sizes built in, the shapes),
/// builds every unit's kernels, runs `lr_host` under the context's lock.
pub(crate) fn host_run_function(c: &mut String, spec: &Spec, units: usize, kind_id: &dyn Fn(Kind) -> usize) {
    let name = spec.name;
    let _ = writeln!(
        c,
        "int {name}_run({name}_ctx* ctx_, {}** out{}) {{\n    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;\n    if (!ctx || \
         lr_enter(ctx)) return 1;\n    if (!out) {{ lr_fail(ctx, \"`out` is NULL\"); return lr_leave(ctx, 1); }}\n    *out = NULL;",
        spec.result.0.name(name),
        run_params(spec)
    );
    let built: Vec<String> = spec.built.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let lookup = |n: &str| spec.built.get(n).copied();
    for (n, s) in &spec.params {
        let Shape::Array(k, dims) = s else { continue };
        let _ = writeln!(
            c,
            "    if (lr_check_array(ctx, (const struct lr_array*){n}, {id}, \"{n}\")) return lr_leave(ctx, 1);",
            id = kind_id(*k)
        );
        if spec.built.is_empty() {
            continue;
        }
        // Sizes built in: the arguments must have the shapes they give.
        let dims: Vec<i64> = dims.iter().map(|d| d.eval(&lookup).unwrap_or(-1)).collect();
        let cond: Vec<String> = dims
            .iter()
            .enumerate()
            .map(|(i, d)| format!("((const struct lr_array*){n})->shape[{i}] != {d}"))
            .collect();
        let fmt: Vec<&str> = dims.iter().map(|_| "%lld").collect();
        let vals: String = (0..dims.len())
            .map(|i| format!(", (long long)((const struct lr_array*){n})->shape[{i}]"))
            .collect();
        let _ = writeln!(
            c,
            "    if ({}) {{\n        lr_fail(ctx, \"argument `{n}` has shape [{}], but the library was built for {dims:?} ({})\"{vals});\n        \
             return lr_leave(ctx, 1);\n    }}",
            cond.join(" || "),
            fmt.join(", "),
            built.join(", "),
        );
    }
    let args = if spec.params.is_empty() {
        String::new()
    } else {
        format!(", {}", call_args(spec))
    };
    let _ = writeln!(
        c,
        "    for (int lr_u = 0; lr_u < {units}; lr_u++)\n        if (lr_build(ctx, lr_u)) return lr_leave(ctx, 1);\n    int lr_rc = \
         lr_host(ctx, (struct lr_array**)out{args});\n    if (lr_rc == 0) ctx->used = 0;\n    return lr_leave(ctx, lr_rc);\n}}"
    );
}

/// `<prog>_run`: checks the handles, picks the variant, runs it under the context's lock.
pub(crate) fn run_function(c: &mut String, spec: &Spec, kind_id: &dyn Fn(Kind) -> usize) {
    let name = spec.name;
    let _ = writeln!(
        c,
        "int {name}_run({name}_ctx* ctx_, {}** out{}) {{\n    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;",
        spec.result.0.name(name),
        run_params(spec)
    );
    let _ = writeln!(c, "    if (!ctx || lr_enter(ctx)) return 1;");
    let _ = writeln!(
        c,
        "    if (!out) {{ lr_fail(ctx, \"`out` is NULL\"); return lr_leave(ctx, 1); }}\n    *out = NULL;"
    );
    for (n, s) in &spec.params {
        let Shape::Array(k, _) = s else { continue };
        let _ = writeln!(
            c,
            "    if (lr_check_array(ctx, (const struct lr_array*){n}, {id}, \"{n}\")) return lr_leave(ctx, 1);",
            id = kind_id(*k)
        );
    }
    let _ = writeln!(c, "    int lr_v = 0;");
    if spec.has_fixed() {
        // Arrays of the built shapes run the kernels built for them; others the generic kernels,
        // or without them an error naming the built sizes.
        let built: Vec<String> = spec.built.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let lookup = |n: &str| spec.built.get(n).copied();
        let mut fits = vec![];
        let mut refusals = String::new();
        for (n, s) in &spec.params {
            let Shape::Array(_, dims) = s else { continue };
            let dims: Vec<i64> = dims.iter().map(|d| d.eval(&lookup).unwrap_or(-1)).collect();
            let cond: Vec<String> = dims
                .iter()
                .enumerate()
                .map(|(i, d)| format!("((const struct lr_array*){n})->shape[{i}] != {d}"))
                .collect();
            let fmt: Vec<&str> = dims.iter().map(|_| "%lld").collect();
            let vals: Vec<String> = (0..dims.len())
                .map(|i| format!("(long long)((const struct lr_array*){n})->shape[{i}]"))
                .collect();
            if cond.is_empty() {
                continue;
            }
            fits.push(format!("({})", cond.join(" || ")));
            let _ = writeln!(
                refusals,
                "        if ({}) lr_fail(ctx, \"argument `{n}` has shape [{}], but the library was built for {dims:?} ({})\", {});",
                cond.join(" || "),
                fmt.join(", "),
                built.join(", "),
                vals.join(", ")
            );
        }
        if !fits.is_empty() {
            let _ = writeln!(c, "    if ({}) {{", fits.join(" || "));
            match spec.generic() {
                Some(g) => {
                    let _ = writeln!(c, "        lr_v = {g};");
                    if g + 1 < spec.variants.len() {
                        let _ = writeln!(c, "        if (!lr_ok{g}({})) lr_v = {};", call_args(spec), g + 1);
                    }
                }
                None => {
                    let _ = writeln!(c, "{refusals}        return lr_leave(ctx, 1);");
                }
            }
            let _ = writeln!(c, "    }}");
        }
    }
    if !spec.has_fixed() && spec.variants.len() > 1 {
        let _ = writeln!(c, "    if (!lr_ok0({})) lr_v = 1;", call_args(spec));
    }
    let _ = writeln!(
        c,
        "    if (lr_build(ctx, lr_v)) return lr_leave(ctx, 1);\n    int lr_rc = 1;"
    );
    let args = if spec.params.is_empty() {
        String::new()
    } else {
        format!(", {}", call_args(spec))
    };
    for v in 0..spec.variants.len() {
        let _ = writeln!(
            c,
            "    if (lr_v == {v}) lr_rc = lr_run{v}(ctx, (struct lr_array**)out{args});"
        );
    }
    let _ = writeln!(
        c,
        "    if (lr_rc == 0) ctx->used = lr_v;\n    return lr_leave(ctx, lr_rc);\n}}"
    );
}

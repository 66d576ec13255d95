//! The generated C of a library: its header and its source (the runtime, the kernels' text and
//! the launch plan as straight-line C at the sizes the library is built for).
//!
//! Every array parameter and the result has a handle type per element type and rank
//! (`<prog>_f32_1d`); `<prog>_run` checks the handles' context, type and shape against the sizes
//! built in, binds the buffers, launches the kernels in the plan's order on the context's queue,
//! and reads the error flag, so a failed `at` check is a message rather than a wrong result.

use arith::ArithExpr;
use codegen_opencl::{KernelArg, KernelPlan};
use ir::{Program, Scalar, Type};
use lift_compile::Error;
use memalloc::Role;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The runtime every library carries, before its generated part.
const RUNTIME: &str = include_str!("runtime.c");

pub(crate) struct Library {
    pub header: String,
    pub source: String,
}

/// A handle type: element type and rank.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Kind {
    elem: Scalar,
    rank: usize,
}

impl Kind {
    fn name(&self, prefix: &str) -> String {
        format!("{prefix}_{}_{}d", suffix(self.elem), self.rank)
    }
}

fn suffix(s: Scalar) -> &'static str {
    match s {
        Scalar::Float => "f32",
        Scalar::Double => "f64",
        Scalar::Int => "i32",
        Scalar::Uint => "u32",
        Scalar::Long => "i64",
        Scalar::Ulong => "u64",
        Scalar::Bool => "bool",
    }
}

fn c_type(s: Scalar) -> &'static str {
    match s {
        Scalar::Float => "float",
        Scalar::Double => "double",
        // OpenCL C's bool is not allowed in kernel arguments; the kernels take an int.
        Scalar::Int | Scalar::Bool => "int32_t",
        Scalar::Uint => "uint32_t",
        Scalar::Long => "int64_t",
        Scalar::Ulong => "uint64_t",
    }
}

/// A parameter or the result as the C API sees it.
enum Shape {
    Scalar(Scalar),
    Array(Kind, Vec<i64>),
}

/// The C form of a program type at the built sizes; arrays of tuples or vectors, and booleans in
/// arrays (stored as bytes or ints depending on the plan), are refused.
fn shape_of(ty: &Type, env: &Env, what: &str) -> Result<Shape, Error> {
    match ty {
        Type::Scalar(s) => Ok(Shape::Scalar(*s)),
        Type::Array(..) => {
            let (dims, elem) = memalloc::dims_of(ty);
            let elem = match elem {
                Type::Scalar(s) if s != Scalar::Bool => s,
                other => return Err(crate::not_supported(&format!("{what}, an array of {other},"))),
            };
            if dims.len() > 4 {
                return Err(crate::not_supported(&format!(
                    "{what}, an array of rank {},",
                    dims.len()
                )));
            }
            let dims = dims.iter().map(|d| env.eval(d)).collect::<Result<Vec<_>, _>>()?;
            Ok(Shape::Array(Kind { elem, rank: dims.len() }, dims))
        }
        other => Err(crate::not_supported(&format!("{what} of type {other}"))),
    }
}

/// The sizes, by the program's and by the kernels' names.
struct Env(BTreeMap<String, i64>);

impl Env {
    fn eval(&self, e: &ArithExpr) -> Result<i64, Error> {
        e.eval(&|n| self.0.get(n).copied())
            .map_err(|err| Error::plain(format!("internal: cannot evaluate {e}: {err}")))
    }
}

/// Refuses a parameter name that cannot be a C parameter of `<prog>_run`: not an identifier, a
/// C or C++ keyword, or a name the generated code uses (`ctx`, `out`, the runtime's `lr_`).
fn c_name(n: &str) -> Result<(), Error> {
    const RESERVED: &[&str] = &[
        "ctx",
        "ctx_",
        "out",
        "auto",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "class",
        "const",
        "continue",
        "default",
        "delete",
        "do",
        "double",
        "else",
        "enum",
        "explicit",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "operator",
        "private",
        "protected",
        "public",
        "register",
        "restrict",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "struct",
        "switch",
        "template",
        "this",
        "throw",
        "true",
        "try",
        "typedef",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "while",
    ];
    let ident = n.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident || RESERVED.contains(&n) || n.starts_with("lr_") {
        return Err(Error::plain(format!(
            "parameter `{n}` cannot be a parameter of the C function `run`: rename it (a C identifier, \
             not a keyword, `ctx`, `out` or `lr_…`)"
        )));
    }
    Ok(())
}

/// A C string literal of `text`, one source line per line.
fn c_string(text: &str) -> String {
    let mut s = String::new();
    for line in text.split_inclusive('\n') {
        s.push_str("    \"");
        for c in line.chars() {
            match c {
                '\\' => s.push_str("\\\\"),
                '"' => s.push_str("\\\""),
                '\n' => s.push_str("\\n"),
                '\t' => s.push_str("\\t"),
                c if c.is_ascii() && !c.is_ascii_control() => s.push(c),
                c => {
                    let mut buf = [0; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(s, "\\{b:03o}");
                    }
                }
            }
        }
        s.push_str("\"\n");
    }
    if s.is_empty() {
        s.push_str("    \"\"\n");
    }
    s
}

pub(crate) fn generate(
    name: &str,
    prog: &Program,
    plan: &KernelPlan,
    sizes: &BTreeMap<String, i64>,
    chosen: &str,
) -> Result<Library, Error> {
    if !plan.capacities.is_empty()
        || plan.result.lengths.is_some()
        || !plan.length_checks.is_empty()
        || plan
            .global_buffers()
            .any(|(_, b)| matches!(b.role, Role::OutputLength | Role::TempLength | Role::InputLength(_)))
    {
        return Err(crate::not_supported("filters (results of run-time length)"));
    }
    // a zeroed status buffer through which a kernel orders its work-groups
    if plan.global_buffers().any(|(_, b)| b.role == Role::Scratch) {
        return Err(crate::not_supported("scans across the device (`scanGlb`)"));
    }
    if plan.result.parts.len() != 1 {
        return Err(crate::not_supported("a result holding tuples of arrays"));
    }
    let mut env = Env(sizes.clone());
    for (user, c) in &plan.sizes {
        if let Some(v) = sizes.get(user) {
            env.0.insert(c.clone(), *v);
        }
    }
    let params: Vec<(String, Shape)> = prog
        .params
        .iter()
        .map(|p| {
            let n = prog.var(p.var).name.clone();
            c_name(&n)?;
            let s = shape_of(&p.ty, &env, &format!("parameter `{n}`"))?;
            Ok((n, s))
        })
        .collect::<Result<_, Error>>()?;
    let result = match shape_of(&plan.result.ty, &env, "the result")? {
        Shape::Array(k, dims) => (k, dims),
        Shape::Scalar(_) => return Err(crate::not_supported("a scalar result")),
    };
    let mut kinds: Vec<Kind> = params
        .iter()
        .filter_map(|(_, s)| match s {
            Shape::Array(k, _) => Some(*k),
            Shape::Scalar(_) => None,
        })
        .chain([result.0])
        .collect();
    kinds.sort();
    kinds.dedup();
    let kind_id = |k: Kind| kinds.iter().position(|x| *x == k).unwrap_or(0);

    // --- the header ---
    let guard = format!("LIFT_{}_H", name.to_uppercase());
    let mut h = String::new();
    let sizes_text: Vec<String> = sizes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(
        h,
        "/* {name}: a LIFT program as a C library, made by `lift build` for {}.\n * Every function \
         but the `new` ones returns 0 on success, else nonzero with the reason in\n * `{name}_error(ctx)`. \
         Calls on one context are serialised by its lock.\n * Compiled as {}. */",
        if sizes_text.is_empty() {
            "no sizes".to_string()
        } else {
            sizes_text.join(", ")
        },
        chosen.replace("*/", "* /")
    );
    let _ = writeln!(h, "#ifndef {guard}\n#define {guard}\n#include <stdint.h>");
    let _ = writeln!(h, "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n");
    let _ = writeln!(h, "typedef struct {name}_ctx {name}_ctx;");
    for k in &kinds {
        let _ = writeln!(h, "typedef struct {0} {0};", k.name(name));
    }
    let _ = writeln!(
        h,
        "\n/* A context on the device `device`: an id \"P:D\" as `lift devices` prints it, or a part of \
         its name;\n * for NULL the first GPU, else the first device. NULL only when out of memory; \
         when the device\n * cannot be opened the context says why in `{name}_error` and every call \
         on it fails. */"
    );
    let _ = writeln!(h, "{name}_ctx* {name}_ctx_new(const char* device);");
    let _ = writeln!(
        h,
        "/* What the kernels compute: the program as written, or which variant of it. */\nconst char* \
         {name}_compiled_as(void);"
    );
    let _ = writeln!(
        h,
        "/* Fails while arrays of the context remain. */\nint {name}_ctx_free({name}_ctx* ctx);"
    );
    let _ = writeln!(
        h,
        "/* The message of the last failed call, \"\" after a successful one. */\nconst char* \
         {name}_error({name}_ctx* ctx);\n"
    );
    for k in &kinds {
        let t = k.name(name);
        let e = c_type(k.elem);
        let dims: Vec<String> = (0..k.rank).map(|i| format!("int64_t n{i}")).collect();
        let _ = writeln!(
            h,
            "/* A device array of the row-major `data`; NULL on error. */\n{t}* {name}_new_{s}_{r}d({name}_ctx* \
             ctx, const {e}* data, {});\n/* Copies the array into `out` (room for every element). */\nint \
             {name}_values_{s}_{r}d({name}_ctx* ctx, const {t}* a, {e}* out);\nconst int64_t* \
             {name}_shape_{s}_{r}d({name}_ctx* ctx, const {t}* a);\nint {name}_free_{s}_{r}d({name}_ctx* ctx, \
             {t}* a);\n/* The array's cl_mem. */\nvoid* {name}_raw_{s}_{r}d({name}_ctx* ctx, const {t}* a);\n",
            dims.join(", "),
            s = suffix(k.elem),
            r = k.rank
        );
    }
    let mut sig = format!("int {name}_run({name}_ctx* ctx, {}** out", result.0.name(name));
    for (n, s) in &params {
        match s {
            Shape::Scalar(sc) => {
                let _ = write!(sig, ", {} {n}", c_type(*sc));
            }
            Shape::Array(k, _) => {
                let _ = write!(sig, ", const {}* {n}", k.name(name));
            }
        }
    }
    sig.push(')');
    let shapes: Vec<String> = params
        .iter()
        .filter_map(|(n, s)| match s {
            Shape::Array(_, d) => Some(format!("{n}: {d:?}")),
            Shape::Scalar(_) => None,
        })
        .collect();
    let _ = writeln!(
        h,
        "/* Runs the program; `*out` is a new array of shape {:?} (free it). Array shapes: {}. */\n{sig};",
        result.1,
        shapes.join(", ")
    );
    let _ = writeln!(h, "\n#ifdef __cplusplus\n}}\n#endif\n#endif");

    // --- the source ---
    let mut c = String::new();
    let _ = writeln!(c, "/* Generated by `lift build`; see {name}.h. */");
    c.push_str(RUNTIME);
    let _ = writeln!(c, "\n#include \"{name}.h\"\n");
    let _ = writeln!(c, "static const char* lr_source =\n{};", c_string(&plan.source));
    let names: Vec<String> = plan.kernels.iter().map(|k| format!("\"{}\"", k.name)).collect();
    let _ = writeln!(
        c,
        "static const char* const lr_kernels[] = {{{}}};\n",
        if names.is_empty() {
            "\"\"".to_string()
        } else {
            names.join(", ")
        }
    );
    let _ = writeln!(
        c,
        "{name}_ctx* {name}_ctx_new(const char* device) {{\n    return ({name}_ctx*)lr_ctx_new(device, \
         lr_source, lr_kernels, {});\n}}\n",
        plan.kernels.len()
    );
    let _ = writeln!(
        c,
        "int {name}_ctx_free({name}_ctx* ctx) {{ return lr_ctx_free((struct lr_ctx*)ctx); }}\n"
    );
    let _ = writeln!(
        c,
        "const char* {name}_error({name}_ctx* ctx) {{\n    if (!ctx) return \"no context (NULL)\";\n    return lr_live((struct lr_ctx*)ctx) ? ((struct \
         lr_ctx*)ctx)->error : lr_closed;\n}}\n"
    );
    let _ = writeln!(
        c,
        "const char* {name}_compiled_as(void) {{\n    return {};\n}}\n",
        c_string(chosen).trim()
    );
    for k in &kinds {
        array_functions(&mut c, name, *k, kind_id(*k));
    }
    run_function(&mut c, name, &sig, plan, &env, &params, &result, kind_id)?;
    Ok(Library { header: h, source: c })
}

/// `new`, `values`, `shape`, `free` and `raw` of one handle type.
fn array_functions(c: &mut String, name: &str, k: Kind, id: usize) {
    let t = k.name(name);
    let e = c_type(k.elem);
    let (s, r) = (suffix(k.elem), k.rank);
    let dims: Vec<String> = (0..r).map(|i| format!("int64_t n{i}")).collect();
    let ns: Vec<String> = (0..r).map(|i| format!("n{i}")).collect();
    let _ = writeln!(
        c,
        "{t}* {name}_new_{s}_{r}d({name}_ctx* ctx_, const {e}* data, {dims}) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || lr_enter(ctx)) return NULL;
    int64_t shape[{rr}] = {{{ns}}};
    struct lr_array* a = lr_array_new(ctx, {id}, data, {r}, shape, sizeof({e}));
    lr_leave(ctx, 0);
    return ({t}*)a;
}}
int {name}_values_{s}_{r}d({name}_ctx* ctx_, const {t}* a, {e}* out) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || lr_enter(ctx)) return 1;
    if (lr_check_array(ctx, (const struct lr_array*)a, {id}, \"a\")) return lr_leave(ctx, 1);
    return lr_leave(ctx, lr_array_values(ctx, (const struct lr_array*)a, out));
}}
const int64_t* {name}_shape_{s}_{r}d({name}_ctx* ctx_, const {t}* a) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || lr_enter(ctx)) return NULL;
    if (lr_check_array(ctx, (const struct lr_array*)a, {id}, \"a\")) {{ lr_leave(ctx, 1); return NULL; }}
    lr_leave(ctx, 0);
    return ((const struct lr_array*)a)->shape;
}}
int {name}_free_{s}_{r}d({name}_ctx* ctx_, {t}* a) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!a) return 0;
    if (!ctx || lr_enter(ctx)) return 1;
    if (lr_check_array(ctx, (const struct lr_array*)a, {id}, \"a\")) return lr_leave(ctx, 1);
    lr_array_free((struct lr_array*)a);
    return lr_leave(ctx, 0);
}}
void* {name}_raw_{s}_{r}d({name}_ctx* ctx_, const {t}* a) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || lr_enter(ctx)) return NULL;
    if (lr_check_array(ctx, (const struct lr_array*)a, {id}, \"a\")) {{ lr_leave(ctx, 1); return NULL; }}
    lr_leave(ctx, 0);
    return (void*)((const struct lr_array*)a)->mem;
}}
",
        dims = dims.join(", "),
        ns = ns.join(", "),
        rr = r.max(1),
    );
}

/// `<prog>_run`: checks, buffers, the launches in order, the error flag, the result.
#[allow(clippy::too_many_arguments)]
fn run_function(
    c: &mut String,
    name: &str,
    sig: &str,
    plan: &KernelPlan,
    env: &Env,
    params: &[(String, Shape)],
    result: &(Kind, Vec<i64>),
    kind_id: impl Fn(Kind) -> usize,
) -> Result<(), Error> {
    let built: Vec<String> = env
        .0
        .iter()
        .filter(|(k, _)| !k.starts_with("v_"))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    // The definition names the parameter `ctx_`, so that the runtime's view of it is `ctx`.
    let def = sig.replacen(&format!("{name}_ctx* ctx,"), &format!("{name}_ctx* ctx_,"), 1);
    let _ = writeln!(c, "{def} {{\n    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;");
    let _ = writeln!(c, "    if (!ctx || lr_enter(ctx)) return 1;");
    let _ = writeln!(
        c,
        "    if (!out) {{ lr_fail(ctx, \"`out` is NULL\"); return lr_leave(ctx, 1); }}\n    *out = NULL;"
    );
    for (n, s) in params {
        let Shape::Array(k, dims) = s else { continue };
        let _ = writeln!(
            c,
            "    if (lr_check_array(ctx, (const struct lr_array*){n}, {id}, \"{n}\")) return lr_leave(ctx, 1);",
            id = kind_id(*k)
        );
        let cond: Vec<String> = dims
            .iter()
            .enumerate()
            .map(|(i, d)| format!("((const struct lr_array*){n})->shape[{i}] != {d}"))
            .collect();
        let fmt: Vec<&str> = dims.iter().map(|_| "%lld").collect();
        let vals: Vec<String> = (0..dims.len())
            .map(|i| format!("(long long)((const struct lr_array*){n})->shape[{i}]"))
            .collect();
        let _ = writeln!(
            c,
            "    if ({}) {{\n        lr_fail(ctx, \"argument `{n}` has shape [{}], but the library was built for \
             {dims:?} ({})\", {});\n        return lr_leave(ctx, 1);\n    }}",
            cond.join(" || "),
            fmt.join(", "),
            built.join(", "),
            vals.join(", ")
        );
    }
    // Buffers: inputs are the arguments' memory, the result a new array, the rest temporaries.
    let globals: Vec<(usize, &memalloc::Buffer)> = plan.global_buffers().collect();
    let index: BTreeMap<usize, usize> = globals.iter().enumerate().map(|(j, (i, _))| (*i, j)).collect();
    let nb = globals.len() + 1;
    let flag = globals.len();
    let _ = writeln!(
        c,
        "    cl_mem lr_b[{nb}] = {{0}};\n    int lr_owned[{nb}] = {{0}};\n    struct lr_array* lr_result = NULL;\n    int lr_rc = \
         1;\n    int32_t lr_flag = 0;"
    );
    for (j, (i, b)) in globals.iter().enumerate() {
        let esz = elem_bytes(&b.elem)?;
        let bytes = env.eval(&b.len)? * esz;
        match b.role {
            Role::Input(k) => {
                let (n, _) = &params[k];
                let _ = writeln!(c, "    lr_b[{j}] = ((const struct lr_array*){n})->mem;");
            }
            Role::Output if *i == plan.result.data => {
                let dims: Vec<String> = result.1.iter().map(i64::to_string).collect();
                let _ = writeln!(
                    c,
                    "    {{\n        int64_t lr_shape[{}] = {{{}}};\n        lr_result = lr_array_alloc(ctx, {}, {}, lr_shape, \
                     {esz});\n        if (!lr_result) goto done;\n        lr_b[{j}] = lr_result->mem;\n    }}",
                    result.1.len().max(1),
                    dims.join(", "),
                    kind_id(result.0),
                    result.1.len(),
                );
            }
            Role::Output | Role::Temp => {
                let _ = writeln!(
                    c,
                    "    lr_b[{j}] = lr_alloc(ctx, {bytes}, \"temporary `{}`\");\n    if (!lr_b[{j}]) goto done;\n    \
                     lr_owned[{j}] = 1;",
                    b.name
                );
            }
            Role::OutputLength | Role::TempLength | Role::Scratch | Role::InputLength(_) => {
                return Err(crate::not_supported("filters (results of run-time length)"))
            }
        }
    }
    let _ = writeln!(
        c,
        "    lr_b[{flag}] = lr_alloc(ctx, 4, \"the error flag\");\n    if (!lr_b[{flag}]) goto done;\n    lr_owned[{flag}] = \
         1;\n    if (clEnqueueWriteBuffer(ctx->queue, lr_b[{flag}], CL_TRUE, 0, 4, &lr_flag, 0, NULL, NULL) != \
         CL_SUCCESS) {{\n        lr_fail(ctx, \"clearing the error flag failed\");\n        goto done;\n    }}"
    );
    for (ki, k) in plan.kernels.iter().enumerate() {
        let _ = writeln!(c, "    /* {} */\n    {{", k.name);
        for (ai, a) in k.args.iter().enumerate() {
            let (size, value) = match a {
                KernelArg::Buffer(bi) => ("sizeof(cl_mem)".to_string(), format!("&lr_b[{}]", index[bi])),
                KernelArg::ErrorFlag => ("sizeof(cl_mem)".to_string(), format!("&lr_b[{flag}]")),
                KernelArg::Local(bi) => {
                    let lb = &plan.memory.buffers[*bi];
                    let bytes = env.eval(&lb.len)? * elem_bytes(&lb.elem)?;
                    (format!("{}", bytes.max(1)), "NULL".to_string())
                }
                KernelArg::Size(cn) => {
                    let v = env
                        .0
                        .get(cn)
                        .ok_or_else(|| Error::plain(format!("internal: size {cn} has no value")))?;
                    let _ = writeln!(c, "        int32_t lr_s{ai} = {v};");
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
            let _ = writeln!(c, "        if (lr_arg(ctx, {ki}, {ai}, {size}, {value})) goto done;");
        }
        let global: Vec<String> = k
            .global
            .iter()
            .map(|g| env.eval(g).map(|v| v.to_string()))
            .collect::<Result<_, _>>()?;
        let local = match &k.local {
            Some(l) => {
                let l: Vec<String> = l.iter().map(usize::to_string).collect();
                let _ = writeln!(c, "        size_t lr_l[{}] = {{{}}};", l.len(), l.join(", "));
                "lr_l"
            }
            None => "NULL",
        };
        let _ = writeln!(
            c,
            "        size_t lr_g[{}] = {{{}}};\n        if (lr_launch(ctx, {ki}, {}, lr_g, {local})) goto done;\n    }}",
            global.len(),
            global.join(", "),
            global.len()
        );
    }
    // Reading the flag waits for every launch; a set flag names the failed check.
    let _ = writeln!(
        c,
        "    if (clEnqueueReadBuffer(ctx->queue, lr_b[{flag}], CL_TRUE, 0, 4, &lr_flag, 0, NULL, NULL) != CL_SUCCESS) {{\n        \
         lr_fail(ctx, \"running the kernels failed\");\n        goto done;\n    }}"
    );
    let mut checks = String::new();
    for (i, _) in plan.checks.iter().enumerate() {
        let what = if plan.division_checks.contains(&i) {
            "integer division by zero"
        } else {
            "index out of range in `at`"
        };
        let _ = writeln!(
            checks,
            "        if (lr_flag == {}) lr_fail(ctx, \"{what} (detected on the device)\");",
            i + 1
        );
    }
    let _ = writeln!(
        c,
        "    if (lr_flag != 0) {{\n        lr_fail(ctx, \"a check failed on the device (flag %d)\", (int)lr_flag);\n{checks}        \
         goto done;\n    }}\n    *out = ({}*)lr_result;\n    lr_result = NULL;\n    lr_rc = 0;\ndone:\n    for (int lr_i = 0; lr_i < {nb}; \
         lr_i++)\n        if (lr_owned[lr_i] && lr_b[lr_i]) clReleaseMemObject(lr_b[lr_i]);\n    if (lr_result) lr_array_free(lr_result);\n    return \
         lr_leave(ctx, lr_rc);\n}}",
        result.0.name(name)
    );
    Ok(())
}

/// Bytes of a buffer element, as the kernels lay it out.
fn elem_bytes(t: &Type) -> Result<i64, Error> {
    i64::try_from(lift_data::layout::layout(t).0).map_err(|_| Error::plain("internal: an element too large"))
}

#[cfg(test)]
mod tests {
    use super::c_string;

    #[test]
    fn kernel_text_becomes_a_c_literal_that_keeps_every_byte() {
        let lit = c_string("a \"q\" \\ b\n\tc ∘\n");
        assert_eq!(lit, "    \"a \\\"q\\\" \\\\ b\\n\"\n    \"\\tc \\342\\210\\230\\n\"\n");
        assert_eq!(c_string(""), "    \"\"\n");
    }
}

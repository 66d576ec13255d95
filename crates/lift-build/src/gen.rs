//! The generated C of a library: its header and its source (the runtime, each variant's kernel
//! text, its launch plan as straight-line C, and the API functions).
//!
//! Every array parameter and the result has a handle type per element type and rank
//! (`<prog>_f32_1d`). `<prog>_run` ([`crate::run`]) checks the handles' context and type, picks
//! the variant (the kernels built for the library's sizes when the shapes are those, else the
//! generic ones) and calls its launch function ([`crate::launch`]), or a host program's
//! (`lr_host`, [`crate::host`]). The untyped entry points (`<prog>_signature`,
//! `<prog>_call`, `<prog>_array_*`) are what bindings (`lift::app`, the Python module) load.

use crate::launch::{self, Lengths};
use arith::ArithExpr;
use codegen_opencl::KernelPlan;
use ir::{Scalar, Type};
use lift_compile::Error;
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
pub(crate) struct Kind {
    pub elem: Scalar,
    pub rank: usize,
}

impl Kind {
    pub(crate) fn name(&self, prefix: &str) -> String {
        format!("{prefix}_{}_{}d", suffix(self.elem), self.rank)
    }

    /// The runtime's `LR_KIND` of the handle type: the same number in every library, so that
    /// libraries sharing a device context check each other's arrays.
    pub(crate) fn code(&self) -> usize {
        let elem = match self.elem {
            Scalar::Float => 0,
            Scalar::Double => 1,
            Scalar::Int => 2,
            Scalar::Uint => 3,
            Scalar::Long => 4,
            Scalar::Ulong => 5,
            Scalar::Bool => 6,
        };
        elem * 8 + self.rank
    }
}

pub(crate) fn suffix(s: Scalar) -> &'static str {
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

pub(crate) fn c_type(s: Scalar) -> &'static str {
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

/// A parameter or the result as the C API sees it: array lengths over the program's sizes.
pub(crate) enum Shape {
    Scalar(Scalar),
    Array(Kind, Vec<ArithExpr>),
}

/// The C form of a program type. An array of vectors or of tuples whose components are all one
/// scalar type, packed without padding in the kernels' buffers (`float4`, `(float, float)`), is
/// an array of that scalar with one more dimension, the lanes or components: the same bytes, row
/// major. Booleans in arrays (stored as bytes or ints depending on the plan), tuples of mixed
/// types and ranks above 4 are refused.
pub(crate) fn shape_of(ty: &Type, what: &str) -> Result<Shape, Error> {
    match ty {
        Type::Scalar(s) => Ok(Shape::Scalar(*s)),
        Type::Array(..) => {
            let (mut dims, elem) = memalloc::dims_of(ty);
            let refused = || crate::not_supported(&format!("{what}, an array of {elem}"));
            let elem = match &elem {
                Type::Scalar(s) if *s != Scalar::Bool => *s,
                Type::Vector(..) | Type::Tuple(_) => {
                    let mut leaves = vec![];
                    if !scalar_leaves(&elem, &mut leaves) {
                        return Err(refused());
                    }
                    let s = leaves[0];
                    let packed = lift_data::layout::layout(&elem).0 == leaves.len() * s.size_bytes();
                    if s == Scalar::Bool || leaves.iter().any(|l| *l != s) || !packed {
                        return Err(refused());
                    }
                    dims.push(ArithExpr::cst(leaves.len() as i64));
                    s
                }
                _ => return Err(refused()),
            };
            if dims.len() > 4 {
                return Err(crate::not_supported(&format!(
                    "{what}, an array of rank {}",
                    dims.len()
                )));
            }
            Ok(Shape::Array(Kind { elem, rank: dims.len() }, dims))
        }
        other => Err(crate::not_supported(&format!("{what} of type {other}"))),
    }
}

/// The scalars of a vector or (nested) tuple of scalars and vectors, in memory order; false for
/// anything else.
fn scalar_leaves(t: &Type, out: &mut Vec<Scalar>) -> bool {
    match t {
        Type::Scalar(s) => {
            out.push(*s);
            true
        }
        Type::Vector(s, w) => {
            out.extend(std::iter::repeat_n(*s, usize::from(*w)));
            *w > 0
        }
        Type::Tuple(ts) => !ts.is_empty() && ts.iter().all(|c| scalar_leaves(c, out)),
        Type::Array(..) | Type::Exists(_) | Type::Fun(..) => false,
    }
}

/// Refuses a parameter name that cannot be a C parameter of `<prog>_run`: not an identifier, a
/// C or C++ keyword, or a name the generated code uses (`ctx`, `out`, the runtime's `lr_`).
pub(crate) fn c_name(n: &str) -> Result<(), Error> {
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
pub(crate) fn c_string(text: &str) -> String {
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

/// One compiled form of the program in the library.
pub(crate) struct Variant<'a> {
    pub plan: &'a KernelPlan,
    /// How its lengths become C: constants of the built sizes, or expressions of the sizes
    /// read from the arguments' shapes.
    pub lengths: Lengths,
    /// The run-time size conditions the generic variant checks (the program's and the chosen
    /// variant's); the built sizes were checked when the library was built.
    pub checks: Vec<&'a typeck::SizeCheck>,
    /// The generic variant's conditions beyond the program's: where they fail, the next
    /// variant (the program as written, generic) runs instead ([`launch::condition_function`]).
    pub extra: Vec<&'a typeck::SizeCheck>,
    /// What `lift` compiled, as `<prog>_used` and `<prog>_compiled_as` say it.
    pub description: String,
}

/// What [`generate`] writes a library of.
pub(crate) struct Spec<'a> {
    pub name: &'a str,
    pub params: Vec<(String, Shape)>,
    pub result: (Kind, Vec<ArithExpr>),
    /// Whether the result is a filter's (`{∃X. [T]X}`): its length is counted by the kernels.
    pub counted: bool,
    /// The sizes built in (empty for a library of generic kernels only).
    pub built: BTreeMap<String, i64>,
    /// Variant 0 comes first: the built sizes' when there are any, else the generic one.
    /// Empty for a host program.
    pub variants: Vec<Variant<'a>>,
    /// A host program (host loops and `if`s), instead of variants.
    pub host: Option<crate::host::HostSpec<'a>>,
}

impl Spec<'_> {
    /// What the library's first kernels compute.
    fn description(&self) -> String {
        match (&self.host, self.variants.first()) {
            (Some(h), _) => h.description.clone(),
            (None, Some(v)) => v.description.clone(),
            (None, None) => String::new(),
        }
    }

    pub(crate) fn has_fixed(&self) -> bool {
        matches!(self.variants.first().map(|v| &v.lengths), Some(Lengths::Fixed(_)))
    }

    /// The first generic variant.
    pub(crate) fn generic(&self) -> Option<usize> {
        self.variants
            .iter()
            .position(|v| matches!(v.lengths, Lengths::Generic { .. }))
    }
}

pub(crate) fn generate(spec: &Spec) -> Result<Library, Error> {
    // The runtime's LR_MAX_VARIANTS: the built sizes', the generic chosen, the generic as written.
    if spec.host.is_none() && (spec.variants.is_empty() || spec.variants.len() > 3) {
        return Err(Error::plain(format!(
            "internal: a library of {} variants",
            spec.variants.len()
        )));
    }
    // The OpenCL programs of the library: one per variant, or one per unit of a host program
    // (their kernels' names repeat), each with what `<prog>_used` says of it.
    let programs: Vec<(&KernelPlan, String)> = match &spec.host {
        Some(h) => h.plans()?.into_iter().map(|p| (p, h.description.clone())).collect(),
        None => spec.variants.iter().map(|v| (v.plan, v.description.clone())).collect(),
    };
    let name = spec.name;
    let params = &spec.params;
    let result = &spec.result;
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
    let kind_id = |k: Kind| k.code();
    let h = header(spec, &kinds);

    // --- the source ---
    let mut c = String::new();
    let _ = writeln!(c, "/* Generated by `lift build`; see {name}.h. */");
    if programs.len() > 3 {
        let _ = writeln!(c, "#define LR_MAX_VARIANTS {}", programs.len());
    }
    c.push_str(RUNTIME);
    let _ = writeln!(c, "\n#include \"{name}.h\"\n");
    for (v, (plan, _)) in programs.iter().enumerate() {
        let _ = writeln!(c, "static const char lr_source{v}[] =\n{};", c_string(&plan.source));
        let names: Vec<String> = plan.kernels.iter().map(|k| format!("\"{}\"", k.name)).collect();
        let _ = writeln!(
            c,
            "static const char* const lr_kernels{v}[] = {{{}}};\n",
            if names.is_empty() {
                "\"\"".to_string()
            } else {
                names.join(", ")
            }
        );
    }
    let table: Vec<String> = programs
        .iter()
        .enumerate()
        .map(|(v, (plan, description))| {
            format!(
                "    {{lr_source{v}, lr_kernels{v}, {}, {}}}",
                plan.kernels.len(),
                c_string(description).trim()
            )
        })
        .collect();
    let _ = writeln!(
        c,
        "static const struct lr_variant lr_variants[] = {{\n{}\n}};\n",
        table.join(",\n")
    );
    let kind_table: Vec<String> = kinds
        .iter()
        .map(|k| {
            format!(
                "{{\"{}\", {}, sizeof({}), {}}}",
                suffix(k.elem),
                k.rank,
                c_type(k.elem),
                k.code()
            )
        })
        .collect();
    let _ = writeln!(
        c,
        "static const struct lr_kind lr_kinds[] = {{{}}};\n",
        kind_table.join(", ")
    );
    let _ = writeln!(
        c,
        "{name}_ctx* {name}_ctx_new(const char* device) {{\n    return ({name}_ctx*)lr_ctx_new(device, lr_variants, {});\n}}\n",
        programs.len()
    );
    let _ = writeln!(
        c,
        "{name}_ctx* {name}_ctx_share(const void* other) {{\n    return ({name}_ctx*)lr_ctx_share(other, lr_variants, {});\n}}\n",
        programs.len()
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
        "const char* {name}_compiled_as(void) {{\n    return lr_variants[0].description;\n}}\n"
    );
    let _ = writeln!(
        c,
        "const char* {name}_used({name}_ctx* ctx_) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || !lr_live(ctx) || ctx->broken) return \"\";
    pthread_mutex_lock(&ctx->dev->lock);
    int v = ctx->used;
    pthread_mutex_unlock(&ctx->dev->lock);
    return v < 0 ? \"\" : lr_variants[v].description;
}}
int64_t {name}_ctx_arrays({name}_ctx* ctx_) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || !lr_live(ctx)) return -1;
    if (ctx->broken) return 0;
    pthread_mutex_lock(&ctx->dev->lock);
    int64_t n = ctx->dev->arrays;
    pthread_mutex_unlock(&ctx->dev->lock);
    return n;
}}
int64_t {name}_ctx_transfers({name}_ctx* ctx_) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || !lr_live(ctx)) return -1;
    if (ctx->broken) return 0;
    pthread_mutex_lock(&ctx->dev->lock);
    int64_t n = ctx->dev->moved;
    pthread_mutex_unlock(&ctx->dev->lock);
    return n;
}}
"
    );
    for k in &kinds {
        array_functions(&mut c, name, *k, kind_id(*k));
    }
    untyped_functions(&mut c, spec, kinds.len());
    for (v, var) in spec.variants.iter().enumerate() {
        // Only a variant with another after it is tried on its conditions.
        if v + 1 < spec.variants.len() {
            launch::condition_function(&mut c, v, var, params)?;
        }
        launch::variant_function(&mut c, v, var, params, result, &kind_id)?;
    }
    match &spec.host {
        Some(host) => {
            crate::host::host_function(&mut c, host, params, result, &kind_id)?;
            crate::run::host_run_function(&mut c, spec, programs.len(), &kind_id);
        }
        None => crate::run::run_function(&mut c, spec, &kind_id),
    }
    Ok(Library { header: h, source: c })
}

/// The C parameter list of `<prog>_run` after `ctx` and `out`.
pub(crate) fn run_params(spec: &Spec) -> String {
    let mut sig = String::new();
    for (n, s) in &spec.params {
        match s {
            Shape::Scalar(sc) => {
                let _ = write!(sig, ", {} {n}", c_type(*sc));
            }
            Shape::Array(k, _) => {
                let _ = write!(sig, ", const {}* {n}", k.name(spec.name));
            }
        }
    }
    sig
}

/// `<elem>:<rank>` of a parameter or the result, as `<prog>_signature` lists them.
fn abi_type(s: &Shape) -> String {
    match s {
        Shape::Scalar(sc) => format!("{}:0", suffix(*sc)),
        Shape::Array(k, _) => format!("{}:{}", suffix(k.elem), k.rank),
    }
}

fn header(spec: &Spec, kinds: &[Kind]) -> String {
    let name = spec.name;
    let result = &spec.result;
    let guard = format!("LIFT_{}_H", name.to_uppercase());
    let mut h = String::new();
    let built: Vec<String> = spec.built.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let sizes_text = match (built.is_empty(), spec.generic().is_some()) {
        (true, _) => "sizes given at run time (generic kernels)".to_string(),
        (false, true) => format!("{} (other sizes run generic kernels)", built.join(", ")),
        (false, false) => format!("{} only", built.join(", ")),
    };
    let _ = writeln!(
        h,
        "/* {name}: a LIFT program as a C library, made by `lift build` for {sizes_text}.\n * Every function \
         but the `new` ones returns 0 on success, else nonzero with the reason in\n * `{name}_error(ctx)`. \
         Calls on one context are serialised by its lock.\n * Compiled as {}. */",
        spec.description().replace("*/", "* /")
    );
    let _ = writeln!(h, "#ifndef {guard}\n#define {guard}\n#include <stdint.h>");
    let _ = writeln!(h, "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n");
    let _ = writeln!(h, "typedef struct {name}_ctx {name}_ctx;");
    for k in kinds {
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
        "/* A context of this program on the device, queue and arrays of `other`: a live context of any\n * library \
         made by this version of `lift build`, of this program or another. An array of either context\n * (cast to \
         this library's handle type of its element type and rank) is an argument of both, and\n * stays on the \
         device: no copy. Calls on the contexts sharing a device are serialised by one lock;\n * their counts \
         (`{name}_ctx_arrays`, `{name}_ctx_transfers`) are of the shared arrays. Each is\n * freed on its own; the \
         last one freed frees the device context, and fails while arrays remain.\n * NULL only when out of memory; \
         otherwise errors as `{name}_ctx_new`. */\n{name}_ctx* {name}_ctx_share(const void* other);"
    );
    let _ = writeln!(
        h,
        "/* What the kernels built for the library's sizes compute: the program as written, or which\n * \
         variant of it. */\nconst char* {name}_compiled_as(void);"
    );
    let _ = writeln!(
        h,
        "/* Which kernels the last successful `{name}_run` on `ctx` used: those built for the library's\n * sizes, or the \
         generic ones (every size an argument), and the variant; \"\" before a run. */\nconst char* \
         {name}_used({name}_ctx* ctx);"
    );
    let _ = writeln!(
        h,
        "/* Fails while arrays of the context remain (for shared contexts: of the last one freed). Freeing a\n * \
         context twice is an error, not a crash. */\nint {name}_ctx_free({name}_ctx* ctx);"
    );
    let _ = writeln!(
        h,
        "/* How many arrays of the context are live (not freed); -1 for a freed context. */\nint64_t \
         {name}_ctx_arrays({name}_ctx* ctx);"
    );
    let _ = writeln!(
        h,
        "/* Bytes copied between host and device by the context so far: arrays made and read, and per\n * run only \
         4-byte error flags where its kernels have checks (and zeroed scratch of one-pass reductions):\n * a run on \
         device arrays moves no data of theirs. -1 for a freed context. */\nint64_t {name}_ctx_transfers({name}_ctx* ctx);"
    );
    let _ = writeln!(
        h,
        "/* The message of the last failed call, \"\" after a successful one. */\nconst char* \
         {name}_error({name}_ctx* ctx);\n"
    );
    for k in kinds {
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
    let shapes: Vec<String> = spec
        .params
        .iter()
        .filter_map(|(n, s)| match s {
            Shape::Array(_, d) => {
                let d: Vec<String> = d.iter().map(ToString::to_string).collect();
                Some(format!("{n}: [{}]", d.join(", ")))
            }
            Shape::Scalar(_) => None,
        })
        .collect();
    let rd: Vec<String> = result.1.iter().map(ToString::to_string).collect();
    let out_shape = if spec.counted {
        // A filter's result: as many elements as the filter kept.
        "the filter's result, of the length its run found (its shape)".to_string()
    } else {
        format!("of shape [{}]", rd.join(", "))
    };
    let _ = writeln!(
        h,
        "/* Runs the program; `*out` is a new array {} (free it). Array shapes: {}; the sizes\n * \
         are read from them, and must agree. */\nint {name}_run({name}_ctx* ctx, {}** out{});",
        out_shape,
        shapes.join(", "),
        result.0.name(name),
        run_params(spec)
    );
    let sig: Vec<String> = spec
        .params
        .iter()
        .map(|(n, s)| format!("{n}:{}", abi_type(s)))
        .collect();
    let _ = writeln!(
        h,
        "\n/* Untyped entry points, for bindings that load the library (`lift::app`, Python). The signature\n * is \
         `name:elem:rank ... -> elem:rank`, elem one of f32 f64 i32 u32 i64 u64, rank 0 a scalar; here\n * \"{} -> \
         {}\". `args[i]` points to parameter i's value (a scalar) or is its array handle. */\nconst char* \
         {name}_signature(void);\nint {name}_call({name}_ctx* ctx, void** out, void* const* args);\nvoid* \
         {name}_array_new({name}_ctx* ctx, const char* elem, int rank, const int64_t* shape, const void* data);\nint \
         {name}_array_values({name}_ctx* ctx, const void* a, void* out);\nconst int64_t* {name}_array_shape({name}_ctx* \
         ctx, const void* a, int* rank);\nint {name}_array_free({name}_ctx* ctx, void* a);",
        sig.join(" "),
        abi_type(&Shape::Array(result.0, result.1.clone()))
    );
    let _ = writeln!(h, "\n#ifdef __cplusplus\n}}\n#endif\n#endif");
    h
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

/// The untyped entry points: the signature, `call`, and arrays by element name and rank.
fn untyped_functions(c: &mut String, spec: &Spec, nkinds: usize) {
    let name = spec.name;
    let sig: Vec<String> = spec
        .params
        .iter()
        .map(|(n, s)| format!("{n}:{}", abi_type(s)))
        .collect();
    let _ = writeln!(
        c,
        "const char* {name}_signature(void) {{ return \"{} -> {}\"; }}",
        sig.join(" "),
        abi_type(&Shape::Array(spec.result.0, spec.result.1.clone()))
    );
    let _ = writeln!(
        c,
        "void* {name}_array_new({name}_ctx* ctx_, const char* elem, int rank, const int64_t* shape, const void* data) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || lr_enter(ctx)) return NULL;
    int k = lr_kind_of(ctx, lr_kinds, {nk}, elem, rank);
    if (k < 0) {{ lr_leave(ctx, 1); return NULL; }}
    if (rank > 0 && !shape) {{ lr_fail(ctx, \"the shape is NULL\"); lr_leave(ctx, 1); return NULL; }}
    struct lr_array* a = lr_array_new(ctx, lr_kinds[k].kind, data, rank, shape, lr_kinds[k].elem_bytes);
    lr_leave(ctx, 0);
    return a;
}}
int {name}_array_values({name}_ctx* ctx_, const void* a, void* out) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || lr_enter(ctx)) return 1;
    if (lr_check_array(ctx, (const struct lr_array*)a, -1, \"a\")) return lr_leave(ctx, 1);
    return lr_leave(ctx, lr_array_values(ctx, (const struct lr_array*)a, out));
}}
const int64_t* {name}_array_shape({name}_ctx* ctx_, const void* a, int* rank) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!ctx || lr_enter(ctx)) return NULL;
    if (lr_check_array(ctx, (const struct lr_array*)a, -1, \"a\")) {{ lr_leave(ctx, 1); return NULL; }}
    if (rank) *rank = ((const struct lr_array*)a)->rank;
    lr_leave(ctx, 0);
    return ((const struct lr_array*)a)->shape;
}}
int {name}_array_free({name}_ctx* ctx_, void* a) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!a) return 0;
    if (!ctx || lr_enter(ctx)) return 1;
    if (lr_check_array(ctx, (const struct lr_array*)a, -1, \"a\")) return lr_leave(ctx, 1);
    lr_array_free((struct lr_array*)a);
    return lr_leave(ctx, 0);
}}",
        nk = nkinds
    );
    // `call` unpacks the argument pointers into `<prog>_run`'s typed parameters.
    let mut unpack = vec![];
    let mut scalars = vec![];
    for (i, (_, s)) in spec.params.iter().enumerate() {
        match s {
            Shape::Scalar(sc) => {
                scalars.push(i);
                unpack.push(format!("*(const {}*)args[{i}]", c_type(*sc)));
            }
            Shape::Array(k, _) => unpack.push(format!("(const {}*)args[{i}]", k.name(name))),
        }
    }
    let null_scalar: Vec<String> = scalars.iter().map(|i| format!("!args[{i}]")).collect();
    let _ = writeln!(
        c,
        "int {name}_call({name}_ctx* ctx_, void** out, void* const* args) {{
    struct lr_ctx* ctx = (struct lr_ctx*)ctx_;
    if (!args{}) {{
        if (!ctx || lr_enter(ctx)) return 1;
        lr_fail(ctx, \"the arguments or a scalar argument's pointer are NULL\");
        return lr_leave(ctx, 1);
    }}
    return {name}_run(ctx_, ({}**)out{});
}}
",
        null_scalar.iter().map(|s| format!(" || {s}")).collect::<String>(),
        spec.result.0.name(name),
        unpack.iter().map(|u| format!(", {u}")).collect::<String>()
    );
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

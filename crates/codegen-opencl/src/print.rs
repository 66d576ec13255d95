//! The one printer from the syntax tree ([`crate::ast`]) to OpenCL C text.
//!
//! Owns: layout (two-space indentation, one statement a line, kernel parameter lists broken
//! over lines past `WIDTH` columns, through the `pretty` crate), parentheses and literal
//! spelling. Parentheses follow C operator precedence: an operand is parenthesized exactly when
//! the grammar needs it, and also where compilers warn (a shift, bitwise or logical operator
//! mixed with another operator); a minus before a negative operand gets parentheses, so
//! `-(-2.0f)` never prints as the decrement `--2.0f`. It makes no decisions about the program.

use crate::ast::{AssignOp, BinOp, CType, Expr, Fence, Kernel, Module, Scalar, Stmt, StructDef, UnOp};
use ir::AddressSpace;
use pretty::RcDoc;

type Doc = RcDoc<'static, ()>;

/// Columns past which a kernel's parameter list or an expression breaks.
const WIDTH: usize = 120;

/// Precedence levels of C (higher binds tighter).
const P_SELECT: u8 = 3;
const P_UNARY: u8 = 14;
const P_POSTFIX: u8 = 15;

fn bin_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Mul | BinOp::Div | BinOp::Rem => 13,
        BinOp::Add | BinOp::Sub => 12,
        BinOp::Shl | BinOp::Shr => 11,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 10,
        BinOp::Eq | BinOp::Ne => 9,
        BinOp::BitAnd => 8,
        BinOp::BitXor => 7,
        BinOp::BitOr => 6,
        BinOp::And => 5,
        BinOp::Or => 4,
    }
}

fn bin_text(op: BinOp) -> &'static str {
    match op {
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Rem => "%",
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Shl => "<<",
        BinOp::Shr => ">>",
        BinOp::Lt => "<",
        BinOp::Le => "<=",
        BinOp::Gt => ">",
        BinOp::Ge => ">=",
        BinOp::Eq => "==",
        BinOp::Ne => "!=",
        BinOp::BitAnd => "&",
        BinOp::BitXor => "^",
        BinOp::BitOr => "|",
        BinOp::And => "&&",
        BinOp::Or => "||",
    }
}

/// Operators that compilers want parenthesized when mixed with others (`&&` inside `||` too).
fn needs_clarity(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitXor | BinOp::BitOr
    )
}

fn prec(e: &Expr) -> u8 {
    match e {
        Expr::Int(i) => {
            if *i < 0 {
                P_UNARY
            } else {
                P_POSTFIX
            }
        }
        Expr::Float(f) => {
            if f.is_sign_negative() {
                P_UNARY
            } else {
                P_POSTFIX
            }
        }
        Expr::Double(d) => {
            if d.is_sign_negative() {
                P_UNARY
            } else {
                P_POSTFIX
            }
        }
        Expr::TypedInt(s, b) => {
            if typed_int(*s, *b).starts_with('-') {
                P_UNARY
            } else {
                P_POSTFIX
            }
        }
        Expr::Var(_) | Expr::Sym(_) | Expr::Call(..) | Expr::Index(..) | Expr::Field(..) => P_POSTFIX,
        Expr::Unary(..) | Expr::Cast(..) | Expr::VecLit(..) => P_UNARY,
        Expr::Binary(op, ..) => bin_prec(*op),
        Expr::Select(..) => P_SELECT,
    }
}

/// Whether the text of `e` starts with a minus sign.
fn starts_with_minus(e: &Expr) -> bool {
    match e {
        Expr::Unary(UnOp::Neg, _) => true,
        Expr::Unary(UnOp::BitNot, _) => false,
        Expr::Int(i) => *i < 0,
        Expr::Float(f) => f.is_sign_negative(),
        Expr::Double(d) => d.is_sign_negative(),
        Expr::TypedInt(s, b) => typed_int(*s, *b).starts_with('-'),
        Expr::Binary(_, a, _) => starts_with_minus(a),
        Expr::Select(c, ..) => starts_with_minus(c),
        Expr::Var(_)
        | Expr::Index(..)
        | Expr::Field(..)
        | Expr::Unary(UnOp::Not, _)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::VecLit(..)
        | Expr::Sym(_) => false,
    }
}

pub fn scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::Int => "int",
        Scalar::UInt => "uint",
        Scalar::Long => "long",
        Scalar::ULong => "ulong",
        Scalar::Float => "float",
        Scalar::Double => "double",
    }
}

/// A type's spelling.
pub fn ctype(t: &CType) -> String {
    match t {
        CType::Scalar(s) => scalar(*s).into(),
        CType::Vector(s, w) => format!("{}{w}", scalar(*s)),
        CType::Struct(n) => n.to_string(),
        CType::Ptr {
            space,
            elem,
            is_const,
            restrict,
        } => {
            let space = match space {
                AddressSpace::Global => "global ",
                AddressSpace::Local => "local ",
                AddressSpace::Private => "",
            };
            let c = if *is_const { "const " } else { "" };
            let r = if *restrict { " restrict" } else { "" };
            format!("{c}{space}{}*{r}", ctype(elem))
        }
    }
}

fn float_lit(f: f64, suffix: &str) -> String {
    if f.is_nan() {
        "NAN".into()
    } else if f.is_infinite() {
        if f > 0.0 { "INFINITY" } else { "-INFINITY" }.into()
    } else {
        format!("{}{suffix}", ir::print::float_text(f))
    }
}

fn int_lit(i: i64) -> String {
    // `-2147483648` is the negation of a constant too large for int.
    if i == i64::from(i32::MIN) {
        "(-2147483647 - 1)".into()
    } else if i == i64::MIN {
        "(-9223372036854775807L - 1)".into()
    } else {
        i.to_string()
    }
}

/// A literal of scalar type `s` from its bits: `3u`, `3L`, `3UL` (uppercase `L`, never read
/// as a `1`).
fn typed_int(s: Scalar, b: u64) -> String {
    match s {
        Scalar::Int => int_lit(i64::from(b as u32 as i32)),
        Scalar::UInt => format!("{}u", b as u32),
        Scalar::Long if b as i64 == i64::MIN => "(-9223372036854775807L - 1)".into(),
        Scalar::Long => format!("{}L", b as i64),
        Scalar::ULong => format!("{b}UL"),
        Scalar::Float => float_lit(f64::from(f32::from_bits(b as u32)), "f"),
        Scalar::Double => float_lit(f64::from_bits(b), ""),
    }
}

/// An expression's text, on one line.
pub fn expr(e: &Expr) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail; no line is too long at this width.
    let _ = edoc(e).render_fmt(usize::MAX, &mut out);
    out
}

impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&expr(self))
    }
}

fn parens(d: Doc) -> Doc {
    Doc::text("(").append(d).append(Doc::text(")"))
}

fn operand(e: &Expr, min: u8) -> Doc {
    if prec(e) < min {
        parens(edoc(e))
    } else {
        edoc(e)
    }
}

fn bin_operand(parent: BinOp, e: &Expr, min: u8) -> Doc {
    let clarity = match e {
        Expr::Binary(op, ..) => {
            *op != parent && (needs_clarity(*op) || needs_clarity(parent) || (parent, *op) == (BinOp::Or, BinOp::And))
        }
        Expr::Var(_)
        | Expr::Int(_)
        | Expr::Float(_)
        | Expr::Double(_)
        | Expr::TypedInt(..)
        | Expr::Index(..)
        | Expr::Field(..)
        | Expr::Unary(..)
        | Expr::Call(..)
        | Expr::Cast(..)
        | Expr::Select(..)
        | Expr::VecLit(..)
        | Expr::Sym(_) => false,
    };
    if clarity {
        parens(edoc(e))
    } else {
        operand(e, min)
    }
}

/// `(a, b, c)`, broken after commas when too long.
fn args(xs: &[Expr]) -> Doc {
    let items = Doc::intersperse(xs.iter().map(edoc), Doc::text(",").append(Doc::line()));
    Doc::text("(").append(items.nest(2)).append(Doc::text(")")).group()
}

/// An expression as a document: it breaks, when a line is too long, after a binary operator,
/// a comma or the parts of `?:` (never inside an index), continuing two columns further in.
fn edoc(e: &Expr) -> Doc {
    match e {
        Expr::Var(v) => Doc::text(v.to_string()),
        Expr::Int(i) => Doc::text(int_lit(*i)),
        Expr::Float(f) => Doc::text(float_lit(f64::from(*f), "f")),
        Expr::Double(d) => Doc::text(float_lit(*d, "")),
        Expr::TypedInt(s, b) => Doc::text(typed_int(*s, *b)),
        Expr::Sym(t) => Doc::text(t.clone()),
        // an index stays on one line, so that the access reads as one unit
        Expr::Index(a, i) => operand(a, P_POSTFIX).append(Doc::text(format!("[{}]", expr(i)))),
        Expr::Field(a, f) => operand(a, P_POSTFIX).append(Doc::text(format!(".{f}"))),
        Expr::Unary(op, a) => {
            let sign = Doc::text(match op {
                UnOp::Neg => "-",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
            });
            if *op == UnOp::Neg && starts_with_minus(a) {
                sign.append(parens(edoc(a)))
            } else {
                sign.append(operand(a, P_UNARY))
            }
        }
        Expr::Binary(op, a, b) => {
            let p = bin_prec(*op);
            bin_operand(*op, a, p)
                .append(Doc::text(format!(" {}", bin_text(*op))))
                .append(Doc::line().append(bin_operand(*op, b, p + 1)).nest(2))
                .group()
        }
        Expr::Call(f, xs) => Doc::text(f.to_string()).append(args(xs)),
        // `(int4)(x)…` is a vector literal whatever follows it, so the operand of a cast to a
        // vector is always parenthesized: `(int4)(x)[i]` would index the literal, not `x`
        Expr::Cast(t @ CType::Vector(..), a) => Doc::text(format!("({})", ctype(t))).append(parens(edoc(a))),
        Expr::Cast(t, a) => Doc::text(format!("({})", ctype(t))).append(operand(a, P_UNARY)),
        Expr::Select(c, a, b) => operand(c, P_SELECT + 1)
            .append(Doc::text(" ?"))
            .append(Doc::line().append(operand(a, P_SELECT + 1)).nest(2))
            .append(Doc::text(" :"))
            .append(Doc::line().append(operand(b, P_SELECT + 1)).nest(2))
            .group(),
        Expr::VecLit(t, xs) => Doc::text(format!("({})", ctype(t))).append(args(xs)),
    }
}

fn assign_op(op: AssignOp) -> &'static str {
    match op {
        AssignOp::Set => "=",
        AssignOp::Add => "+=",
        AssignOp::Or => "|=",
    }
}

fn block(open: String, body: &[Stmt]) -> Doc {
    let head = if open.is_empty() {
        "{".to_string()
    } else {
        format!("{open} {{")
    };
    if body.is_empty() {
        return Doc::text(head).append(Doc::hardline()).append(Doc::text("}"));
    }
    Doc::text(head)
        .append(Doc::hardline().append(stmts(body)).nest(2))
        .append(Doc::hardline())
        .append(Doc::text("}"))
}

fn stmts(body: &[Stmt]) -> Doc {
    Doc::intersperse(body.iter().map(stmt), Doc::hardline())
}

fn stmt(s: &Stmt) -> Doc {
    match s {
        Stmt::Decl {
            ty,
            name,
            space,
            len,
            init,
            is_const,
        } => {
            let mut t = String::new();
            if *space == Some(AddressSpace::Local) {
                t.push_str("local ");
            }
            if *is_const {
                t.push_str("const ");
            }
            t.push_str(&ctype(ty));
            t.push(' ');
            t.push_str(name.as_str());
            if let Some(n) = len {
                t.push_str(&format!("[{n}]"));
            }
            match init {
                Some(i) => Doc::text(format!("{t} = ")).append(edoc(i)).append(Doc::text(";")),
                None => Doc::text(format!("{t};")),
            }
        }
        Stmt::Assign { lhs, op, rhs } => edoc(lhs)
            .append(Doc::text(format!(" {} ", assign_op(*op))))
            .append(edoc(rhs))
            .append(Doc::text(";")),
        Stmt::Call(e) => edoc(e).append(Doc::text(";")),
        Stmt::For {
            var,
            init,
            cond,
            step,
            unroll,
            body,
        } => {
            let head = format!(
                "for (int {var} = {}; {}; {var} {} {})",
                expr(init),
                expr(cond),
                assign_op(step.0),
                expr(&step.1)
            );
            let b = block(head, body);
            if *unroll {
                Doc::text("#pragma unroll").append(Doc::hardline()).append(b)
            } else {
                b
            }
        }
        Stmt::If { cond, then, els } => {
            let t = block(format!("if ({})", expr(cond)), then);
            if els.is_empty() {
                t
            } else {
                t.append(block(" else".into(), els))
            }
        }
        Stmt::Block(b) => block(String::new(), b),
        Stmt::Barrier(f) => Doc::text(format!(
            "barrier({});",
            match f {
                Fence::Local => "CLK_LOCAL_MEM_FENCE",
                Fence::Global => "CLK_GLOBAL_MEM_FENCE",
                Fence::Both => "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
            }
        )),
        Stmt::VStore { w, value, ptr, offset } => {
            let at = Expr::bin(BinOp::Add, ptr.clone(), offset.clone());
            let call = Expr::call(format!("vstore{w}"), vec![value.clone(), Expr::Int(0), at]);
            edoc(&call).append(Doc::text(";"))
        }
        Stmt::Asm(a) => Doc::text(asm(a)),
    }
}

/// `asm("template" : "+f"(acc) : "r"(in));`: the template is the instruction's own
/// (`PtxOp::template`), the constraints its operands' classes; written operands are listed
/// first, as the template numbers them. Not `volatile`: each instruction is a function of its
/// operands that touches no memory, which the compiler may schedule among the loads around it;
/// but the warp's exchanges ([`crate::ptx::PtxOp::exchanges`]) stay where they are written.
fn asm(a: &crate::ptx::Asm) -> String {
    use crate::ptx::Dir;
    let operand = |(e, r, d): (&Expr, crate::ptx::Reg, Dir)| format!("\"{}{}\"({})", d.modifier(), r.letter(), expr(e));
    let outs: Vec<String> = a.operands().filter(|(_, _, d)| *d != Dir::In).map(operand).collect();
    let ins: Vec<String> = a.operands().filter(|(_, _, d)| *d == Dir::In).map(operand).collect();
    format!(
        "asm{}(\"{}\" : {} : {});",
        if a.op().exchanges() { " volatile" } else { "" },
        a.op().template(),
        outs.join(", "),
        ins.join(", ")
    )
}

fn struct_def(s: &StructDef) -> Doc {
    let fields = s
        .fields
        .iter()
        .enumerate()
        .map(|(i, t)| Doc::text(format!("{} c{i};", ctype(t))));
    Doc::text("typedef struct {")
        .append(
            Doc::hardline()
                .append(Doc::intersperse(fields, Doc::hardline()))
                .nest(2),
        )
        .append(Doc::hardline())
        .append(Doc::text(format!("}} {};", s.name)))
}

fn kernel(k: &Kernel) -> Doc {
    let attr = match k.work_group {
        Some([a, b, c]) => format!("__attribute__((reqd_work_group_size({a}, {b}, {c}))) "),
        None => String::new(),
    };
    let params = Doc::intersperse(
        k.params
            .iter()
            .map(|p| Doc::text(format!("{} {}", ctype(&p.ty), p.name))),
        Doc::text(",").append(Doc::line()),
    );
    let head = Doc::text(format!("{attr}kernel void {}(", k.name))
        .append(Doc::line_().append(params).nest(2))
        .append(Doc::line_())
        .append(Doc::text(") {"))
        .group();
    let body = if k.body.is_empty() {
        Doc::nil()
    } else {
        Doc::hardline().append(stmts(&k.body)).nest(2)
    };
    head.append(body).append(Doc::hardline()).append(Doc::text("}"))
}

fn render(d: Doc) -> String {
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = d.render_fmt(WIDTH, &mut out);
    out
}

/// One kernel's text, followed by a blank line.
pub fn kernel_text(k: &Kernel) -> String {
    let mut s = render(kernel(k));
    s.push_str("\n\n");
    s
}

/// A helper function's text, followed by a blank line: `T name(params) { body return result; }`.
pub fn function_text(
    ret: &CType,
    name: &crate::namer::Ident,
    params: &[crate::ast::Param],
    body: &[Stmt],
    result: &Expr,
) -> String {
    let params = Doc::intersperse(
        params.iter().map(|p| Doc::text(format!("{} {}", ctype(&p.ty), p.name))),
        Doc::text(", "),
    );
    let head = Doc::text(format!("{} {name}(", ctype(ret)))
        .append(params)
        .append(Doc::text(") {"));
    let ret = Doc::text("return ").append(edoc(result)).append(Doc::text(";"));
    let inner = if body.is_empty() {
        ret
    } else {
        stmts(body).append(Doc::hardline()).append(ret)
    };
    let mut s = render(
        head.append(Doc::hardline().append(inner).nest(2))
            .append(Doc::hardline())
            .append(Doc::text("}")),
    );
    s.push_str("\n\n");
    s
}

/// The module's text: the fp64 pragma, typedefs, kernels, each followed by a blank line.
pub fn module(m: &Module) -> String {
    let mut parts = vec![];
    if m.fp64 {
        parts.push(Doc::text("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"));
    }
    parts.extend(m.structs.iter().map(struct_def));
    parts.extend(m.kernels.iter().map(kernel));
    let mut s = String::new();
    for p in parts {
        s.push_str(&render(p));
        s.push_str("\n\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Param;
    use crate::namer::Namer;

    fn add(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Add, a, b)
    }
    fn mul(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Mul, a, b)
    }
    fn sub(a: Expr, b: Expr) -> Expr {
        Expr::bin(BinOp::Sub, a, b)
    }

    #[test]
    fn parentheses_follow_precedence() {
        let mut n = Namer::new();
        let [a, b, c] = ["a", "b", "c"].map(|s| Expr::var(&n.exact(s)));
        assert_eq!(expr(&mul(add(a.clone(), b.clone()), c.clone())), "(a + b) * c");
        assert_eq!(expr(&add(mul(a.clone(), b.clone()), c.clone())), "a * b + c");
        assert_eq!(expr(&sub(a.clone(), sub(b.clone(), c.clone()))), "a - (b - c)");
        assert_eq!(expr(&sub(sub(a.clone(), b.clone()), c.clone())), "a - b - c");
        assert_eq!(
            expr(&Expr::bin(
                BinOp::Or,
                Expr::bin(BinOp::And, a.clone(), b.clone()),
                c.clone()
            )),
            "(a && b) || c"
        );
        let sel = Expr::select(Expr::bin(BinOp::Lt, a.clone(), b.clone()), a.clone(), b.clone());
        assert_eq!(expr(&add(sel.clone(), c.clone())), "(a < b ? a : b) + c");
        assert_eq!(
            expr(&Expr::cast(CType::FLOAT, add(a.clone(), b.clone()))),
            "(float)(a + b)"
        );
        assert_eq!(expr(&Expr::call("fmax", vec![add(a.clone(), b), c])), "fmax(a + b, c)");
        assert_eq!(expr(&add(a.clone(), Expr::Int(1)).lane(2)), "(a + 1).s2");
    }

    #[test]
    fn negative_literals_never_print_as_decrement() {
        let neg = |e| Expr::un(UnOp::Neg, e);
        assert_eq!(expr(&neg(Expr::Float(-2.0))), "-(-2.0f)");
        assert_eq!(expr(&neg(neg(Expr::Int(1)))), "-(-1)");
        assert_eq!(expr(&neg(sub(Expr::Int(-1), Expr::Int(2)))), "-(-1 - 2)");
        assert_eq!(expr(&sub(Expr::Float(1.0), Expr::Float(-2.0))), "1.0f - -2.0f");
        assert_eq!(expr(&Expr::Float(-2.0).lane(0)), "(-2.0f).s0");
        assert_eq!(expr(&Expr::Int(i64::from(i32::MIN))), "(-2147483647 - 1)");
    }

    #[test]
    fn long_expressions_break_after_operators() {
        let mut n = Namer::new();
        let x = n.exact("v_x");
        let sum = (0..40).map(|k| Expr::var(&x).lane(k % 16)).reduce(add).expect("terms");
        let out = n.exact("v_out");
        let text = kernel_text(&Kernel {
            name: n.exact("K"),
            work_group: None,
            params: vec![],
            body: vec![Stmt::assign(Expr::var(&out), sum.clone())],
        });
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() > 4, "{text}");
        assert!(lines.iter().all(|l| l.len() <= WIDTH), "{text}");
        assert!(lines[2].starts_with("    v_x.s"), "continuations are indented: {text}");
        let body = lines.iter().skip(1).take_while(|l| **l != "}");
        let joined = body.map(|l| l.trim()).collect::<Vec<_>>().join(" ");
        assert_eq!(joined, format!("v_out = {};", expr(&sum)));
    }

    #[test]
    fn floats_print_exactly() {
        assert_eq!(expr(&Expr::Float(0.5)), "0.5f");
        assert_eq!(expr(&Expr::Float(f32::INFINITY)), "INFINITY");
        assert_eq!(expr(&Expr::Double(0.1)), "0.1");
        let x = 0.1f32;
        let text = expr(&Expr::Float(x));
        assert_eq!(text.trim_end_matches('f').parse::<f32>().unwrap(), x);
    }

    #[test]
    fn statements_and_kernels() {
        let mut n = Namer::new();
        let i = n.fresh("v_i");
        let out = n.exact("out");
        let body = vec![Stmt::For {
            var: i.clone(),
            init: Expr::Int(0),
            cond: Expr::bin(BinOp::Lt, Expr::var(&i), Expr::Int(4)),
            step: (AssignOp::Add, Expr::Int(1)),
            unroll: false,
            body: vec![
                Stmt::assign(Expr::var(&out).index(Expr::var(&i)), Expr::Float(1.0)),
                Stmt::If {
                    cond: Expr::bin(BinOp::Eq, Expr::var(&i), Expr::Int(0)),
                    then: vec![Stmt::Barrier(Fence::Local)],
                    els: vec![],
                },
            ],
        }];
        let k = Kernel {
            name: n.exact("KERNEL_0"),
            work_group: Some([4, 1, 1]),
            params: vec![Param {
                ty: CType::Ptr {
                    space: AddressSpace::Global,
                    elem: Box::new(CType::FLOAT),
                    is_const: false,
                    restrict: true,
                },
                name: out,
            }],
            body,
        };
        let m = Module::new(vec![], vec![k], false);
        assert_eq!(
            module(&m),
            "__attribute__((reqd_work_group_size(4, 1, 1))) kernel void KERNEL_0(global float* restrict out) {
  for (int v_i_1 = 0; v_i_1 < 4; v_i_1 += 1) {
    out[v_i_1] = 1.0f;
    if (v_i_1 == 0) {
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
}

"
        );
    }
}

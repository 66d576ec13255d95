//! Tests of `inline.rs`: which single-use temporaries are inlined and which must stay.

use super::*;
use crate::ast::{AssignOp, Fence, Kernel};
use crate::namer::{Ident, Namer};
use crate::print;
use ir::AddressSpace;

const F4: CType = CType::Vector(Scalar::Float, 4);

fn v(i: &Ident) -> Expr {
    Expr::var(i)
}

fn mul(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Mul, a, b)
}

fn add(a: Expr, b: Expr) -> Expr {
    Expr::bin(BinOp::Add, a, b)
}

fn local_array(ty: CType, name: &Ident, n: usize) -> Stmt {
    Stmt::Decl {
        ty,
        name: name.clone(),
        space: Some(AddressSpace::Local),
        len: Some(n),
        init: None,
        is_const: false,
    }
}

/// The body after the pass, as text.
fn run(mut body: Vec<Stmt>, params: Vec<Param>, names: &mut Namer) -> String {
    inline_temporaries(&mut body, &params);
    let k = Kernel {
        name: names.exact("K"),
        work_group: None,
        params,
        body,
    };
    let text = print::kernel_text(&k);
    let open = text.find('{').expect("a body");
    text[open + 1..text.rfind('}').expect("a body")].trim().to_string()
}

/// `acc`, `r`, `s` declared, then a loop whose step is `p = r * s; acc = acc + p`.
fn accumulation(n: &mut Namer) -> (Vec<Stmt>, Ident, Ident, Ident) {
    let (acc, r, s, p, i) = (
        n.fresh("v_acc"),
        n.fresh("v_r"),
        n.fresh("v_s"),
        n.fresh("v_p"),
        n.fresh("v_i"),
    );
    let body = vec![
        Stmt::decl(F4, &acc, Expr::VecLit(F4, vec![Expr::Float(0.0); 4])),
        Stmt::decl(F4, &r, Expr::VecLit(F4, vec![Expr::Float(1.0); 4])),
        Stmt::For {
            var: i.clone(),
            init: Expr::Int(0),
            cond: Expr::bin(BinOp::Lt, v(&i), Expr::Int(8)),
            step: (AssignOp::Add, Expr::Int(1)),
            unroll: false,
            body: vec![
                Stmt::decl(CType::FLOAT, &s, Expr::cast(CType::FLOAT, v(&i))),
                Stmt::decl(F4, &p, mul(v(&r), v(&s))),
                Stmt::assign(v(&acc), add(v(&acc), v(&p))),
            ],
        },
    ];
    (body, acc, r, p)
}

#[test]
fn a_product_joins_the_add_it_feeds() {
    let mut n = Namer::new();
    let (body, ..) = accumulation(&mut n);
    let text = run(body, vec![], &mut n);
    assert!(text.contains("v_acc_1 = v_acc_1 + v_r_1 * (float)v_i_1;"), "{text}");
    assert!(!text.contains("v_p_1"), "{text}");
    // `r` is declared outside the loop: it stays there
    assert!(
        text.contains("float4 v_r_1 = (float4)(1.0f, 1.0f, 1.0f, 1.0f);"),
        "{text}"
    );
}

#[test]
fn a_value_read_twice_or_assigned_stays() {
    let mut n = Namer::new();
    let (mut body, acc, r, _) = accumulation(&mut n);
    body.push(Stmt::assign(v(&acc), add(v(&acc), v(&r))));
    let text = run(body, vec![], &mut n);
    assert!(text.contains("float4 v_r_1 ="), "{text}");
    assert!(text.contains("float4 v_acc_1 ="), "{text}");
}

#[test]
fn a_read_does_not_cross_a_write_to_what_it_reads_or_a_barrier() {
    let mut n = Namer::new();
    let (a, t, u, out) = (n.fresh("v_a"), n.fresh("v_t"), n.fresh("v_u"), n.fresh("v_out"));
    let out_param = Param {
        ty: CType::Ptr {
            space: AddressSpace::Global,
            elem: Box::new(CType::FLOAT),
            is_const: false,
            restrict: true,
        },
        name: out.clone(),
    };
    let body = vec![
        local_array(CType::FLOAT, &a, 4),
        Stmt::decl(CType::FLOAT, &t, v(&a).index(Expr::Int(0))),
        Stmt::assign(v(&a).index(Expr::Int(0)), Expr::Float(2.0)),
        Stmt::assign(v(&out).index(Expr::Int(0)), v(&t)),
        Stmt::decl(CType::FLOAT, &u, v(&a).index(Expr::Int(1))),
        Stmt::Barrier(Fence::Local),
        Stmt::assign(v(&out).index(Expr::Int(1)), v(&u)),
    ];
    let text = run(body, vec![out_param], &mut n);
    assert!(text.contains("float v_t_1 = v_a_1[0];"), "{text}");
    assert!(text.contains("float v_u_1 = v_a_1[1];"), "{text}");
}

#[test]
fn a_write_elsewhere_does_not_stop_it() {
    let mut n = Namer::new();
    let (a, b, t, out) = (n.fresh("v_a"), n.fresh("v_b"), n.fresh("v_t"), n.fresh("v_out"));
    let body = vec![
        local_array(CType::FLOAT, &a, 4),
        local_array(CType::FLOAT, &b, 4),
        Stmt::decl(CType::FLOAT, &t, v(&a).index(Expr::Int(0))),
        Stmt::assign(v(&b).index(Expr::Int(0)), Expr::Float(2.0)),
        Stmt::Block(vec![Stmt::decl(CType::FLOAT, &out, mul(v(&t), Expr::Float(3.0)))]),
    ];
    let text = run(body, vec![], &mut n);
    assert!(text.contains("float v_out_1 = v_a_1[0] * 3.0f;"), "{text}");
}

#[test]
fn a_padded_read_stays_in_its_variable() {
    let mut n = Namer::new();
    let (a, i, p, out) = (n.fresh("v_a"), n.fresh("v_i"), n.fresh("v_p"), n.fresh("v_out"));
    let guarded = Expr::select(
        Expr::bin(BinOp::Lt, v(&i), Expr::Int(0)),
        Expr::Float(1.0),
        v(&a).index(v(&i)),
    );
    let body = vec![
        local_array(CType::FLOAT, &a, 4),
        Stmt::decl(CType::INT, &i, Expr::Int(1)),
        Stmt::decl(CType::FLOAT, &p, guarded),
        Stmt::decl(CType::FLOAT, &out, Expr::call("fabs", vec![v(&p)])),
    ];
    let text = run(body, vec![], &mut n);
    assert!(text.contains("float v_out_1 = fabs(v_p_1);"), "{text}");
}

#[test]
fn a_conversion_is_kept() {
    // `float x = i; y = x / 2` is not `i / 2` (an integer division)
    let mut n = Namer::new();
    let (i, x, y) = (n.fresh("v_i"), n.fresh("v_x"), n.fresh("v_y"));
    let body = vec![
        Stmt::decl(CType::INT, &i, Expr::Int(7)),
        Stmt::decl(CType::FLOAT, &x, v(&i)),
        Stmt::decl(CType::FLOAT, &y, Expr::bin(BinOp::Div, v(&x), Expr::Int(2))),
    ];
    let text = run(body, vec![], &mut n);
    assert!(text.contains("float v_y_1 = v_x_1 / 2;"), "{text}");
}

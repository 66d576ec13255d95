use super::*;
use arith::Range;

/// The text of a one-access read.
fn text(r: Read<V>) -> String {
    match r {
        Read::Expr(a) => a.to_string(),
        Read::Tuple(_) => panic!("a tuple"),
    }
}

fn loc(l: Loc<V>) -> String {
    match l {
        Loc::Plain(a) => a.to_string(),
        Loc::Vector { .. } | Loc::Lanes(_) => panic!("a vector store"),
    }
}

type V = String;

fn mem(name: &str, dims: Vec<ArithExpr>) -> Rc<View<V>> {
    Rc::new(View::Mem {
        name: name.into(),
        dims,
        elem: Type::float(),
    })
}

fn loop_var(name: &str, n: &ArithExpr) -> ArithExpr {
    ArithExpr::var(name, Range::upto(n.clone()))
}

#[test]
fn join_of_split_indexes_as_the_loop_variable() {
    let n = ArithExpr::size_var("N");
    let k = ArithExpr::cst(4);
    let xs = mem("xs", vec![n.clone()]);
    let split = Rc::new(View::Split {
        k: k.clone(),
        inner: xs,
    });
    let joined: View<V> = View::Join { m: k, inner: split };
    let i = loop_var("i", &n);
    assert_eq!(text(joined.read(&[i]).unwrap()), "xs[i]");
}

#[test]
fn split_with_loop_indices_flattens() {
    let n = ArithExpr::size_var("N");
    let xs = mem("xs", vec![n.clone()]);
    let split = View::Split {
        k: ArithExpr::cst(2),
        inner: xs,
    };
    let i = loop_var("i", &n.div(&ArithExpr::cst(2)));
    let j = loop_var("j", &ArithExpr::cst(2));
    let e = text(split.read(&[i, j]).unwrap());
    assert_eq!(
        e,
        format!(
            "xs[{}]",
            ArithExpr::var("i", Range::upto(n.div(&ArithExpr::cst(2))))
                .mul(&ArithExpr::cst(2))
                .add(&loop_var("j", &ArithExpr::cst(2)))
        )
    );
}

#[test]
fn transpose_swaps_indices() {
    let (n, m) = (ArithExpr::size_var("N"), ArithExpr::size_var("M"));
    let a = mem("a", vec![n.clone(), m.clone()]);
    let t = View::Transpose { inner: a };
    let (i, j) = (loop_var("i", &m), loop_var("j", &n));
    let e = text(t.read(&[i.clone(), j.clone()]).unwrap());
    assert_eq!(e, format!("a[{}]", j.mul(&m).add(&i)));
}

#[test]
fn zip_components_read_separate_buffers() {
    let n = ArithExpr::size_var("N");
    let z = Rc::new(View::Zip(vec![mem("x", vec![n.clone()]), mem("y", vec![n.clone()])]));
    let i = loop_var("i", &n);
    let second = z.access(i).component(1);
    assert_eq!(text(second.read(&[]).unwrap()), "y[i]");
}

#[test]
fn clamped_pad_only_clamps_when_needed() {
    let n = ArithExpr::size_var("N");
    let xs = mem("xs", vec![n.clone()]);
    let p = View::Pad {
        skip: 0,
        l: ArithExpr::cst(1),
        n: n.clone(),
        fill: None,
        inner: xs,
    };
    let i = loop_var("i", &n.add(&ArithExpr::cst(2)));
    let e = text(p.read(&[i]).unwrap());
    assert!(e.contains("min") && e.contains("max"), "{e}");
}

#[test]
fn writes_through_split_and_vectors() {
    let n = ArithExpr::size_var("N");
    let out = mem("out", vec![n.clone()]);
    let w = View::Join {
        m: ArithExpr::cst(4),
        inner: Rc::new(View::Split {
            k: ArithExpr::cst(4),
            inner: out,
        }),
    };
    let i = loop_var("i", &n);
    assert_eq!(loc(w.write(std::slice::from_ref(&i)).unwrap()), "out[i]");
    let v: View<V> = View::Mem {
        name: "o".into(),
        dims: vec![n.clone()],
        elem: Type::Vector(Scalar::Float, 4),
    };
    assert_eq!(
        v.write(std::slice::from_ref(&i)).unwrap(),
        Loc::Vector {
            base: "o".into(),
            offset: i.mul(&ArithExpr::cst(4)),
            w: 4
        }
    );
}

#[test]
fn nested_layouts_reindex_below_the_outer_dimensions() {
    // xs : [[[float]3]4]2 ; `map join xs` : [[float]12]2 ; element [a][b] = xs[a][b/3][b%3]
    let xs = mem("xs", vec![ArithExpr::cst(2), ArithExpr::cst(4), ArithExpr::cst(3)]);
    let v = View::Nested {
        skip: 1,
        op: Layout::Join(ArithExpr::cst(3)),
        inner: xs.clone(),
    };
    assert_eq!(
        text(v.read(&[ArithExpr::cst(1), ArithExpr::cst(7)]).unwrap()),
        format!("xs[{}]", 12 + 2 * 3 + 1)
    );
    // `map transpose xs` : [[[float]4]3]2 ; element [a][b][c] = xs[a][c][b], written the same way
    let t = View::Nested {
        skip: 1,
        op: Layout::Transpose,
        inner: xs,
    };
    let idx = [ArithExpr::cst(1), ArithExpr::cst(2), ArithExpr::cst(3)];
    assert_eq!(text(t.read(&idx).unwrap()), format!("xs[{}]", 12 + 3 * 3 + 2));
    assert_eq!(loc(t.write(&idx).unwrap()), format!("xs[{}]", 12 + 3 * 3 + 2));
}

#[test]
fn slides_below_the_outer_dimensions_overlap_in_the_argument() {
    // g : [[float]6]4 ; `map (slide 3 1) g` : [[[float]3]4]4 ; element [r][w][c] = g[r][w + c]
    let g = mem("g", vec![ArithExpr::cst(4), ArithExpr::cst(6)]);
    let v = Rc::new(View::Nested {
        skip: 1,
        op: Layout::Slide(ArithExpr::cst(1)),
        inner: g,
    });
    let idx = [ArithExpr::cst(2), ArithExpr::cst(3), ArithExpr::cst(1)];
    assert_eq!(text(v.read(&idx).unwrap()), format!("g[{}]", 2 * 6 + 3 + 1));
    // slide2d's windows: `map transpose (slide 3 1 (map (slide 3 1) g))`, element [r][c][y][x]
    // is g[r + y][c + x]
    let w = View::Nested {
        skip: 1,
        op: Layout::Transpose,
        inner: Rc::new(View::Slide {
            step: ArithExpr::cst(1),
            inner: v,
        }),
    };
    let idx = [
        ArithExpr::cst(1),
        ArithExpr::cst(2),
        ArithExpr::cst(2),
        ArithExpr::cst(0),
    ];
    assert_eq!(text(w.read(&idx).unwrap()), format!("g[{}]", 3 * 6 + 2));
}

#[test]
fn pads_below_the_outer_dimensions_guard_the_inner_index() {
    // `map (pad 1 1 0) g` over g : [[float]N]4 reads g[r][c - 1] where 1 <= c <= N
    let n = ArithExpr::size_var("N");
    let g = mem("g", vec![ArithExpr::cst(4), n.clone()]);
    let p = View::Pad {
        skip: 1,
        l: ArithExpr::cst(1),
        n: n.clone(),
        fill: Some(Rc::new(View::Value {
            expr: "0.0f".to_string(),
            ty: ir::Type::float(),
        })),
        inner: g.clone(),
    };
    let r = loop_var("r", &ArithExpr::cst(4));
    let c = loop_var("c", &n.add(&ArithExpr::cst(2)));
    let e = text(p.read(&[r.clone(), c.clone()]).unwrap());
    assert!(
        e.contains("0.0f") && e.contains(&format!("g[{}]", r.mul(&n).add(&c).sub(&ArithExpr::cst(1)))),
        "{e}"
    );
    // clamped, the row index is left alone and only the column is clamped
    let p = View::Pad {
        skip: 1,
        l: ArithExpr::cst(1),
        n: n.clone(),
        fill: None,
        inner: g,
    };
    let e = text(p.read(&[r, c]).unwrap());
    assert_eq!(e, "g[((N*r)+max(0, min((N-1), (c-1))))]");
}

#[test]
fn pads_of_rows_read_the_fill_row_at_the_column_index() {
    // `pad 1 1 (generate N (λi. i)) g` over g : [[float]N]4 reads g[r - 1][c] where
    // 1 <= r <= 4, else the fill row at c
    let n = ArithExpr::size_var("N");
    let g = mem("g", vec![ArithExpr::cst(4), n.clone()]);
    let p = View::Pad {
        skip: 0,
        l: ArithExpr::cst(1),
        n: ArithExpr::cst(4),
        fill: Some(Rc::new(View::Generate {
            param: "i".to_string(),
            body: "(float)i".to_string(),
        })),
        inner: g,
    };
    let r = loop_var("r", &ArithExpr::cst(6));
    let c = loop_var("c", &n);
    let e = text(p.read(&[r.clone(), c.clone()]).unwrap());
    let inner = format!("g[{}]", r.sub(&ArithExpr::cst(1)).mul(&n).add(&c));
    let fill = format!("(i => (float)i)({c})");
    assert!(e.contains(&inner) && e.contains(&fill), "{e}");
}

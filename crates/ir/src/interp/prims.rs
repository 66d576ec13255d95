//! The primitives' meanings: maps, reductions, layout primitives (`zip`, `split`, `join`,
//! `transpose`, `slide`, `pad`, ...), `generate`, `iterate`, filters and vectors, each on arrays of
//! values with its length checked.

use super::*;

impl<'a> Interp<'a> {
    pub(super) fn prim(&mut self, id: ExprId, prim: &Prim, args: &[ExprId]) -> Res<Value> {
        let name = prim.name();
        let name = name.as_str();
        match prim {
            Prim::Map(MapKind::Vec) => {
                let [f, v] = self.args(id, args, name)?;
                let lanes = match self.eval(v)? {
                    Value::Vector(l) => l,
                    other => return self.err(v, format!("`mapVec` expects a vector, not {}", describe(&other))),
                };
                let mut out = Vec::with_capacity(lanes.len());
                for x in lanes {
                    out.push(self.apply(f, [x])?);
                }
                Ok(Value::Vector(out))
            }
            Prim::Map(_) => {
                let [f, xs] = self.args(id, args, name)?;
                let mut out = vec![];
                self.each(xs, name, |s, x| {
                    out.push(s.apply(f, [x])?);
                    Ok(())
                })?;
                Ok(Value::Array(out))
            }
            Prim::Reduce(kind) => {
                let [f, z, xs] = self.args(id, args, name)?;
                let z = self.eval(z)?;
                let op = self.binary_op_of(f);
                if self.bounded && *kind == ReduceKind::Plain {
                    return self.reduce_any_order(id, f, op, z, xs);
                }
                self.fold(f, op.map(|(o, _)| o), z, xs)
            }
            Prim::Scan(kind) => {
                let [f, z, xs] = self.args(id, args, name)?;
                self.scan(id, *kind, f, z, xs)
            }
            Prim::Filter(_) => {
                let [p, xs] = self.args(id, args, name)?;
                let mut out = vec![];
                self.each(xs, name, |s, x| match s.apply(p, [x.clone()])? {
                    Value::Bool(true) => {
                        out.push(x);
                        Ok(())
                    }
                    Value::Bool(false) => Ok(()),
                    other => s.err(
                        p,
                        format!("a filter predicate must return a bool, not {}", describe(&other)),
                    ),
                })?;
                Ok(Value::Array(out))
            }
            Prim::Zip => {
                let mut arrays = vec![];
                for a in args {
                    arrays.push(self.array(*a, name)?);
                }
                let n = arrays.first().map_or(0, Vec::len);
                if let Some(bad) = arrays.iter().position(|a| a.len() != n) {
                    return self.err(
                        id,
                        format!(
                            "zip of arrays of different lengths: argument 1 has {n} elements, argument {} has {}",
                            bad + 1,
                            arrays[bad].len()
                        ),
                    );
                }
                let mut iters: Vec<_> = arrays.into_iter().map(Vec::into_iter).collect();
                let out = (0..n)
                    .map(|_| Value::Tuple(iters.iter_mut().filter_map(Iterator::next).collect()))
                    .collect();
                Ok(Value::Array(out))
            }
            Prim::Split(k) => {
                let [xs] = self.args(id, args, name)?;
                let k = self.count(k, id, "the chunk size")?;
                let xs = self.array(xs, name)?;
                if k == 0 {
                    return self.err(id, "split #0: the chunk size must be positive");
                }
                if xs.len() % k != 0 {
                    let n = xs.len();
                    return self.err(
                        id,
                        format!("split #{k} of an array of length {n}: {n} is not a multiple of {k}"),
                    );
                }
                let mut it = xs.into_iter();
                Ok(Value::Array(
                    (0..it.len() / k)
                        .map(|_| Value::Array(it.by_ref().take(k).collect()))
                        .collect(),
                ))
            }
            Prim::Join => {
                let [xss] = self.args(id, args, name)?;
                let mut out = vec![];
                for row in self.array(xss, name)? {
                    match row {
                        Value::Array(r) => out.extend(r),
                        other => {
                            return self.err(
                                id,
                                format!(
                                    "`join` expects an array of arrays, found an element that is {}",
                                    describe(&other)
                                ),
                            )
                        }
                    }
                }
                Ok(Value::Array(out))
            }
            Prim::Transpose => {
                let [xss] = self.args(id, args, name)?;
                let rows = self.rows(xss, name)?;
                let m = rows.first().map_or(0, Vec::len);
                if let Some(bad) = rows.iter().position(|r| r.len() != m) {
                    return self.err(
                        id,
                        format!(
                            "transpose of a ragged array: row 0 has {m} elements, row {bad} has {}",
                            rows[bad].len()
                        ),
                    );
                }
                let mut cols: Vec<Vec<Value>> = (0..m).map(|_| Vec::with_capacity(rows.len())).collect();
                for row in rows {
                    for (j, x) in row.into_iter().enumerate() {
                        cols[j].push(x);
                    }
                }
                Ok(Value::Array(cols.into_iter().map(Value::Array).collect()))
            }
            Prim::Slide(s, t) => {
                let [xs] = self.args(id, args, name)?;
                let s = self.count(s, id, "the window size")?;
                let t = self.count(t, id, "the step")?;
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if s == 0 || t == 0 {
                    return self.err(
                        id,
                        format!("slide #{s} #{t}: the window size and the step must be positive"),
                    );
                }
                if n < s {
                    return self.err(
                        id,
                        format!("slide #{s} #{t} of an array of length {n}: the array is shorter than one window"),
                    );
                }
                let windows = (n - s + t) / t;
                Ok(Value::Array(
                    (0..windows)
                        .map(|i| Value::Array(xs[i * t..i * t + s].to_vec()))
                        .collect(),
                ))
            }
            Prim::Pad(l, r) => {
                let [v, xs] = self.args(id, args, name)?;
                let l = self.count(l, id, "the left padding")?;
                let r = self.count(r, id, "the right padding")?;
                let v = self.eval(v)?;
                let xs = self.array(xs, name)?;
                let mut out = Vec::with_capacity(l + xs.len() + r);
                out.extend(std::iter::repeat_n(v.clone(), l));
                out.extend(xs);
                out.extend(std::iter::repeat_n(v, r));
                Ok(Value::Array(out))
            }
            Prim::PadClamp(l, r) => {
                let [xs] = self.args(id, args, name)?;
                let l = self.count(l, id, "the left padding")?;
                let r = self.count(r, id, "the right padding")?;
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if n == 0 {
                    return self.err(id, "pad-clamp of an empty array: there is no element to repeat");
                }
                // Index i of the result reads xs[clamp(i - l, 0, n - 1)].
                let out = (0..l + n + r)
                    .map(|i| xs[i.saturating_sub(l).min(n - 1)].clone())
                    .collect();
                Ok(Value::Array(out))
            }
            Prim::ReorderStride(s) => {
                let [xs] = self.args(id, args, name)?;
                let s = self.count(s, id, "the stride")?;
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if s == 0 || n % s != 0 {
                    return self.err(
                        id,
                        format!("reorder-stride #{s} of an array of length {n}: {n} is not a multiple of {s}"),
                    );
                }
                let m = n / s;
                Ok(Value::Array((0..n).map(|i| xs[i / m + s * (i % m)].clone()).collect()))
            }
            Prim::Reverse => {
                let [xs] = self.args(id, args, name)?;
                let mut xs = self.array(xs, name)?;
                xs.reverse();
                Ok(Value::Array(xs))
            }
            Prim::Generate(n) => {
                let [f] = self.args(id, args, name)?;
                let n = self.count(n, id, "the length")?;
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    out.push(self.apply(f, [Value::Int(i as i32)])?);
                }
                Ok(Value::Array(out))
            }
            Prim::Iterate(k) => {
                let [f, xs] = self.args(id, args, name)?;
                let k = self.count(k, id, "the iteration count")?;
                let mut v = self.eval(xs)?;
                for _ in 0..k {
                    v = self.apply(f, [v])?;
                }
                Ok(v)
            }
            Prim::IterateUntil(k) => {
                let [c, f, xs] = self.args(id, args, name)?;
                let k = self.count(k, id, "the most steps")?;
                let mut v = self.eval(xs)?;
                for _ in 0..k {
                    let next = self.apply(f, [v.clone()])?;
                    let done = self.apply(c, [v, next.clone()])?;
                    v = next;
                    if self.truth(done, c, "`iterate-until`")? {
                        break;
                    }
                }
                Ok(v)
            }
            Prim::AsVector(w) => {
                let [xs] = self.args(id, args, name)?;
                let w = usize::from(*w);
                let xs = self.array(xs, name)?;
                let n = xs.len();
                if w == 0 || n % w != 0 {
                    return self.err(
                        id,
                        format!("asVector #{w} of an array of length {n}: {n} is not a multiple of {w}"),
                    );
                }
                if let Some(x) = xs.iter().find(|x| !is_scalar(x)) {
                    return self.err(
                        id,
                        format!("`asVector` expects an array of scalars, found {}", describe(x)),
                    );
                }
                Ok(Value::Array(xs.chunks(w).map(|c| Value::Vector(c.to_vec())).collect()))
            }
            Prim::AsScalar => {
                let [xs] = self.args(id, args, name)?;
                let mut out = vec![];
                for v in self.array(xs, name)? {
                    match v {
                        Value::Vector(l) => out.extend(l),
                        other => {
                            return self.err(
                                id,
                                format!("`asScalar` expects an array of vectors, found {}", describe(&other)),
                            )
                        }
                    }
                }
                Ok(Value::Array(out))
            }
            Prim::To(_) => {
                let [e] = self.args(id, args, name)?;
                self.eval(e)
            }
        }
    }

    pub(super) fn rows(&mut self, id: ExprId, what: &str) -> Res<Vec<Vec<Value>>> {
        let mut rows = vec![];
        for r in self.array(id, what)? {
            match r {
                Value::Array(r) => rows.push(r),
                other => {
                    return self.err(
                        id,
                        format!(
                            "`{what}` expects an array of arrays, found an element that is {}",
                            describe(&other)
                        ),
                    )
                }
            }
        }
        Ok(rows)
    }
}

//! Operator sugar over the simplifying constructors.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use crate::ArithExpr;

macro_rules! binop {
    ($tr:ident, $m:ident) => {
        impl $tr<&ArithExpr> for &ArithExpr {
            type Output = ArithExpr;
            fn $m(self, o: &ArithExpr) -> ArithExpr {
                ArithExpr::$m(self, o)
            }
        }
        impl $tr<ArithExpr> for &ArithExpr {
            type Output = ArithExpr;
            fn $m(self, o: ArithExpr) -> ArithExpr {
                ArithExpr::$m(self, &o)
            }
        }
        impl $tr<&ArithExpr> for ArithExpr {
            type Output = ArithExpr;
            fn $m(self, o: &ArithExpr) -> ArithExpr {
                ArithExpr::$m(&self, o)
            }
        }
        impl $tr<ArithExpr> for ArithExpr {
            type Output = ArithExpr;
            fn $m(self, o: ArithExpr) -> ArithExpr {
                ArithExpr::$m(&self, &o)
            }
        }
        impl $tr<i64> for &ArithExpr {
            type Output = ArithExpr;
            fn $m(self, o: i64) -> ArithExpr {
                ArithExpr::$m(self, &ArithExpr::cst(o))
            }
        }
        impl $tr<i64> for ArithExpr {
            type Output = ArithExpr;
            fn $m(self, o: i64) -> ArithExpr {
                ArithExpr::$m(&self, &ArithExpr::cst(o))
            }
        }
    };
}

binop!(Add, add);
binop!(Sub, sub);
binop!(Mul, mul);
binop!(Div, div);
binop!(Rem, rem);

impl Neg for &ArithExpr {
    type Output = ArithExpr;
    fn neg(self) -> ArithExpr {
        ArithExpr::neg(self)
    }
}

impl Neg for ArithExpr {
    type Output = ArithExpr;
    fn neg(self) -> ArithExpr {
        ArithExpr::neg(&self)
    }
}

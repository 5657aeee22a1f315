//! The generator: random typed expressions, every operation defined for every input.

use crate::expr::Expr;
use crate::program::{Let, Program};
use crate::rng::Rng;
use crate::ty::Ty;

/// The program of `seed` (the same program for the same seed, on every machine).
pub fn generate(seed: u64) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        items: Vec::new(),
        fresh: 0,
        budget: 0,
    };
    let mut env: Env = vec![("x".to_owned(), Ty::U64)];
    let mut lets = Vec::new();
    for _ in 0..g.rng.range(3, 5) {
        let ty = g.ty();
        let expr = g.input(ty);
        let name = format!("v{}", lets.len());
        env.push((name.clone(), ty));
        lets.push(Let { name, expr });
    }
    for _ in 0..g.rng.range(4, 9) {
        let ty = g.ty();
        g.budget = 40;
        let depth = g.rng.range(2, 4);
        let expr = g.expr(ty, depth, &env);
        let name = format!("v{}", lets.len());
        env.push((name.clone(), ty));
        lets.push(Let { name, expr });
    }
    Program {
        seed,
        items: g.items,
        lets,
    }
}

/// The variables in scope: text of a place, and its type.
type Env = Vec<(String, Ty)>;

struct Gen {
    rng: Rng,
    items: Vec<(String, String)>,
    fresh: usize,
    /// Nodes the current `let` may still add.
    budget: usize,
}

/// Builds a node: kids are added in order and named `$i$` in the template.
#[derive(Default)]
struct Nb {
    kids: Vec<Expr>,
    same: Vec<usize>,
}

impl Nb {
    /// A kid in another scope than the node's own, or of another type.
    fn k(&mut self, e: Expr) -> String {
        self.kids.push(e);
        format!("${}$", self.kids.len() - 1)
    }

    /// A kid in the node's own scope: it may replace the node when its type is the node's.
    fn s(&mut self, e: Expr) -> String {
        self.same.push(self.kids.len());
        self.k(e)
    }

    fn done(self, ty: Ty, tpl: String) -> Expr {
        debug_assert!(tpl.starts_with('(') && tpl.ends_with(')'), "{tpl}");
        Expr::node(ty, tpl, self.kids, &self.same)
    }
}

fn with(env: &Env, extra: &[(String, Ty)]) -> Env {
    let mut env = env.clone();
    env.extend(extra.iter().cloned());
    env
}

/// A literal usable in a pattern (no parentheses around negative numbers).
fn pat(ty: Ty, bits: u128) -> String {
    let text = ty.literal(bits);
    match text.strip_prefix('(') {
        Some(inner) => inner.trim_end_matches(')').to_owned(),
        None => text,
    }
}

/// `bits` of a signed `ty` as a number, for ordering.
fn value(ty: Ty, bits: u128) -> i128 {
    let bits = ty.truncate(bits);
    if ty.is_signed() {
        let w = ty.bits();
        ((bits << (128 - w)) as i128) >> (128 - w)
    } else {
        bits as i128
    }
}

impl Gen {
    fn n(&mut self) -> usize {
        self.fresh += 1;
        self.fresh
    }

    fn ty(&mut self) -> Ty {
        match self.rng.below(20) {
            0..=12 => self.rng.pick(&Ty::INTS),
            13..=16 => self.rng.pick(&[Ty::F32, Ty::F64]),
            _ => Ty::Bool,
        }
    }

    fn int_ty(&mut self) -> Ty {
        self.rng.pick(&Ty::INTS)
    }

    fn num_ty(&mut self) -> Ty {
        if self.rng.chance(75) {
            self.int_ty()
        } else {
            self.rng.pick(&[Ty::F32, Ty::F64])
        }
    }

    fn lit(&mut self, ty: Ty) -> Expr {
        let bits = ty.random_bits(&mut self.rng);
        Expr::lit(ty, bits)
    }

    fn lit_text(&mut self, ty: Ty) -> String {
        let bits = ty.random_bits(&mut self.rng);
        ty.literal(bits)
    }

    /// An input: bits of `x` as a value of `ty`.
    fn input(&mut self, ty: Ty) -> Expr {
        let r = self.rng.below(64);
        let name = ty.name();
        let tpl = match ty {
            Ty::Bool => format!("((($0$ >> {r}) & 1) == 1)"),
            Ty::U128 | Ty::I128 => {
                format!("(((($0$ as u128) << 64) | ($0$.rotate_left({r}) as u128)) as {name})")
            }
            Ty::F32 => match self.rng.below(3) {
                0 => format!("(f32::from_bits(($0$ >> {r}) as u32))"),
                1 => format!("((($0$ >> {r}) as i16 as f32) * 0.125f32)"),
                _ => format!("((($0$ >> {r}) as u8 as f32) - 100.0f32)"),
            },
            Ty::F64 => match self.rng.below(3) {
                0 => format!("(f64::from_bits($0$.rotate_left({r})))"),
                1 => format!("((($0$ >> {r}) as i32 as f64) / 1024.0f64)"),
                _ => format!("((($0$ >> {r}) as u16 as f64) * -0.5f64)"),
            },
            _ => format!("(($0$.rotate_left({r})) as {name})"),
        };
        Expr::node(ty, tpl, vec![Expr::var(Ty::U64, "x")], &[])
    }

    /// A leaf: a variable of the type, another variable converted, or a literal.
    fn leaf(&mut self, ty: Ty, env: &Env) -> Expr {
        let same: Vec<&(String, Ty)> = env.iter().filter(|(_, t)| *t == ty).collect();
        if !same.is_empty() && self.rng.chance(75) {
            let (name, t) = same[self.rng.below(same.len())].clone();
            return Expr::var(t, name);
        }
        if !env.is_empty() && self.rng.chance(50) {
            let (name, t) = env[self.rng.below(env.len())].clone();
            return self.convert(Expr::var(t, name), ty);
        }
        self.lit(ty)
    }

    /// `e` as a value of `to`.
    fn convert(&mut self, e: Expr, to: Ty) -> Expr {
        let from = e.ty;
        if from == to {
            return e;
        }
        let mut b = Nb::default();
        let a = b.k(e);
        let tpl = match (from, to) {
            (_, Ty::Bool) if from.is_float() => format!("({a} < 0.5{})", from.name()),
            (_, Ty::Bool) => {
                let one = from.small(1);
                format!("(({a} & {one}) == {one})")
            }
            (Ty::Bool, _) if to.is_float() => format!("(({a} as u8) as {})", to.name()),
            _ => format!("({a} as {})", to.name()),
        };
        b.done(to, tpl)
    }

    fn expr(&mut self, ty: Ty, depth: usize, env: &Env) -> Expr {
        if depth == 0 || self.budget == 0 || self.rng.chance(12) {
            return self.leaf(ty, env);
        }
        self.budget -= 1;
        let d = depth - 1;
        if self.rng.chance(30) {
            return self.structural(ty, d, env);
        }
        match ty {
            Ty::Bool => self.bool_expr(d, env),
            Ty::F32 | Ty::F64 => self.float_expr(ty, d, env),
            _ => self.int_expr(ty, d, env),
        }
    }

    fn int_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let name = t.name();
        let mut b = Nb::default();
        let tpl = match self.rng.below(18) {
            0 => {
                let op = self.rng.pick(&["add", "sub", "mul"]);
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!("({}.wrapping_{op}({}))", b.s(x), b.s(y))
            }
            1 => {
                let op = self.rng.pick(&["^", "|", "&"]);
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!("({} {op} {})", b.s(x), b.s(y))
            }
            2 => {
                let op = self.rng.pick(&["add", "sub", "mul"]);
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!("({}.saturating_{op}({}))", b.s(x), b.s(y))
            }
            3 => {
                let op = self.rng.pick(&[
                    "add",
                    "sub",
                    "mul",
                    "div",
                    "rem",
                    "div_euclid",
                    "rem_euclid",
                ]);
                let (x, y, z) = (
                    self.expr(t, d, env),
                    self.expr(t, d, env),
                    self.expr(t, d, env),
                );
                let (x, y, z) = (b.s(x), b.k(y), b.s(z));
                format!("({x}.checked_{op}({y}).unwrap_or({z}))")
            }
            4 => {
                let op = self.rng.pick(&["<<", ">>"]);
                let mask = t.literal(u128::from(t.bits() - 1));
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!("({} {op} ({} & {mask}))", b.s(x), b.k(y))
            }
            5 => {
                let op = self.rng.pick(&[
                    "wrapping_shl",
                    "wrapping_shr",
                    "rotate_left",
                    "rotate_right",
                ]);
                let (x, y) = (self.expr(t, d, env), self.expr(Ty::U32, d, env));
                format!("({}.{op}({}))", b.s(x), b.k(y))
            }
            6 => {
                let x = self.expr(t, d, env);
                let x = b.s(x);
                let mut ops = vec![
                    format!("(!{x})"),
                    format!("({x}.wrapping_neg())"),
                    format!("({x}.swap_bytes())"),
                    format!("({x}.reverse_bits())"),
                    format!("({x}.count_ones() as {name})"),
                    format!("({x}.leading_zeros() as {name})"),
                    format!("({x}.trailing_zeros() as {name})"),
                    format!("({x}.checked_ilog2().unwrap_or(0) as {name})"),
                ];
                if t.is_signed() {
                    ops.push(format!("({x}.wrapping_abs())"));
                    ops.push(format!("({x}.signum())"));
                    ops.push(format!("({x}.unsigned_abs() as {name})"));
                } else {
                    ops.push(format!("({x}.isqrt())"));
                    ops.push(format!("({x}.is_power_of_two() as {name})"));
                    ops.push(format!("({x}.checked_next_power_of_two().unwrap_or({x}))"));
                }
                ops.swap_remove(self.rng.below(ops.len()))
            }
            7 => {
                let (x, y) = (self.expr(t, d, env), self.expr(Ty::U32, d, env));
                format!("({}.wrapping_pow({}))", b.s(x), b.k(y))
            }
            8 => {
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                let (x, y) = (b.s(x), b.s(y));
                match self.rng.below(4) {
                    0 => format!("({x}.min({y}))"),
                    1 => format!("({x}.max({y}))"),
                    2 => format!("({x}.abs_diff({y}) as {name})"),
                    _ => {
                        let (l, h) = self.ordered(t);
                        format!("({x}.clamp({l}, {h}))")
                    }
                }
            }
            9 => {
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                let two = t.small(2);
                format!("(({} / {two}) + ({} / {two}))", b.s(x), b.s(y))
            }
            10 => {
                let x = self.expr(t, d, env);
                let x = b.s(x);
                let k = t.small(self.rng.range(2, 100) as i8);
                if self.rng.chance(50) {
                    format!("({x} % {k})")
                } else {
                    format!("({x} / {k})")
                }
            }
            11 if t.bits() <= 64 => {
                let wide = if t.is_signed() { "i128" } else { "u128" };
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                let bits = t.bits();
                format!(
                    "(((({} as {wide}) * ({} as {wide})) >> {bits}) as {name})",
                    b.k(x),
                    b.k(y)
                )
            }
            12 => {
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!("(fz::gmix({}, {}))", b.s(x), b.s(y))
            }
            13 => {
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                let (x, y) = (b.s(x), b.s(y));
                let seven = t.small(7);
                let one = t.small(1);
                match self.rng.below(5) {
                    // Plain operators (overflow-checked in debug builds) on operands that
                    // cannot overflow.
                    0 => format!("(({x} & {seven}) * ({y} & {seven}))"),
                    1 => format!("(({x} >> {one}) + ({y} >> {one}))"),
                    2 if t.is_signed() => format!("(({x} >> {one}) - ({y} >> 2))"),
                    2 => format!("(({x} | {one}) - ({x} & {one}))"),
                    3 => format!(
                        "({{ let (r, o) = {x}.overflowing_{}({y}); if o {{ !r }} else {{ r }} }})",
                        self.rng.pick(&["add", "sub", "mul"])
                    ),
                    _ => format!("({name}::from_be_bytes({x}.to_le_bytes()))"),
                }
            }
            14 => {
                let x = self.expr(t, d, env);
                let x = b.s(x);
                match self.rng.below(4) {
                    0 => format!("({x}.leading_ones() as {name})"),
                    1 => format!("({x}.trailing_ones() as {name})"),
                    2 => format!("({x}.checked_ilog10().unwrap_or(3) as {name})"),
                    _ => format!("({x}.to_be())"),
                }
            }
            _ => {
                let from = self.ty();
                let x = self.expr(from, d, env);
                return self.convert(x, t);
            }
        };
        b.done(t, tpl)
    }

    /// Two literals of `t`, the first not above the second.
    fn ordered(&mut self, t: Ty) -> (String, String) {
        if t.is_float() {
            let mut l = (self.rng.below(2000) as f64 - 1000.0) / 8.0;
            let mut h = (self.rng.below(2000) as f64 - 1000.0) / 8.0;
            if l > h {
                std::mem::swap(&mut l, &mut h);
            }
            let lit = |v: f64| {
                if t == Ty::F32 {
                    t.literal(u128::from((v as f32).to_bits()))
                } else {
                    t.literal(u128::from(v.to_bits()))
                }
            };
            return (lit(l), lit(h));
        }
        let (l, h) = self.ordered_bits(t);
        (t.literal(l), t.literal(h))
    }

    fn ordered_bits(&mut self, t: Ty) -> (u128, u128) {
        let (mut l, mut h) = (t.random_bits(&mut self.rng), t.random_bits(&mut self.rng));
        // Signed types compare as numbers, unsigned ones (u128 included) as bits.
        let swap = if t.is_signed() {
            value(t, l) > value(t, h)
        } else {
            l > h
        };
        if swap {
            std::mem::swap(&mut l, &mut h);
        }
        (l, h)
    }

    fn float_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let name = t.name();
        let mut b = Nb::default();
        let tpl = match self.rng.below(10) {
            0 | 1 => {
                let op = self.rng.pick(&["+", "-", "*", "/", "%"]);
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!("({} {op} {})", b.s(x), b.s(y))
            }
            2 => {
                let op = self.rng.pick(&[
                    "abs",
                    "sqrt",
                    "floor",
                    "ceil",
                    "round",
                    "trunc",
                    "fract",
                    "round_ties_even",
                    "recip",
                    "signum",
                    "to_degrees",
                    "to_radians",
                ]);
                let x = self.expr(t, d, env);
                format!("({}.{op}())", b.s(x))
            }
            3 => {
                let x = self.expr(t, d, env);
                format!("(-{})", b.s(x))
            }
            4 => {
                let (x, y, z) = (
                    self.expr(t, d, env),
                    self.expr(t, d, env),
                    self.expr(t, d, env),
                );
                format!("({}.mul_add({}, {}))", b.s(x), b.s(y), b.s(z))
            }
            5 => {
                // `powi`'s precision is not specified: an optimised build may fold it with
                // constant operands into `pow` in f64 while run-time code multiplies
                // (`(-5.5983455e-5f32).powi(6)`: 0x15187256 folded, 0x15187254 multiplied; seed
                // 6346 of a release campaign). Only exponents whose result both ways is one
                // rounding of the exact value: 0, 1 and, for `f32`, 2 (an `f32` squared is
                // exact in `f64`).
                let (x, y) = (self.expr(t, d, env), self.expr(Ty::I32, d, env));
                let exponents = if t == Ty::F32 { 3 } else { 2 };
                format!("({}.powi(({} % {exponents}i32).abs()))", b.s(x), b.k(y))
            }
            6 => {
                let op = self.rng.pick(&["rem_euclid", "div_euclid"]);
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!("({}.{op}({}))", b.s(x), b.s(y))
            }
            7 => {
                let x = self.expr(t, d, env);
                let (l, h) = self.ordered(t);
                format!("({}.clamp({l}, {h}))", b.s(x))
            }
            8 => {
                let bits = if t == Ty::F32 { Ty::U32 } else { Ty::U64 };
                let x = self.expr(bits, d, env);
                format!("({name}::from_bits({}))", b.k(x))
            }
            _ => {
                if self.rng.chance(50) {
                    let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                    format!("(fz::gmix({}, {}))", b.s(x), b.s(y))
                } else {
                    let from = self.ty();
                    let x = self.expr(from, d, env);
                    return self.convert(x, t);
                }
            }
        };
        b.done(t, tpl)
    }

    fn bool_expr(&mut self, d: usize, env: &Env) -> Expr {
        let mut b = Nb::default();
        let tpl = match self.rng.below(8) {
            0..=2 => {
                let s = self.num_ty();
                let op = self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                let (x, y) = (self.expr(s, d, env), self.expr(s, d, env));
                format!("({} {op} {})", b.k(x), b.k(y))
            }
            3 => {
                let op = self.rng.pick(&["&&", "||", "^", "=="]);
                let (x, y) = (self.expr(Ty::Bool, d, env), self.expr(Ty::Bool, d, env));
                format!("({} {op} {})", b.s(x), b.s(y))
            }
            4 => {
                let x = self.expr(Ty::Bool, d, env);
                format!("(!{})", b.s(x))
            }
            5 => {
                let f = self.rng.pick(&[Ty::F32, Ty::F64]);
                let op = self.rng.pick(&[
                    "is_nan",
                    "is_finite",
                    "is_infinite",
                    "is_normal",
                    "is_subnormal",
                ]);
                let x = self.expr(f, d, env);
                format!("({}.{op}())", b.k(x))
            }
            6 => {
                let s = self.int_ty();
                let op = self.rng.pick(&["add", "sub", "mul", "div"]);
                let (x, y) = (self.expr(s, d, env), self.expr(s, d, env));
                format!("({}.checked_{op}({}).is_some())", b.k(x), b.k(y))
            }
            _ => {
                let s = self.int_ty();
                let (l, h) = self.ordered_bits(s);
                let x = self.expr(s, d, env);
                format!("(matches!({}, {}..={}))", b.k(x), pat(s, l), pat(s, h))
            }
        };
        b.done(Ty::Bool, tpl)
    }

    /// Control flow and compound values, producing a `t`.
    fn structural(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        match self.rng.below(17) {
            13 => self.ordering_expr(t, d, env),
            14 => self.block_expr(t, d, env),
            15 => self.place_expr(t, d, env),
            16 => self.conversion_expr(t, d, env),
            0 | 1 => self.if_expr(t, d, env),
            2 => self.match_expr(t, d, env),
            3 => self.loop_expr(t, d, env),
            4 => self.struct_expr(t, d, env),
            5 => self.tuple_expr(t, d, env),
            6 => self.enum_expr(t, d, env),
            7 => self.option_expr(t, d, env),
            8 => self.result_expr(t, d, env),
            9 => self.array_expr(t, d, env),
            10 => self.iter_expr(t, d, env),
            11 => self.closure_expr(t, d, env),
            _ => self.helper_call(t, d, env),
        }
    }

    fn if_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let mut b = Nb::default();
        let (c, x, y) = (
            self.expr(Ty::Bool, d, env),
            self.expr(t, d, env),
            self.expr(t, d, env),
        );
        if t != Ty::Bool && self.rng.chance(30) {
            let tpl = format!("(fz::pick({}, {}, {}))", b.k(c), b.s(x), b.s(y));
            return b.done(t, tpl);
        }
        let tpl = format!("(if {} {{ {} }} else {{ {} }})", b.k(c), b.s(x), b.s(y));
        b.done(t, tpl)
    }

    fn match_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let s = self.int_ty();
        let n = self.n();
        let w = format!("w{n}");
        let inner = with(env, &[(w.clone(), s)]);
        let mut b = Nb::default();
        let scrut = self.expr(s, d, env);
        let mut tpl = format!("(match {} {{ ", b.k(scrut));
        for _ in 0..self.rng.range(1, 4) {
            let arm = match self.rng.below(4) {
                0 => {
                    let l = s.random_bits(&mut self.rng);
                    let body = self.expr(t, d, env);
                    format!("{} => {}, ", pat(s, l), b.s(body))
                }
                1 => {
                    let (l, h) = self.ordered_bits(s);
                    let body = self.expr(t, d, env);
                    format!("{}..={} => {}, ", pat(s, l), pat(s, h), b.s(body))
                }
                2 => {
                    let (l1, l2) = (s.random_bits(&mut self.rng), s.random_bits(&mut self.rng));
                    let body = self.expr(t, d, env);
                    format!("{} | {} => {}, ", pat(s, l1), pat(s, l2), b.s(body))
                }
                _ => {
                    let (l, h) = self.ordered_bits(s);
                    let guard = self.expr(Ty::Bool, d, &inner);
                    let body = self.expr(t, d, &inner);
                    format!(
                        "{w} @ {}..={} if {} => {}, ",
                        pat(s, l),
                        pat(s, h),
                        b.k(guard),
                        b.k(body)
                    )
                }
            };
            tpl.push_str(&arm);
        }
        let rest = self.expr(t, d, &inner);
        tpl.push_str(&format!("{w} => {} }})", b.k(rest)));
        b.done(t, tpl)
    }

    fn loop_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let (acc, i, j) = (format!("acc{n}"), format!("i{n}"), format!("j{n}"));
        let name = t.name();
        let k = self.rng.range(1, 6);
        let mut b = Nb::default();
        let init = self.expr(t, d, env);
        let init = b.s(init);
        let tpl = match self.rng.below(4) {
            0 => {
                let inner = with(env, &[(acc.clone(), t), (i.clone(), Ty::U32)]);
                let body = self.expr(t, d, &inner);
                format!(
                    "({{ let mut {acc}: {name} = {init}; for {i} in 0..{k}u32 {{ {acc} = {}; }} {acc} }})",
                    b.k(body)
                )
            }
            1 => {
                let inner = with(env, &[(acc.clone(), t), (i.clone(), Ty::U32)]);
                let cond = self.expr(Ty::Bool, d, &inner);
                let body = self.expr(t, d, &inner);
                format!(
                    "({{ let mut {acc}: {name} = {init}; for {i} in (0..{k}u32).rev() {{ if {} {{ continue; }} {acc} = {}; }} {acc} }})",
                    b.k(cond),
                    b.k(body)
                )
            }
            2 => {
                let k2 = self.rng.range(1, 4);
                let inner = with(
                    env,
                    &[(acc.clone(), t), (i.clone(), Ty::U32), (j.clone(), Ty::U32)],
                );
                let cond = self.expr(Ty::Bool, d, &inner);
                let body = self.expr(t, d, &inner);
                format!(
                    "({{ let mut {acc}: {name} = {init}; 'o{n}: for {i} in 0..{k}u32 {{ for {j} in 0..{k2}u32 {{ if {} {{ break 'o{n}; }} {acc} = {}; }} }} {acc} }})",
                    b.k(cond),
                    b.k(body)
                )
            }
            _ => {
                let inner = with(env, &[(acc.clone(), t), (j.clone(), Ty::U32)]);
                let cond = self.expr(Ty::Bool, d, &inner);
                let body = self.expr(t, d, &inner);
                format!(
                    "({{ let mut {acc}: {name} = {init}; let mut {j} = 0u32; loop {{ {j} += 1; if {j} > {k} || {} {{ break {acc}; }} {acc} = {}; }} }})",
                    b.k(cond),
                    b.k(body)
                )
            }
        };
        b.done(t, tpl)
    }

    fn struct_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let fields: Vec<Ty> = (0..self.rng.range(2, 5)).map(|_| self.ty()).collect();
        let sname = format!("S{n}");
        let mut order: Vec<usize> = (0..fields.len()).collect();
        self.rng.shuffle(&mut order);
        let decl: Vec<String> = order
            .iter()
            .map(|&i| format!("    f{i}: {},\n", fields[i].name()))
            .collect();
        self.items.push((
            sname.clone(),
            format!(
                "#[derive(Clone, Copy)]\nstruct {sname} {{\n{}}}",
                decl.concat()
            ),
        ));
        let s = format!("s{n}");
        let places: Vec<(String, Ty)> = fields
            .iter()
            .enumerate()
            .map(|(i, &ft)| (format!("{s}.f{i}"), ft))
            .collect();
        let inner = with(env, &places);
        let mut b = Nb::default();
        self.rng.shuffle(&mut order);
        let mut init = String::new();
        for &i in &order {
            let e = self.expr(fields[i], d, env);
            init.push_str(&format!("f{i}: {}, ", b.k(e)));
        }
        let mut update = String::new();
        if self.rng.chance(50) {
            let f = self.rng.below(fields.len());
            let e = self.expr(fields[f], d, &inner);
            update = format!("{s}.f{f} = {}; ", b.k(e));
        }
        let body = self.expr(t, d, &inner);
        let tpl = format!(
            "({{ let mut {s} = fz::id({sname} {{ {init}}}); {update}{} }})",
            b.k(body)
        );
        b.done(t, tpl)
    }

    fn tuple_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let tys = [self.ty(), self.ty(), self.ty()];
        let names = [format!("p{n}"), format!("q{n}"), format!("r{n}")];
        let inner = with(
            env,
            &[
                (names[0].clone(), tys[0]),
                (names[1].clone(), tys[1]),
                (names[2].clone(), tys[2]),
                (format!("t{n}.1"), tys[1]),
            ],
        );
        let mut b = Nb::default();
        let parts: Vec<String> = tys
            .iter()
            .map(|&ty| {
                let e = self.expr(ty, d, env);
                b.k(e)
            })
            .collect();
        let body = self.expr(t, d, &inner);
        let tpl = format!(
            "({{ let t{n} = fz::id(({}, {}, {})); let ({}, {}, {}) = t{n}; {} }})",
            parts[0],
            parts[1],
            parts[2],
            names[0],
            names[1],
            names[2],
            b.k(body)
        );
        b.done(t, tpl)
    }

    fn enum_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let e = format!("E{n}");
        let [ta, tb, tc, td] = [self.ty(), self.ty(), self.ty(), self.ty()];
        self.items.push((
            e.clone(),
            format!(
                "#[derive(Clone, Copy, PartialEq)]\nenum {e} {{\n    A({}),\n    B {{ x: {}, y: {} }},\n    C,\n    D({}, bool),\n}}",
                ta.name(),
                tb.name(),
                tc.name(),
                td.name()
            ),
        ));
        let (p, q, r, u, v) = (
            format!("p{n}"),
            format!("q{n}"),
            format!("r{n}"),
            format!("u{n}"),
            format!("e{n}"),
        );
        let mut b = Nb::default();
        let c1 = self.expr(Ty::Bool, d, env);
        let a = self.expr(ta, d, env);
        let c2 = self.expr(Ty::Bool, d, env);
        let (x, y) = (self.expr(tb, d, env), self.expr(tc, d, env));
        let c3 = self.expr(Ty::Bool, d, env);
        let (dv, db) = (self.expr(td, d, env), self.expr(Ty::Bool, d, env));
        let build = format!(
            "let {v} = if {} {{ {e}::A({}) }} else if {} {{ {e}::B {{ x: {}, y: {} }} }} else if {} {{ {e}::D({}, {}) }} else {{ {e}::C }};",
            b.k(c1),
            b.k(a),
            b.k(c2),
            b.k(x),
            b.k(y),
            b.k(c3),
            b.k(dv),
            b.k(db)
        );
        let with_p = with(env, &[(p.clone(), ta)]);
        let with_qr = with(env, &[(q.clone(), tb), (r.clone(), tc)]);
        let with_u = with(env, &[(u.clone(), td)]);
        let guard = self.expr(Ty::Bool, d, &with_p);
        let r1 = self.expr(t, d, &with_p);
        let r2 = self.expr(t, d, &with_qr);
        let r3 = self.expr(t, d, &with_u);
        let r4 = self.expr(t, d, env);
        let r5 = self.expr(t, d, env);
        let tpl = format!(
            "({{ {build} match fz::id({v}) {{ _ if {v} == {e}::C => {}, {e}::A({p}) if {} => {}, {e}::B {{ x: {q}, y: {r} }} => {}, {e}::D({u}, true) => {}, _ => {} }} }})",
            b.s(r4),
            b.k(guard),
            b.k(r1),
            b.k(r2),
            b.k(r3),
            b.s(r5)
        );
        b.done(t, tpl)
    }

    fn option_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let s = self.int_ty();
        let m = format!("m{n}");
        let inner = with(env, &[(m.clone(), s)]);
        let mut b = Nb::default();
        let tpl = match self.rng.below(3) {
            0 => {
                let op = self.rng.pick(&["add", "sub", "mul", "div", "rem"]);
                let (x, y) = (self.expr(s, d, env), self.expr(s, d, env));
                let body = self.expr(t, d, &inner);
                let dflt = self.expr(t, d, env);
                format!(
                    "({}.checked_{op}({}).map(|{m}| {}).unwrap_or({}))",
                    b.k(x),
                    b.k(y),
                    b.k(body),
                    b.s(dflt)
                )
            }
            1 => {
                let (c, x) = (self.expr(Ty::Bool, d, env), self.expr(s, d, env));
                let guard = self.expr(Ty::Bool, d, &inner);
                let (r1, r2) = (self.expr(t, d, &inner), self.expr(t, d, &inner));
                let r3 = self.expr(t, d, env);
                format!(
                    "(match (if {} {{ Some({}) }} else {{ None }}) {{ Some({m}) if {} => {}, Some({m}) => {}, None => {} }})",
                    b.k(c),
                    b.k(x),
                    b.k(guard),
                    b.k(r1),
                    b.k(r2),
                    b.s(r3)
                )
            }
            _ => {
                let w = format!("w{n}");
                let pred_env = with(env, &[(format!("(*{w})"), s)]);
                let (x, y, z) = (
                    self.expr(s, d, env),
                    self.expr(s, d, env),
                    self.expr(s, d, env),
                );
                let pred = self.expr(Ty::Bool, d, &pred_env);
                let dflt = self.expr(t, d, env);
                let body = self.expr(t, d, &inner);
                format!(
                    "({}.checked_add({}).and_then(|{m}| {m}.checked_mul({})).filter(|{w}| {}).map_or({}, |{m}| {}))",
                    b.k(x),
                    b.k(y),
                    b.k(z),
                    b.k(pred),
                    b.s(dflt),
                    b.k(body)
                )
            }
        };
        b.done(t, tpl)
    }

    fn result_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let s = self.int_ty();
        let sn = s.name();
        let f = format!("r{n}");
        let op1 = self.rng.pick(&["add", "sub", "mul", "div", "rem"]);
        let op2 = self.rng.pick(&["add", "sub", "mul", "div", "rem"]);
        let bad = self.lit_text(s);
        self.items.push((
            f.clone(),
            format!(
                "fn {f}(a: {sn}, b: {sn}) -> Result<{sn}, u8> {{\n    let s = a.checked_{op1}(b).ok_or(1u8)?;\n    let t = s.checked_{op2}(a).ok_or(2u8)?;\n    if t == {bad} {{\n        return Err(3);\n    }}\n    Ok(t)\n}}"
            ),
        ));
        let (m, e) = (format!("m{n}"), format!("e{n}"));
        let mut b = Nb::default();
        let (x, y) = (self.expr(s, d, env), self.expr(s, d, env));
        let r1 = self.expr(t, d, &with(env, &[(m.clone(), s)]));
        let r2 = self.expr(t, d, &with(env, &[(e.clone(), Ty::U8)]));
        let tpl = format!(
            "(match {f}({}, {}) {{ Ok({m}) => {}, Err({e}) => {} }})",
            b.k(x),
            b.k(y),
            b.k(r1),
            b.k(r2)
        );
        b.done(t, tpl)
    }

    fn array_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let s = self.num_ty();
        let sn = s.name();
        let len = self.rng.range(2, 6);
        let a = format!("a{n}");
        let mut b = Nb::default();
        let elems: Vec<String> = (0..len)
            .map(|_| {
                let e = self.expr(s, d, env);
                b.k(e)
            })
            .collect();
        let mut places: Vec<(String, Ty)> = vec![(format!("{a}[{}]", self.rng.below(len)), s)];
        let ints: Vec<String> = env
            .iter()
            .filter(|(_, ty)| ty.is_int())
            .map(|(name, _)| name.clone())
            .collect();
        if !ints.is_empty() {
            let i = ints[self.rng.below(ints.len())].clone();
            places.push((format!("{a}[({i} as usize) % {len}]"), s));
        }
        let lo = self.rng.below(len);
        let hi = self.rng.range(lo, len);
        let init = self.lit_text(s);
        places.push((format!("fz::slice_fold(&{a}[{lo}..{hi}], {init})"), s));
        let cmp = self.lit_text(s);
        let (combine, zero) = if s.is_float() {
            ("+", s.small(0))
        } else {
            ("^", s.small(0))
        };
        let extra = match self.rng.below(12) {
            0 => (
                format!("{a}.iter().fold({zero}, |acc, &w| (acc {combine} w))"),
                s,
            ),
            1 => (
                format!("({{ let mut z = {init}; for w in {a} {{ z = fz::gmix(z, w); }} z }})"),
                s,
            ),
            2 => (
                format!("{a}.iter().rev().position(|&w| w > {cmp}).unwrap_or(9)"),
                Ty::Usize,
            ),
            3 => (format!("{a}.iter().any(|&w| w == {cmp})"), Ty::Bool),
            4 => (format!("{a}.iter().all(|&w| w <= {cmp})"), Ty::Bool),
            5 => {
                let other: Vec<String> = (0..len).map(|_| self.lit_text(s)).collect();
                (format!("({a} == [{}])", other.join(", ")), Ty::Bool)
            }
            6 => (format!("fz::arr_fold({a}, {init})"), s),
            7 if !s.is_float() => (
                format!("{a}.windows(2).fold({init}, |acc, w| acc.wrapping_add(w[0] ^ w[1]))"),
                s,
            ),
            8 => (
                format!("{a}.chunks(2).map(|c| c.len()).sum::<usize>()"),
                Ty::Usize,
            ),
            9 => (format!("{a}.last().copied().unwrap_or({init})"), s),
            10 if !s.is_float() => (format!("{a}.iter().copied().max().unwrap_or({init})"), s),
            _ => (format!("{a}[{lo}..].len()"), Ty::Usize),
        };
        places.push(extra);
        let inner = with(env, &places);
        let mut stmts = String::new();
        if self.rng.chance(40) && !ints.is_empty() {
            let i = ints[self.rng.below(ints.len())].clone();
            let v = self.expr(s, d, env);
            stmts.push_str(&format!("{a}[({i} as usize) % {len}] = {}; ", b.k(v)));
        }
        if self.rng.chance(30) {
            stmts.push_str(&format!("{a}.reverse(); "));
        }
        if self.rng.chance(30) {
            stmts.push_str(&format!("{a}.swap(0, {}); ", len - 1));
        }
        if !s.is_float() && self.rng.chance(25) {
            stmts.push_str(&format!("{a}.sort_unstable(); "));
        }
        let body = if self.rng.chance(50) {
            let (place, pt) = places[self.rng.below(places.len())].clone();
            let e = self.convert(Expr::var(pt, place), t);
            let other = self.expr(t, d, &inner);
            if t == Ty::Bool {
                Expr::node(t, "($0$ ^ $1$)", vec![e, other], &[0, 1])
            } else {
                Expr::node(t, "(fz::pick(true, $0$, $1$))", vec![e, other], &[0, 1])
            }
        } else {
            self.expr(t, d, &inner)
        };
        let tpl = format!(
            "({{ let mut {a}: [{sn}; {len}] = [{}]; {stmts}{} }})",
            elems.join(", "),
            b.k(body)
        );
        b.done(t, tpl)
    }

    fn iter_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let s = self.int_ty();
        let sn = s.name();
        let (i, w, acc) = (format!("i{n}"), format!("w{n}"), format!("acc{n}"));
        let k = self.rng.range(1, 9);
        let mut b = Nb::default();
        let map = self.expr(s, d, &with(env, &[(i.clone(), Ty::U32)]));
        let mut chain = format!("(0..{k}u32)");
        if self.rng.chance(30) {
            chain.push_str(".rev()");
        }
        if self.rng.chance(30) {
            chain.push_str(&format!(".step_by({})", self.rng.range(1, 3)));
        }
        chain.push_str(&format!(".map(|{i}| {})", b.k(map)));
        if self.rng.chance(50) {
            let pred = self.expr(Ty::Bool, d, &with(env, &[(format!("(*{w})"), s)]));
            chain.push_str(&format!(".filter(|{w}| {})", b.k(pred)));
        }
        if self.rng.chance(25) {
            chain.push_str(&format!(".skip({})", self.rng.below(3)));
        }
        if self.rng.chance(25) {
            chain.push_str(&format!(".take({})", self.rng.range(1, 6)));
        }
        let init = self.lit_text(s);
        let (text, ty) = match self.rng.below(7) {
            0 | 1 => (
                format!("{chain}.fold({init}, |{acc}, {w}| {acc}.wrapping_add({w}))"),
                s,
            ),
            2 => (
                format!(
                    "{chain}.enumerate().fold({init}, |{acc}, (k, {w})| {acc} ^ {w}.rotate_left(k as u32))"
                ),
                s,
            ),
            3 => (format!("{chain}.max().unwrap_or({init})"), s),
            4 => (format!("({chain}.count() as {sn})"), s),
            5 => {
                let pred = self.expr(Ty::Bool, d, &with(env, &[(w.clone(), s)]));
                let any = self.rng.pick(&["any", "all"]);
                (format!("{chain}.{any}(|{w}| {})", b.k(pred)), Ty::Bool)
            }
            _ => (
                format!(
                    "{chain}.zip((0..{}u8).rev()).fold({init}, |{acc}, ({w}, z)| {acc}.wrapping_sub({w} ^ (z as {sn})))",
                    self.rng.range(1, 9)
                ),
                s,
            ),
        };
        let e = b.done(ty, format!("({text})"));
        self.convert(e, t)
    }

    fn closure_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let name = t.name();
        let (c, w, k) = (format!("c{n}"), format!("w{n}"), format!("k{n}"));
        let mut b = Nb::default();
        let tpl = match self.rng.below(3) {
            0 => {
                let s = self.ty();
                let cap = self.expr(s, d, env);
                let arg = self.expr(s, d, env);
                let body = self.expr(t, d, &with(env, &[(k.clone(), s), (w.clone(), s)]));
                let sn = s.name();
                format!(
                    "({{ let {k}: {sn} = {}; let {c} = |{w}: {sn}| -> {name} {{ {} }}; {c}({}) }})",
                    b.k(cap),
                    b.k(body),
                    b.k(arg)
                )
            }
            1 => {
                let arg = self.expr(t, d, env);
                let body = self.expr(t, d, &with(env, &[(w.clone(), t)]));
                format!(
                    "(fz::twice(|{w}: {name}| -> {name} {{ {} }}, {}))",
                    b.k(body),
                    b.s(arg)
                )
            }
            _ => {
                let init = self.expr(t, d, env);
                let upd = self.expr(t, d, &with(env, &[(k.clone(), t), (w.clone(), t)]));
                let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
                format!(
                    "({{ let mut {k}: {name} = {}; let mut {c} = |{w}: {name}| {{ {k} = {}; {k} }}; {c}({}); {c}({}) }})",
                    b.s(init),
                    b.k(upd),
                    b.k(x),
                    b.k(y)
                )
            }
        };
        b.done(t, tpl)
    }

    /// `cmp`/`partial_cmp` and a `match` on the `Ordering`.
    fn ordering_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let s = self.num_ty();
        let mut b = Nb::default();
        let (x, y) = (self.expr(s, d, env), self.expr(s, d, env));
        let (x, y) = (b.k(x), b.k(y));
        let (r1, r2, r3) = (
            self.expr(t, d, env),
            self.expr(t, d, env),
            self.expr(t, d, env),
        );
        let (r1, r2, r3) = (b.s(r1), b.s(r2), b.s(r3));
        let tpl = if s.is_float() {
            format!(
                "(match {x}.partial_cmp(&{y}) {{ Some(core::cmp::Ordering::Less) => {r1}, Some(o) if o.is_ge() => {r2}, _ => {r3} }})"
            )
        } else if self.rng.chance(50) {
            format!(
                "(match {x}.cmp(&{y}) {{ core::cmp::Ordering::Less => {r1}, core::cmp::Ordering::Equal => {r2}, core::cmp::Ordering::Greater => {r3} }})"
            )
        } else {
            format!(
                "(match fz::id({x}.cmp(&{y}).then({y}.cmp(&{x})).reverse()) {{ core::cmp::Ordering::Greater => {r1}, o if o.is_eq() => {r2}, _ => {r3} }})"
            )
        };
        b.done(t, tpl)
    }

    /// Labeled blocks, `let else`, `while let`.
    fn block_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let name = t.name();
        let mut b = Nb::default();
        let tpl = match self.rng.below(3) {
            0 => {
                let (c, x, y) = (
                    self.expr(Ty::Bool, d, env),
                    self.expr(t, d, env),
                    self.expr(t, d, env),
                );
                format!(
                    "('b{n}: {{ if {} {{ break 'b{n} {}; }} {} }})",
                    b.k(c),
                    b.s(x),
                    b.s(y)
                )
            }
            1 => {
                let s = self.int_ty();
                let m = format!("m{n}");
                let (x, y) = (self.expr(s, d, env), self.expr(s, d, env));
                let dflt = self.expr(t, d, env);
                let body = self.expr(t, d, &with(env, &[(m.clone(), s)]));
                format!(
                    "('b{n}: {{ let Some({m}) = {}.checked_mul({}) else {{ break 'b{n} {}; }}; {} }})",
                    b.k(x),
                    b.k(y),
                    b.s(dflt),
                    b.k(body)
                )
            }
            _ => {
                let s = self.int_ty();
                let (i, w, acc) = (format!("i{n}"), format!("w{n}"), format!("acc{n}"));
                let k = self.rng.range(1, 7);
                let map = self.expr(s, d, &with(env, &[(i.clone(), Ty::U32)]));
                let init = self.expr(t, d, env);
                let body = self.expr(t, d, &with(env, &[(acc.clone(), t), (w.clone(), s)]));
                format!(
                    "({{ let mut it{n} = (0..{k}u32).map(|{i}| {}); let mut {acc}: {name} = {}; while let Some({w}) = it{n}.next() {{ {acc} = {}; }} {acc} }})",
                    b.k(map),
                    b.s(init),
                    b.k(body)
                )
            }
        };
        b.done(t, tpl)
    }

    /// Places behind references: `&mut` to a local, `mem::swap`, a slice of a local array.
    fn place_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let name = t.name();
        let mut b = Nb::default();
        if t == Ty::Bool {
            let (x, y) = (self.expr(t, d, env), self.expr(t, d, env));
            let tpl = format!(
                "({{ let mut p{n} = {}; let mut q{n} = {}; core::mem::swap(&mut p{n}, &mut q{n}); p{n} & !q{n} }})",
                b.s(x),
                b.s(y)
            );
            return b.done(t, tpl);
        }
        let (x, y, z) = (
            self.expr(t, d, env),
            self.expr(t, d, env),
            self.expr(t, d, env),
        );
        let tpl = match self.rng.below(3) {
            0 => format!(
                "({{ let mut m{n}: {name} = {}; fz::mix_into(&mut m{n}, {}); let r{n} = &mut m{n}; fz::mix_into(r{n}, {}); m{n} }})",
                b.s(x),
                b.k(y),
                b.k(z)
            ),
            1 => format!(
                "({{ let mut p{n}: {name} = {}; let mut q{n}: {name} = {}; core::mem::swap(&mut p{n}, &mut q{n}); fz::gmix(p{n}, fz::gmix(q{n}, {})) }})",
                b.s(x),
                b.s(y),
                b.k(z)
            ),
            _ => format!(
                "({{ let a{n} = [{}, {}, {}]; let (l{n}, r{n}) = a{n}.split_at(1); fz::gmix(fz::slice_fold(r{n}, l{n}[0]), fz::arr_fold(a{n}, {})) }})",
                b.k(x),
                b.k(y),
                b.k(z),
                t.small(1)
            ),
        };
        b.done(t, tpl)
    }

    /// `TryFrom`, `From`, `char`.
    fn conversion_expr(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let mut b = Nb::default();
        if t.is_int() {
            let s = self.int_ty();
            let (x, dflt) = (self.expr(s, d, env), self.expr(t, d, env));
            let tpl = format!(
                "({}::try_from({}).unwrap_or({}))",
                t.name(),
                b.k(x),
                b.s(dflt)
            );
            return b.done(t, tpl);
        }
        let x = self.expr(Ty::U32, d, env);
        let x = b.k(x);
        let e = match self.rng.below(3) {
            0 => b.done(
                Ty::U32,
                format!("(char::from_u32({x}).map_or(7u32, |c| c.to_ascii_uppercase() as u32))"),
            ),
            1 => b.done(
                Ty::Bool,
                format!("((({x} & 127) as u8 as char).is_ascii_alphanumeric())"),
            ),
            _ => b.done(
                Ty::U32,
                format!("(char::from_digit({x} % 36, 36).map_or(0u32, u32::from))"),
            ),
        };
        self.convert(e, t)
    }

    fn helper_call(&mut self, t: Ty, d: usize, env: &Env) -> Expr {
        let n = self.n();
        let f = format!("h{n}");
        let params = [self.ty(), self.ty()];
        let penv: Env = vec![("a".to_owned(), params[0]), ("b".to_owned(), params[1])];
        let saved = self.budget;
        self.budget = self.budget.min(10);
        let body = self.expr(t, d.max(1), &penv);
        self.budget = saved.saturating_sub(body.size());
        self.items.push((
            f.clone(),
            format!(
                "#[inline(never)]\nfn {f}(a: {}, b: {}) -> {} {{\n    {}\n}}",
                params[0].name(),
                params[1].name(),
                t.name(),
                body.render()
            ),
        ));
        let mut b = Nb::default();
        let (x, y) = (self.expr(params[0], d, env), self.expr(params[1], d, env));
        let tpl = format!("({f}({}, {}))", b.k(x), b.k(y));
        b.done(t, tpl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powi_takes_only_exponents_with_one_rounding() {
        let programs: String = (0..300).map(|seed| generate(seed).render()).collect();
        let calls = programs.matches(".powi(").count();
        assert!(calls > 20, "too few powi calls to tell: {calls}");
        let bounded = programs.matches(" % 3i32).abs()))").count()
            + programs.matches(" % 2i32).abs()))").count();
        assert_eq!(calls, bounded);
    }

    #[test]
    fn deterministic_per_seed() {
        assert_eq!(generate(42), generate(42));
        assert_ne!(generate(42).render(), generate(43).render());
    }

    #[test]
    fn ordered_literals_are_ordered() {
        let mut g = Gen {
            rng: Rng::new(3),
            items: Vec::new(),
            fresh: 0,
            budget: 0,
        };
        for &t in &Ty::INTS {
            for _ in 0..50 {
                let (l, h) = g.ordered_bits(t);
                if t.is_signed() {
                    assert!(value(t, l) <= value(t, h));
                } else {
                    assert!(l <= h);
                }
            }
        }
    }
}

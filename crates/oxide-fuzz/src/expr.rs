//! Typed expression trees and their Rust text.

use crate::ty::Ty;

/// An expression of a scalar type.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub ty: Ty,
    pub kind: Kind,
}

/// What an expression is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A literal: the bit pattern of a value of the expression's type.
    Lit(u128),
    /// A variable (or a place such as `s3.f1`) in scope where the expression stands.
    Var(String),
    /// Rust text with holes `$i$` filled by the text of `kids[i]`. Every template starts
    /// with `(` and ends with the matching `)`, so it can stand anywhere. `hoist` names the
    /// kids of the same type that are in the node's own scope: each can replace the node.
    Node {
        tpl: String,
        kids: Vec<Expr>,
        hoist: Vec<usize>,
    },
}

impl Expr {
    pub fn lit(ty: Ty, bits: u128) -> Expr {
        Expr {
            ty,
            kind: Kind::Lit(ty.truncate(bits)),
        }
    }

    pub fn var(ty: Ty, name: impl Into<String>) -> Expr {
        Expr {
            ty,
            kind: Kind::Var(name.into()),
        }
    }

    /// A node; `hoist` is computed: the kids listed in `same_scope` whose type is `ty`.
    pub fn node(ty: Ty, tpl: impl Into<String>, kids: Vec<Expr>, same_scope: &[usize]) -> Expr {
        let hoist = same_scope
            .iter()
            .copied()
            .filter(|&i| kids[i].ty == ty)
            .collect();
        Expr {
            ty,
            kind: Kind::Node {
                tpl: tpl.into(),
                kids,
                hoist,
            },
        }
    }

    /// The Rust text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        match &self.kind {
            Kind::Lit(bits) => out.push_str(&self.ty.literal(*bits)),
            Kind::Var(name) => out.push_str(name),
            Kind::Node { tpl, kids, .. } => {
                let mut rest = tpl.as_str();
                while let Some(start) = rest.find('$') {
                    out.push_str(&rest[..start]);
                    let after = &rest[start + 1..];
                    let end = after.find('$').expect("a hole ends with `$`");
                    let index: usize = after[..end].parse().expect("a hole names a kid");
                    kids[index].render_into(out);
                    rest = &after[end + 1..];
                }
                out.push_str(rest);
            }
        }
    }

    /// How many nodes the tree has.
    pub fn size(&self) -> usize {
        match &self.kind {
            Kind::Node { kids, .. } => 1 + kids.iter().map(Expr::size).sum::<usize>(),
            _ => 1,
        }
    }

    /// The subexpression at `path` (kid indices from here).
    pub fn at(&self, path: &[usize]) -> &Expr {
        match (path.split_first(), &self.kind) {
            (None, _) => self,
            (Some((&i, rest)), Kind::Node { kids, .. }) => kids[i].at(rest),
            _ => panic!("no subexpression at this path"),
        }
    }

    /// The subexpression at `path`, to change.
    pub fn at_mut(&mut self, path: &[usize]) -> &mut Expr {
        match path.split_first() {
            None => self,
            Some((&i, rest)) => match &mut self.kind {
                Kind::Node { kids, .. } => kids[i].at_mut(rest),
                _ => panic!("no subexpression at this path"),
            },
        }
    }

    /// Every path in the tree, parents before their kids.
    pub fn paths(&self) -> Vec<Vec<usize>> {
        let mut all = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut all);
        all
    }

    fn collect_paths(&self, here: &mut Vec<usize>, all: &mut Vec<Vec<usize>>) {
        all.push(here.clone());
        if let Kind::Node { kids, .. } = &self.kind {
            for (i, kid) in kids.iter().enumerate() {
                here.push(i);
                kid.collect_paths(here, all);
                here.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_holes_and_paths() {
        let a = Expr::var(Ty::U8, "a");
        let b = Expr::lit(Ty::U8, 3);
        let sum = Expr::node(Ty::U8, "($0$.wrapping_add($1$))", vec![a, b], &[0, 1]);
        assert_eq!(sum.render(), "(a.wrapping_add(3u8))");
        let cmp = Expr::node(Ty::Bool, "($0$ < $1$)", vec![sum.clone(), sum], &[0, 1]);
        assert_eq!(
            cmp.render(),
            "((a.wrapping_add(3u8)) < (a.wrapping_add(3u8)))"
        );
        let Kind::Node { hoist, .. } = &cmp.kind else {
            panic!()
        };
        assert!(
            hoist.is_empty(),
            "kids of another type cannot replace the node"
        );
        assert_eq!(cmp.size(), 7);
        assert_eq!(cmp.paths().len(), 7);
        assert_eq!(cmp.at(&[1, 1]).render(), "3u8");
    }
}

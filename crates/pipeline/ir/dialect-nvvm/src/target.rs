//! GPU architectures and PTX ISA versions: which intrinsics a target has, and which PTX ISA a
//! module needs.

use pliron::{
    context::{Context, Ptr},
    graph::walkers::{IRNode, WalkConfig, uninterruptible::immutable::walk_op},
    operation::Operation,
};
use thiserror::Error;

use crate::{intrinsic::Intrinsic, op::IntrinsicOp};

/// A GPU architecture, `sm_XX` (with an `a` or `f` suffix for the architecture- or
/// family-specific feature sets of sm_90 and later).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The compute capability times ten (`90` for sm_90).
    pub sm: u32,
    /// The suffix after the number (`Some('a')` for sm_90a).
    pub suffix: Option<char>,
}

/// The oldest PTX ISA version (times ten) that knows each architecture, from the PTX ISA
/// release notes, in increasing `sm` order. LLVM's NVPTX backend starts at PTX ISA 3.2.
const MIN_PTX_OF_SM: &[(u32, u32)] = &[
    (20, 32),
    (32, 40),
    (35, 32),
    (37, 41),
    (50, 40),
    (52, 41),
    (53, 42),
    (60, 50),
    (70, 60),
    (72, 61),
    (75, 63),
    (80, 70),
    (86, 71),
    (87, 74),
    (88, 90),
    (89, 78),
    (90, 78),
    (100, 86),
    (101, 86),
    (103, 88),
    (110, 90),
    (120, 87),
    (121, 88),
];

impl Target {
    /// Parses `sm_90`, `sm_90a`, `sm_100f`.
    pub fn parse(text: &str) -> Option<Target> {
        let rest = text.trim().strip_prefix("sm_")?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let sm = rest[..digits].parse().ok()?;
        let suffix = match &rest[digits..] {
            "" => None,
            "a" => Some('a'),
            "f" => Some('f'),
            _ => return None,
        };
        Some(Target { sm, suffix })
    }

    /// The oldest PTX ISA version (times ten) whose PTX can target this architecture: what
    /// `llc` emits unless asked for a newer one.
    pub fn min_ptx_isa(self) -> u32 {
        let base = self.min_ptx_isa_of_sm();
        match self.suffix {
            // The architecture-specific targets arrived with PTX ISA 8.0 (sm_90a), the
            // family-specific ones with 8.8.
            Some('a') => base.max(80),
            Some(_) => base.max(88),
            None => base,
        }
    }

    fn min_ptx_isa_of_sm(self) -> u32 {
        MIN_PTX_OF_SM
            .iter()
            .rev()
            .find(|&&(sm, _)| sm == self.sm)
            .or_else(|| MIN_PTX_OF_SM.iter().rev().find(|&&(sm, _)| sm < self.sm))
            .map_or(32, |&(_, ptx)| ptx)
    }

    /// Whether this target has `intrinsic`: an architecture at least as new as its oldest one,
    /// and for an architecture-specific intrinsic exactly its architecture with the `a`
    /// suffix (`sm_90a`'s features are neither in `sm_90` nor in `sm_100a`).
    pub fn has(self, intrinsic: &Intrinsic) -> bool {
        if intrinsic.arch_specific {
            self.sm == intrinsic.min_sm && self.suffix == Some('a')
        } else {
            self.sm >= intrinsic.min_sm
        }
    }

    /// The target that an intrinsic needs at least: `sm_90a` for an architecture-specific
    /// intrinsic of sm_90.
    pub fn required_by(intrinsic: &Intrinsic) -> Target {
        Target {
            sm: intrinsic.min_sm,
            suffix: intrinsic.arch_specific.then_some('a'),
        }
    }

    /// Fails unless this target has `intrinsic` ([Target::has]).
    pub fn check(self, intrinsic: &Intrinsic) -> Result<(), TargetTooOld> {
        if self.has(intrinsic) {
            return Ok(());
        }
        Err(TargetTooOld {
            stub: intrinsic.rust_path,
            required: Target::required_by(intrinsic),
            arch_specific: intrinsic.arch_specific,
            target: self,
        })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "sm_{}", self.sm)?;
        if let Some(suffix) = self.suffix {
            write!(f, "{suffix}")?;
        }
        Ok(())
    }
}

/// An intrinsic used on an architecture that does not have it: one older than the oldest
/// that has it, or, for an architecture-specific intrinsic, any but its own `a` target.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error(
    "`{stub}` needs {}, but this build targets {target}; build for {required} (`--arch \
     {required}` or `CUDA_OXIDE_TARGET={required}`)",
    if *arch_specific {
        format!("the architecture-specific target {required} (exactly that GPU architecture)")
    } else {
        format!("{required} or newer")
    }
)]
pub struct TargetTooOld {
    /// The intrinsic's stub.
    pub stub: &'static str,
    /// The target it needs (its oldest architecture; `sm_90a` for one specific to sm_90a).
    pub required: Target,
    /// Whether only `required` itself has it.
    pub arch_specific: bool,
    /// The architecture of the build.
    pub target: Target,
}

/// The newest PTX ISA version (times ten) that the `nvvm.intrinsic` ops inside `op` need, or
/// `None` when there are none.
pub fn required_ptx_isa(ctx: &Context, op: Ptr<Operation>) -> Option<u32> {
    let mut required = None;
    walk_op(
        ctx,
        &mut required,
        &WalkConfig::default(),
        op,
        |ctx, required: &mut Option<u32>, node| {
            if let IRNode::Operation(op) = node
                && let Some(intrinsic) = Operation::get_op::<IntrinsicOp>(op, ctx)
            {
                let ptx = intrinsic.intrinsic(ctx).min_ptx;
                *required = Some(required.map_or(ptx, |r| r.max(ptx)));
            }
        },
    );
    required
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_architectures() {
        assert_eq!(
            Target::parse("sm_90"),
            Some(Target {
                sm: 90,
                suffix: None
            })
        );
        assert_eq!(
            Target::parse("sm_90a").map(|t| t.to_string()),
            Some("sm_90a".into())
        );
        assert_eq!(Target::parse("sm_100f").map(|t| t.sm), Some(100));
        assert_eq!(Target::parse("sm_"), None);
        assert_eq!(Target::parse("compute_90"), None);
        assert_eq!(Target::parse("sm_90x"), None);
    }

    #[test]
    fn minimum_ptx_follows_the_architecture() {
        let min = |t: &str| Target::parse(t).unwrap().min_ptx_isa();
        assert_eq!(min("sm_70"), 60);
        assert_eq!(min("sm_80"), 70);
        assert_eq!(min("sm_90"), 78);
        assert_eq!(min("sm_90a"), 80);
        assert_eq!(min("sm_100a"), 86);
        assert_eq!(min("sm_120"), 87);
        // Between known architectures: the one below.
        assert_eq!(min("sm_91"), 78);
    }

    #[test]
    fn architecture_specific_intrinsics_need_exactly_their_a_target() {
        use crate::table::{elect_sync, wgmma_fence};
        let t = |s: &str| Target::parse(s).unwrap();
        assert!(t("sm_90a").has(&wgmma_fence));
        for other in ["sm_90", "sm_89", "sm_100a", "sm_120"] {
            assert!(!t(other).has(&wgmma_fence), "{other}");
        }
        assert!(t("sm_90").has(&elect_sync) && t("sm_90a").has(&elect_sync));
        assert!(t("sm_100a").has(&elect_sync) && !t("sm_89").has(&elect_sync));
        let err = t("sm_90").check(&wgmma_fence).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "`cuda_device::wgmma::raw::fence` needs the architecture-specific target sm_90a"
            ) && err.contains("this build targets sm_90;")
                && err.contains("`--arch sm_90a`"),
            "{err}"
        );
        let err = t("sm_80").check(&elect_sync).unwrap_err().to_string();
        assert!(
            err.starts_with("`cuda_device::warp::elect_one` needs sm_90 or newer"),
            "{err}"
        );
    }
}

//! How a kernel's parameters travel from the host launcher to the PTX `.entry`.
//!
//! The device lowering (`mir-lower`) builds each kernel's LLVM signature from [`slots`], and the
//! host launcher (`cuda-host`) pushes one argument per slot from the same function, so the two
//! sides cannot drift apart.
//!
//! | Rust parameter | [`ParamKind`] | slots |
//! |---|---|---|
//! | `&[T]`, `&mut [T]`, `DisjointSlice<T>` | `Slice` | global pointer (`u64`), length (`u64`) |
//! | integers, floats, `bool`, raw pointers | `Scalar` | the value |
//! | structs, tuples, closures (by value) | `Aggregate` | the whole value, with rustc's layout |
//! | `&T` of a sized `T` (a grid constant) | `GridConstant` | the whole value of `T`, with rustc's layout |
//! | zero-sized types | `ZeroSized` | none |

#![no_std]

/// The layout version of the CPU flavour's image table, which the exporter writes
/// (`llvm_export::cpu_image`) and the CPU device reads (`cuda_cpu::image`): a binary whose
/// table has another version is refused with a request to rebuild it.
pub const CPU_IMAGE_VERSION: u64 = 5;

/// Bytes of dynamic shared memory a block has on the CPU device: the most a Hopper block can
/// have. The exporter sizes each image's dynamic shared array so; the CPU device answers it as
/// the opt-in limit and refuses launches asking for more.
pub const CPU_DYNAMIC_SHARED_BYTES: u64 = 227 * 1024;

/// The variable whose value `cpu` makes a program's CUDA context the CPU device.
pub const CPU_DEVICE_VARIABLE: &str = "CUDA_OXIDE_DEVICE";

/// The class of a kernel parameter.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A slice or `DisjointSlice`: a pointer into global memory and an element count.
    Slice,
    /// A scalar of `size` bytes (1, 2, 4 or 8; `bool` is 1).
    Scalar {
        /// Size in bytes.
        size: u32,
    },
    /// A struct, tuple or closure passed by value as one parameter, laid out as rustc lays it
    /// out on the host.
    Aggregate {
        /// Size in bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
    },
    /// A shared reference `&T` to a sized, non-slice `T`: a *grid constant*. The host passes
    /// the value of `T` like an `Aggregate`; the kernel receives the address of its parameter
    /// (CUDA's `const __grid_constant__ T`), which stays in the kernel's parameter space, where
    /// hardware units such as the TMA copy engine read it (a tensor map).
    GridConstant {
        /// Size of `T` in bytes.
        size: u32,
        /// Alignment of `T` in bytes.
        align: u32,
    },
    /// A type without data: it is not passed at all.
    ZeroSized,
}

/// One PTX parameter of a kernel entry.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// A 64-bit pointer into global memory (LLVM `ptr addrspace(1)`).
    GlobalPointer,
    /// A 64-bit element count (LLVM `i64`).
    Length,
    /// A scalar value of `size` bytes.
    Scalar {
        /// Size in bytes.
        size: u32,
    },
    /// An aggregate value of `size` bytes and alignment `align`, passed as one parameter.
    Aggregate {
        /// Size in bytes.
        size: u32,
        /// Alignment in bytes.
        align: u32,
    },
}

impl Slot {
    /// Bytes the host copies for this slot.
    pub const fn size(self) -> u32 {
        match self {
            Slot::GlobalPointer | Slot::Length => 8,
            Slot::Scalar { size } | Slot::Aggregate { size, .. } => size,
        }
    }
}

/// The PTX parameters of one kernel parameter (at most two).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Slots {
    items: [Slot; 2],
    len: usize,
}

impl Slots {
    const fn of(items: &[Slot]) -> Self {
        let mut out = Slots {
            items: [Slot::Length; 2],
            len: items.len(),
        };
        let mut i = 0;
        while i < items.len() {
            out.items[i] = items[i];
            i += 1;
        }
        out
    }

    /// The slots, in order.
    pub fn as_slice(&self) -> &[Slot] {
        &self.items[..self.len]
    }
}

/// The PTX parameters of one kernel parameter, in order.
pub const fn slots(kind: ParamKind) -> Slots {
    match kind {
        ParamKind::Slice => Slots::of(&[Slot::GlobalPointer, Slot::Length]),
        ParamKind::Scalar { size } => Slots::of(&[Slot::Scalar { size }]),
        ParamKind::Aggregate { size, align } | ParamKind::GridConstant { size, align } => {
            Slots::of(&[Slot::Aggregate { size, align }])
        }
        ParamKind::ZeroSized => Slots::of(&[]),
    }
}

/// The slots of a whole kernel signature, in parameter order.
pub fn signature_slots(params: &[ParamKind]) -> impl Iterator<Item = Slot> + '_ {
    params.iter().flat_map(|&kind| {
        let slots = slots(kind);
        slots.items.into_iter().take(slots.len)
    })
}

/// The runtime function the CPU flavour calls for an [SfuOp]: `i64 (i32 op, i64 a, i64 b)`,
/// operands and result as bits (an `f32`'s in the low half). The exporter gives each image
/// that links libdevice a slot of this name; the CPU device fills it.
pub const CPU_SFU_FUNCTION: &str = "__oxide_cpu_sfu";

/// The approximations of the GPU's special function unit that the CPU device reproduces bit
/// for bit (`cuda_cpu::sfu`, from tables measured on the GPU): the CPU flavour of libdevice
/// calls the runtime's `sfu` function with one of these codes and the operands' bits
/// (`llvm_to_ptx::nvvm_on_cpu`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum SfuOp {
    RcpF32,
    RcpFtzF32,
    RsqrtF32,
    RsqrtFtzF32,
    Ex2F32,
    Ex2FtzF32,
    Lg2F32,
    Lg2FtzF32,
    DivF32,
    DivFtzF32,
    RcpFtzF64,
    RsqrtF64,
    RsqrtFtzF64,
}

impl SfuOp {
    /// Every operation with its PTX instruction.
    pub const ALL: [(SfuOp, &'static str); 13] = [
        (SfuOp::RcpF32, "rcp.approx.f32"),
        (SfuOp::RcpFtzF32, "rcp.approx.ftz.f32"),
        (SfuOp::RsqrtF32, "rsqrt.approx.f32"),
        (SfuOp::RsqrtFtzF32, "rsqrt.approx.ftz.f32"),
        (SfuOp::Ex2F32, "ex2.approx.f32"),
        (SfuOp::Ex2FtzF32, "ex2.approx.ftz.f32"),
        (SfuOp::Lg2F32, "lg2.approx.f32"),
        (SfuOp::Lg2FtzF32, "lg2.approx.ftz.f32"),
        (SfuOp::DivF32, "div.approx.f32"),
        (SfuOp::DivFtzF32, "div.approx.ftz.f32"),
        (SfuOp::RcpFtzF64, "rcp.approx.ftz.f64"),
        (SfuOp::RsqrtF64, "rsqrt.approx.f64"),
        (SfuOp::RsqrtFtzF64, "rsqrt.approx.ftz.f64"),
    ];

    /// The operation of the PTX instruction `ptx` (`"rcp.approx.ftz.f32"`).
    pub fn from_ptx(ptx: &str) -> Option<SfuOp> {
        Self::ALL.iter().find(|(_, p)| *p == ptx).map(|(op, _)| *op)
    }

    /// The operation with code `code` (its `u32` value).
    pub fn from_code(code: u32) -> Option<SfuOp> {
        Self::ALL.get(code as usize).map(|(op, _)| *op)
    }

    /// Its PTX instruction.
    pub fn ptx(self) -> &'static str {
        Self::ALL[self as usize].1
    }

    /// Whether its operands and result are `f64`.
    pub fn is_f64(self) -> bool {
        self.ptx().ends_with("f64")
    }

    /// How many operands it takes.
    pub fn arity(self) -> usize {
        if matches!(self, SfuOp::DivF32 | SfuOp::DivFtzF32) {
            2
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_pointer_then_length() {
        assert_eq!(
            slots(ParamKind::Slice).as_slice(),
            &[Slot::GlobalPointer, Slot::Length]
        );
    }

    #[test]
    fn scalars_and_aggregates_are_one_slot_and_zsts_none() {
        assert_eq!(
            slots(ParamKind::Scalar { size: 4 }).as_slice(),
            &[Slot::Scalar { size: 4 }]
        );
        assert_eq!(
            slots(ParamKind::Aggregate { size: 12, align: 4 }).as_slice(),
            &[Slot::Aggregate { size: 12, align: 4 }]
        );
        assert!(slots(ParamKind::ZeroSized).as_slice().is_empty());
    }

    #[test]
    fn signature_concatenates_in_order() {
        let sig = [
            ParamKind::Slice,
            ParamKind::ZeroSized,
            ParamKind::Scalar { size: 8 },
            ParamKind::Slice,
        ];
        let slots: [Slot; 5] = [
            Slot::GlobalPointer,
            Slot::Length,
            Slot::Scalar { size: 8 },
            Slot::GlobalPointer,
            Slot::Length,
        ];
        assert!(signature_slots(&sig).eq(slots));
        assert_eq!(signature_slots(&sig).map(Slot::size).sum::<u32>(), 40);
    }
}

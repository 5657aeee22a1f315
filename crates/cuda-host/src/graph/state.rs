//! What a graph owns: the [`GraphState`] trait that shows a [`StateVisitor`] every buffer of
//! the state, so that the graph can check its recorded work stays inside them and order each
//! replay around their other uses.

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, HostSlice, PinnedHostSlice};

use crate::graph::recording::Access;
use crate::param::ByValue;

/// What a graph owns: every device buffer and pinned host buffer that its recorded work uses.
///
/// Implemented for `CudaSlice<T>`, `PinnedHostSlice<T>`, `&CudaSlice<T>` (read-only),
/// `&mut CudaSlice<T>`, tuples, arrays, `Vec`, `Option` and `Box` of states, scalars and
/// [`ByValue`]. For a struct of your own, show the visitor each field that holds buffers:
///
/// ```ignore
/// impl GraphState for Pipeline {
///     fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
///         self.input.visit(visitor);
///         self.output.visit(visitor);
///     }
/// }
/// ```
///
/// A parameter struct that holds no buffers goes in the state as [`ByValue`]`(params)`.
///
/// Leaving a buffer out is safe: the graph then refuses work that touches it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be part of a graph's state",
    label = "not a `GraphState`",
    note = "a graph's state is made of buffers (`CudaSlice`, `PinnedHostSlice`), scalars, and \
            tuples, arrays and `Vec`s of them; put a parameter struct in as \
            `ByValue(params)`, or implement `GraphState` for it"
)]
pub trait GraphState {
    /// Shows `visitor` every buffer this value holds.
    fn visit(&mut self, visitor: &mut StateVisitor<'_>);
}

/// Collects the memory a graph's state holds, and orders each buffer's uses around a replay
/// (cudarc's event tracking, on the replay's stream).
pub struct StateVisitor<'v> {
    stream: &'v CudaStream,
    held: Vec<Access>,
}

impl<'v> StateVisitor<'v> {
    /// A visitor that locates the state's buffers for `stream`.
    pub(super) fn new(stream: &'v CudaStream) -> Self {
        StateVisitor {
            stream,
            held: Vec::new(),
        }
    }

    /// The memory the visited buffers hold.
    pub(super) fn into_held(self) -> Vec<Access> {
        self.held
    }

    /// A device buffer the graph may read and write.
    pub fn device<T>(&mut self, buffer: &mut CudaSlice<T>) {
        let bytes = buffer.num_bytes();
        let (ptr, _recorded) = buffer.device_ptr_mut(self.stream);
        self.held.push(Access::device(ptr, bytes, true));
    }

    /// A device buffer the graph may only read.
    pub fn device_read_only<T>(&mut self, buffer: &CudaSlice<T>) {
        let bytes = buffer.num_bytes();
        let (ptr, _recorded) = buffer.device_ptr(self.stream);
        self.held.push(Access::device(ptr, bytes, false));
    }

    /// Pinned host memory that recorded copies read or write.
    pub fn host<T>(&mut self, buffer: &mut PinnedHostSlice<T>) {
        // SAFETY: only the address is kept; the guard records the replay's use of the buffer
        // on the replay's stream, which host accesses through cudarc then wait for.
        let (host, _recorded) = unsafe { buffer.stream_synced_mut_slice(self.stream) };
        let bytes = std::mem::size_of_val(host);
        self.held
            .push(Access::host(host.as_ptr().cast(), bytes, true));
    }
}

impl<T> GraphState for CudaSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.device(self);
    }
}

impl<T> GraphState for &mut CudaSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.device(self);
    }
}

impl<T> GraphState for &CudaSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.device_read_only(self);
    }
}

impl<T> GraphState for PinnedHostSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.host(self);
    }
}

impl<S: GraphState> GraphState for Vec<S> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        self.iter_mut().for_each(|s| s.visit(visitor));
    }
}

impl<S: GraphState, const N: usize> GraphState for [S; N] {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        self.iter_mut().for_each(|s| s.visit(visitor));
    }
}

impl<S: GraphState> GraphState for Option<S> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        if let Some(s) = self {
            s.visit(visitor);
        }
    }
}

impl<S: GraphState + ?Sized> GraphState for Box<S> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        (**self).visit(visitor);
    }
}

/// A parameter passed by value holds no buffers.
impl<T> GraphState for ByValue<T> {
    fn visit(&mut self, _: &mut StateVisitor<'_>) {}
}

macro_rules! no_buffers {
    ($($ty:ty),*) => {$(
        /// A scalar parameter holds no buffers.
        impl GraphState for $ty {
            fn visit(&mut self, _: &mut StateVisitor<'_>) {}
        }
    )*};
}

no_buffers!(
    (),
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    bool,
    char
);

macro_rules! tuple_states {
    ($(($($name:ident),+)),*) => {$(
        impl<$($name: GraphState),+> GraphState for ($($name,)+) {
            #[allow(non_snake_case)]
            fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
                let ($($name,)+) = self;
                $($name.visit(visitor);)+
            }
        }
    )*};
}

tuple_states!(
    (A),
    (A, B),
    (A, B, C),
    (A, B, C, D),
    (A, B, C, D, E),
    (A, B, C, D, E, F),
    (A, B, C, D, E, F, G),
    (A, B, C, D, E, F, G, H)
);

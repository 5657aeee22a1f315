//! What an intrinsic does when it is reached outside device code.

/// Panics with a message naming the intrinsic. Every intrinsic stub's body is a call to this,
/// so that host code calling one by mistake fails loudly.
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn host_call(path: &'static str) -> ! {
    panic!(
        "`{path}` is a GPU intrinsic: it only has a meaning in device code compiled by \
         cuda-oxide (a #[kernel] and what it calls), not on the host"
    )
}

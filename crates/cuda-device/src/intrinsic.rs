//! What an intrinsic does when it is reached outside device code, and how stubs are declared.

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

/// Declares intrinsic stubs of the module `$module` (its path inside `cuda_device`): functions
/// whose calls the compiler replaces by the GPU instruction that `dialect_nvvm::table`
/// declares for `cuda_device::<module>::<name>`. `#[inline(never)]` keeps every call a call.
macro_rules! stubs {
    ($module:literal; $(
        $(#[$doc:meta])*
        pub fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
    )*) => {$(
        $(#[$doc])*
        #[inline(never)]
        pub fn $name($($arg: $ty),*) $(-> $ret)? {
            let _ = ($($arg,)*);
            $crate::intrinsic::host_call(concat!("cuda_device::", $module, "::", stringify!($name)))
        }
    )*};
}
pub(crate) use stubs;

/// Like [stubs], for intrinsics that are `unsafe` to call (they take raw addresses).
macro_rules! unsafe_stubs {
    ($module:literal; $(
        $(#[$doc:meta])*
        pub unsafe fn $name:ident($($arg:ident: $ty:ty),*) $(-> $ret:ty)?;
    )*) => {$(
        $(#[$doc])*
        #[inline(never)]
        pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
            let _ = ($($arg,)*);
            $crate::intrinsic::host_call(concat!("cuda_device::", $module, "::", stringify!($name)))
        }
    )*};
}
pub(crate) use unsafe_stubs;

//! The macros' accepted inputs, and their errors on misuse.

#[test]
fn compile_fail() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

/// Cases whose message shows the kernel's reserved name, whose tag hashes the crate name that
/// trybuild gives a test (`trybuild000`, `trybuild001`, ... in the order of a run): alone in
/// their run, each is `trybuild000`, whatever other cases are added.
#[test]
fn compile_fail_alone() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui-alone/launch_bounds_const_out_of_range.rs");
}

/// The same for `#[cluster_dims]` with a named constant (its own run, for the same reason).
#[test]
fn compile_fail_alone_cluster() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui-alone-cluster/cluster_dims_const_zero.rs");
}

mod accepted {
    use cuda_device::{
        DisjointSlice, block_dims, cluster_dims, device, gpu_printf, kernel, launch_bounds, thread,
    };

    #[kernel]
    #[block_dims(32, 8)]
    pub fn tiled(a: &[f32]) {
        let _ = a;
    }

    const ROWS: u32 = 8;

    #[block_dims(32, ROWS)]
    #[kernel]
    pub fn tiled_by_constant(a: &[f32]) {
        let _ = a;
    }

    #[kernel]
    #[cluster_dims(2)]
    pub fn paired(a: &[f32]) {
        let _ = a;
    }

    const PAIR: u32 = 2;

    #[cluster_dims(PAIR, 2, 2)]
    #[kernel]
    #[launch_bounds(128)]
    pub fn clustered_by_constants(a: &[f32]) {
        let _ = a;
    }

    #[kernel]
    pub fn plain(a: &[f32], mut out: DisjointSlice<f32>) {
        if let Some(slot) = out.get_mut(thread::index_1d()) {
            *slot = a[0];
        }
    }

    #[kernel]
    #[allow(clippy::needless_lifetimes, clippy::unused_unit)]
    pub fn unit_return_and_lifetime<'a>(a: &'a [u32], factor: u32) -> () {
        let _ = (a, factor);
    }

    #[kernel]
    #[launch_bounds(256)]
    pub fn bounded(a: &[f32]) {
        let _ = a;
    }

    const BLOCK: u32 = 128;

    #[launch_bounds(BLOCK, 2)]
    #[kernel]
    pub fn bounded_by_constants(a: &[f32]) {
        let _ = a;
    }

    #[kernel]
    pub fn prints(a: &[f32], n: u32, flag: bool) {
        let i = thread::index_1d().get();
        let x = a[i];
        gpu_printf!(
            "thread {} of {n}: x = {:.3} {:>8} {:#x} {:e} {}\n",
            i,
            x,
            "lit",
            n,
            x,
            flag
        );
        gpu_printf!(
            "{0} {0:o} {1:p} {{literal braces}} 100%\n",
            -7i16,
            a.as_ptr()
        );
        gpu_printf!("no arguments\n");
    }

    #[test]
    #[should_panic(expected = "`vprintf` is a device function defined outside Rust")]
    fn printing_on_the_host_says_it_is_device_only() {
        cuda_device::gpu_printf!("{}\n", 1u8);
    }

    #[device]
    pub fn twice(x: u32) -> u32 {
        2 * x
    }

    #[device]
    pub fn generic_max<T: PartialOrd>(a: T, b: T) -> T {
        if a > b { a } else { b }
    }

    #[test]
    fn device_functions_keep_their_names_for_callers() {
        assert_eq!(twice(21), 42);
        assert_eq!(generic_max(3.5f32, -1.0), 3.5);
    }
}

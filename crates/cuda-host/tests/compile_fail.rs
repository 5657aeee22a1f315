//! Launch arguments are type-checked against the kernel's signature at compile time.

#[test]
fn wrong_launch_arguments_do_not_compile() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

use cuda_device::kernel;

#[kernel]
pub struct NotAFunction;

fn main() {}

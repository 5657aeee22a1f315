use cuda_device::kernel;

#[kernel(threads = 256)]
pub fn k(x: u32) {
    let _ = x;
}

fn main() {}

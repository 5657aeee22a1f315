use cuda_device::kernel;

#[kernel]
#[unsafe(no_mangle)]
pub fn k(x: u32) {
    let _ = x;
}

fn main() {}

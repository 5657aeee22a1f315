use cuda_device::kernel;

#[kernel]
pub extern "C" fn k(x: u32) {
    let _ = x;
}

fn main() {}

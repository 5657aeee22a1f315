use cuda_device::kernel;

#[kernel]
pub fn tile<const N: usize>(a: &[f32]) {
    let _ = a;
}

fn main() {}

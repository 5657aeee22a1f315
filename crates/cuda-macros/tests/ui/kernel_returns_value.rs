use cuda_device::kernel;

#[kernel]
pub fn sum(a: &[f32]) -> f32 {
    a[0]
}

fn main() {}

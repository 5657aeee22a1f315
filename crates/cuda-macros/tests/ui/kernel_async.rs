use cuda_device::kernel;

#[kernel]
pub async fn later(a: &[f32]) {
    let _ = a;
}

fn main() {}

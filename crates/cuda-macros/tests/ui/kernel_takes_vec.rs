use cuda_device::kernel;

#[kernel]
pub fn total(values: Vec<f32>, scale: f32) {
    let _ = (values, scale);
}

fn main() {}

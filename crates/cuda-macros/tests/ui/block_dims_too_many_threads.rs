use cuda_device::{block_dims, kernel};

#[kernel]
#[block_dims(64, 32)]
pub fn too_big(a: &[f32]) {
    let _ = a;
}

fn main() {}

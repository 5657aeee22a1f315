use cuda_device::{cluster_dims, kernel};

#[kernel]
#[cluster_dims(4, 4)]
pub fn too_big(a: &[f32]) {
    let _ = a;
}

fn main() {}

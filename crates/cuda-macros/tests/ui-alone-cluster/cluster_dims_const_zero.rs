use cuda_device::{cluster_dims, kernel};

const SIDE: u32 = 0;

#[kernel]
#[cluster_dims(2, SIDE)]
pub fn empty(a: &[f32]) {
    let _ = a;
}

fn main() {}

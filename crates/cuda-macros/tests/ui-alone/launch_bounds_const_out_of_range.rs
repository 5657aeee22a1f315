use cuda_device::{kernel, launch_bounds};

const BLOCK: u32 = 4096;

#[kernel]
#[launch_bounds(BLOCK)]
pub fn too_big(a: &[f32]) {
    let _ = a;
}

fn main() {}

use cuda_device::{kernel, launch_bounds};

#[kernel]
#[launch_bounds(128, 0)]
pub fn no_blocks(a: &[f32]) {
    let _ = a;
}

fn main() {}

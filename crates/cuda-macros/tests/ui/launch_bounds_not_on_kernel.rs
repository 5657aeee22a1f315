use cuda_device::launch_bounds;

#[launch_bounds(256)]
pub fn helper(x: u32) -> u32 {
    x + 1
}

fn main() {}

use cuda_device::device;

#[device]
pub async fn helper(x: u32) -> u32 {
    x
}

fn main() {}

use cuda_device::kernel;

struct Launcher;

impl Launcher {
    #[kernel]
    pub fn run(&self, a: &[f32]) {
        let _ = a;
    }
}

fn main() {}

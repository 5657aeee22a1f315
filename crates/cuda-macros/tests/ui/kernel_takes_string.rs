#[cuda_macros::cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel};

    #[kernel]
    pub fn lengths(words: &[String], mut out: DisjointSlice<u32>) {
        let _ = (words, &mut out);
    }
}

fn main() {}

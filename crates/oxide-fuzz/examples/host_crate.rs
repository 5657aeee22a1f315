//! Writes a host-only crate running the programs of a seed range on the CPU (debug build:
//! overflow checks on), for checking the generator quickly without the backend:
//! `cargo run -p oxide-fuzz --example host_crate -- DIR FIRST COUNT`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let first: u64 = args[2].parse().unwrap();
    let count: u64 = args[3].parse().unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"fuzz-host\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/fz.rs"), oxide_fuzz::SUPPORT).unwrap();
    let mut main = String::from("#![allow(warnings)]\nmod fz;\n");
    let mut calls = String::new();
    for seed in first..first + count {
        let p = oxide_fuzz::generate(seed);
        std::fs::write(dir.join(format!("src/{}.rs", p.module_name())), p.render()).unwrap();
        main.push_str(&format!("mod {};\n", p.module_name()));
        calls.push_str(&format!(
            "    let r = std::panic::catch_unwind(|| {{ let mut h = 0u64; for i in 0..256 {{ h ^= {}::run(oxide_fuzz_input(i)); }} h }});\n    println!(\"{seed} {{:?}}\", r);\n",
            p.module_name()
        ));
    }
    main.push_str("fn oxide_fuzz_input(i: u64) -> u64 { i.wrapping_mul(0x9e3779b97f4a7c15) ^ (i << 60) }\nfn main() {\n");
    main.push_str(&calls);
    main.push_str("}\n");
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
}

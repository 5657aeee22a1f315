//! What an example's `Cargo.toml` tells cargo oxide in its `[package.metadata.cuda-oxide]`
//! section: the architecture it needs, or why it is left out of the bundle.

use std::path::Path;

/// The `pending = "..."` reason of an example's `[package.metadata.cuda-oxide]`: an example
/// written for a compiler feature that has not landed yet, left out of the bundle.
pub fn pending_reason(manifest: &Path) -> Option<String> {
    metadata_value(manifest, "pending")
}

/// The `cpu = "..."` of an example's `[package.metadata.cuda-oxide]`: why it does not run on
/// the CPU device (an operation it cannot run yet); the bundle's runner skips it there,
/// printing the reason.
pub fn cpu_reason(manifest: &Path) -> Option<String> {
    metadata_value(manifest, "cpu")
}

/// The `arch = "sm_XX"` of an example's `[package.metadata.cuda-oxide]`: the architecture it
/// needs (`sm_90a` for `wgmma`), which the bundle builds it for whatever `--arch` says.
pub fn example_arch(manifest: &Path) -> Option<String> {
    metadata_value(manifest, "arch")
}

/// The string value of `key` in the `[package.metadata.cuda-oxide]` section of `manifest`.
fn metadata_value(manifest: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let mut in_section = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[package.metadata.cuda-oxide]";
        } else if in_section
            && let Some(value) = line.strip_prefix(key)
            && let Some(value) = value.trim_start().strip_prefix('=')
        {
            return Some(value.trim().trim_matches('"').to_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_examples_say_why() {
        let dir = std::env::temp_dir().join(format!("oxide-pending-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"p\"\n\n[package.metadata.cuda-oxide]\npending = \"needs X\"\n",
        )
        .unwrap();
        assert_eq!(pending_reason(&manifest).as_deref(), Some("needs X"));
        std::fs::write(&manifest, "[package]\nname = \"p\"\npending = \"no\"\n").unwrap();
        assert_eq!(pending_reason(&manifest), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn examples_may_name_their_architecture() {
        let dir = std::env::temp_dir().join(format!("oxide-arch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\nname = \"w\"\n\n[package.metadata.cuda-oxide]\n# wgmma\narch = \"sm_90a\"\n",
        )
        .unwrap();
        assert_eq!(example_arch(&manifest).as_deref(), Some("sm_90a"));
        assert_eq!(pending_reason(&manifest), None);
        std::fs::write(&manifest, "[package]\nname = \"w\"\n").unwrap();
        assert_eq!(example_arch(&manifest), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

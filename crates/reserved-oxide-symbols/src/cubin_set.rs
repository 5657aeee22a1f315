//! What the cubin symbol holds when a build targets several architectures: one cubin per
//! architecture, in a small table the codegen backend writes and `cuda-host` reads.
//!
//! A build for one architecture embeds its cubin as it is (an ELF image); a build for several
//! (`--arch sm_80,sm_86,sm_90`) embeds a *set*:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | [`MAGIC`] |
//! | 8 | the number of cubins, `u64` little-endian |
//! | 32 each | an entry: the architecture (`sm_86`, NUL-padded to 16 bytes), the image's offset and length from the set's start (`u64` little-endian each) |
//! | ... | the images, each at an offset that is a multiple of 16 |
//!
//! The set itself is 16-byte aligned in the binary, so every image is too.

/// The first bytes of a cubin set (an ELF image starts with `\x7fELF`).
pub const MAGIC: &[u8; 8] = b"OXCUBINS";

/// The room for an architecture's name in an entry.
const ARCH_LEN: usize = 16;
const ENTRY_LEN: usize = ARCH_LEN + 16;
const HEADER_LEN: usize = 16;

/// The set of `images`, each `(architecture, cubin)`.
///
/// # Panics
/// If an architecture's name is longer than 16 bytes (a programming error: names are `sm_XXy`).
pub fn encode(images: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(images.len() as u64).to_le_bytes());
    let mut offset = align16(HEADER_LEN + ENTRY_LEN * images.len());
    let mut offsets = Vec::with_capacity(images.len());
    for (arch, image) in images {
        assert!(
            arch.len() <= ARCH_LEN,
            "architecture name `{arch}` too long"
        );
        let mut name = [0u8; ARCH_LEN];
        name[..arch.len()].copy_from_slice(arch.as_bytes());
        out.extend_from_slice(&name);
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        out.extend_from_slice(&(image.len() as u64).to_le_bytes());
        offsets.push(offset);
        offset = align16(offset + image.len());
    }
    for ((_, image), offset) in images.iter().zip(offsets) {
        out.resize(offset, 0);
        out.extend_from_slice(image);
    }
    out
}

/// The `(architecture, cubin)` entries of a set; `None` when `bytes` is not a set (a lone
/// cubin, or nothing) or is damaged.
pub fn decode(bytes: &[u8]) -> Option<Vec<(&str, &[u8])>> {
    let rest = bytes.strip_prefix(MAGIC.as_slice())?;
    let count = usize::try_from(u64::from_le_bytes(rest.get(..8)?.try_into().ok()?)).ok()?;
    let table = bytes.get(HEADER_LEN..HEADER_LEN.checked_add(count.checked_mul(ENTRY_LEN)?)?)?;
    table
        .chunks_exact(ENTRY_LEN)
        .map(|entry| {
            let name = &entry[..ARCH_LEN];
            let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(ARCH_LEN)];
            let arch = std::str::from_utf8(name).ok()?;
            let word = |at: usize| -> Option<usize> {
                usize::try_from(u64::from_le_bytes(entry[at..at + 8].try_into().ok()?)).ok()
            };
            let (offset, len) = (word(ARCH_LEN)?, word(ARCH_LEN + 8)?);
            Some((arch, bytes.get(offset..offset.checked_add(len)?)?))
        })
        .collect()
}

fn align16(n: usize) -> usize {
    n.div_ceil(16) * 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_round_trip_with_aligned_images() {
        let a = [0x7f, b'E', b'L', b'F', 1, 2, 3];
        let b = [9u8; 40];
        let set = encode(&[("sm_80", &a), ("sm_90a", &b)]);
        let entries = decode(&set).unwrap();
        assert_eq!(entries, vec![("sm_80", &a[..]), ("sm_90a", &b[..])]);
        for (_, image) in &entries {
            let offset = image.as_ptr() as usize - set.as_ptr() as usize;
            assert_eq!(offset % 16, 0);
        }
    }

    #[test]
    fn a_lone_cubin_or_damage_is_not_a_set() {
        assert_eq!(decode(b"\x7fELF........"), None);
        assert_eq!(decode(b""), None);
        let set = encode(&[("sm_80", &[1, 2, 3])]);
        assert_eq!(decode(&set[..set.len() - 1]), None, "an image cut short");
        assert_eq!(decode(&set[..20]), None, "a table cut short");
        let mut huge = set.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(decode(&huge), None, "an impossible count");
    }
}

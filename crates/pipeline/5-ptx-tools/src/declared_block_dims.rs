//! Block-size reads of a kernel with a declared block shape become the declared sides.
//!
//! A kernel declared `#[block_dims(x, y, z)]` has PTX `.reqntid x, y, z`: the driver refuses
//! to launch it with any other block shape, so `%ntid.x` is `x` in every thread of every launch.
//! The importer already writes the constants for the kernel's own `blockDim` reads
//! (`mir-importer`'s launch shapes), but not inside the functions it calls
//! (`cuda_device::thread::index_1d` reads `%ntid.x`): those are compiled once for every caller,
//! and LLVM, which inlines them into the kernel, takes `.reqntid` only as an upper bound of
//! `%ntid`. After `llc`, [`fold_declared_block_dims`] turns each remaining
//! `mov.u32 %r, %ntid.x` of such an entry into `mov.u32 %r, x`; ptxas then folds the constant
//! into the index arithmetic and drops the constant-bank load it would make of the block size
//! (on the H100: scan 1.003 → 1.022, stencil 0.988 → 0.996, reduce 0.980 → 0.982 of CUDA C++).

use crate::ptx_text::{code, rewrite_bodies, rewrite_lines};

/// `ptx` with the `%ntid` reads of every entry that declares `.reqntid` replaced by the
/// declared sides, and how many were.
pub fn fold_declared_block_dims(ptx: &str) -> (String, usize) {
    let mut total = 0;
    let out = rewrite_bodies(ptx, |header, body| {
        let sides = header.iter().find_map(|line| reqntid(code(line)))?;
        let (text, folded) = rewrite_lines(body, |line| block_size_read(line, sides))?;
        total += folded;
        Some(text)
    });
    (out, total)
}

/// The sides of a `.reqntid x[, y[, z]]` directive (missing ones are 1).
fn reqntid(line: &str) -> Option<[u32; 3]> {
    let values = line.strip_prefix(".reqntid")?;
    let mut sides = [1u32; 3];
    for (side, value) in sides.iter_mut().zip(values.split(',')) {
        *side = value.trim().parse().ok()?;
    }
    Some(sides)
}

/// `line` with its `%ntid.x/y/z` source replaced by the side, when it is a `mov.u32` of one.
fn block_size_read(line: &str, sides: [u32; 3]) -> Option<String> {
    let instruction = code(line);
    let rest = instruction
        .strip_prefix("mov.u32")
        .or_else(|| instruction.strip_prefix("mov.b32"))?;
    let (destination, source) = rest.trim().trim_end_matches(';').split_once(',')?;
    let side = match source.trim() {
        "%ntid.x" => sides[0],
        "%ntid.y" => sides[1],
        "%ntid.z" => sides[2],
        _ => return None,
    };
    let indent = &line[..line.len() - line.trim_start().len()];
    Some(format!(
        "{indent}mov.u32 \t{}, {side};\n",
        destination.trim()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_size_reads_of_declared_entries_become_constants() {
        let entry = |name: &str, directive: &str| {
            format!(
                ".visible .entry {name}(\n\t.param .u64 p\n)\n{directive}{{\n\
                 \tmov.u32 \t%r1, %ntid.x;\n\tmov.u32 \t%r2, %ntid.y; // note\n\
                 \tmov.u32 \t%r3, %ntid.z;\n\tmov.u32 \t%r4, %tid.x;\n\tret;\n}}\n"
            )
        };
        let ptx = format!(
            "{}{}{}",
            entry(
                "declared",
                ".reqntid 32, 8, 1                       // @declared\n"
            ),
            entry("one_side", ".reqntid 256\n"),
            entry("undeclared", ""),
        );
        let (out, folded) = fold_declared_block_dims(&ptx);
        assert_eq!(folded, 6, "{out}");
        let body = |name: &str| {
            let start = out.find(&format!(".entry {name}(")).unwrap();
            out[start..].split("\n}\n").next().unwrap().to_string()
        };
        let declared = body("declared");
        for expected in ["%r1, 32;", "%r2, 8;", "%r3, 1;", "%r4, %tid.x;"] {
            assert!(declared.contains(expected), "{expected}: {declared}");
        }
        let one_side = body("one_side");
        assert!(
            one_side.contains("%r1, 256;") && one_side.contains("%r2, 1;"),
            "{one_side}"
        );
        assert_eq!(body("undeclared").matches("%ntid").count(), 3);
    }

    #[test]
    fn directives() {
        assert_eq!(reqntid(".reqntid 32, 8, 1"), Some([32, 8, 1]));
        assert_eq!(reqntid(".reqntid 128"), Some([128, 1, 1]));
        assert_eq!(reqntid(".maxntid 128, 1, 1"), None);
        assert_eq!(reqntid(".reqntid x"), None);
    }
}

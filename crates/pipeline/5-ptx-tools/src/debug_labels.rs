//! The debug-information labels `llc` writes that nothing refers to, removed from its PTX.

use std::collections::HashMap;

use crate::ptx_text::{label_definition, names};

/// `ptx` without the labels that `llc` writes for debug information (`$L__tmpN`,
/// `$L__func_beginN`, `$L__func_endN`) where nothing refers to them, as with
/// [DeviceDebug::Lines], which writes no DWARF sections. ptxas treats every label as a possible
/// branch target: such labels split its basic blocks and change the machine code (seen in 7 of
/// the 25 example modules), while `.loc` lines alone do not. Without them the SASS is that of
/// a build without line info.
pub fn remove_unreferenced_debug_labels(ptx: &str) -> String {
    const PREFIXES: [&str; 3] = ["$L__tmp", "$L__func_begin", "$L__func_end"];
    let is_debug_label = |name: &str| {
        PREFIXES.iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
    };
    let mut mentions: HashMap<&str, usize> = HashMap::new();
    for name in ptx.lines().flat_map(names) {
        *mentions.entry(name).or_default() += 1;
    }
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        match label_definition(line) {
            // Its definition is the one mention of it.
            Some(label) if is_debug_label(label) && mentions.get(label) == Some(&1) => {}
            _ => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn unreferenced_debug_labels_go_and_the_rest_stays() {
        let ptx = "\
$L__func_begin0:
\t.loc\t1 13 0
$L__tmp0:
\tld.param.b64 \t%rd1, [k_param_0];
$L__BB0_2:
\t@%p1 bra \t$L__BB0_2;
$L__tmp1:
$L__func_end0:
\t.section\t.debug_info\t{ .b64 $L__func_begin0 .b64 $L__func_end0 }
";
        let out = super::remove_unreferenced_debug_labels(ptx);
        assert!(
            !out.contains("$L__tmp0:") && !out.contains("$L__tmp1:"),
            "{out}"
        );
        // Referenced (here by a DWARF section) or a branch target: kept.
        assert!(out.contains("$L__func_begin0:\n") && out.contains("$L__func_end0:\n"));
        assert!(out.contains("$L__BB0_2:\n"));
        assert!(out.contains("\t.loc\t1 13 0\n"));
        assert_eq!(out.lines().count(), ptx.lines().count() - 2);
    }
}

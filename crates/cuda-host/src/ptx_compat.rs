//! Why a GPU or driver refuses a PTX module, read from the module's header: `.target sm_XX`
//! against the GPU's compute capability, `.version X.Y` (the PTX ISA) against the newest ISA
//! the driver's CUDA version reads. Used only after the driver has refused a module, to turn
//! its error code into a message that names both sides.

use crate::version::{CudaVersion, PtxIsa};

/// A GPU architecture as PTX names it: `sm_90`, or with a suffix, `sm_90a` (only that exact
/// GPU) or `sm_100f` (that family: same major version).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxArch {
    /// The compute capability, `(9, 0)` for `sm_90`.
    pub capability: (u32, u32),
    /// `a`, `f` or none.
    pub suffix: Option<char>,
}

impl std::fmt::Display for PtxArch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (major, minor) = self.capability;
        write!(f, "sm_{major}{minor}")?;
        if let Some(suffix) = self.suffix {
            write!(f, "{suffix}")?;
        }
        Ok(())
    }
}

impl PtxArch {
    /// `sm_90`, `sm_90a`, `sm_100f`, `sm_120`: the last digit is the minor version.
    pub fn parse(name: &str) -> Option<PtxArch> {
        let rest = name.strip_prefix("sm_")?;
        let (digits, suffix) = match rest.char_indices().last()? {
            (i, c @ ('a' | 'f')) => (&rest[..i], Some(c)),
            _ => (rest, None),
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        Some(PtxArch {
            capability: (major.parse().ok()?, minor.parse().ok()?),
            suffix,
        })
    }

    /// Whether a GPU of compute capability `gpu` runs a cubin built for this architecture:
    /// machine code runs on GPUs of the same major version and a minor one at least as new
    /// (`a` code on that exact GPU only).
    pub fn cubin_runs_on(&self, gpu: (u32, u32)) -> bool {
        match self.suffix {
            Some('a') => gpu == self.capability,
            _ => gpu.0 == self.capability.0 && gpu.1 >= self.capability.1,
        }
    }

    /// Whether a GPU of compute capability `gpu` runs PTX for this architecture: newer GPUs
    /// run plain `sm_XY` PTX; `a` PTX runs on that exact GPU only, `f` PTX on its family.
    pub fn runs_on(&self, gpu: (u32, u32)) -> bool {
        match self.suffix {
            Some('a') => gpu == self.capability,
            Some('f') => gpu.0 == self.capability.0 && gpu.1 >= self.capability.1,
            _ => gpu >= self.capability,
        }
    }
}

/// What a module's header asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxHeader {
    pub isa: PtxIsa,
    pub target: PtxArch,
}

impl PtxHeader {
    /// The `.version` and `.target` directives (the first target, which names the
    /// architecture; later ones are options such as `texmode_independent`).
    pub fn parse(ptx: &str) -> Option<PtxHeader> {
        let mut isa = None;
        let mut target = None;
        for line in ptx.lines().map(str::trim) {
            if let Some(version) = line.strip_prefix(".version") {
                let (major, minor) = version.trim().split_once('.')?;
                isa = Some(PtxIsa {
                    major: major.parse().ok()?,
                    minor: minor.trim().parse().ok()?,
                });
            } else if let Some(targets) = line.strip_prefix(".target") {
                let first = targets.split(',').next()?.trim();
                target = Some(PtxArch::parse(first)?);
            }
            if isa.is_some() && target.is_some() {
                break;
            }
        }
        Some(PtxHeader {
            isa: isa?,
            target: target?,
        })
    }
}

/// The first CUDA release of each PTX ISA version from 7.0 on (NVIDIA's PTX release history;
/// CUDA 12.6 brought no new ISA). A driver loads PTX of every ISA its CUDA version has reached.
const FIRST_CUDA_OF_ISA: &[((u32, u32), i32)] = &[
    ((7, 0), 11000),
    ((7, 1), 11010),
    ((7, 2), 11020),
    ((7, 3), 11030),
    ((7, 4), 11040),
    ((7, 5), 11050),
    ((7, 6), 11060),
    ((7, 7), 11070),
    ((7, 8), 11080),
    ((8, 0), 12000),
    ((8, 1), 12010),
    ((8, 2), 12020),
    ((8, 3), 12030),
    ((8, 4), 12040),
    ((8, 5), 12050),
    ((8, 6), 12070),
    ((8, 7), 12080),
    ((8, 8), 12090),
    ((9, 0), 13000),
    ((9, 1), 13010),
];

/// The CUDA version a driver needs to load PTX of `isa`: from the table, or for ISA 9.x
/// beyond it CUDA 13.x (the numbering has matched since CUDA 13.0). `None` for an ISA too old
/// or too new to say.
pub fn first_cuda_for(isa: PtxIsa) -> Option<CudaVersion> {
    FIRST_CUDA_OF_ISA
        .iter()
        .find(|(known, _)| *known == (isa.major, isa.minor))
        .map(|&(_, cuda)| CudaVersion(cuda))
        .or_else(|| (isa.major == 9).then(|| CudaVersion(13000 + 10 * isa.minor as i32)))
}

/// The newest PTX ISA a driver of CUDA version `driver` reads, when the table knows it (a
/// driver newer than the table's last entry reads at least that entry, but how much more is
/// not known here).
pub fn newest_isa_for(driver: CudaVersion) -> Option<PtxIsa> {
    let newest_known = FIRST_CUDA_OF_ISA.last()?.1;
    if driver.0 > newest_known {
        return None;
    }
    FIRST_CUDA_OF_ISA
        .iter()
        .rev()
        .find(|&&(_, cuda)| cuda <= driver.0)
        .map(|&((major, minor), _)| PtxIsa { major, minor })
}

/// Why a refused module cannot run here, when its header shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mismatch {
    /// The PTX targets an architecture the GPU does not run.
    Arch { ptx: PtxArch, gpu: (u32, u32) },
    /// The PTX ISA is newer than the driver reads.
    Isa {
        ptx: PtxIsa,
        driver: CudaVersion,
        /// The first CUDA version that reads it, when known.
        needs: Option<CudaVersion>,
    },
}

/// What stops `ptx` from loading on a GPU of compute capability `gpu` with a driver of CUDA
/// version `driver`; `None` when its header explains nothing.
pub fn mismatch(
    ptx: &str,
    gpu: Option<(u32, u32)>,
    driver: Option<CudaVersion>,
) -> Option<Mismatch> {
    let header = PtxHeader::parse(ptx)?;
    if let Some(gpu) = gpu
        && !header.target.runs_on(gpu)
    {
        return Some(Mismatch::Arch {
            ptx: header.target,
            gpu,
        });
    }
    let driver = driver?;
    let needs = first_cuda_for(header.isa);
    let too_new = match needs {
        Some(needs) => needs > driver,
        None => newest_isa_for(driver).is_some_and(|newest| header.isa > newest),
    };
    too_new.then_some(Mismatch::Isa {
        ptx: header.isa,
        driver,
        needs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: (u32, u32) = (9, 0);

    fn ptx(version: &str, target: &str) -> String {
        format!(
            "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version {version}\n.target {target}\n\
             .address_size 64\n\n.visible .entry k()\n{{\n\tret;\n}}\n"
        )
    }

    #[test]
    fn architectures_parse_and_say_where_they_run() {
        let sm90 = PtxArch::parse("sm_90").unwrap();
        assert_eq!(sm90.capability, (9, 0));
        assert!(sm90.runs_on(H100) && sm90.runs_on((10, 0)) && !sm90.runs_on((8, 9)));
        let sm90a = PtxArch::parse("sm_90a").unwrap();
        assert!(sm90a.runs_on(H100) && !sm90a.runs_on((10, 0)));
        let sm100f = PtxArch::parse("sm_100f").unwrap();
        assert_eq!(sm100f.capability, (10, 0));
        assert!(sm100f.runs_on((10, 3)) && !sm100f.runs_on((12, 0)));
        assert_eq!(PtxArch::parse("sm_120").unwrap().capability, (12, 0));
        assert_eq!(PtxArch::parse("sm_100a").unwrap().to_string(), "sm_100a");
        for bad in ["sm_", "sm_9", "compute_90", "sm_9x"] {
            assert_eq!(PtxArch::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn headers_parse() {
        let header = PtxHeader::parse(&ptx("7.8", "sm_90")).unwrap();
        assert_eq!(header.isa, PtxIsa { major: 7, minor: 8 });
        assert_eq!(header.target.to_string(), "sm_90");
        let header = PtxHeader::parse(&ptx("8.6", "sm_100a, texmode_independent")).unwrap();
        assert_eq!(header.target.to_string(), "sm_100a");
        assert_eq!(PtxHeader::parse(".target sm_90\n"), None);
    }

    #[test]
    fn isa_and_cuda_versions_follow_nvidias_table() {
        let isa = |major, minor| PtxIsa { major, minor };
        assert_eq!(first_cuda_for(isa(7, 8)), Some(CudaVersion(11080)));
        assert_eq!(first_cuda_for(isa(8, 6)), Some(CudaVersion(12070)));
        assert_eq!(first_cuda_for(isa(9, 0)), Some(CudaVersion(13000)));
        assert_eq!(first_cuda_for(isa(9, 4)), Some(CudaVersion(13040)));
        assert_eq!(first_cuda_for(isa(6, 5)), None);
        assert_eq!(newest_isa_for(CudaVersion(12060)), Some(isa(8, 5)));
        assert_eq!(newest_isa_for(CudaVersion(12080)), Some(isa(8, 7)));
        assert_eq!(newest_isa_for(CudaVersion(13000)), Some(isa(9, 0)));
        assert_eq!(newest_isa_for(CudaVersion(13050)), None);
    }

    #[test]
    fn mismatches_name_both_sides() {
        // PTX for a newer GPU than the one here.
        assert_eq!(
            mismatch(&ptx("8.6", "sm_100"), Some(H100), Some(CudaVersion(13000))),
            Some(Mismatch::Arch {
                ptx: PtxArch::parse("sm_100").unwrap(),
                gpu: H100
            })
        );
        // PTX of an ISA newer than the driver reads.
        assert_eq!(
            mismatch(&ptx("9.0", "sm_90"), Some(H100), Some(CudaVersion(12080))),
            Some(Mismatch::Isa {
                ptx: PtxIsa { major: 9, minor: 0 },
                driver: CudaVersion(12080),
                needs: Some(CudaVersion(13000)),
            })
        );
        // Nothing in the header explains a refusal.
        assert_eq!(
            mismatch(&ptx("7.8", "sm_90"), Some(H100), Some(CudaVersion(13000))),
            None
        );
        assert_eq!(mismatch("garbage", Some(H100), None), None);
    }
}

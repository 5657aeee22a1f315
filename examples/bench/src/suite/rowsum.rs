use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg};

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let cols = 256;
    let rows = h.size(1 << 18, 1 << 12);
    let m = h.rng.vec(rows * cols, |r| r.f32_in(-1.0, 1.0));
    let expected = m
        .chunks(cols)
        .map(|row| row.iter().fold(0.0f32, |acc, v| acc + v))
        .collect();
    let m_d = h.upload(&m)?;
    let cfg = grid_1d(rows, 256)?;
    let (m_arg, cols_arg, rows_arg) = (h.ptr(&m_d), u32_arg(cols)?, u32_arg(rows)?);
    let spec = Spec {
        size: format!("{} x {cols} f32", count(rows)),
        work: Work::bytes_flops(4 * rows * cols + 4 * rows, rows * cols),
        out_len: rows,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Exact,
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |sums| ours.rowsum(stream, cfg, &m_d, cols as u32, sums),
        // SAFETY: rowsum.cu takes (const float*, unsigned int cols, float*, unsigned int rows)
        // with rows x cols inputs and rows outputs.
        |f, sums| unsafe { f.launch(stream, cfg, &[m_arg, cols_arg, ptr(stream, sums), rows_arg]) },
    )
}

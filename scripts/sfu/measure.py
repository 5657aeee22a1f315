"""Measures the special function unit's approximations on the GPU this runs on and writes the
tables and samples the CPU device reproduces them from (crates/cuda-cpu/sfu/, docs/cpu.md).

Run on a machine with an NVIDIA GPU, CuPy and NumPy:  python3 measure.py OUTDIR
Writes OUTDIR/tables.bin (each table: its outputs over its reduced domain, delta coded) and
OUTDIR/samples.txt.z (operations on every exponent, special values and random operands, with
the GPU's results: what the CPU device's tests check against).
"""
import struct
import sys
import zlib

import cupy as cp
import numpy as np

# Each operation once: its PTX text, and how many operands it has.
OPS = [
    ("rcp.approx.f32", 1), ("rcp.approx.ftz.f32", 1),
    ("rsqrt.approx.f32", 1), ("rsqrt.approx.ftz.f32", 1),
    ("ex2.approx.f32", 1), ("ex2.approx.ftz.f32", 1),
    ("lg2.approx.f32", 1), ("lg2.approx.ftz.f32", 1),
    ("div.approx.f32", 2), ("div.approx.ftz.f32", 2),
    ("rcp.approx.ftz.f64", 1), ("rsqrt.approx.f64", 1), ("rsqrt.approx.ftz.f64", 1),
]


def kernel_source():
    """One kernel per operation: out[i] = op(a[i], b[i]) on raw bits."""
    parts = []
    for index, (op, arity) in enumerate(OPS):
        wide = op.endswith("f64")
        bits, reg, conv, back = (
            ("unsigned long long", "d", "__longlong_as_double", "__double_as_longlong")
            if wide else ("unsigned", "f", "__uint_as_float", "__float_as_uint"))
        ty = "double" if wide else "float"
        operands = ", %2" if arity == 2 else ""
        inputs = f'"{reg}"(x), "{reg}"(y)' if arity == 2 else f'"{reg}"(x)'
        parts.append(f"""
extern "C" __global__ void op{index}(const {bits}* a, const {bits}* b, {bits}* out, long n) {{
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x; if (i >= n) return;
  {ty} x = {conv}(a[i]), y = {conv}(b[i]), r;
  asm("{op} %0, %1{operands};" : "={reg}"(r) : {inputs});
  (void)y; out[i] = {back}(r);
}}""")
    return "\n".join(parts)


MODULE = cp.RawModule(code=kernel_source(), options=("-arch=sm_90",))


def run(op, a, b=None):
    """The GPU's results of `op` on the bit patterns `a` (and `b`)."""
    index = [name for name, _ in OPS].index(op)
    dtype = np.uint64 if op.endswith("f64") else np.uint32
    da = cp.asarray(np.asarray(a, dtype))
    db = cp.asarray(np.asarray(a if b is None else b, dtype))
    out = cp.empty_like(da)
    n = da.size
    MODULE.get_function(f"op{index}")(((n + 255) // 256,), (256,), (da, db, out, np.int64(n)))
    return cp.asnumpy(out)


def f32_bits(values):
    return np.asarray(values, np.float64).astype(np.float32).view(np.uint32)


def tables():
    """name -> the 32-bit outputs over the table's domain (docs/cpu.md says which)."""
    m23 = np.arange(1 << 23, dtype=np.uint32)
    steps = m23.astype(np.float64) * 2.0 ** -23
    m20 = np.arange(1 << 20, dtype=np.uint64)
    return {
        "rcp": run("rcp.approx.ftz.f32", 0x3F800000 | m23),
        "rsqrt": run("rsqrt.approx.ftz.f32", 0x3F800000 + np.arange(1 << 24, dtype=np.uint32)),
        "ex2_up": run("ex2.approx.ftz.f32", f32_bits(steps)),
        "ex2_down": run("ex2.approx.ftz.f32", f32_bits(-steps)),
        "lg2": run("lg2.approx.ftz.f32", 0x3F800000 | m23),
        "lg2_half": run("lg2.approx.ftz.f32", 0x3F000000 | m23),
        "rcp64": (run("rcp.approx.ftz.f64", (0x3FF00000 | m20) << 32) >> 32).astype(np.uint32),
        "rsqrt64": (run("rsqrt.approx.ftz.f64",
                        (0x3FF00000 + np.arange(1 << 21, dtype=np.uint64)) << 32) >> 32
                    ).astype(np.uint32),
    }


def leb128(values):
    """Unsigned LEB128 of each value, concatenated."""
    if values.size == 0 or values.max() < 0x80:
        return values.astype(np.uint8).tobytes()
    out = bytearray()
    for v in values.tolist():
        while True:
            byte = v & 0x7F
            v >>= 7
            if v:
                out.append(byte | 0x80)
            else:
                out.append(byte)
                break
    return bytes(out)


def encode(table):
    """One table: monotonic, so its first value, its direction and the sizes of its steps."""
    steps = np.diff(table.astype(np.int64))
    falling = int(steps.sum() < 0)
    steps = -steps if falling else steps
    assert steps.min() >= 0, "a table the runtime reads is monotonic"
    return falling, int(table[0]), zlib.compress(leb128(steps), 9)


def samples(rng):
    """Lines `op a b result` (hex bits) over every exponent, special values and random data."""
    lines = []
    specials32 = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0x00000001,
                  0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x42FC0000,
                  0xC2FC0000, 0xC3160000, 0x43000000]
    specials64 = [0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48, 1, 0x3FF << 52,
                  (0x7FE << 52) | ((1 << 52) - 1), 0x000FFFFFFFFFFFFF]
    for op, arity in OPS:
        wide = op.endswith("f64")
        if wide:
            exps = np.repeat(np.arange(2048, dtype=np.uint64), 2)
            a = (exps << 52) | rng.integers(0, 1 << 52, exps.size, dtype=np.uint64)
            a |= rng.integers(0, 2, a.size, dtype=np.uint64) << 63
            a = np.concatenate([np.array(specials64, np.uint64), a])
            b = a
        else:
            exps = np.repeat(np.arange(256, dtype=np.uint32), 4)
            a = (exps << 23) | rng.integers(0, 1 << 23, exps.size, dtype=np.uint32)
            a |= rng.integers(0, 2, a.size, dtype=np.uint32) << 31
            if op.startswith("ex2"):
                a = np.concatenate([a, f32_bits(rng.uniform(-160, 130, 2000)),
                                    f32_bits(rng.uniform(-1, 1, 1000) * 2.0 ** -rng.integers(0, 40, 1000))])
            a = np.concatenate([np.array(specials32, np.uint32), a])
            b = rng.permutation(a)
        result = run(op, a, b if arity == 2 else None)
        width = 16 if wide else 8
        for x, y, r in zip(a.tolist(), b.tolist(), result.tolist()):
            second = f"{y:0{width}x}" if arity == 2 else "-"
            lines.append(f"{op} {x:0{width}x} {second} {r:0{width}x}")
    return zlib.compress(("\n".join(lines) + "\n").encode(), 9)


def main():
    out = sys.argv[1]
    blob = bytearray(b"OXSFU1\n")
    for name, table in tables().items():
        falling, first, data = encode(table)
        blob += struct.pack("<B", len(name)) + name.encode()
        blob += struct.pack("<IBII", table.size, falling, first, len(data)) + data
        print(name, table.size, "values,", len(data), "bytes", flush=True)
    open(f"{out}/tables.bin", "wb").write(blob)
    open(f"{out}/samples.txt.z", "wb").write(samples(np.random.default_rng(2026_11_29)))
    print("done")


if __name__ == "__main__":
    main()

//! libdevice on the CPU device: the NVVM intrinsics its functions call, defined for the host.
//!
//! libdevice is LLVM bitcode; apart from generic LLVM intrinsics it calls `llvm.nvvm.*`
//! intrinsics (roundings `fma.rn.d`, conversions `f2i.rz`, bit moves `d2i.hi`, approximations
//! `ex2.approx.ftz.f`, ...), inline PTX (`sub.rz.f32`, `rcp.approx.ftz.f32`, 128-bit carry
//! chains, [LIBDEVICE_ASM]) and `__nvvm_reflect`, none of which a host backend lowers. For the
//! CPU flavour the linked module's calls of them become calls of `__oxide_nvvm.<name>`
//! ([host_calls]) and [host_definitions] writes a module defining each one that is called, in
//! generic LLVM IR, from the operation's name and its declaration:
//!
//! - correctly rounded operations (`.rn`) are the IEEE operation (`fadd`, `llvm.fma`, ...):
//!   the same bits as the GPU;
//! - directed roundings (`.rm`, `.rp`, `.rz`) run the constrained form of the operation between
//!   two `llvm.set.rounding` calls, in a `strictfp` function of their own: also exact;
//! - `.ftz` flushes subnormal inputs and results to a zero of the same sign, as the GPU does;
//! - the approximations the GPU's special function unit computes (`rcp`, `rsqrt`, `ex2`,
//!   `lg2`, `div` `.approx` of `f32`, `rcp.approx.ftz.f64`, `rsqrt.approx.f64`: every
//!   [SfuOp]) call the CPU device's runtime, which gives the GPU's bits from tables measured
//!   on it (`cuda_cpu::sfu`), through the slot the exporter gives every image that calls
//!   libdevice ([kernel_abi::CPU_SFU_FUNCTION]). The rest (`sin`, `cos`, `sqrt`, `tanh`
//!   `.approx`, which libdevice calls only in its fast-math paths) are computed with the host's
//!   accurate functions: their documented error bounds hold, their last bits may differ;
//! - `__nvvm_reflect` answers as the GPU build's `opt` does ([crate::REFLECT_FLAGS]): no flush
//!   to zero, correctly rounded square roots, and `__CUDA_ARCH` of the build's target.
//!
//! An `llvm.nvvm.*` name or an inline PTX block outside this model is an error naming it, never
//! a guess.

use std::collections::BTreeSet;
use std::fmt::Write;

use kernel_abi::SfuOp;

/// The prefix the renamed NVVM intrinsics get (`__oxide_nvvm.fma.rn.d`).
pub const HOST_NVVM_PREFIX: &str = "__oxide_nvvm.";

/// What cannot be defined for the host.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NvvmOnCpuError {
    /// A libdevice function calls an NVVM intrinsic the CPU device does not model.
    #[error(
        "libdevice calls the NVVM intrinsic `llvm.nvvm.{0}`, which the CPU device does not \
         compute; the math function that needs it cannot run on the CPU"
    )]
    Unknown(String),
    /// A libdevice function holds inline PTX the CPU device does not model.
    #[error(
        "libdevice holds inline PTX the CPU device does not compute (`{0}`); the math \
         function that holds it cannot run on the CPU"
    )]
    UnknownAsm(String),
    /// The declaration of a renamed intrinsic was not found or not understood.
    #[error("cannot read the declaration of `llvm.nvvm.{0}` in the linked module")]
    Declaration(String),
}

/// The multi-instruction inline PTX blocks of libdevice, by their text with whitespace runs
/// made one space, and the name [host_definitions] knows each by. (A block of one instruction
/// whose operands are `$0, $1, ...` in order is known by its opcode: [asm_name].)
pub const LIBDEVICE_ASM: &[(&str, &str)] = &[
    (
        "{ mad.lo.cc.u32 $0, $2, $3, $4; madc.hi.u32 $1, $2, $3, 0; }",
        "mad.wide.u32",
    ),
    (
        "{ .reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi; mov.b64 {alo,ahi}, $2; mov.b64 \
         {blo,bhi}, $3; mul.lo.u32 r0, alo, blo; mul.hi.u32 r1, alo, blo; mad.lo.cc.u32 r1, \
         alo, bhi, r1; madc.hi.u32 r2, alo, bhi, 0; mad.lo.cc.u32 r1, ahi, blo, r1; \
         madc.hi.cc.u32 r2, ahi, blo, r2; madc.hi.u32 r3, ahi, bhi, 0; mad.lo.cc.u32 r2, ahi, \
         bhi, r2; addc.u32 r3, r3, 0; mov.b64 $0, {r0,r1}; mov.b64 $1, {r2,r3}; }",
        "mul.wide.u64",
    ),
    (
        "{ .reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi, clo, chi; mov.b64 {alo,ahi}, $2; \
         mov.b64 {blo,bhi}, $3; mov.b64 {clo,chi}, $4; mad.lo.cc.u32 r0, alo, blo, clo; \
         madc.hi.cc.u32 r1, alo, blo, chi; madc.hi.u32 r2, alo, bhi, 0; mad.lo.cc.u32 r1, alo, \
         bhi, r1; madc.hi.cc.u32 r2, ahi, blo, r2; madc.hi.u32 r3, ahi, bhi, 0; mad.lo.cc.u32 \
         r1, ahi, blo, r1; madc.lo.cc.u32 r2, ahi, bhi, r2; addc.u32 r3, r3, 0; mov.b64 $0, \
         {r0,r1}; mov.b64 $1, {r2,r3}; }",
        "mad.wide.u64",
    ),
    (
        "{ .reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3; mov.b64 {a0,a1}, $2; \
         mov.b64 {a2,a3}, $3; mov.b64 {b0,b1}, $4; mov.b64 {b2,b3}, $5; add.cc.u32 r0, a0, b0; \
         addc.cc.u32 r1, a1, b1; addc.cc.u32 r2, a2, b2; addc.u32 r3, a3, b3; mov.b64 $0, \
         {r0,r1}; mov.b64 $1, {r2,r3}; }",
        "add.u128",
    ),
    (
        "{ .reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3; mov.b64 {a0,a1}, $2; \
         mov.b64 {a2,a3}, $3; mov.b64 {b0,b1}, $4; mov.b64 {b2,b3}, $5; sub.cc.u32 r0, a0, b0; \
         subc.cc.u32 r1, a1, b1; subc.cc.u32 r2, a2, b2; subc.u32 r3, a3, b3; mov.b64 $0, \
         {r0,r1}; mov.b64 $1, {r2,r3}; }",
        "sub.u128",
    ),
    (
        "{ .reg .pred __$temp3; setp.equ.f64 __$temp3, $1, $2; selp.f64 $0, $3, $4, __$temp3;}",
        "selp.equ.d",
    ),
];

/// `ll_text` (a module with libdevice linked in) with every `@llvm.nvvm.<name>` reference
/// renamed `@__oxide_nvvm.<name>`, every call of libdevice's inline PTX a call of
/// `@__oxide_nvvm.<name>` ([LIBDEVICE_ASM]), declared at the end. The CPU flavour itself
/// calls no NVVM intrinsic and holds no inline PTX, so what changes is libdevice's.
pub fn host_calls(ll_text: &str) -> Result<String, NvvmOnCpuError> {
    let renamed = ll_text.replace("@llvm.nvvm.", &format!("@{HOST_NVVM_PREFIX}"));
    let mut out = String::with_capacity(renamed.len());
    let mut declared = BTreeSet::new();
    for line in renamed.lines() {
        match asm_call(line) {
            Some(call) => {
                let name = asm_name(&call.template)
                    .ok_or_else(|| NvvmOnCpuError::UnknownAsm(call.template.clone()))?;
                let (result, params) = asm_signature(&call.constraints)
                    .ok_or_else(|| NvvmOnCpuError::UnknownAsm(call.template.clone()))?;
                declared.insert(format!(
                    "declare {result} @{HOST_NVVM_PREFIX}{name}({})",
                    params.join(", ")
                ));
                out.push_str(&line[..call.start]);
                let _ = write!(out, "@{HOST_NVVM_PREFIX}{name}");
                out.push_str(&line[call.end..]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    for declaration in declared {
        out.push_str(&declaration);
        out.push('\n');
    }
    Ok(out)
}

/// An inline-assembly callee in a line of text: its span (`asm ... "constraints"`), its
/// template (unescaped, whitespace runs made one space) and constraints.
struct AsmCall {
    start: usize,
    end: usize,
    template: String,
    constraints: String,
}

fn asm_call(line: &str) -> Option<AsmCall> {
    let start = line.find(" asm ")? + 1;
    if !line[..start].contains("call ") {
        return None;
    }
    let open = start + line[start..].find('"')?;
    let close = open + 1 + line[open + 1..].find('"')?;
    let rest = line[close + 1..].strip_prefix(", \"")?;
    let constraints_end = close + 4 + rest.find('"')?;
    let template = unescape(&line[open + 1..close]).replace("$$", "$");
    Some(AsmCall {
        start,
        end: constraints_end + 1,
        template: template.split_whitespace().collect::<Vec<_>>().join(" "),
        constraints: line[close + 4..constraints_end].to_owned(),
    })
}

/// An LLVM string's text with its `\XX` escapes decoded.
fn unescape(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let hex: String = chars.by_ref().take(2).collect();
            match u8::from_str_radix(&hex, 16) {
                Ok(byte) => out.push(byte as char),
                Err(_) => {
                    out.push('\\');
                    out.push_str(&hex);
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The name of an inline PTX block: a block of [LIBDEVICE_ASM], or one instruction whose
/// operands are `$0, $1, ...` in order, known by its opcode (`f32`/`f64` suffixes written
/// `f`/`d` as in the NVVM intrinsics' names).
fn asm_name(template: &str) -> Option<String> {
    let spaced = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((_, name)) = LIBDEVICE_ASM.iter().find(|(t, _)| spaced(t) == template) {
        return Some((*name).to_owned());
    }
    let body = template.strip_suffix(';')?;
    let (opcode, operands) = body.split_once(' ')?;
    let in_order = operands
        .split(',')
        .enumerate()
        .all(|(i, operand)| operand.trim() == format!("${i}"));
    if !in_order {
        return None;
    }
    let name = match opcode.rsplit_once('.') {
        Some((stem, "f32")) => format!("{stem}.f"),
        Some((stem, "f64")) => format!("{stem}.d"),
        _ => opcode.to_owned(),
    };
    Some(name)
}

/// The result type and parameter types of inline assembly with `constraints` (`=f,f,f`):
/// one output is its type, two a struct of both.
fn asm_signature(constraints: &str) -> Option<(String, Vec<String>)> {
    let ty = |code: &str| -> Option<&'static str> {
        Some(match code {
            "f" => "float",
            "d" => "double",
            "r" => "i32",
            "l" => "i64",
            _ => return None,
        })
    };
    let mut outputs = Vec::new();
    let mut params = Vec::new();
    for constraint in constraints.split(',') {
        match constraint.strip_prefix('=') {
            Some(code) => outputs.push(ty(code)?),
            None => params.push(ty(constraint)?.to_owned()),
        }
    }
    let result = match outputs[..] {
        [one] => one.to_owned(),
        [a, b] => format!("{{ {a}, {b} }}"),
        _ => return None,
    };
    Some((result, params))
}

/// A module (text without triple or data layout) defining every renamed intrinsic that `renamed` declares, and `__nvvm_reflect` if it declares that, with
/// `__CUDA_ARCH` = `cuda_arch` (`900` for `sm_90`). The definitions are external, so that
/// linking resolves the declarations; the link internalises them.
pub fn host_definitions(renamed: &str, cuda_arch: u32) -> Result<String, NvvmOnCpuError> {
    let mut module = Module::default();
    for line in renamed.lines() {
        let Some(rest) = line.strip_prefix("declare ") else {
            continue;
        };
        if rest.contains("@__nvvm_reflect(") {
            module.reflect(cuda_arch);
            continue;
        }
        let Some(at) = rest.find(&format!("@{HOST_NVVM_PREFIX}")) else {
            continue;
        };
        let name_start = at + 1 + HOST_NVVM_PREFIX.len();
        let name_end = rest[name_start..]
            .find('(')
            .map(|i| name_start + i)
            .ok_or_else(|| NvvmOnCpuError::Declaration(rest.to_owned()))?;
        let name = &rest[name_start..name_end];
        let result = declared_result_type(&rest[..at])
            .ok_or_else(|| NvvmOnCpuError::Declaration(name.to_owned()))?;
        let params = declared_params(&rest[name_end..])
            .ok_or_else(|| NvvmOnCpuError::Declaration(name.to_owned()))?;
        module.define(name, &result, &params)?;
    }
    Ok(module.finish())
}

/// The result type of a declaration whose text before the name is `head` (attributes such
/// as `noundef` may precede the type).
fn declared_result_type(head: &str) -> Option<String> {
    if let (Some(open), Some(close)) = (head.find('{'), head.rfind('}')) {
        return Some(head[open..=close].to_owned());
    }
    head.split_whitespace()
        .rfind(|word| is_type(word))
        .map(str::to_owned)
}

/// The parameter types of `(T1 attrs, T2, ...) attrs`.
fn declared_params(tail: &str) -> Option<Vec<String>> {
    let inner = tail.strip_prefix('(')?;
    let inner = &inner[..inner.find(')')?];
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    inner
        .split(',')
        .map(|param| param.split_whitespace().next().map(str::to_owned))
        .collect()
}

fn is_type(word: &str) -> bool {
    matches!(word, "float" | "double" | "half" | "ptr" | "void")
        || word
            .strip_prefix('i')
            .is_some_and(|bits| bits.parse::<u32>().is_ok())
}

/// A rounding mode of an NVVM operation's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rounding {
    Nearest,
    Down,
    Up,
    Zero,
}

impl Rounding {
    fn parse(word: &str) -> Option<Rounding> {
        Some(match word {
            "rn" => Rounding::Nearest,
            "rm" => Rounding::Down,
            "rp" => Rounding::Up,
            "rz" => Rounding::Zero,
            _ => return None,
        })
    }

    /// The argument of `llvm.set.rounding` that selects it.
    fn set_rounding_arg(self) -> u32 {
        match self {
            Rounding::Zero => 0,
            Rounding::Nearest => 1,
            Rounding::Up => 2,
            Rounding::Down => 3,
        }
    }
}

/// Whether intrinsic `words` rounds in a direction other than to nearest: an arithmetic
/// operation, a narrowing or an integer-to-float conversion with `.rm`, `.rp` or `.rz`. Its
/// definition then sets the rounding mode around the constrained operation. (Float-to-integer
/// conversions round explicitly, with `floor`, `ceil` or `rint`, and need no mode.)
fn mode_dependent(words: &[&str]) -> bool {
    let directed = words
        .iter()
        .any(|w| matches!(Rounding::parse(w), Some(r) if r != Rounding::Nearest));
    let from_int = words[0]
        .split_once('2')
        .is_some_and(|(from, _)| int_kind(from).is_some());
    directed
        && (matches!(
            words[0],
            "add" | "mul" | "div" | "fma" | "sqrt" | "rcp" | "d2f"
        ) || from_int)
}

/// The body of one definition under construction: numbered values and the declarations the
/// module needs.
struct Body<'m> {
    lines: String,
    next: u32,
    declarations: &'m mut BTreeSet<String>,
    strict: bool,
}

impl Body<'_> {
    /// Emits `%N = <rhs>` and returns `%N`.
    fn value(&mut self, rhs: &str) -> String {
        let name = format!("%v{}", self.next);
        self.next += 1;
        let _ = writeln!(self.lines, "  {name} = {rhs}");
        name
    }

    /// Calls the LLVM intrinsic `name` (declared as `ret name(params)`) on `args` (typed).
    fn intrinsic(&mut self, ret: &str, name: &str, params: &[&str], args: &[String]) -> String {
        self.declarations
            .insert(format!("declare {ret} @{name}({})", params.join(", ")));
        let attrs = if self.strict { " strictfp" } else { "" };
        let typed = params
            .iter()
            .zip(args)
            .map(|(ty, arg)| format!("{ty} {arg}"))
            .collect::<Vec<_>>()
            .join(", ");
        self.value(&format!("call {ret} @{name}({typed}){attrs}"))
    }

    /// Calls the constrained intrinsic `name` on `args` of types `params`, rounding in the
    /// mode set last ([Body::set_rounding]), raising no exception.
    fn constrained(&mut self, ret: &str, name: &str, params: &[&str], args: &[String]) -> String {
        let mut params = params.to_vec();
        params.extend(["metadata", "metadata"]);
        let mut args = args.to_vec();
        args.extend([
            "!\"round.dynamic\"".to_owned(),
            "!\"fpexcept.ignore\"".to_owned(),
        ]);
        self.intrinsic(
            ret,
            &format!("llvm.experimental.constrained.{name}"),
            &params,
            &args,
        )
    }

    /// `x`, or a zero of its sign when `x` (a `float`) is subnormal.
    fn flush(&mut self, x: &str) -> String {
        let magnitude = self.intrinsic("float", "llvm.fabs.f32", &["float"], &[x.to_owned()]);
        let tiny = self.value(&format!("fcmp olt float {magnitude}, 0x3810000000000000"));
        let zero = self.intrinsic(
            "float",
            "llvm.copysign.f32",
            &["float", "float"],
            &["0.0".to_owned(), x.to_owned()],
        );
        self.value(&format!("select i1 {tiny}, float {zero}, float {x}"))
    }

    /// The CPU device's runtime's result of the special function unit's `op` on `args` (of
    /// type `ty`), called through the image's slot ([kernel_abi::CPU_SFU_FUNCTION]).
    fn sfu(&mut self, op: SfuOp, ty: &str, args: &[String]) -> String {
        let (int, wide) = if ty == "double" {
            ("i64", true)
        } else {
            ("i32", false)
        };
        let operands: Vec<String> = args
            .iter()
            .map(|arg| {
                let bits = self.value(&format!("bitcast {ty} {arg} to {int}"));
                if wide {
                    bits
                } else {
                    self.value(&format!("zext i32 {bits} to i64"))
                }
            })
            .collect();
        let second = operands.get(1).cloned().unwrap_or_else(|| "0".to_owned());
        let function = kernel_abi::CPU_SFU_FUNCTION;
        self.declarations
            .insert(format!("declare i64 @{function}(i32, i64, i64)"));
        let result = self.value(&format!(
            "call i64 @{function}(i32 {}, i64 {}, i64 {second})",
            op as u32, operands[0]
        ));
        let bits = if wide {
            result
        } else {
            self.value(&format!("trunc i64 {result} to i32"))
        };
        self.value(&format!("bitcast {int} {bits} to {ty}"))
    }

    /// Sets the rounding mode for the operations after it (strict bodies only).
    fn set_rounding(&mut self, rounding: Rounding) {
        self.declarations
            .insert("declare void @llvm.set.rounding(i32)".to_owned());
        let _ = writeln!(
            self.lines,
            "  call void @llvm.set.rounding(i32 {}) strictfp",
            rounding.set_rounding_arg()
        );
    }
}

/// The float type of an NVVM suffix (`f`/`d`, `f32`).
fn float_suffix(word: &str) -> Option<(&'static str, &'static str)> {
    match word {
        "f" | "f32" => Some(("float", "f32")),
        "d" | "f64" => Some(("double", "f64")),
        _ => None,
    }
}

/// The integer type and signedness of a conversion's integer side (`i`, `ui`, `ll`, `ull`).
fn int_kind(word: &str) -> Option<(&'static str, bool)> {
    match word {
        "i" => Some(("i32", true)),
        "ui" => Some(("i32", false)),
        "ll" => Some(("i64", true)),
        "ull" => Some(("i64", false)),
        _ => None,
    }
}

/// The module [host_definitions] writes.
#[derive(Default)]
struct Module {
    definitions: String,
    declarations: BTreeSet<String>,
    defined: BTreeSet<String>,
}

impl Module {
    fn finish(self) -> String {
        let mut out =
            String::from("; NVVM intrinsics for the CPU device (llvm_to_ptx::nvvm_on_cpu)\n");
        for declaration in &self.declarations {
            out.push_str(declaration);
            out.push('\n');
        }
        out.push_str(&self.definitions);
        out
    }

    /// `__nvvm_reflect(name)`: 1 for `__CUDA_PREC_SQRT`, `cuda_arch` for `__CUDA_ARCH`, 0 for
    /// `__CUDA_FTZ` and anything else. The three names differ at their eighth byte.
    fn reflect(&mut self, cuda_arch: u32) {
        if !self.defined.insert("__nvvm_reflect".to_owned()) {
            return;
        }
        let _ = write!(
            self.definitions,
            "\ndefine i32 @__nvvm_reflect(ptr %name) alwaysinline {{\n  \
             %at = getelementptr i8, ptr %name, i64 7\n  \
             %c = load i8, ptr %at\n  \
             %arch = icmp eq i8 %c, 65\n  \
             %prec = icmp eq i8 %c, 80\n  \
             %p = select i1 %prec, i32 1, i32 0\n  \
             %r = select i1 %arch, i32 {cuda_arch}, i32 %p\n  \
             ret i32 %r\n}}\n"
        );
    }

    /// Defines `__oxide_nvvm.<name>`, returning `result` and taking `params`.
    fn define(
        &mut self,
        name: &str,
        result: &str,
        params: &[String],
    ) -> Result<(), NvvmOnCpuError> {
        if !self.defined.insert(name.to_owned()) {
            return Ok(());
        }
        let unknown = || NvvmOnCpuError::Unknown(name.to_owned());
        let words: Vec<&str> = name.split('.').collect();
        let ftz = words.contains(&"ftz");
        let rounding = words.iter().find_map(|w| Rounding::parse(w));
        let strict = mode_dependent(&words);
        let args: Vec<String> = (0..params.len()).map(|i| format!("%a{i}")).collect();
        let mut body = Body {
            lines: String::new(),
            next: 0,
            declarations: &mut self.declarations,
            strict,
        };
        if strict {
            body.set_rounding(rounding.unwrap_or(Rounding::Nearest));
        }
        let value = body_of(&mut body, &words, ftz, result, &args).ok_or_else(unknown)?;
        if strict {
            body.set_rounding(Rounding::Nearest);
        }
        let signature = params
            .iter()
            .zip(&args)
            .map(|(ty, arg)| format!("{ty} {arg}"))
            .collect::<Vec<_>>()
            .join(", ");
        let attrs = if strict {
            "noinline nounwind strictfp"
        } else {
            "alwaysinline nounwind"
        };
        let _ = write!(
            self.definitions,
            "\ndefine {result} @{HOST_NVVM_PREFIX}{name}({signature}) {attrs} {{\n{}  ret {result} {value}\n}}\n",
            body.lines
        );
        Ok(())
    }
}

/// The instructions computing intrinsic `words` (its name split at dots) of `args` into
/// `body`; returns the result, or `None` for a name outside the model.
fn body_of(
    body: &mut Body,
    words: &[&str],
    ftz: bool,
    result: &str,
    args: &[String],
) -> Option<String> {
    let last = *words.last()?;
    let rounding = words.iter().find_map(|w| Rounding::parse(w));
    let strict = body.strict;
    let flush_all = |body: &mut Body, args: &[String], ty: &str| -> Vec<String> {
        if ftz && ty == "float" {
            args.iter().map(|a| body.flush(a)).collect()
        } else {
            args.to_vec()
        }
    };
    let flush_result = |body: &mut Body, value: String, ty: &str| -> String {
        if ftz && ty == "float" {
            body.flush(&value)
        } else {
            value
        }
    };
    match words[0] {
        // Arithmetic with a rounding mode: add, mul, div, fma, sqrt, rcp.
        op @ ("add" | "sub" | "mul" | "div" | "fma" | "sqrt" | "rcp") if rounding.is_some() => {
            let (ty, suffix) = float_suffix(last)?;
            let mut inputs = flush_all(body, args, ty);
            let (llvm_op, arity) = match op {
                "add" => ("fadd", 2),
                "sub" => ("fsub", 2),
                "mul" => ("fmul", 2),
                "div" => ("fdiv", 2),
                "fma" => ("fma", 3),
                "sqrt" => ("sqrt", 1),
                _ => ("fdiv", 1),
            };
            if inputs.len() != arity {
                return None;
            }
            if op == "rcp" {
                inputs.insert(0, "1.0".to_owned());
            }
            let value = if strict {
                let params = vec![ty; inputs.len()];
                body.constrained(ty, &format!("{llvm_op}.{suffix}"), &params, &inputs)
            } else {
                match llvm_op {
                    "fma" | "sqrt" => {
                        let params = vec![ty; inputs.len()];
                        body.intrinsic(ty, &format!("llvm.{llvm_op}.{suffix}"), &params, &inputs)
                    }
                    _ => body.value(&format!("{llvm_op} {ty} {}, {}", inputs[0], inputs[1])),
                }
            };
            Some(flush_result(body, value, ty))
        }
        // Rounding to an integral value, absolute value, clamping, minimum and maximum.
        op @ ("fabs" | "floor" | "ceil" | "trunc" | "round" | "saturate" | "fmin" | "fmax") => {
            let (ty, suffix) = float_suffix(last)?;
            let inputs = flush_all(body, args, ty);
            let value = match op {
                "saturate" => {
                    let positive = body.value(&format!("fcmp ogt {ty} {}, 0.0", inputs[0]));
                    let below_one = body.value(&format!("fcmp olt {ty} {}, 1.0", inputs[0]));
                    let upper = body.value(&format!(
                        "select i1 {below_one}, {ty} {}, {ty} 1.0",
                        inputs[0]
                    ));
                    body.value(&format!("select i1 {positive}, {ty} {upper}, {ty} 0.0"))
                }
                "fmin" | "fmax" => {
                    // PTX min/max: a NaN operand yields the other one, -0 orders below +0.
                    let llvm = if op == "fmin" {
                        "minimumnum"
                    } else {
                        "maximumnum"
                    };
                    body.intrinsic(ty, &format!("llvm.{llvm}.{suffix}"), &[ty, ty], &inputs)
                }
                // NVVM's `round` is `cvt.rni`: to nearest, ties to even.
                "round" => body.intrinsic(ty, &format!("llvm.rint.{suffix}"), &[ty], &inputs),
                _ => body.intrinsic(ty, &format!("llvm.{op}.{suffix}"), &[ty], &inputs),
            };
            Some(flush_result(body, value, ty))
        }
        // The special function unit's approximations: the CPU device's runtime reproduces the
        // GPU's bits of those it has measured; the others are computed accurately.
        op if words.get(1) == Some(&"approx") => {
            let (ty, suffix) = float_suffix(last)?;
            let ptx = format!(
                "{op}.approx{}.{}",
                if ftz { ".ftz" } else { "" },
                if ty == "double" { "f64" } else { "f32" }
            );
            if let Some(sfu) = SfuOp::from_ptx(&ptx)
                && sfu.arity() == args.len()
            {
                return Some(body.sfu(sfu, ty, args));
            }
            let inputs = flush_all(body, args, ty);
            let value = match op {
                "ex2" | "lg2" | "sin" | "cos" | "sqrt" | "tanh" => {
                    let llvm = match op {
                        "ex2" => "exp2",
                        "lg2" => "log2",
                        other => other,
                    };
                    body.intrinsic(ty, &format!("llvm.{llvm}.{suffix}"), &[ty], &inputs)
                }
                "rsqrt" => {
                    let root = body.intrinsic(ty, &format!("llvm.sqrt.{suffix}"), &[ty], &inputs);
                    body.value(&format!("fdiv {ty} 1.0, {root}"))
                }
                "div" if inputs.len() == 2 => {
                    body.value(&format!("fdiv {ty} {}, {}", inputs[0], inputs[1]))
                }
                // The GPU's double reciprocal approximation reads the high word and gives a
                // result whose low word is zero.
                "rcp" if ty == "double" => {
                    let bits = body.value(&format!("bitcast double {} to i64", inputs[0]));
                    let high = body.value(&format!("and i64 {bits}, -4294967296"));
                    let truncated = body.value(&format!("bitcast i64 {high} to double"));
                    let quotient = body.value(&format!("fdiv double 1.0, {truncated}"));
                    let qbits = body.value(&format!("bitcast double {quotient} to i64"));
                    let qhigh = body.value(&format!("and i64 {qbits}, -4294967296"));
                    body.value(&format!("bitcast i64 {qhigh} to double"))
                }
                "rcp" => body.value(&format!("fdiv {ty} 1.0, {}", inputs[0])),
                _ => return None,
            };
            Some(flush_result(body, value, ty))
        }
        // The two halves of a double, and a double from them.
        "d2i" if matches!(last, "hi" | "lo") => {
            let bits = body.value(&format!("bitcast double {} to i64", args[0]));
            let part = if last == "hi" {
                body.value(&format!("lshr i64 {bits}, 32"))
            } else {
                bits
            };
            Some(body.value(&format!("trunc i64 {part} to i32")))
        }
        "lohi" if words.get(1) == Some(&"i2d") => {
            let bits = joined(body, "i32", "i64", 32, &args[0], &args[1]);
            Some(body.value(&format!("bitcast i64 {bits} to double")))
        }
        // Float to half, as raw bits.
        "f2h" => {
            let inputs = flush_all(body, args, "float");
            let half = body.value(&format!("fptrunc float {} to half", inputs[0]));
            Some(body.value(&format!("bitcast half {half} to i16")))
        }
        // Double to float with a rounding mode.
        "d2f" => {
            let value = if strict {
                body.constrained("float", "fptrunc.f32.f64", &["double"], &args[..1])
            } else {
                body.value(&format!("fptrunc double {} to float", args[0]))
            };
            Some(flush_result(body, value, "float"))
        }
        // Float to integer (saturating, NaN to 0, as `cvt.rni` and friends).
        conversion if conversion.contains('2') && result.starts_with('i') => {
            let (from, to) = conversion.split_once('2')?;
            let (ty, suffix) = float_suffix(from)?;
            let (int, signed) = int_kind(to)?;
            if int != result {
                return None;
            }
            let inputs = flush_all(body, args, ty);
            let integral = match rounding? {
                Rounding::Zero => inputs[0].clone(),
                other => {
                    let llvm = match other {
                        Rounding::Nearest => "rint",
                        Rounding::Down => "floor",
                        _ => "ceil",
                    };
                    body.intrinsic(ty, &format!("llvm.{llvm}.{suffix}"), &[ty], &inputs)
                }
            };
            let sat = if signed { "fptosi" } else { "fptoui" };
            Some(body.intrinsic(
                int,
                &format!("llvm.{sat}.sat.{int}.{suffix}"),
                &[ty],
                &[integral],
            ))
        }
        // Integer to float with a rounding mode.
        conversion if conversion.contains('2') => {
            let (from, to) = conversion.split_once('2')?;
            let (int, signed) = int_kind(from)?;
            let (ty, suffix) = float_suffix(to)?;
            if ty != result {
                return None;
            }
            let op = if signed { "sitofp" } else { "uitofp" };
            Some(if strict {
                body.constrained(ty, &format!("{op}.{suffix}.{int}"), &[int], &args[..1])
            } else {
                body.value(&format!("{op} {int} {} to {ty}", args[0]))
            })
        }
        // The high half of a product.
        "mulhi" => {
            let (int, signed) = int_kind(last)?;
            let (wide, bits) = if int == "i32" {
                ("i64", 32)
            } else {
                ("i128", 64)
            };
            let ext = if signed { "sext" } else { "zext" };
            let a = body.value(&format!("{ext} {int} {} to {wide}", args[0]));
            let b = body.value(&format!("{ext} {int} {} to {wide}", args[1]));
            let product = body.value(&format!("mul {wide} {a}, {b}"));
            let high = body.value(&format!("lshr {wide} {product}, {bits}"));
            Some(body.value(&format!("trunc {wide} {high} to {int}")))
        }
        // |a - b| + c.
        "sad" => {
            let (int, signed) = int_kind(last)?;
            let greater = if signed { "sgt" } else { "ugt" };
            let (a, b, c) = (&args[0], &args[1], &args[2]);
            let a_greater = body.value(&format!("icmp {greater} {int} {a}, {b}"));
            let a_minus_b = body.value(&format!("sub {int} {a}, {b}"));
            let b_minus_a = body.value(&format!("sub {int} {b}, {a}"));
            let difference = body.value(&format!(
                "select i1 {a_greater}, {int} {a_minus_b}, {int} {b_minus_a}"
            ));
            Some(body.value(&format!("add {int} {difference}, {c}")))
        }
        // `prmt.b32` in its default mode: each result byte picks one of the eight bytes of
        // `{b, a}` (nibble bits 0-2), or that byte's sign replicated (bit 3).
        "prmt" if words.len() == 1 => {
            let (a, b, selector) = (&args[0], &args[1], &args[2]);
            let bytes = joined(body, "i32", "i64", 32, a, b);
            let mut result = "0".to_owned();
            for i in 0..4 {
                let nibble = body.value(&format!("lshr i32 {selector}, {}", 4 * i));
                let index = body.value(&format!("and i32 {nibble}, 7"));
                let sign_mode = body.value(&format!("and i32 {nibble}, 8"));
                let index = body.value(&format!("zext i32 {index} to i64"));
                let shift = body.value(&format!("shl i64 {index}, 3"));
                let shifted = body.value(&format!("lshr i64 {bytes}, {shift}"));
                let byte = body.value(&format!("trunc i64 {shifted} to i8"));
                let sign = body.value(&format!("ashr i8 {byte}, 7"));
                let replicate = body.value(&format!("icmp ne i32 {sign_mode}, 0"));
                let chosen = body.value(&format!("select i1 {replicate}, i8 {sign}, i8 {byte}"));
                let wide = body.value(&format!("zext i8 {chosen} to i32"));
                let placed = body.value(&format!("shl i32 {wide}, {}", 8 * i));
                result = body.value(&format!("or i32 {result}, {placed}"));
            }
            Some(result)
        }
        // Products and sums wider than a register, as carry chains compute them: a pair of
        // halves `{ low, high }`.
        "mad" | "mul" if words.get(1) == Some(&"wide") => {
            let (int, wide, bits) = match last {
                "u32" => ("i32", "i64", 32),
                "u64" => ("i64", "i128", 64),
                _ => return None,
            };
            let widened: Vec<String> = args
                .iter()
                .map(|a| body.value(&format!("zext {int} {a} to {wide}")))
                .collect();
            let mut value = body.value(&format!("mul {wide} {}, {}", widened[0], widened[1]));
            if words[0] == "mad" {
                value = body.value(&format!("add {wide} {value}, {}", widened.get(2)?));
            }
            Some(halves(body, int, wide, bits, &value))
        }
        op @ ("add" | "sub") if last == "u128" => {
            let joined: Vec<String> = args
                .chunks(2)
                .map(|pair| joined(body, "i64", "i128", 64, &pair[0], &pair[1]))
                .collect();
            let value = body.value(&format!("{op} i128 {}, {}", joined[0], joined.get(1)?));
            Some(halves(body, "i64", "i128", 64, &value))
        }
        // `setp.equ` (equal or unordered) then `selp`.
        "selp" if words.get(1) == Some(&"equ") => {
            let equal = body.value(&format!("fcmp ueq double {}, {}", args[0], args[1]));
            Some(body.value(&format!(
                "select i1 {equal}, double {}, double {}",
                args[2], args[3]
            )))
        }
        // `bfind.shiftamt.u32`: the left shift that brings the highest set bit to bit 31,
        // all ones for zero.
        "bfind" if words.get(1) == Some(&"shiftamt") && last == "u32" => {
            let zeros = body.intrinsic(
                "i32",
                "llvm.ctlz.i32",
                &["i32", "i1"],
                &[args[0].clone(), "false".to_owned()],
            );
            let zero = body.value(&format!("icmp eq i32 {}, 0", args[0]));
            Some(body.value(&format!("select i1 {zero}, i32 -1, i32 {zeros}")))
        }
        _ => None,
    }
}

/// The `wide` integer (`2 * bits` bits) whose halves are `low` and `high` (`int` each): the
/// inverse of [halves].
fn joined(body: &mut Body, int: &str, wide: &str, bits: u32, low: &str, high: &str) -> String {
    let low = body.value(&format!("zext {int} {low} to {wide}"));
    let high = body.value(&format!("zext {int} {high} to {wide}"));
    let shifted = body.value(&format!("shl {wide} {high}, {bits}"));
    body.value(&format!("or {wide} {shifted}, {low}"))
}

/// `{ low, high }` halves (`int` each) of `value`, a `wide` integer of `2 * bits` bits.
fn halves(body: &mut Body, int: &str, wide: &str, bits: u32, value: &str) -> String {
    let low = body.value(&format!("trunc {wide} {value} to {int}"));
    let shifted = body.value(&format!("lshr {wide} {value}, {bits}"));
    let high = body.value(&format!("trunc {wide} {shifted} to {int}"));
    let pair = body.value(&format!(
        "insertvalue {{ {int}, {int} }} poison, {int} {low}, 0"
    ));
    body.value(&format!(
        "insertvalue {{ {int}, {int} }} {pair}, {int} {high}, 1"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definitions(declarations: &str) -> Result<String, NvvmOnCpuError> {
        host_definitions(&host_calls(declarations).unwrap(), 900)
    }

    #[test]
    fn renames_only_nvvm_intrinsics() {
        let text = "  %x = call double @llvm.nvvm.fma.rn.d(double %a, double %b, double %c)\n  \
                    %y = call double @llvm.fma.f64(double %a, double %b, double %c)\n";
        let renamed = host_calls(text).unwrap();
        assert!(renamed.contains("@__oxide_nvvm.fma.rn.d("));
        assert!(renamed.contains("@llvm.fma.f64("));
    }

    #[test]
    fn nearest_rounding_is_the_plain_operation() {
        let text =
            definitions("declare double @llvm.nvvm.fma.rn.d(double, double, double) #1\n").unwrap();
        assert!(text.contains(
            "define double @__oxide_nvvm.fma.rn.d(double %a0, double %a1, double %a2) alwaysinline"
        ));
        assert!(text.contains("call double @llvm.fma.f64(double %a0, double %a1, double %a2)"));
        assert!(!text.contains("set.rounding"));
    }

    #[test]
    fn directed_rounding_sets_and_restores_the_mode_in_a_strict_function() {
        let text = definitions("declare float @llvm.nvvm.add.rz.f(float, float)\n").unwrap();
        assert!(text.contains("noinline nounwind strictfp"));
        let set_zero = text.find("@llvm.set.rounding(i32 0) strictfp").unwrap();
        let add = text
            .find("@llvm.experimental.constrained.fadd.f32(float %a0, float %a1")
            .unwrap();
        let restore = text.find("@llvm.set.rounding(i32 1) strictfp").unwrap();
        assert!(set_zero < add && add < restore);
    }

    #[test]
    fn ftz_flushes_inputs_and_result() {
        let text = definitions("declare float @llvm.nvvm.mul.rn.ftz.f(float, float)\n").unwrap();
        assert_eq!(text.matches("0x3810000000000000").count(), 3);
    }

    #[test]
    fn reflect_answers_ieee_and_the_target() {
        let text = definitions("declare i32 @__nvvm_reflect(ptr)\n").unwrap();
        assert!(text.contains("define i32 @__nvvm_reflect(ptr %name)"));
        assert!(text.contains("i32 900"));
    }

    #[test]
    fn conversions_saturate() {
        let text = definitions(
            "declare i32 @llvm.nvvm.f2i.rn(float)\ndeclare float @llvm.nvvm.ull2f.rm(i64)\n",
        )
        .unwrap();
        assert!(text.contains("@llvm.rint.f32"));
        assert!(text.contains("@llvm.fptosi.sat.i32.f32"));
        assert!(text.contains("@llvm.experimental.constrained.uitofp.f32.i64"));
    }

    #[test]
    fn inline_ptx_becomes_calls_of_declared_functions() {
        let text = "  %r = call float asm \"rcp.approx.ftz.f32 $0,$1;\", \"=f,f\"(float %x) #3\n  \
                    %p = call { i32, i32 } asm \"{\\0A\\09mad.lo.cc.u32   $0, $2, $3, $4;\\0A\\09madc.hi.u32     $1, $2, $3,  0;\\0A\\09}\", \"=r,=r,r,r,r\"(i32 %a, i32 %b, i32 %c)\n";
        let calls = host_calls(text).unwrap();
        assert!(calls.contains("%r = call float @__oxide_nvvm.rcp.approx.ftz.f(float %x) #3"));
        assert!(
            calls.contains("call { i32, i32 } @__oxide_nvvm.mad.wide.u32(i32 %a, i32 %b, i32 %c)")
        );
        assert!(calls.contains("declare { i32, i32 } @__oxide_nvvm.mad.wide.u32(i32, i32, i32)"));
        let definitions = host_definitions(&calls, 900).unwrap();
        assert!(definitions.contains("define { i32, i32 } @__oxide_nvvm.mad.wide.u32"));
        assert!(definitions.contains("mul i64"));
    }

    #[test]
    fn measured_approximations_call_the_runtimes_unit() {
        let text = definitions(
            "declare float @llvm.nvvm.ex2.approx.ftz.f32(float)\n\
             declare double @llvm.nvvm.rcp.approx.ftz.d(double)\n\
             declare float @llvm.nvvm.div.approx.f(float, float)\n\
             declare float @llvm.nvvm.sin.approx.f(float)\n",
        )
        .unwrap();
        let call = |op: SfuOp| format!("call i64 @__oxide_cpu_sfu(i32 {}, ", op as u32);
        assert!(text.contains(&call(SfuOp::Ex2FtzF32)), "{text}");
        assert!(text.contains(&call(SfuOp::RcpFtzF64)));
        assert!(text.contains(&call(SfuOp::DivF32)));
        assert!(text.contains("declare i64 @__oxide_cpu_sfu(i32, i64, i64)"));
        // Not measured: computed accurately.
        assert!(text.contains("@llvm.sin.f32"));
    }

    #[test]
    fn unknown_inline_ptx_is_named() {
        let text = "  %r = call i32 asm \"brev.b32 $1, $0;\", \"=r,r\"(i32 %x)\n";
        assert_eq!(
            host_calls(text).map(|_| ()),
            Err(NvvmOnCpuError::UnknownAsm("brev.b32 $1, $0;".to_owned()))
        );
    }

    #[test]
    fn unknown_intrinsics_are_named() {
        assert_eq!(
            definitions("declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"),
            Err(NvvmOnCpuError::Unknown("read.ptx.sreg.tid.x".to_owned()))
        );
    }
}

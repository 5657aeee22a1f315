//! The CPU flavour of a module (`docs/cpu.md`): what the export writes differently so that the
//! CPU device's runtime can load it from the host binary and run its kernels.
//!
//! - Every definition is `internal`: the module is linked into the host program, whose own
//!   functions have the same names. Only the image table ([CpuImage::table_symbol]) is seen
//!   (and, until `llvm_to_ptx::cpu_object` has linked libdevice, the thunk of the special
//!   function unit's slot, [CpuGlue::sfu_slot]).
//! - A function the module declares (a runtime function the CPU flavour of an intrinsic calls,
//!   `vprintf`, `malloc`, a `#[device] extern`) becomes a *slot*: a pointer the runtime fills
//!   when it loads the image, and a thunk of the declared name that calls through it. The object
//!   then needs no symbol from the program; a slot the runtime leaves empty calls its
//!   `missing` function with the slot's name instead, which stops the kernel with that name.
//!   libdevice's functions ([nvptx_attrs::LIBDEVICE_PREFIX]) stay declarations: they are linked
//!   in after export, as for the GPU (`llvm_to_ptx::cpu_object`).
//! - Shared memory (`addrspace(3)`) is `thread_local`: the runtime runs the threads of a block
//!   on one OS thread, one block at a time, so each block in flight has its own.
//! - Each kernel gets an entry that takes the launch's parameter array (`void **`, as
//!   `cuLaunchKernel` has it) and calls the kernel with the values it points at.
//! - The image table lists the kernels' names and entries, the slots and the globals the GPU
//!   flavour gives external linkage (the panic record), so the runtime finds all of them.
//!
//! - The special registers of the thread (`tid`, `ntid`, `ctaid`, `nctaid`) are loads from a
//!   thread-local array the runtime fills ([THREAD_REGISTERS]), not calls.
//!
//! Layout of the table (all fields 8 bytes, version 5):
//! `{ version, kernel count, kernels, slot count, slots, global count, globals, missing slot,
//! shared count, shared function, instrumented for races (1), register function }`,
//! each kernel `{ name, name length, entry, parameter count, parameter sizes (an array of
//! `u64`), most threads per block, whether its threads may wait for each other (1) }`, each slot `{ name, name length, address of the slot }`,
//! each global `{ name, name length, address, size }`. The shared function, called on a worker
//! thread, writes `{ address, size }` of each shared global of that thread; the register
//! function returns the address of that thread's register array.

use crate::naming::{escape, global_ref};

/// Version of the table layout above; the runtime refuses another.
pub use kernel_abi::CPU_IMAGE_VERSION;

pub use kernel_abi::CPU_DYNAMIC_SHARED_BYTES;

/// Export the module as the CPU flavour, with its image table named `table_symbol`.
#[derive(Clone, Debug)]
pub struct CpuImage {
    /// The one symbol of the module the host program sees.
    pub table_symbol: String,
    /// Instrument the memory accesses for the race detector (`CUDA_OXIDE_RACE`, docs/cpu.md):
    /// each plain load and store of memory that is not the thread's own stack calls the
    /// runtime's `race_load`/`race_store` with the address, the size and its source position
    /// first, each atomic `race_atomic`, and each call of a runtime function `race_at` with
    /// its source position.
    pub race: bool,
}

/// The special registers the runtime keeps in the image's thread-local `@oxide.sreg` (one
/// `i32` each, in this order) for the thread running on the OS thread: their runtime
/// functions become loads from it, which `opt` inlines, instead of calls through slots.
pub const THREAD_REGISTERS: [&str; 12] = [
    "read_ptx_sreg_tid_x",
    "read_ptx_sreg_tid_y",
    "read_ptx_sreg_tid_z",
    "read_ptx_sreg_ntid_x",
    "read_ptx_sreg_ntid_y",
    "read_ptx_sreg_ntid_z",
    "read_ptx_sreg_ctaid_x",
    "read_ptx_sreg_ctaid_y",
    "read_ptx_sreg_ctaid_z",
    "read_ptx_sreg_nctaid_x",
    "read_ptx_sreg_nctaid_y",
    "read_ptx_sreg_nctaid_z",
];

/// The race detector's runtime functions (after [nvptx_attrs::CPU_RUNTIME_PREFIX]) and their
/// parameters; none makes a thread wait.
pub(crate) const RACE_FUNCTIONS: &[(&str, &[&str])] = &[
    ("race_load", &["ptr", "i64", "ptr"]),
    ("race_store", &["ptr", "i64", "ptr"]),
    ("race_atomic", &["ptr", "i64"]),
    ("race_at", &["ptr"]),
];

/// A kernel, as its entry calls it.
pub(crate) struct CpuKernel {
    pub(crate) llvm_name: String,
    /// Each parameter's type text and attribute text (`byval(T)` among them).
    pub(crate) params: Vec<(String, String)>,
    /// Its launch bound or declared block size, else 1024.
    pub(crate) max_threads: u32,
}

/// The type a `byval(T)` in `attrs` names, if there is one.
fn byval_type(attrs: &str) -> Option<&str> {
    let start = attrs.find("byval(")? + "byval(".len();
    let mut depth = 0;
    for (i, c) in attrs[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' if depth == 0 => return Some(&attrs[start..start + i]),
            ')' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// `i64 <size of ty>` as a constant expression.
fn size_of(ty: &str) -> String {
    format!("i64 ptrtoint (ptr getelementptr ({ty}, ptr null, i32 1) to i64)")
}

/// A global the runtime can look up by name.
pub(crate) struct ExposedGlobal {
    pub(crate) llvm_name: String,
    pub(crate) ty: String,
    pub(crate) address_space: u32,
}

/// The runtime functions (after [nvptx_attrs::CPU_RUNTIME_PREFIX]) that never make a thread
/// wait for another: special registers, the trap, sleeps and fences. Every other one may
/// (barriers, warp operations, mbarriers, ...).
const NEVER_WAITING: &[&str] = &["read_ptx_sreg_", "trap", "nanosleep", "fence_", "race_"];

/// What the CPU flavour collects while the module is written.
#[derive(Default)]
pub(crate) struct CpuGlue {
    pub(crate) kernels: Vec<CpuKernel>,
    pub(crate) globals: Vec<ExposedGlobal>,
    /// The shared-memory globals (`thread_local`) and their types, for the table's function
    /// that tells the runtime where a worker's shared memory is.
    pub(crate) shared: Vec<(String, String)>,
    /// [CpuImage::race].
    pub(crate) race: bool,
    /// The race detector's source positions (`file:line:column`), by text; their constants
    /// are `@oxide.site.<index>`.
    sites: std::collections::HashMap<String, usize>,
    site_constants: String,
    /// Names of the values the race instrumentation adds (`%race.<n>`).
    race_values: usize,
    /// The runtime functions of [THREAD_REGISTERS] the module reads, defined as loads.
    registers_read: Vec<String>,
    /// Caller -> callees (`None`: an indirect call), for [CpuGlue::may_wait].
    calls: std::collections::HashMap<String, Vec<Option<String>>>,
    /// Thunks written so far, by declared name.
    slots: Vec<String>,
    thunks: String,
}

impl CpuGlue {
    pub(crate) fn new(race: bool) -> CpuGlue {
        let mut glue = CpuGlue {
            race,
            ..CpuGlue::default()
        };
        if race {
            for (name, params) in RACE_FUNCTIONS {
                let params: Vec<String> = params.iter().map(|p| (*p).to_owned()).collect();
                glue.thunk(
                    &format!("{}{name}", nvptx_attrs::CPU_RUNTIME_PREFIX),
                    "void",
                    &params,
                );
            }
        }
        glue
    }

    /// The constant holding source position `text` (`src/main.rs:12:5`, or `?`), as an
    /// operand (`@oxide.site.3`).
    pub(crate) fn site(&mut self, text: &str) -> String {
        let next = self.sites.len();
        let index = *self.sites.entry(text.to_owned()).or_insert(next);
        if index == next {
            let (constant, _) = name_constant("site", index, &format!("{text}\0"));
            self.site_constants.push_str(&constant);
        }
        format!("@oxide.name.site.{index}")
    }

    /// A fresh name for a value the race instrumentation adds.
    pub(crate) fn race_value(&mut self) -> String {
        self.race_values += 1;
        format!("%race.{}", self.race_values)
    }

    /// Notes that `caller` calls `callee` (`None`: through a pointer).
    pub(crate) fn calls(&mut self, caller: &str, callee: Option<&str>) {
        self.calls
            .entry(caller.to_owned())
            .or_default()
            .push(callee.map(str::to_owned));
    }

    /// Whether `function`, or a function it may call, makes a thread wait for others (a
    /// barrier or a warp operation); an indirect call may. The runtime then gives each thread
    /// a fiber of its own; otherwise a block's threads run one after another.
    fn may_wait(&self, function: &str) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![function.to_owned()];
        while let Some(next) = todo.pop() {
            if !seen.insert(next.clone()) {
                continue;
            }
            if let Some(row) = next.strip_prefix(nvptx_attrs::CPU_RUNTIME_PREFIX) {
                if !NEVER_WAITING.iter().any(|p| row.starts_with(p)) {
                    return true;
                }
                continue;
            }
            for callee in self.calls.get(&next).into_iter().flatten() {
                match callee {
                    Some(callee) => todo.push(callee.clone()),
                    None => return true,
                }
            }
        }
        false
    }

    /// The slot of the runtime's special function unit ([kernel_abi::CPU_SFU_FUNCTION]), which
    /// the CPU flavour of libdevice calls (`llvm_to_ptx::nvvm_on_cpu`): given to a module that
    /// declares a libdevice function. Its thunk is `hidden` rather than internal so that
    /// libdevice, linked in after export, reaches it; `llvm_to_ptx::cpu_object` makes it
    /// internal once linked.
    pub(crate) fn sfu_slot(&mut self) {
        let name = kernel_abi::CPU_SFU_FUNCTION;
        if !self.slots.iter().any(|s| s == name) {
            self.slot_thunk(
                name,
                "i64",
                &["i32".into(), "i64".into(), "i64".into()],
                "hidden",
            );
        }
    }

    /// A thunk named `name` returning `result` and taking `params` (type texts), which calls
    /// through the slot of that name.
    pub(crate) fn thunk(&mut self, name: &str, result: &str, params: &[String]) {
        if self.slots.iter().any(|s| s == name) || self.registers_read.iter().any(|s| s == name) {
            return;
        }
        if let Some(index) = name
            .strip_prefix(nvptx_attrs::CPU_RUNTIME_PREFIX)
            .and_then(|row| THREAD_REGISTERS.iter().position(|r| *r == row))
            && result == "i32"
            && params.is_empty()
        {
            self.registers_read.push(name.to_owned());
            self.thunks.push_str(&format!(
                "define internal i32 {}() alwaysinline {{\n  %at = getelementptr inbounds \
                 [12 x i32], ptr @oxide.sreg, i64 0, i64 {index}\n  %v = load i32, ptr %at, \
                 align 4\n  ret i32 %v\n}}\n",
                global_ref(name)
            ));
            return;
        }
        self.slot_thunk(name, result, params, "internal");
    }

    /// The slot of `name` and its thunk, a definition of the given `linkage`.
    fn slot_thunk(&mut self, name: &str, result: &str, params: &[String], linkage: &str) {
        let index = self.slots.len();
        self.slots.push(name.to_owned());
        let slot = format!("@oxide.slot.{index}");
        let typed = |ty: &str| {
            if ty == "i1" {
                "i1 zeroext".to_owned()
            } else {
                ty.to_owned()
            }
        };
        let header: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, ty)| format!("{} %a{i}", typed(ty)))
            .collect();
        let result_attr = if result == "i1" { "zeroext " } else { "" };
        let call = format!("call {result_attr}{result} %f({})", header.join(", "));
        let (call_line, ret) = if result == "void" {
            (format!("  {call}\n"), "  ret void\n".to_owned())
        } else {
            (format!("  %r = {call}\n"), format!("  ret {result} %r\n"))
        };
        let (name_global, name_len) = name_constant("slot", index, name);
        self.thunks.push_str(&format!(
            "{slot} = internal global ptr null, align 8\n{name_global}\
             define {linkage} {result_attr}{result} {}({}) {{\n  %f = load ptr, ptr {slot}, align 8\n  \
             %empty = icmp eq ptr %f, null\n  br i1 %empty, label %missing, label %call\n\
             call:\n{call_line}{ret}missing:\n  %m = load ptr, ptr @oxide.missing, align 8\n  \
             call void %m(ptr @oxide.name.slot.{index}, i64 {name_len})\n  unreachable\n}}\n",
            global_ref(name),
            header.join(", ")
        ));
    }

    /// The entries, the thunks and the table, written after everything else.
    pub(crate) fn write(&self, image: &CpuImage) -> String {
        let mut out = String::from(
            "\n@oxide.missing = internal global ptr null, align 8\n\
             @oxide.sreg = internal thread_local(initialexec) global [12 x i32] zeroinitializer, \
             align 16\n\
             define internal ptr @oxide.sreg_address() {\n  ret ptr @oxide.sreg\n}\n",
        );
        out.push_str(&self.thunks);
        out.push_str(&self.site_constants);
        // Where this OS thread's shared memory is: `{ address, size }` per shared global.
        let mut shared_body = String::new();
        for (index, (name, ty)) in self.shared.iter().enumerate() {
            shared_body.push_str(&format!(
                "  %s{index} = addrspacecast ptr addrspace(3) {} to ptr
                   %at{index} = getelementptr {{ ptr, i64 }}, ptr %out, i64 {index}
                   store ptr %s{index}, ptr %at{index}, align 8
                   %size{index} = getelementptr {{ ptr, i64 }}, ptr %out, i64 {index}, i32 1
                   store {}, ptr %size{index}, align 8
",
                global_ref(name),
                size_of(ty)
            ));
        }
        out.push_str(&format!(
            "define internal void @oxide.shared(ptr %out) {{
{shared_body}  ret void
}}
"
        ));
        let mut kernels = Vec::new();
        for (index, kernel) in self.kernels.iter().enumerate() {
            let entry = format!("@oxide.entry.{index}");
            let mut body = String::new();
            let mut args = Vec::new();
            for (i, (ty, attrs)) in kernel.params.iter().enumerate() {
                body.push_str(&format!(
                    "  %p{i} = getelementptr ptr, ptr %params, i64 {i}\n  \
                     %a{i} = load ptr, ptr %p{i}, align 8\n"
                ));
                if attrs.contains("byval(") {
                    args.push(format!("ptr{attrs} %a{i}"));
                } else {
                    body.push_str(&format!("  %v{i} = load {ty}, ptr %a{i}, align 1\n"));
                    args.push(format!("{ty} %v{i}"));
                }
            }
            out.push_str(&format!(
                "define internal void {entry}(ptr %params) {{\n{body}  call void {}({})\n  \
                 ret void\n}}\n",
                global_ref(&kernel.llvm_name),
                args.join(", ")
            ));
            let (name_global, len) = name_constant("kernel", index, &kernel.llvm_name);
            out.push_str(&name_global);
            let sizes: Vec<String> = kernel
                .params
                .iter()
                .map(|(ty, attrs)| size_of(byval_type(attrs).unwrap_or(ty)))
                .collect();
            out.push_str(&format!(
                "@oxide.sizes.{index} = private unnamed_addr constant [{} x i64] [{}], align 8\n",
                sizes.len(),
                sizes.join(", ")
            ));
            kernels.push(format!(
                "{{ ptr, i64, ptr, i64, ptr, i64, i64 }} {{ ptr @oxide.name.kernel.{index}, i64 \
                 {len}, ptr {entry}, i64 {}, ptr @oxide.sizes.{index}, i64 {}, i64 {} }}",
                kernel.params.len(),
                kernel.max_threads,
                u8::from(self.may_wait(&kernel.llvm_name))
            ));
        }
        let slots: Vec<String> = (0..self.slots.len())
            .map(|index| {
                format!(
                    "{{ ptr, i64, ptr }} {{ ptr @oxide.name.slot.{index}, i64 {}, ptr @oxide.slot.{index} }}",
                    self.slots[index].len()
                )
            })
            .collect();
        let mut globals = Vec::new();
        for (index, global) in self.globals.iter().enumerate() {
            let (name_global, len) = name_constant("global", index, &global.llvm_name);
            out.push_str(&name_global);
            let address = match global.address_space {
                0 => format!("ptr {}", global_ref(&global.llvm_name)),
                n => format!(
                    "ptr addrspacecast (ptr addrspace({n}) {} to ptr)",
                    global_ref(&global.llvm_name)
                ),
            };
            globals.push(format!(
                "{{ ptr, i64, ptr, i64 }} {{ ptr @oxide.name.global.{index}, i64 {len}, {address}, \
                 i64 ptrtoint (ptr getelementptr ({}, ptr null, i32 1) to i64) }}",
                global.ty
            ));
        }
        out.push_str(&array(
            "kernels",
            "{ ptr, i64, ptr, i64, ptr, i64, i64 }",
            &kernels,
        ));
        out.push_str(&array("slots", "{ ptr, i64, ptr }", &slots));
        out.push_str(&array("globals", "{ ptr, i64, ptr, i64 }", &globals));
        out.push_str(&format!(
            "{} = hidden constant {{ i64, i64, ptr, i64, ptr, i64, ptr, ptr, i64, ptr, i64, ptr }} {{ \
             i64 {CPU_IMAGE_VERSION}, i64 {}, ptr @oxide.kernels, i64 {}, ptr @oxide.slots, i64 {}, \
             ptr @oxide.globals, ptr @oxide.missing, i64 {}, ptr @oxide.shared, i64 {}, \
             ptr @oxide.sreg_address }}, align 8\n",
            global_ref(&image.table_symbol),
            kernels.len(),
            slots.len(),
            globals.len(),
            self.shared.len(),
            u8::from(self.race)
        ));
        out
    }
}

/// `@oxide.name.<kind>.<index>`, the bytes of `name` (no NUL), and its length.
fn name_constant(kind: &str, index: usize, name: &str) -> (String, usize) {
    (
        format!(
            "@oxide.name.{kind}.{index} = private unnamed_addr constant [{} x i8] c\"{}\", align 1\n",
            name.len(),
            escape(name)
        ),
        name.len(),
    )
}

/// `@oxide.<name>`, an array of `elements` of type `ty`.
fn array(name: &str, ty: &str, elements: &[String]) -> String {
    format!(
        "@oxide.{name} = internal constant [{} x {ty}] [{}], align 8\n",
        elements.len(),
        elements.join(", ")
    )
}

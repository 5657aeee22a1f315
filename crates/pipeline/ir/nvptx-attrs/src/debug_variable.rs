//! The named Rust variable an `llvm.alloca` holds, as the importer describes it and the
//! exporter turns into a `#dbg_declare` record: its name, parameter position and DWARF type,
//! encoded as the text of the [crate::ATTR_KEY_DEBUG_VARIABLE] attribute.

/// The DWARF type of a variable: the scalars and thin pointers that debuggers show as they are.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DebugType {
    /// `i8` .. `i128`, `isize` (`DW_ATE_signed`); the Rust name and size in bits.
    Signed(String, u32),
    /// `u8` .. `u128`, `usize` (`DW_ATE_unsigned`).
    Unsigned(String, u32),
    /// `f16`, `f32`, `f64`, `f128` (`DW_ATE_float`).
    Float(String, u32),
    /// `bool` (`DW_ATE_boolean`, one byte).
    Bool,
    /// `char` (`DW_ATE_UTF`, 32 bits).
    Char,
    /// A thin pointer or reference (`DW_TAG_pointer_type`, 64 bits), named as Rust names it,
    /// to a scalar type (shown as such) or to anything else (`None`: an untyped address).
    Pointer(String, Option<Box<DebugType>>),
    /// A slice reference (`&[T]`, `&str`) or a `DisjointSlice<T>`, held as `{ ptr, i64 }`:
    /// a structure of two members, `data_ptr` (a pointer to the element type, as
    /// [DebugType::Pointer]) and `length` (`usize`), as rustc describes slices. The Rust name
    /// of the type and the element.
    Slice(String, Option<Box<DebugType>>),
}

/// A named Rust variable held in a stack slot: its name, and for a parameter its 1-based
/// position among the function's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DebugVariable {
    /// The name in the source.
    pub name: String,
    /// The position of a parameter (1-based); `None` for other variables.
    pub arg: Option<u32>,
    /// Its type.
    pub ty: DebugType,
}

type Fields<'a> = std::iter::Peekable<std::str::Split<'a, char>>;

/// The separator of the fields of an encoded [DebugVariable] (no Rust name contains it).
const SEP: char = '\u{1f}';

impl DebugType {
    fn encode(&self, out: &mut Vec<String>) {
        match self {
            DebugType::Signed(name, bits) => {
                out.extend(["i".into(), name.clone(), bits.to_string()])
            }
            DebugType::Unsigned(name, bits) => {
                out.extend(["u".into(), name.clone(), bits.to_string()])
            }
            DebugType::Float(name, bits) => {
                out.extend(["f".into(), name.clone(), bits.to_string()])
            }
            DebugType::Bool => out.push("b".into()),
            DebugType::Char => out.push("c".into()),
            DebugType::Pointer(name, pointee) | DebugType::Slice(name, pointee) => {
                let tag = if matches!(self, DebugType::Slice(..)) {
                    "s"
                } else {
                    "p"
                };
                out.extend([tag.into(), name.clone()]);
                match pointee {
                    Some(pointee) => pointee.encode(out),
                    None => out.push("-".into()),
                }
            }
        }
    }

    fn decode(fields: &mut Fields<'_>) -> Option<DebugType> {
        fn sized(fields: &mut Fields<'_>, make: fn(String, u32) -> DebugType) -> Option<DebugType> {
            let name = fields.next()?.to_string();
            let bits = fields.next()?.parse().ok()?;
            Some(make(name, bits))
        }
        match fields.next()? {
            "i" => sized(fields, DebugType::Signed),
            "u" => sized(fields, DebugType::Unsigned),
            "f" => sized(fields, DebugType::Float),
            "b" => Some(DebugType::Bool),
            "c" => Some(DebugType::Char),
            tag @ ("p" | "s") => {
                let name = fields.next()?.to_string();
                let pointee = if fields.peek() == Some(&"-") {
                    fields.next();
                    None
                } else {
                    Some(Box::new(DebugType::decode(fields)?))
                };
                Some(if tag == "p" {
                    DebugType::Pointer(name, pointee)
                } else {
                    DebugType::Slice(name, pointee)
                })
            }
            _ => None,
        }
    }
}

impl DebugVariable {
    /// The text of the attribute that carries the variable from the importer to the export.
    pub fn encode(&self) -> String {
        let mut fields = vec![
            self.arg.map_or_else(String::new, |a| a.to_string()),
            self.name.clone(),
        ];
        self.ty.encode(&mut fields);
        fields.join(&SEP.to_string())
    }

    /// The variable of an [DebugVariable::encode]d text; `None` when malformed.
    pub fn decode(text: &str) -> Option<DebugVariable> {
        let mut fields = text.split(SEP).peekable();
        let arg = match fields.next()? {
            "" => None,
            n => Some(n.parse().ok()?),
        };
        let name = fields.next()?.to_string();
        let ty = DebugType::decode(&mut fields)?;
        fields
            .next()
            .is_none()
            .then_some(DebugVariable { name, arg, ty })
    }
}

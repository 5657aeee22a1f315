//! Kernel parameters that own host memory: `Vec<T>`, `String`, `Box<T>`, the other
//! collections of `std`, and `&str`, wherever they appear in a parameter's type (`&Vec<T>`,
//! `Option<String>`, `(Vec<T>, u32)`, `DisjointSlice<Box<T>>`, ...). The GPU cannot read
//! host memory and device code cannot allocate or free it, so each is refused with the
//! parameter type to use instead. Types are recognised by name: the macros see tokens only.

use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Error, GenericArgument, PathArguments, Result, Type};

/// What to take instead, by the name of the host-owning type.
const INSTEAD: &[(&str, Instead)] = &[
    ("Vec", Instead::SliceOfElement),
    ("VecDeque", Instead::SliceOfElement),
    ("LinkedList", Instead::SliceOfElement),
    ("BinaryHeap", Instead::SliceOfElement),
    ("HashSet", Instead::SliceOfElement),
    ("BTreeSet", Instead::SliceOfElement),
    ("String", Instead::Bytes),
    ("CString", Instead::Bytes),
    ("OsString", Instead::Bytes),
    ("PathBuf", Instead::Bytes),
    ("Box", Instead::ElementByValue),
    ("Rc", Instead::ElementByValue),
    ("Arc", Instead::ElementByValue),
    ("HashMap", Instead::Slices),
    ("BTreeMap", Instead::Slices),
];

#[derive(Clone, Copy)]
enum Instead {
    /// `&[T]` / `&mut [T]` / `DisjointSlice<T>` of the collection's element type.
    SliceOfElement,
    /// `&[u8]`: text as bytes in a device buffer.
    Bytes,
    /// The boxed value itself.
    ElementByValue,
    /// One slice per component.
    Slices,
}

/// Refuses `ty` when it holds a type that owns host memory, naming it and what to take
/// instead.
pub fn check_no_host_memory(ty: &Type) -> Result<()> {
    match ty {
        Type::Reference(reference) => {
            if is_named(&reference.elem, "str") {
                return Err(Error::new(
                    ty.span(),
                    format!(
                        "a kernel cannot take `{}`: the text is in host memory, which the GPU \
                         cannot read. Take its bytes as `&[u8]` (the launcher then takes a \
                         `&CudaSlice<u8>`, e.g. `stream.clone_htod(text.as_bytes())`)",
                        tokens(ty)
                    ),
                ));
            }
            check_no_host_memory(&reference.elem)
        }
        Type::Paren(inner) => check_no_host_memory(&inner.elem),
        Type::Group(inner) => check_no_host_memory(&inner.elem),
        Type::Slice(slice) => check_no_host_memory(&slice.elem),
        Type::Array(array) => check_no_host_memory(&array.elem),
        Type::Ptr(pointer) => check_no_host_memory(&pointer.elem),
        Type::Tuple(tuple) => tuple.elems.iter().try_for_each(check_no_host_memory),
        Type::Path(path) => {
            let Some(last) = path.path.segments.last() else {
                return Ok(());
            };
            let type_args: Vec<&Type> = match &last.arguments {
                PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .filter_map(|arg| match arg {
                        GenericArgument::Type(t) => Some(t),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let name = last.ident.to_string();
            if let Some((_, instead)) = INSTEAD.iter().find(|(owned, _)| *owned == name) {
                return Err(host_memory_error(ty, instead, type_args.first().copied()));
            }
            type_args.into_iter().try_for_each(check_no_host_memory)
        }
        _ => Ok(()),
    }
}

fn host_memory_error(ty: &Type, instead: &Instead, element: Option<&Type>) -> Error {
    let t = element.map_or_else(|| "T".to_owned(), tokens);
    let what_to_take = match instead {
        Instead::SliceOfElement => format!(
            "Take a slice: `&[{t}]` to read (the launcher then takes a `&CudaSlice<{t}>`, e.g. \
             from `stream.clone_htod(&v)`), `&mut [{t}]` or `DisjointSlice<{t}>` to write"
        ),
        Instead::Bytes => "Take its bytes as `&[u8]` (the launcher then takes a \
                           `&CudaSlice<u8>`)"
            .to_owned(),
        Instead::ElementByValue => {
            format!("Take the value itself, `{t}`, or a slice `&[{t}]` of such values")
        }
        Instead::Slices => "Copy its keys and values into device buffers and take one slice \
                            for each (`&[K]`, `&[V]`)"
            .to_owned(),
    };
    Error::new(
        ty.span(),
        format!(
            "a kernel cannot take `{}`: it owns host memory, which the GPU cannot read (and \
             device code cannot allocate or free). {what_to_take}",
            tokens(ty)
        ),
    )
}

fn is_named(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident(name))
}

/// A type as the user wrote it, without the spaces of token printing (`Vec<f32>`, `&str`).
fn tokens(ty: &Type) -> String {
    let text = ty.to_token_stream().to_string();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        let drop_space = c == ' '
            && (out.ends_with(['&', '*', '<', '(', '[', ':'])
                || matches!(next, Some('<' | '>' | ',' | ')' | ']' | ':' | ';')));
        if !drop_space {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use syn::parse_quote;

    use super::*;

    fn error(ty: Type) -> String {
        check_no_host_memory(&ty).unwrap_err().to_string()
    }

    #[test]
    fn device_types_pass() {
        let ok: [Type; 7] = [
            parse_quote!(&[f32]),
            parse_quote!(&mut [u32]),
            parse_quote!(DisjointSlice<f32>),
            parse_quote!(u64),
            parse_quote!((f32, [u8; 4])),
            parse_quote!(*mut f32),
            parse_quote!(Option<Params>),
        ];
        for ty in ok {
            assert!(check_no_host_memory(&ty).is_ok(), "{}", tokens(&ty));
        }
    }

    #[test]
    fn host_owning_types_are_named_with_what_to_take() {
        let vec = error(parse_quote!(Vec<f32>));
        assert!(
            vec.starts_with("a kernel cannot take `Vec<f32>`: it owns host memory"),
            "{vec}"
        );
        assert!(vec.contains("`&[f32]` to read"), "{vec}");
        assert!(vec.contains("`DisjointSlice<f32>` to write"), "{vec}");

        let text = error(parse_quote!(&str));
        assert!(text.starts_with("a kernel cannot take `&str`"), "{text}");
        assert!(text.contains("`&[u8]`"), "{text}");
        assert!(error(parse_quote!(String)).contains("`&[u8]`"));
        assert!(error(parse_quote!(Box<Params>)).contains("`Params`"));
        assert!(error(parse_quote!(HashMap<u32, f32>)).contains("one slice"));
    }

    #[test]
    fn host_owning_types_are_found_anywhere_in_the_type() {
        for ty in [
            parse_quote!(&Vec<u32>),
            parse_quote!(&mut String),
            parse_quote!(Option<Vec<u8>>),
            parse_quote!((u32, std::vec::Vec<f32>)),
            parse_quote!([String; 2]),
            parse_quote!(DisjointSlice<Box<f32>>),
            parse_quote!(&[&str]),
        ] {
            assert!(check_no_host_memory(&ty).is_err(), "{}", tokens(&ty));
        }
        assert_eq!(tokens(&parse_quote!(&[Vec<f32>])), "&[Vec<f32>]");
        assert_eq!(tokens(&parse_quote!([u8; 4])), "[u8; 4]");
        assert_eq!(
            tokens(&parse_quote!(HashMap<u32, f32>)),
            "HashMap<u32, f32>"
        );
        assert_eq!(
            tokens(&parse_quote!(*mut std::string::String)),
            "*mut std::string::String"
        );
    }
}

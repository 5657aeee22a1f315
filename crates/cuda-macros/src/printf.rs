//! `gpu_printf!("i = {} x = {:.3}\n", i, x)`: Rust format strings, checked and translated at
//! compile time into CUDA's `vprintf(format, args)`.
//!
//! The macro parses the format string (text, `{{`, `}}`, placeholders with Rust's format spec)
//! and pairs each placeholder with its argument: in order, by index (`{0}`) or by a captured
//! identifier (`{x}`). What each argument *is* only the type checker knows, so the expansion is
//! a small generic function over the argument types: trait bounds from `cuda_device::printf`
//! accept or refuse each argument for its placeholder (an error at the argument: `{:x}` of a
//! float, a `&str` that is not a literal), and an associated constant assembles the C format
//! string from the text and each argument's kind (`%lld` for an `i32`, `%g` for an `f32`,
//! ...). The arguments are packed into 8-byte slots, as `vprintf` reads them.
//!
//! A string literal argument is folded into the format string, or passed NUL-terminated to
//! `%s` when it has a width or precision.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Error, Expr, ExprLit, Lit, LitStr, Result, Token};

/// The macro's input: the format string, then the arguments.
struct Input {
    format: LitStr,
    args: Vec<Expr>,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> Result<Self> {
        let format: LitStr = input.parse().map_err(|e| {
            Error::new(
                e.span(),
                "gpu_printf! takes a format string literal first: gpu_printf!(\"x = {}\\n\", x)",
            )
        })?;
        let mut args = Vec::new();
        if input.parse::<Option<Token![,]>>()?.is_some() {
            let rest = Punctuated::<Expr, Token![,]>::parse_terminated(input)?;
            args.extend(rest);
        }
        Ok(Input { format, args })
    }
}

/// Where a padded value sits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Align {
    Left,
    Right,
}

/// The conversion a placeholder asks for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Style {
    Display,
    LowerHex,
    UpperHex,
    Octal,
    LowerExp,
    UpperExp,
    Pointer,
}

/// A parsed placeholder's format spec.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Spec {
    style: Style,
    align: Option<Align>,
    plus: bool,
    alternate: bool,
    zero: bool,
    width: u32,
    precision: Option<u32>,
}

impl Spec {
    const PLAIN: Spec = Spec {
        style: Style::Display,
        align: None,
        plus: false,
        alternate: false,
        zero: false,
        width: 0,
        precision: None,
    };
}

/// Which argument a placeholder prints.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ArgRef {
    /// The next one in order (`{}`).
    Next,
    /// By position (`{0}`).
    Index(usize),
    /// A variable captured by name (`{x}`).
    Named(String),
}

/// A piece of the format string.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Arg(ArgRef, Spec),
}

/// Parses a Rust format string; errors are messages (the caller attaches the span).
fn parse_format(format: &str) -> std::result::Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => {
                return Err("a lone `}` in the format string; write `}}` to print one".into());
            }
            '{' => {
                let mut body = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => body.push(c),
                        None => {
                            return Err(
                                "an unclosed `{` in the format string; write `{{` to print one"
                                    .into(),
                            );
                        }
                    }
                }
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(parse_placeholder(&body)?);
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

fn parse_placeholder(body: &str) -> std::result::Result<Piece, String> {
    let (argument, spec) = match body.split_once(':') {
        Some((argument, spec)) => (argument.trim(), Some(spec)),
        None => (body.trim(), None),
    };
    let arg = if argument.is_empty() {
        ArgRef::Next
    } else if let Ok(index) = argument.parse::<usize>() {
        ArgRef::Index(index)
    } else if is_identifier(argument) {
        ArgRef::Named(argument.to_owned())
    } else {
        return Err(format!("`{{{body}}}` names no argument"));
    };
    let spec = match spec {
        Some(spec) => parse_spec(spec).map_err(|why| format!("`{{{body}}}`: {why}"))?,
        None => Spec::PLAIN,
    };
    Ok(Piece::Arg(arg, spec))
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

/// `[[fill]align][sign]['#']['0'][width]['.' precision][type]`.
fn parse_spec(spec: &str) -> std::result::Result<Spec, String> {
    let chars: Vec<char> = spec.chars().collect();
    let mut at = 0;
    let mut out = Spec::PLAIN;
    let align_of = |c: char| match c {
        '<' => Some(Ok(Align::Left)),
        '>' => Some(Ok(Align::Right)),
        '^' => Some(Err("centring (`^`) has no C equivalent")),
        _ => None,
    };
    if chars.len() >= 2
        && let Some(align) = align_of(chars[1])
    {
        if chars[0] != ' ' {
            return Err(format!(
                "the fill `{}` has no C equivalent (C pads with spaces, or zeros with `0`)",
                chars[0]
            ));
        }
        out.align = Some(align?);
        at = 2;
    } else if let Some(align) = chars.first().and_then(|&c| align_of(c)) {
        out.align = Some(align?);
        at = 1;
    }
    match chars.get(at) {
        Some('+') => {
            out.plus = true;
            at += 1;
        }
        Some('-') => at += 1,
        _ => {}
    }
    if chars.get(at) == Some(&'#') {
        out.alternate = true;
        at += 1;
    }
    if chars.get(at) == Some(&'0') {
        out.zero = true;
        at += 1;
    }
    let number = |at: &mut usize| -> std::result::Result<Option<u32>, String> {
        let start = *at;
        while chars.get(*at).is_some_and(|c| c.is_ascii_digit()) {
            *at += 1;
        }
        if *at == start {
            return Ok(None);
        }
        let digits: String = chars[start..*at].iter().collect();
        if chars.get(*at) == Some(&'$') {
            return Err("widths and precisions from arguments (`$`) are not supported".into());
        }
        digits
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= 1000)
            .map(Some)
            .ok_or_else(|| format!("{digits} is too large a width or precision"))
    };
    if let Some(width) = number(&mut at)? {
        out.width = width;
    }
    if chars.get(at) == Some(&'.') {
        at += 1;
        if chars.get(at) == Some(&'*') {
            return Err("precisions from arguments (`.*`) are not supported".into());
        }
        out.precision =
            Some(number(&mut at)?.ok_or("a `.` must be followed by the precision's digits")?);
    }
    let rest: String = chars[at..].iter().collect();
    out.style = match rest.as_str() {
        "" | "?" => Style::Display,
        "x" | "x?" => Style::LowerHex,
        "X" | "X?" => Style::UpperHex,
        "o" => Style::Octal,
        "e" => Style::LowerExp,
        "E" => Style::UpperExp,
        "p" => Style::Pointer,
        "b" => return Err("binary (`b`) has no C conversion; print it with `{:x}`".into()),
        other if other.chars().any(|c| c.is_alphabetic() || c == '_') && other.ends_with('$') => {
            return Err("widths and precisions from arguments (`$`) are not supported".into());
        }
        other => return Err(format!("`{other}` is not a format this macro knows")),
    };
    if out.alternate && out.style != Style::LowerHex {
        return Err("`#` is supported with `x` only (`{:#x}` prints `0x...`)".into());
    }
    if out.precision.is_some() && out.style != Style::Display {
        return Err("a precision goes with `{:.N}` (a float or a string) only".into());
    }
    Ok(out)
}

/// The format string as text and placeholders (indices into the resolved placeholders).
enum Layout {
    Text(String),
    Placeholder(usize),
}

/// The string literal an argument is, if it is one.
fn string_literal(expr: &Expr) -> Option<&LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        Expr::Paren(inner) => string_literal(&inner.expr),
        Expr::Group(inner) => string_literal(&inner.expr),
        _ => None,
    }
}

pub fn expand(input: TokenStream) -> Result<TokenStream> {
    let Input { format, args } = syn::parse2(input)?;
    let span = format.span();
    let pieces = parse_format(&format.value())
        .map_err(|why| Error::new(span, format!("gpu_printf!: {why}")))?;

    // Resolve every placeholder to an argument; captured names become extra arguments.
    let mut args: Vec<Expr> = args;
    let explicit = args.len();
    let mut used = vec![false; explicit];
    let mut next = 0;
    let mut resolved: Vec<(usize, Spec)> = Vec::new();
    let mut layout: Vec<Layout> = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => layout.push(Layout::Text(text)),
            Piece::Arg(argument, spec) => {
                let index = match argument {
                    ArgRef::Next => {
                        next += 1;
                        next - 1
                    }
                    ArgRef::Index(index) => index,
                    ArgRef::Named(name) => {
                        let ident = syn::Ident::new(&name, span);
                        args.push(syn::parse_quote!(#ident));
                        args.len() - 1
                    }
                };
                if index >= args.len() {
                    return Err(Error::new(
                        span,
                        format!(
                            "gpu_printf!: the format string has more placeholders than the {} \
                             argument(s) given",
                            explicit
                        ),
                    ));
                }
                if let Some(flag) = used.get_mut(index) {
                    *flag = true;
                }
                layout.push(Layout::Placeholder(resolved.len()));
                resolved.push((index, spec));
            }
        }
    }
    if let Some(unused) = used.iter().position(|u| !u) {
        return Err(Error::new(
            args[unused].span(),
            "gpu_printf!: this argument is never printed (the format string has no \
             placeholder for it)",
        ));
    }

    // String literals printed plainly become text; with a width or precision, NUL-terminated
    // strings for `%s`.
    let mut text_pieces: Vec<TokenStream> = Vec::new();
    let mut text_len = 0;
    let mut conversions = 0;
    let mut pending_text = String::new();
    let mut slots: Vec<(usize, Spec)> = Vec::new();
    let flush = |pending: &mut String, pieces: &mut Vec<TokenStream>| {
        if !pending.is_empty() {
            let text = std::mem::take(pending);
            pieces.push(quote!(::cuda_device::printf::Piece::Text(#text)));
        }
    };
    for item in &layout {
        match item {
            Layout::Text(text) => {
                text_len += text.len();
                pending_text.push_str(text);
            }
            Layout::Placeholder(slot) => {
                let (index, spec) = resolved[*slot];
                if let Some(literal) = string_literal(&args[index])
                    && spec == Spec::PLAIN
                {
                    let value = literal.value();
                    text_len += value.len();
                    pending_text.push_str(&value);
                    continue;
                }
                flush(&mut pending_text, &mut text_pieces);
                let param = format_ident!("A{}", index);
                let spec_tokens = spec_tokens(&spec);
                text_pieces.push(quote! {
                    ::cuda_device::printf::Piece::Arg(
                        #spec_tokens,
                        <#param as ::cuda_device::printf::PrintfArg>::KIND,
                    )
                });
                conversions += 1;
                slots.push((index, spec));
            }
        }
    }
    flush(&mut pending_text, &mut text_pieces);
    let size = 2 * text_len + conversions * MAX_CONVERSION_BYTES + 1;

    // The arguments that reach `vprintf` (string literals folded into the text do not).
    let mut passed: Vec<usize> = slots.iter().map(|(i, _)| *i).collect();
    passed.sort_unstable();
    passed.dedup();
    let params: Vec<syn::Ident> = passed.iter().map(|i| format_ident!("A{}", i)).collect();
    let values: Vec<syn::Ident> = passed.iter().map(|i| format_ident!("a{}", i)).collect();
    let bounds: Vec<TokenStream> = passed
        .iter()
        .map(|&i| {
            let mut traits = vec![quote!(::cuda_device::printf::PrintfArg)];
            for (_, spec) in slots.iter().filter(|(j, _)| *j == i) {
                let is_literal = string_literal(&args[i]).is_some();
                traits.push(match spec.style {
                    Style::Display => quote!(::cuda_device::printf::FormatDisplay),
                    Style::LowerHex | Style::UpperHex | Style::Octal => {
                        quote!(::cuda_device::printf::FormatRadix)
                    }
                    Style::LowerExp | Style::UpperExp => quote!(::cuda_device::printf::FormatExp),
                    Style::Pointer => quote!(::cuda_device::printf::FormatPointer),
                });
                if spec.precision.is_some() && !is_literal {
                    traits.push(quote!(::cuda_device::printf::FormatPrecision));
                }
            }
            quote!(#(#traits)+*)
        })
        .collect();
    let arg_values: Vec<TokenStream> = passed
        .iter()
        .map(|&i| match string_literal(&args[i]) {
            Some(literal) => quote_spanned! {literal.span()=>
                ::cuda_device::printf::CStrLiteral(::core::concat!(#literal, "\0").as_bytes())
            },
            None => {
                let expr = &args[i];
                quote!(#expr)
            }
        })
        .collect();
    let slot_values: Vec<TokenStream> = slots
        .iter()
        .map(|(i, spec)| {
            let value = format_ident!("a{}", i);
            let bits = matches!(spec.style, Style::LowerHex | Style::UpperHex | Style::Octal);
            quote!(::cuda_device::printf::PrintfArg::slot(#value, #bits))
        })
        .collect();
    let count = slot_values.len();
    let call_args: Vec<TokenStream> = arg_values
        .iter()
        .zip(&passed)
        .map(|(value, &i)| quote_spanned!(args[i].span()=> #value))
        .collect();

    Ok(quote! {
        {
            struct __GpuPrintfFormat<#(#params),*>(
                ::core::marker::PhantomData<(#(#params,)*)>,
            );
            impl<#(#params: ::cuda_device::printf::PrintfArg),*> __GpuPrintfFormat<#(#params),*> {
                const C_FORMAT: [u8; #size] =
                    ::cuda_device::printf::c_format::<#size>(&[#(#text_pieces),*]);
            }
            fn __gpu_printf<#(#params: #bounds),*>(#(#values: #params),*) {
                let format: &'static [u8; #size] = &__GpuPrintfFormat::<#(#params),*>::C_FORMAT;
                let slots: [u64; #count] = [#(#slot_values),*];
                // SAFETY: `format` is a NUL-terminated C format string with one conversion
                // per slot, each reading the 8 bytes its argument's kind was packed into.
                unsafe {
                    ::cuda_device::printf::vprintf(format.as_ptr(), slots.as_ptr().cast::<u8>());
                }
            }
            __gpu_printf(#(#call_args),*)
        }
    })
}

/// Mirrors `cuda_device::printf::MAX_CONVERSION_BYTES`.
const MAX_CONVERSION_BYTES: usize = 32;

fn spec_tokens(spec: &Spec) -> TokenStream {
    let style = match spec.style {
        Style::Display => quote!(Display),
        Style::LowerHex => quote!(LowerHex),
        Style::UpperHex => quote!(UpperHex),
        Style::Octal => quote!(Octal),
        Style::LowerExp => quote!(LowerExp),
        Style::UpperExp => quote!(UpperExp),
        Style::Pointer => quote!(Pointer),
    };
    let align = match spec.align {
        None => quote!(::core::option::Option::None),
        Some(Align::Left) => {
            quote!(::core::option::Option::Some(
                ::cuda_device::printf::Align::Left
            ))
        }
        Some(Align::Right) => {
            quote!(::core::option::Option::Some(
                ::cuda_device::printf::Align::Right
            ))
        }
    };
    let precision = match spec.precision {
        None => quote!(::core::option::Option::None),
        Some(p) => quote!(::core::option::Option::Some(#p)),
    };
    let (plus, alternate, zero, width) = (spec.plus, spec.alternate, spec.zero, spec.width);
    quote! {
        ::cuda_device::printf::Spec {
            style: ::cuda_device::printf::Style::#style,
            align: #align,
            plus: #plus,
            alternate: #alternate,
            zero: #zero,
            width: #width,
            precision: #precision,
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::*;

    #[test]
    fn format_strings_parse() {
        let pieces = parse_format("i = {} x = {:.3} {{ok}} {0:>8} {name:#010x}\n").unwrap();
        assert_eq!(pieces[0], Piece::Text("i = ".into()));
        assert_eq!(pieces[1], Piece::Arg(ArgRef::Next, Spec::PLAIN));
        assert_eq!(
            pieces[3],
            Piece::Arg(
                ArgRef::Next,
                Spec {
                    precision: Some(3),
                    ..Spec::PLAIN
                }
            )
        );
        assert_eq!(pieces[4], Piece::Text(" {ok} ".into()));
        assert_eq!(
            pieces[5],
            Piece::Arg(
                ArgRef::Index(0),
                Spec {
                    align: Some(Align::Right),
                    width: 8,
                    ..Spec::PLAIN
                }
            )
        );
        assert_eq!(
            pieces[7],
            Piece::Arg(
                ArgRef::Named("name".into()),
                Spec {
                    style: Style::LowerHex,
                    alternate: true,
                    zero: true,
                    width: 10,
                    ..Spec::PLAIN
                }
            )
        );
        assert_eq!(pieces[8], Piece::Text("\n".into()));
        let spec = parse_spec(" <+12e").unwrap();
        assert_eq!(spec.align, Some(Align::Left));
        assert!(spec.plus);
        assert_eq!((spec.width, spec.style), (12, Style::LowerExp));
    }

    #[test]
    fn bad_format_strings_are_explained() {
        let err = |f: &str| parse_format(f).unwrap_err();
        assert!(err("x = {").contains("unclosed"));
        assert!(err("x = }").contains("lone"));
        assert!(err("{:^8}").contains("centring"));
        assert!(err("{:*>8}").contains("fill `*`"));
        assert!(err("{:b}").contains("binary"));
        assert!(err("{:.*}").contains("`.*`"));
        assert!(err("{:width$}").contains("`$`"));
        assert!(err("{:#o}").contains("`#`"));
        assert!(err("{:.2x}").contains("precision"));
        assert!(err("{:q}").contains("`q`"));
        assert!(err("{1x}").contains("names no argument"));
    }

    #[test]
    fn expansion_packs_arguments_and_folds_literals() {
        let out = expand(quote!("i = {} x = {:.3} {} {:>6}\n", i, x, "lit", "pad"))
            .unwrap()
            .to_string();
        // `i`, `x` and the padded literal reach vprintf; the plain literal is text.
        assert!(out.contains("fn __gpu_printf < A0 :"), "{out}");
        assert!(out.contains("FormatPrecision"), "{out}");
        assert!(!out.contains("A2"), "{out}");
        assert!(out.contains("Piece :: Text (\" lit \")"), "{out}");
        assert!(out.contains("concat ! (\"pad\" , \"\\0\")"), "{out}");
        assert!(out.contains("let slots : [u64 ; 3usize]"), "{out}");
        assert!(out.contains("vprintf"), "{out}");
        let captured = expand(quote!("{n:x}")).unwrap().to_string();
        assert!(captured.contains("__gpu_printf (n)"), "{captured}");
        assert!(captured.contains("slot (a0 , true)"), "{captured}");
        let none = expand(quote!("hello\n")).unwrap().to_string();
        assert!(none.contains("let slots : [u64 ; 0usize] = []"), "{none}");
    }

    #[test]
    fn argument_counts_are_checked() {
        let err = |t: TokenStream| expand(t).unwrap_err().to_string();
        assert!(err(quote!("{} {}", a)).contains("more placeholders"));
        assert!(err(quote!("{}", a, b)).contains("never printed"));
        assert!(err(quote!(x)).contains("format string literal"));
    }
}

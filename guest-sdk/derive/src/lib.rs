//! `#[derive(PulumiType)]` for `pulumi_wasm_sdk::typed`: structs with named
//! fields become Pulumi objects (schema, decoding with property paths,
//! encoding with secrets), enums of unit variants become string enums.
//! See the `typed` module of `pulumi-wasm-sdk` for the attributes.

mod attrs;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Error, Fields, FieldsNamed, Result, parse_macro_input};

use attrs::{TypeAttrs, camel, docs, field_attrs, type_attrs};

#[proc_macro_derive(PulumiType, attributes(pulumi))]
pub fn derive_pulumi_type(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(&input).unwrap_or_else(Error::into_compile_error).into()
}

fn expand(input: &DeriveInput) -> Result<Tokens> {
    if !input.generics.params.is_empty() {
        return Err(Error::new_spanned(&input.generics, "PulumiType cannot be derived for generic types"));
    }
    let ty = type_attrs(&input.attrs)?;
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(fields) => object(input, &ty, fields),
            _ => Err(Error::new_spanned(&input.ident, "PulumiType needs a struct with named fields")),
        },
        Data::Enum(e) => enumeration(input, &ty, e),
        Data::Union(_) => Err(Error::new_spanned(&input.ident, "PulumiType cannot be derived for unions")),
    }
}

fn sdk() -> Tokens {
    quote!(::pulumi_wasm_sdk::typed)
}

fn optional(e: &Option<syn::Expr>) -> Tokens {
    match e {
        Some(e) => quote!(::core::option::Option::Some((#e) as f64)),
        None => quote!(::core::option::Option::None),
    }
}

fn token(ty: &TypeAttrs) -> Tokens {
    match &ty.token {
        Some(t) => quote!(::core::option::Option::Some(#t)),
        None => quote!(::core::option::Option::None),
    }
}

fn object(input: &DeriveInput, ty: &TypeAttrs, fields: &FieldsNamed) -> Result<Tokens> {
    let sdk = sdk();
    let (mut props, mut decode, mut encode, mut build) = (vec![], vec![], vec![], vec![]);
    // Fields with `min` or `max`, which must be numbers (`Bounded`).
    let mut bounded = vec![];
    let mut autonamed = false;
    for (i, field) in fields.named.iter().enumerate() {
        let ident = field.ident.as_ref().expect("named field");
        let fty = &field.ty;
        let var = format_ident!("__field{}", i);
        let a = field_attrs(&field.attrs)?;
        build.push(quote!(#ident: #var?));
        if a.flatten {
            let other = a.name.is_some() || a.secret || a.replace || a.default.is_some() || a.autoname;
            if other || a.min.is_some() || a.max.is_some() {
                return Err(Error::new_spanned(ident, "`flatten` takes no other attributes"));
            }
            props.push(quote!(out.extend_from_slice(<#fty as #sdk::Object>::properties());));
            decode.push(quote! {
                let #var = <#fty as #sdk::Object>::decode_from(m, cx);
                __at += <#fty as #sdk::Object>::properties().len();
            });
            encode.push((None, quote!(<#fty as #sdk::Object>::encode_into(&self.#ident, out);)));
            continue;
        }
        let name = a.name.clone().unwrap_or_else(|| camel(&ident.to_string()));
        let doc = docs(&field.attrs);
        let mut p = quote!(#sdk::Property::of::<#fty>(#name, #doc));
        if a.secret {
            p = quote!(#p.secret());
        }
        if a.replace || ty.replace {
            p = quote!(#p.replace_on_changes());
        }
        if a.autoname {
            if a.default.is_some() {
                return Err(Error::new_spanned(ident, "an `autoname` field has no `default`: Check names it"));
            }
            if autonamed {
                return Err(Error::new_spanned(ident, "a resource has one name: one `autoname` field"));
            }
            autonamed = true;
            p = quote!(#p.autoname());
        }
        match &a.default {
            Some(Some(e)) => p = quote!(#p.with_default(<#fty as #sdk::Defaulted>::given(#e))),
            Some(None) => {
                p = quote!(#p.with_default(#sdk::PulumiType::encode(&<#fty as ::core::default::Default>::default())))
            }
            None => {}
        }
        props.push(quote!(out.push(#p);));
        if a.min.is_some() || a.max.is_some() {
            bounded.push(fty.clone());
        }
        let (min, max) = (optional(&a.min), optional(&a.max));
        decode.push(quote! {
            let #var = cx.property::<#fty>(m, &__props[__at], #min, #max);
            __at += 1;
        });
        let secret = a.secret;
        let put = quote!(#sdk::put(out, #name, #sdk::PulumiType::encode(&self.#ident), #secret););
        encode.push((Some(name), put));
    }
    let encode = sorted_runs(encode);
    let ident = &input.ident;
    let name = ident.to_string();
    let doc = docs(&input.attrs);
    let tok = token(ty);
    let bounded = (!bounded.is_empty()).then(|| {
        quote! {
            const _: () = {
                fn bounded<T: #sdk::Bounded>() {}
                #(let _: fn() = bounded::<#bounded>;)*
            };
        }
    });
    Ok(quote! {
        #bounded
        #[automatically_derived]
        impl #sdk::Defaulted for #ident {
            type Given = Self;
            fn given(v: Self) -> #sdk::Value {
                #sdk::PulumiType::encode(&v)
            }
        }
        #[automatically_derived]
        impl #sdk::PulumiType for #ident {
            const UNKNOWN: #sdk::UnknownKind = #sdk::UnknownKind::Object;
            fn schema(types: &mut #sdk::Types) -> #sdk::Json {
                types.object::<Self>()
            }
            fn decode(v: &#sdk::Value, cx: &mut #sdk::Decoder) -> ::core::option::Option<Self> {
                cx.object::<Self>(v)
            }
            fn decode_node(
                n: ::pulumi_wasm_sdk::__private::words::Node<'_>,
                cx: &mut #sdk::Decoder,
            ) -> ::core::option::Option<Self> {
                cx.object_node::<Self>(n)
            }
            fn encode(&self) -> #sdk::Value {
                #sdk::Value::Object(#sdk::Object::to_map(self))
            }
            fn normalize(v: &mut #sdk::Value) {
                #sdk::normalize_object::<Self>(v)
            }
            fn replace_paths() -> ::std::vec::Vec<::std::string::String> {
                #sdk::object_replace_paths::<Self>()
            }
        }
        #[automatically_derived]
        impl #sdk::Object for #ident {
            const NAME: &'static str = #name;
            const TOKEN: ::core::option::Option<&'static str> = #tok;
            const DESCRIPTION: &'static str = #doc;
            fn properties() -> &'static [#sdk::Property] {
                static PROPERTIES: ::std::sync::OnceLock<::std::vec::Vec<#sdk::Property>> =
                    ::std::sync::OnceLock::new();
                PROPERTIES.get_or_init(|| {
                    #[allow(unused_mut)]
                    let mut out = ::std::vec::Vec::new();
                    #(#props)*
                    out
                })
            }
            fn resource_replace_paths() -> ::std::borrow::Cow<'static, [::std::string::String]> {
                static PATHS: ::std::sync::OnceLock<::std::vec::Vec<::std::string::String>> =
                    ::std::sync::OnceLock::new();
                ::std::borrow::Cow::Borrowed(
                    PATHS.get_or_init(|| #sdk::replace_paths_from_top(<Self as #sdk::Object>::properties())),
                )
            }
            fn decode_fields(m: &#sdk::PropertyMap, cx: &mut #sdk::Decoder) -> ::core::option::Option<Self> {
                <Self as #sdk::Object>::decode_from(m, cx)
            }
            #[allow(unused_variables, unused_assignments, unused_mut)]
            fn decode_from<S: ::pulumi_wasm_sdk::__private::words::Source + ?::core::marker::Sized>(
                m: &S,
                cx: &mut #sdk::Decoder,
            ) -> ::core::option::Option<Self> {
                // Each field's `Property` is at its place in `properties()`,
                // after those of the flattened fields before it.
                let __props = <Self as #sdk::Object>::properties();
                let mut __at = 0usize;
                // Every field is decoded before any `?`, so all failures are reported.
                #(#decode)*
                ::core::option::Option::Some(Self { #(#build),* })
            }
            #[allow(unused_variables)]
            fn encode_into(&self, out: &mut #sdk::Fields) {
                #(#encode)*
            }
        }
        #[automatically_derived]
        impl ::core::convert::From<#ident> for #sdk::Value {
            fn from(v: #ident) -> Self {
                #sdk::PulumiType::encode(&v)
            }
        }
    })
}

/// The fields' encodings with each run of named fields between flattened
/// ones sorted by name: the pairs then need (almost) no sorting at run
/// time, where sorting a small state's unsorted pairs was ~6% of its
/// Create natively. Flattened fields keep their places, so of two fields
/// with one name the later still wins.
fn sorted_runs(encode: Vec<(Option<String>, Tokens)>) -> Vec<Tokens> {
    let mut out = Vec::with_capacity(encode.len());
    let mut run: Vec<(String, Tokens)> = vec![];
    for (name, tokens) in encode {
        match name {
            Some(name) => run.push((name, tokens)),
            None => {
                run.sort_by(|a, b| a.0.cmp(&b.0));
                out.extend(run.drain(..).map(|(_, t)| t));
                out.push(tokens);
            }
        }
    }
    run.sort_by(|a, b| a.0.cmp(&b.0));
    out.extend(run.into_iter().map(|(_, t)| t));
    out
}

fn enumeration(input: &DeriveInput, ty: &TypeAttrs, data: &syn::DataEnum) -> Result<Tokens> {
    let sdk = sdk();
    if data.variants.is_empty() {
        return Err(Error::new_spanned(&input.ident, "PulumiType needs at least one variant"));
    }
    let (mut values, mut docs_, mut decode, mut encode) = (vec![], vec![], vec![], vec![]);
    for (i, v) in data.variants.iter().enumerate() {
        if !matches!(v.fields, Fields::Unit) {
            return Err(Error::new_spanned(v, "PulumiType enums are string enums: variants take no fields"));
        }
        let a = field_attrs(&v.attrs)?;
        let value = a.name.unwrap_or_else(|| v.ident.to_string());
        let ident = &v.ident;
        decode.push(quote!(#i => ::core::option::Option::Some(Self::#ident),));
        encode.push(quote!(Self::#ident => #value,));
        values.push(value);
        docs_.push(docs(&v.attrs));
    }
    let ident = &input.ident;
    let name = ident.to_string();
    let doc = docs(&input.attrs);
    let tok = token(ty);
    Ok(quote! {
        #[automatically_derived]
        impl #sdk::PulumiType for #ident {
            const UNKNOWN: #sdk::UnknownKind = #sdk::UnknownKind::String;
            fn schema(types: &mut #sdk::Types) -> #sdk::Json {
                types.enumeration(#name, #tok, #doc, &[#((#values, #docs_)),*])
            }
            fn decode(v: &#sdk::Value, cx: &mut #sdk::Decoder) -> ::core::option::Option<Self> {
                match cx.one_of(v, &[#(#values),*])? {
                    #(#decode)*
                    _ => ::core::option::Option::None,
                }
            }
            fn encode(&self) -> #sdk::Value {
                #sdk::Value::from(match self { #(#encode)* })
            }
        }
        #[automatically_derived]
        impl #sdk::Defaulted for #ident {
            type Given = Self;
            fn given(v: Self) -> #sdk::Value {
                #sdk::PulumiType::encode(&v)
            }
        }
        #[automatically_derived]
        impl ::core::convert::From<#ident> for #sdk::Value {
            fn from(v: #ident) -> Self {
                #sdk::PulumiType::encode(&v)
            }
        }
    })
}

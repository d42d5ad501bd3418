//! `#[pulumi(...)]` attributes and doc comments.

use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Meta, Result, Token};

/// Attributes of a field (or, for enums, of a variant).
#[derive(Default)]
pub struct FieldAttrs {
    pub name: Option<String>,
    pub secret: bool,
    pub replace: bool,
    /// `Some(None)`: `default` alone, i.e. `Default::default()`.
    pub default: Option<Option<Expr>>,
    pub min: Option<Expr>,
    pub max: Option<Expr>,
    pub flatten: bool,
    /// The resource's name, chosen by Check when the program gives none.
    pub autoname: bool,
}

/// Attributes of the struct or enum itself.
#[derive(Default)]
pub struct TypeAttrs {
    pub token: Option<String>,
    /// Every field replaces the resource when it changes.
    pub replace: bool,
}

fn pulumi_attrs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| a.path().is_ident("pulumi"))
}

pub fn field_attrs(attrs: &[Attribute]) -> Result<FieldAttrs> {
    let mut out = FieldAttrs::default();
    for attr in pulumi_attrs(attrs) {
        attr.parse_nested_meta(|meta| {
            let p = &meta.path;
            if p.is_ident("name") {
                out.name = Some(meta.value()?.parse::<LitStr>()?.value());
            } else if p.is_ident("secret") {
                out.secret = true;
            } else if p.is_ident("replace_on_changes") {
                out.replace = true;
            } else if p.is_ident("flatten") {
                out.flatten = true;
            } else if p.is_ident("autoname") {
                out.autoname = true;
            } else if p.is_ident("default") {
                out.default = Some(if meta.input.peek(Token![=]) { Some(meta.value()?.parse()?) } else { None });
            } else if p.is_ident("min") {
                out.min = Some(meta.value()?.parse()?);
            } else if p.is_ident("max") {
                out.max = Some(meta.value()?.parse()?);
            } else {
                return Err(meta.error(
                    "unknown attribute: expected name, secret, replace_on_changes, default, min, max, flatten or autoname",
                ));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

pub fn type_attrs(attrs: &[Attribute]) -> Result<TypeAttrs> {
    let mut out = TypeAttrs::default();
    for attr in pulumi_attrs(attrs) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("token") {
                out.token = Some(meta.value()?.parse::<LitStr>()?.value());
            } else if meta.path.is_ident("replace_on_changes") {
                out.replace = true;
            } else {
                return Err(meta.error("unknown attribute: expected token or replace_on_changes"));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// The doc comment as Markdown: lines joined into paragraphs.
pub fn docs(attrs: &[Attribute]) -> String {
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let Meta::NameValue(nv) = &attr.meta else { continue };
        let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &nv.value else { continue };
        let line = s.value();
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs.join("\n\n")
}

/// `min_upper` -> `minUpper`: Pulumi property names are camelCase.
pub fn camel(ident: &str) -> String {
    let ident = ident.strip_prefix("r#").unwrap_or(ident);
    let mut out = String::with_capacity(ident.len());
    let mut upper = false;
    for c in ident.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::camel;

    #[test]
    fn camel_case() {
        assert_eq!(camel("min_upper"), "minUpper");
        assert_eq!(camel("b64_url"), "b64Url");
        assert_eq!(camel("r#type"), "type");
        assert_eq!(camel("length"), "length");
    }
}

//! The guard between a component and the engine: what a `construct` or
//! `call` may register, read and answer with, and where its resources go
//! (see [`Reach`] for the packages it may reach).

use std::sync::Arc;

use futures::future::BoxFuture;

use super::*;

/// Where a `construct`'s or a `call`'s registrations and reads may put
/// their resources, besides under one the same call registered.
#[derive(Clone, Debug)]
pub enum Home {
    /// A `construct`: the component asked for is registered under the
    /// parent the request gave, with the aliases the program gave it, and
    /// the rest go under it.
    Component { asked: Asked<'static>, aliases: Vec<types::Alias> },
    /// A `call`: under the component it is called on (its `__self__`
    /// argument, if it is of the method's type).
    Under(Option<String>),
}

/// `inner`, letting through only what `reach` allows.
pub(in crate::runtime) fn guarded(inner: Arc<dyn ResourceMonitor>, reach: Reach) -> Arc<dyn ResourceMonitor> {
    Arc::new(Guarded { inner, reach, registered: Default::default() })
}

struct Guarded {
    inner: Arc<dyn ResourceMonitor>,
    reach: Reach,
    /// The URNs registered through this monitor: the only ones whose
    /// outputs it may set (the engine takes outputs for any resource whose
    /// registration is pending, custom ones of other packages among them).
    /// With each, the component it is, if it is a local one.
    registered: std::sync::Mutex<std::collections::HashMap<String, Option<Asked<'static>>>>,
}

/// A component as a `construct` request asks for it, or as registered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked<'a> {
    pub type_: std::borrow::Cow<'a, str>,
    pub name: std::borrow::Cow<'a, str>,
    pub parent: std::borrow::Cow<'a, str>,
}

impl<'a> Asked<'a> {
    pub fn new(type_: &'a str, name: &'a str, parent: &'a str) -> Self {
        Asked { type_: type_.into(), name: name.into(), parent: parent.into() }
    }

    pub fn owned(&self) -> Asked<'static> {
        let own = |c: &str| std::borrow::Cow::Owned(c.to_owned());
        Asked { type_: own(&self.type_), name: own(&self.name), parent: own(&self.parent) }
    }
}

impl Guarded {
    /// Where a registration or read puts its resource: at its [`Home`], or
    /// under a resource the same call registered. A resource elsewhere, at
    /// the stack's top level or under another of the user's resources,
    /// could have the URN of one the user declared there and take it over.
    /// `asked`: the registration is of the component the construct asked for.
    fn check_parent(&self, what: &str, type_: &str, name: &str, asked: bool, parent: &str) -> MonitorResult<()> {
        if asked || self.placeable(parent) {
            return Ok(());
        }
        let place = if parent.is_empty() { "the stack's top level".to_owned() } else { format!("{:?}", shown(parent)) };
        let rule = match &self.reach.home {
            Home::Component { .. } => "a component puts its resources under itself".to_owned(),
            Home::Under(Some(urn)) => {
                format!("a method puts its resources under the component it is called on ({:?})", shown(urn))
            }
            Home::Under(None) => {
                "a call with no `__self__` of the method's type has no component to put resources under".to_owned()
            }
        };
        Err(self.reach.refuse(format!(
            "{what} {:?} named {:?} under {place}: {rule} (or under what it registered in the same call)",
            shown(type_),
            shown(name)
        )))
    }

    /// Whether a resource may go under `parent`: the component a method is
    /// called on, or a resource registered in the same call.
    fn placeable(&self, parent: &str) -> bool {
        !parent.is_empty()
            && (matches!(&self.reach.home, Home::Under(Some(urn)) if urn == parent)
                || self.registered.lock().unwrap_or_else(|p| p.into_inner()).contains_key(parent))
    }

    /// An alias names an earlier identity whose state the engine carries
    /// over, so it is held to where the registration itself may go: the
    /// component asked for keeps the aliases the program gave it and no
    /// others (its parent is the program's), and everything else only
    /// aliases under its own parent's kind (a spec of this stack and
    /// project with the same parent, or one `placeable`; a URN under a
    /// resource of its parent's types, stack and project). A URN names its
    /// parents' types, not their names, so another resource of the
    /// parent's types is not told apart.
    /// `given`: the program's aliases, when the registration is of the
    /// component asked for.
    fn check_alias_places(&self, r: &m::RegisterResourceRequest, given: Option<&[types::Alias]>) -> MonitorResult<()> {
        use types::{Alias, AliasParent};
        for alias in &r.options.aliases {
            let fits = match (given, alias) {
                (Some(given), _) => given.iter().any(|g| same_alias(g, alias)),
                // Another stack's or project's name would also be spliced
                // into the URN the engine builds, `::` and all.
                (None, Alias::Spec(spec)) if !spec.stack.is_empty() || !spec.project.is_empty() => false,
                (None, Alias::Spec(spec)) => match &spec.parent {
                    AliasParent::Inherit => true,
                    AliasParent::NoParent => false,
                    AliasParent::Urn(parent) => self.placeable(parent),
                },
                (None, Alias::Urn(urn)) => under_type_of(urn, &r.options.parent),
            };
            if !fits {
                let rule = match given {
                    Some(_) => "the component asked for takes only the aliases the program gave it",
                    None => "a component's resources alias only earlier identities under where they go now",
                };
                return Err(self.reach.refuse(format!(
                    "aliasing {:?} named {:?} to {}: {rule}",
                    shown(&r.type_),
                    shown(&r.name),
                    shown(&crate::text::bounded(format_args!("{alias:?}"), 400))
                )));
            }
        }
        Ok(())
    }
}

/// Whether two aliases are the same (the bindings derive no `PartialEq`).
fn same_alias(a: &types::Alias, b: &types::Alias) -> bool {
    use types::{Alias, AliasParent};
    match (a, b) {
        (Alias::Urn(a), Alias::Urn(b)) => a == b,
        (Alias::Spec(a), Alias::Spec(b)) => {
            let parent = match (&a.parent, &b.parent) {
                (AliasParent::Inherit, AliasParent::Inherit) | (AliasParent::NoParent, AliasParent::NoParent) => true,
                (AliasParent::Urn(a), AliasParent::Urn(b)) => a == b,
                _ => false,
            };
            parent && (&a.name, &a.type_, &a.stack, &a.project) == (&b.name, &b.type_, &b.stack, &b.project)
        }
        _ => false,
    }
}

/// Whether `urn` (`urn:pulumi:<stack>::<project>::<parent types$>type::<name>`)
/// names a resource of `parent`'s stack and project whose parents' types
/// are `parent`'s own and its type: a child of `parent`, or of another
/// resource of the same types. The stack's children carry no parent type.
fn under_type_of(urn: &str, parent: &str) -> bool {
    fn parts(u: &str) -> Option<(&str, &str, &str, &str)> {
        let mut it = u.splitn(4, "::");
        Some((it.next()?, it.next()?, it.next()?, it.next()?))
    }
    let (Some((stack, project, types, _)), Some((parent_stack, parent_project, parent_types, _))) =
        (parts(urn), parts(parent))
    else {
        return false;
    };
    let parents = types.rsplit_once('$').map_or("", |(parents, _)| parents);
    let expected = if parent_types == "pulumi:pulumi:Stack" { "" } else { parent_types };
    (stack, project) == (parent_stack, parent_project) && parents == expected
}

fn refused<T: Send + 'static>(e: types::Error) -> BoxFuture<'static, MonitorResult<T>> {
    Box::pin(async move { Err(e) })
}

impl ResourceMonitor for Guarded {
    fn register_resource(
        &self,
        request: m::RegisterResourceRequest,
    ) -> BoxFuture<'_, MonitorResult<m::RegisterResourceResponse>> {
        let (type_, name, parent) = (&request.type_, &request.name, &request.options.parent);
        let component = (!request.custom && !request.remote).then(|| Asked::new(type_, name, parent).owned());
        // The program's aliases, if this is the component the construct asked for.
        let given = match (&self.reach.home, &component) {
            (Home::Component { asked, aliases }, Some(component)) if component == asked => Some(&aliases[..]),
            _ => None,
        };
        let placed = self.check_parent("registering", type_, name, given.is_some(), parent);
        let placed = placed.and_then(|()| self.check_alias_places(&request, given));
        if let Err(e) = self.reach.register(&request).and(placed) {
            return refused(e);
        }
        Box::pin(async move {
            let response = self.inner.register_resource(request).await?;
            self.registered.lock().unwrap_or_else(|p| p.into_inner()).insert(response.urn.clone(), component);
            Ok(response)
        })
    }
    fn register_resource_outputs(&self, urn: String, outputs: types::Value) -> BoxFuture<'_, MonitorResult<()>> {
        if !self.registered.lock().unwrap_or_else(|p| p.into_inner()).contains_key(&urn) {
            let message = format!(
                "registering outputs of {:?}: a component sets the outputs only of resources it registered in the same call",
                shown(&urn)
            );
            return refused(self.reach.refuse(message));
        }
        self.inner.register_resource_outputs(urn, outputs)
    }
    fn invoke(&self, request: m::InvokeRequest) -> BoxFuture<'_, MonitorResult<m::InvokeResponse>> {
        let allowed = self.reach.check("invoking", &request.token, &request.version);
        match allowed.and_then(|()| self.reach.check_provider("invoking with provider", &request.provider)) {
            Ok(()) => self.inner.invoke(request),
            Err(e) => refused(e),
        }
    }
    fn read_resource(&self, request: m::ReadResourceRequest) -> BoxFuture<'_, MonitorResult<m::ReadResourceResponse>> {
        let allowed = self.reach.check("reading", &request.type_, &request.version);
        let allowed =
            allowed.and_then(|()| self.check_parent("reading", &request.type_, &request.name, false, &request.parent));
        match allowed.and_then(|()| self.reach.check_provider("reading with provider", &request.provider)) {
            Ok(()) => self.inner.read_resource(request),
            Err(e) => refused(e),
        }
    }
    /// The program's SDK takes the answer's URN as its component's: it
    /// parents resources to it and resolves outputs against it. It must be
    /// the component the program asked for (its type, name and parent),
    /// registered as a local component in the same call; anything else
    /// would be another resource of the user's state.
    fn answer_urn(&self, urn: &str, asked: &Asked<'_>) -> MonitorResult<()> {
        let registered = self.registered.lock().unwrap_or_else(|p| p.into_inner());
        if registered.get(urn).is_some_and(|c| c.as_ref() == Some(asked)) {
            return Ok(());
        }
        Err(self.reach.refuse(format!(
            "construct answered with {:?}: a component answers with the URN of the {:?} named {:?} it registered \
             as a component in the same call, under the parent it was given",
            shown(urn),
            shown(&asked.type_),
            shown(&asked.name)
        )))
    }
}

/// An answer of a call that used the monitor, as [`ResourceMonitor::answer_urn`] checks it.
pub trait MonitorAnswer {
    /// The URN the answer gives as the component's, if any.
    fn component_urn(&self) -> Option<&str>;
}

impl MonitorAnswer for rp::ConstructResponse {
    fn component_urn(&self) -> Option<&str> {
        Some(&self.urn)
    }
}

impl MonitorAnswer for rp::CallResponse {
    fn component_urn(&self) -> Option<&str> {
        None
    }
}

/// Names the deployment of a request whose call may use the monitor, and
/// the resource hooks it passes on.
pub trait WithMonitor {
    fn deployment(&self) -> &rp::Deployment;
    fn hooks(&self) -> Vec<String>;
    /// The component the call must answer with, if any.
    fn asked(&self) -> Option<Asked<'_>>;
    /// Where the call's resources go.
    fn home(&self) -> Home;
}

impl WithMonitor for rp::ConstructRequest {
    fn deployment(&self) -> &rp::Deployment {
        &self.deployment
    }
    fn hooks(&self) -> Vec<String> {
        self.resource_hooks.as_ref().map(|h| hook_names(h).cloned().collect()).unwrap_or_default()
    }
    fn asked(&self) -> Option<Asked<'_>> {
        Some(Asked::new(&self.type_, &self.name, &self.parent))
    }
    fn home(&self) -> Home {
        Home::Component {
            asked: Asked::new(&self.type_, &self.name, &self.parent).owned(),
            aliases: self.aliases.clone(),
        }
    }
}

impl WithMonitor for rp::CallRequest {
    fn deployment(&self) -> &rp::Deployment {
        &self.deployment
    }
    fn hooks(&self) -> Vec<String> {
        vec![]
    }
    fn asked(&self) -> Option<Asked<'_>> {
        None
    }
    /// `__self__` only if it is a resource of the method's type (the
    /// token's, before `/`): a method's result may be a reference to any
    /// resource, which the program may call a method on in turn. Never one
    /// of the engine's own (the stack).
    fn home(&self) -> Home {
        let type_ = self.token.split_once('/').map(|(type_, _)| type_).filter(|t| !t.starts_with("pulumi:pulumi:"));
        Home::Under(self_urn(&self.args).filter(|urn| urn_type(urn).is_some() && urn_type(urn) == type_))
    }
}

/// The URN of a `call`'s `__self__` argument: a resource reference, or
/// the URN itself when the program takes no references, either perhaps
/// secret or an output value. The host built these arguments from the
/// engine's.
fn self_urn(args: &types::Value) -> Option<String> {
    use crate::runtime::bindings::spans::range;
    use crate::runtime::bindings::tree::{Node, Str};
    let v = crate::runtime::bindings::words::unpack_trusted(args);
    let text = |s| v.text.get(range(s));
    let Some(Node::Object(fields)) = v.nodes.first() else { return None };
    let &(_, mut at) = v.fields.get(range(*fields))?.iter().find(|(k, _)| text(*k) == Some("__self__"))?;
    // Each wrapper's child comes later in the nodes (pre-order), so this ends.
    loop {
        match v.nodes.get(at as usize)? {
            Node::Secret(child) if *child > at => at = *child,
            Node::Output(o) => match o.value {
                Some(child) if child > at => at = child,
                _ => return None,
            },
            Node::ResourceReference(r) => return text(r.urn).map(str::to_owned),
            Node::String(Str::Short(s)) => return text(*s).map(str::to_owned),
            Node::String(Str::Long(s)) => return Some(s.clone()),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A method's component, however the engine sends its `__self__`.
    #[test]
    fn a_call_s_self_is_found_in_its_arguments() {
        use crate::convert::value::{sig, struct_into_wit};
        use prost_types::{Struct, Value as V, value::Kind};
        let s = |t: &str| V { kind: Some(Kind::StringValue(t.into())) };
        let obj =
            |fields: &[(&str, V)]| Struct { fields: fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect() };
        let special = |signature: &str, fields: &[(&str, V)]| {
            let mut all = vec![(sig::KEY, s(signature))];
            all.extend(fields.iter().cloned());
            V { kind: Some(Kind::StructValue(obj(&all))) }
        };
        let urn = "urn:pulumi:dev::proj::pets:index:Kennel::k";
        let long = format!("urn:pulumi:dev::proj::pets:index:Kennel::{}", "k".repeat(2000));
        let reference = special(sig::RESOURCE_REFERENCE, &[("urn", s(urn))]);
        let secret = special(sig::SECRET, &[("value", reference.clone())]);
        let output = special(sig::OUTPUT_VALUE, &[("value", secret.clone())]);
        let unknown = special(sig::OUTPUT_VALUE, &[]);
        let of = |v: Option<V>| {
            let mut fields = vec![("name", s("rex"))];
            fields.extend(v.map(|v| ("__self__", v)));
            self_urn(&struct_into_wit(obj(&fields)).unwrap())
        };
        for v in [reference, secret, output, s(urn)] {
            assert_eq!(of(Some(v.clone())).as_deref(), Some(urn), "{v:?}");
        }
        assert_eq!(of(Some(s(&long))), Some(long), "a long string is held apart from the text");
        for v in [None, Some(unknown), Some(V { kind: Some(Kind::NumberValue(1.0)) })] {
            assert_eq!(of(v.clone()), None, "{v:?}");
        }
    }

    /// An alias URN is under a parent when its parents' types, stack and
    /// project are the parent's (the stack's children carry no parent type).
    #[test]
    fn an_alias_urn_is_under_the_resources_of_its_parent_s_types() {
        let kennel = "urn:pulumi:dev::proj::pets:index:Kennel::k";
        let nested = "urn:pulumi:dev::proj::x:index:Group$pets:index:Kennel::k";
        let stack = "urn:pulumi:dev::proj::pulumi:pulumi:Stack::proj-dev";
        for (urn, parent) in [
            ("urn:pulumi:dev::proj::pets:index:Kennel$aws:iam:AccessKey::key", kennel),
            ("urn:pulumi:dev::proj::pets:index:Kennel$aws:iam:AccessKey::other-name", kennel),
            ("urn:pulumi:dev::proj::x:index:Group$pets:index:Kennel$aws:iam:AccessKey::key", nested),
            ("urn:pulumi:dev::proj::aws:iam:AccessKey::key", stack),
            ("urn:pulumi:dev::proj::pets:index:Kennel$aws:iam:AccessKey::a::b", kennel),
        ] {
            assert!(under_type_of(urn, parent), "{urn} under {parent}");
        }
        for (urn, parent) in [
            ("urn:pulumi:dev::proj::aws:iam:AccessKey::key", kennel),
            ("urn:pulumi:dev::proj::pets:index:Kennel$aws:iam:AccessKey::key", nested),
            ("urn:pulumi:dev::proj::x:index:Group$pets:index:Kennel$aws:iam:AccessKey::key", kennel),
            ("urn:pulumi:prod::proj::pets:index:Kennel$aws:iam:AccessKey::key", kennel),
            ("urn:pulumi:dev::other::pets:index:Kennel$aws:iam:AccessKey::key", kennel),
            ("urn:pulumi:dev::proj::pets:index:Kennel$aws:iam:AccessKey::key", stack),
            ("not a urn", kennel),
            ("urn:pulumi:dev::proj::pets:index:Kennel$aws:iam:AccessKey::key", "not a urn"),
        ] {
            assert!(!under_type_of(urn, parent), "{urn} not under {parent}");
        }
    }

    #[test]
    fn aliases_are_compared_whole() {
        use types::{Alias, AliasParent, AliasSpec};
        let spec = |name: &str, parent| {
            Alias::Spec(AliasSpec {
                name: name.into(),
                type_: String::new(),
                stack: String::new(),
                project: String::new(),
                parent,
            })
        };
        assert!(same_alias(&Alias::Urn("u".into()), &Alias::Urn("u".into())));
        assert!(!same_alias(&Alias::Urn("u".into()), &Alias::Urn("v".into())));
        assert!(same_alias(&spec("a", AliasParent::NoParent), &spec("a", AliasParent::NoParent)));
        assert!(!same_alias(&spec("a", AliasParent::NoParent), &spec("a", AliasParent::Inherit)));
        assert!(!same_alias(&spec("a", AliasParent::Urn("p".into())), &spec("a", AliasParent::Urn("q".into()))));
        assert!(!same_alias(&spec("a", AliasParent::Inherit), &spec("b", AliasParent::Inherit)));
        assert!(!same_alias(&spec("u", AliasParent::Inherit), &Alias::Urn("u".into())));
    }
}

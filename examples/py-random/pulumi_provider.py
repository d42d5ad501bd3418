"""The helper layer between `pulumi:provider@0.1.0` and a Python provider.

A provider author writes resources the way they write a Pulumi dynamic
provider (`check`, `diff`, `create`, `read`, `update`, `delete`, with the same
result classes) and sees plain Python values: dicts, lists, str, float, bool,
None, bytes, and small classes for what JSON cannot say (`Secret`, `Unknown`,
`Asset`, `Archive`, `ResourceReference`, `Output`). This module is the only
code that touches the WIT: it turns the flattened node lists into values and
back, requests into method calls, and raised errors into the WIT `error`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import resource_provider as rp
from wit_world.imports import context as _context
from wit_world.imports import logging as _logging
from wit_world.imports import types as wit

# ---------------------------------------------------------------------------
# Values

UNKNOWN_KINDS = {k.name.lower(): k for k in wit.UnknownKind}


@dataclass(frozen=True)
class Unknown:
    """A value not known yet: during a preview, inputs computed from other resources are unknown.

    `kind` is one of bool, number, string, array, asset, archive, object; `string` is the generic unknown.
    """

    kind: str = "string"


@dataclass(frozen=True)
class Secret:
    """A secret: the engine encrypts it in the state and masks it in output."""

    value: Any


@dataclass
class Asset:
    """A file-like blob: its contents come from `text`, a `path` or a `uri`."""

    text: Optional[str] = None
    path: Optional[str] = None
    uri: Optional[str] = None
    hash: Optional[str] = None


@dataclass
class Archive:
    """Named assets and archives, or a `path` or `uri` to an archive file."""

    assets: Optional[Dict[str, Union[Asset, "Archive"]]] = None
    path: Optional[str] = None
    uri: Optional[str] = None
    hash: Optional[str] = None


@dataclass(frozen=True)
class ResourceReference:
    """A reference to another resource; `id` is `Unknown` during a preview, None for components."""

    urn: str
    id: Union[str, Unknown, None] = None
    package_version: str = ""


@dataclass(frozen=True)
class Output:
    """A value with its secretness and dependencies; `known` is False when the value is not known yet."""

    value: Any = None
    known: bool = True
    secret: bool = False
    dependencies: List[str] = field(default_factory=list)


PropertyMap = Dict[str, Any]


def reveal(v: Any) -> Any:
    """The value without its secret wrapper(s)."""
    while isinstance(v, Secret):
        v = v.value
    return v


def contains_unknowns(v: Any) -> bool:
    """True when `v` is or contains an unknown (so it cannot be validated yet)."""
    if isinstance(v, Unknown):
        return True
    if isinstance(v, Secret):
        return contains_unknowns(v.value)
    if isinstance(v, Output):
        return not v.known or contains_unknowns(v.value)
    if isinstance(v, list):
        return any(contains_unknowns(x) for x in v)
    if isinstance(v, dict):
        return any(contains_unknowns(x) for x in v.values())
    return False


def from_wit(value: wit.Value) -> Any:
    """WIT value (a flattened tree) -> Python value."""
    nodes = value.nodes

    def at(i: int) -> Any:
        n = nodes[i]
        if isinstance(n, wit.Node_Null):
            return None
        if isinstance(n, (wit.Node_Bool, wit.Node_Number, wit.Node_String)):
            return n.value
        if isinstance(n, wit.Node_Bytes):
            return bytes(n.value)
        if isinstance(n, wit.Node_Array):
            return [at(c) for c in n.value]
        if isinstance(n, wit.Node_Object):
            return {k: at(c) for k, c in n.value}
        if isinstance(n, wit.Node_Secret):
            return Secret(at(n.value))
        if isinstance(n, wit.Node_Unknown):
            return Unknown(n.value.name.lower())
        if isinstance(n, wit.Node_Asset):
            return _asset_from_wit(n.value)
        if isinstance(n, wit.Node_Archive):
            a, src = n.value, n.value.source
            if isinstance(src, wit.ArchiveSource_Assets):
                return Archive(assets={k: at(c) for k, c in src.value}, hash=a.hash)
            if isinstance(src, wit.ArchiveSource_Path):
                return Archive(path=src.value, hash=a.hash)
            if isinstance(src, wit.ArchiveSource_Uri):
                return Archive(uri=src.value, hash=a.hash)
            return Archive(hash=a.hash)
        if isinstance(n, wit.Node_ResourceReference):
            r = n.value
            rid = r.id.value if isinstance(r.id, wit.ReferenceId_Known) else None if r.id is None else Unknown()
            return ResourceReference(r.urn, rid, r.package_version)
        if isinstance(n, wit.Node_Output):
            o = n.value
            known = o.value is not None
            return Output(at(o.value) if known else None, known, o.secret, list(o.dependencies))
        raise ProviderError("invalid-argument", f"unexpected node {n!r}")

    return at(0) if nodes else None


def _asset_from_wit(a: wit.Asset) -> Asset:
    s = a.source
    if isinstance(s, wit.AssetSource_Text):
        return Asset(text=s.value, hash=a.hash)
    if isinstance(s, wit.AssetSource_Path):
        return Asset(path=s.value, hash=a.hash)
    if isinstance(s, wit.AssetSource_Uri):
        return Asset(uri=s.value, hash=a.hash)
    return Asset(hash=a.hash)


def to_wit(value: Any) -> wit.Value:
    """Python value -> WIT value, its nodes in pre-order."""
    nodes: List[wit.Node] = []

    def push(v: Any) -> int:
        i = len(nodes)
        nodes.append(wit.Node_Null())
        nodes[i] = node(v)
        return i

    def node(v: Any) -> wit.Node:
        if v is None:
            return wit.Node_Null()
        if isinstance(v, bool):
            return wit.Node_Bool(v)
        if isinstance(v, (int, float)):
            return wit.Node_Number(float(v))
        if isinstance(v, str):
            return wit.Node_String(v)
        if isinstance(v, (bytes, bytearray)):
            return wit.Node_Bytes(bytes(v))
        if isinstance(v, (list, tuple)):
            return wit.Node_Array([push(x) for x in v])
        if isinstance(v, dict):
            return wit.Node_Object([(str(k), push(x)) for k, x in v.items()])
        if isinstance(v, Secret):
            return wit.Node_Secret(push(v.value))
        if isinstance(v, Unknown):
            return wit.Node_Unknown(UNKNOWN_KINDS[v.kind])
        if isinstance(v, Asset):
            return wit.Node_Asset(_asset_to_wit(v))
        if isinstance(v, Archive):
            if v.assets is not None:
                src: Optional[wit.ArchiveSource] = wit.ArchiveSource_Assets([(k, push(a)) for k, a in v.assets.items()])
            elif v.path is not None:
                src = wit.ArchiveSource_Path(v.path)
            elif v.uri is not None:
                src = wit.ArchiveSource_Uri(v.uri)
            else:
                src = None
            return wit.Node_Archive(wit.Archive(v.hash, src))
        if isinstance(v, ResourceReference):
            if v.id is None:
                rid: Optional[wit.ReferenceId] = None
            elif isinstance(v.id, Unknown):
                rid = wit.ReferenceId_Unknown()
            else:
                rid = wit.ReferenceId_Known(v.id)
            return wit.Node_ResourceReference(wit.ResourceReference(v.urn, rid, v.package_version))
        if isinstance(v, Output):
            child = push(v.value) if v.known else None
            return wit.Node_Output(wit.OutputValue(child, v.secret, list(v.dependencies)))
        raise ProviderError("failed", f"cannot send a {type(v).__name__} to the engine")

    push(value)
    return wit.Value(nodes)


def _asset_to_wit(a: Asset) -> wit.Asset:
    if a.text is not None:
        src: Optional[wit.AssetSource] = wit.AssetSource_Text(a.text)
    elif a.path is not None:
        src = wit.AssetSource_Path(a.path)
    elif a.uri is not None:
        src = wit.AssetSource_Uri(a.uri)
    else:
        src = None
    return wit.Asset(a.hash, src)


def _map(v: Optional[wit.Value]) -> PropertyMap:
    m = from_wit(v) if v is not None else {}
    return m if isinstance(m, dict) else {}


# ---------------------------------------------------------------------------
# Errors


class ProviderError(Exception):
    """An error with a gRPC status for the engine; any other exception is `failed`.

    `code` is one of unimplemented, invalid-argument, not-found, failed-precondition,
    unavailable, cancelled, failed.
    """

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


class InitFailedError(Exception):
    """Raise from `create` when the resource exists but could not be set up: the engine records `properties`."""

    def __init__(self, id: str, properties: PropertyMap, reasons: List[str], inputs: Optional[PropertyMap] = None):
        super().__init__("; ".join(reasons))
        self.id, self.properties, self.reasons, self.inputs = id, properties, reasons, inputs


_ERRORS = {
    "unimplemented": wit.Error_Unimplemented,
    "invalid-argument": wit.Error_InvalidArgument,
    "not-found": wit.Error_NotFound,
    "failed-precondition": wit.Error_FailedPrecondition,
    "unavailable": wit.Error_Unavailable,
    "cancelled": wit.Error_Cancelled,
    "failed": wit.Error_Failed,
}


def _to_wit_error(e: BaseException) -> wit.Error:
    if isinstance(e, ProviderError):
        return _ERRORS.get(e.code, wit.Error_Failed)(e.message)
    if isinstance(e, InitFailedError):
        inputs = to_wit(e.inputs) if e.inputs is not None else None
        return wit.Error_InitFailed(wit.InitFailure(e.id, to_wit(e.properties), inputs, list(e.reasons)))
    return wit.Error_Failed(f"{type(e).__name__}: {e}")


# ---------------------------------------------------------------------------
# Logging and the call context


class Logger:
    """Messages to the Pulumi CLI, tied to `urn` when given."""

    def __init__(self, urn: Optional[str] = None):
        self.urn = urn or None

    def _log(self, severity: _logging.Severity, message: str) -> None:
        _logging.log(severity, message, self.urn, False)

    def debug(self, message: str) -> None:
        self._log(_logging.Severity.DEBUG, message)

    def info(self, message: str) -> None:
        self._log(_logging.Severity.INFO, message)

    def warn(self, message: str) -> None:
        self._log(_logging.Severity.WARNING, message)

    def error(self, message: str) -> None:
        self._log(_logging.Severity.ERROR, message)


log = Logger()
"""Logs not tied to a resource."""


@dataclass
class Context:
    """What a call knows besides its properties."""

    urn: str
    name: str
    type: str
    # Seconds; 0 when unset.
    timeout: float = 0.0
    # The inputs the resource was last created or updated with (diff, update, read, delete).
    old_inputs: Optional[PropertyMap] = None
    # Properties whose changes the program asked to ignore (diff, update).
    ignore_changes: List[str] = field(default_factory=list)

    @property
    def log(self) -> Logger:
        """Messages to the Pulumi CLI about this resource."""
        return Logger(self.urn)

    def cancelled(self) -> bool:
        """True once the engine asked to cancel: stop and return promptly."""
        return _context.cancelled()


@dataclass
class InvokeContext:
    """What a function call knows besides its arguments."""

    token: str
    # True during a preview: arguments may be Unknown.
    preview: bool = False

    @property
    def log(self) -> Logger:
        return log


def _ctx(r: Any, **extra: Any) -> Context:
    return Context(urn=r.urn, name=r.name, type=r.type, **extra)


# ---------------------------------------------------------------------------
# Resources, shaped like `pulumi.dynamic.ResourceProvider`


@dataclass
class CheckFailure:
    property: str
    reason: str


@dataclass
class CheckResult:
    inputs: PropertyMap
    failures: List[CheckFailure] = field(default_factory=list)


@dataclass
class DiffResult:
    # None: derived from the other fields, or unknown when they are all empty.
    changes: Optional[bool] = None
    replaces: List[str] = field(default_factory=list)
    stables: List[str] = field(default_factory=list)
    delete_before_replace: bool = False
    # Top-level keys that changed.
    diffs: Optional[List[str]] = None
    # Property path (`keepers.k`, `tags["a.b"]`, `items[0]`) -> kind: add, add-replace,
    # delete, delete-replace, update, update-replace.
    detailed_diff: Optional[Dict[str, str]] = None


@dataclass
class CreateResult:
    id: str
    outs: PropertyMap = field(default_factory=dict)


@dataclass
class ReadResult:
    # Empty: the resource no longer exists.
    id: str = ""
    outs: PropertyMap = field(default_factory=dict)
    inputs: Optional[PropertyMap] = None


@dataclass
class UpdateResult:
    outs: PropertyMap = field(default_factory=dict)


@dataclass
class InvokeResult:
    outputs: PropertyMap = field(default_factory=dict)
    failures: List[CheckFailure] = field(default_factory=list)


class Resource:
    """One resource type. Override `create` and whatever else the resource supports.

    `create` and `update` are never called during a preview: `preview` is.
    """

    # The resource's JSON schema, as in a Pulumi package schema
    # (description, inputProperties, requiredInputs, properties, required).
    # Its `properties` that are not `inputProperties` are the outputs a default preview shows unknown.
    schema: Dict[str, Any] = {}

    def check(self, olds: PropertyMap, news: PropertyMap, ctx: Context) -> CheckResult:
        return CheckResult(news)

    def diff(self, id: str, olds: PropertyMap, news: PropertyMap, ctx: Context) -> DiffResult:
        return diff_properties(ctx.old_inputs, news, ignore_changes=ctx.ignore_changes)

    def create(self, inputs: PropertyMap, ctx: Context) -> CreateResult:
        raise ProviderError("unimplemented", f"{ctx.type} cannot be created")

    def preview(self, news: PropertyMap, olds: Optional[PropertyMap], ctx: Context) -> PropertyMap:
        """What a preview of a create (`olds` None) or an update shows; inputs may be Unknown.

        Default: the inputs, and every other output of the schema unknown (secret when the schema says so).
        """
        return preview_outputs(self.schema, {**(olds or {}), **news})

    def read(self, id: str, props: PropertyMap, ctx: Context) -> ReadResult:
        # An import sends no state and no inputs: without a read of its own
        # there is nothing to look the resource up by ID with, so it is
        # refused, not emptied.
        if not props and not ctx.old_inputs:
            why = f"{ctx.type} cannot be imported (read by ID '{id}' with no state): implement read"
            raise ProviderError("unimplemented", why)
        return ReadResult(id, props, ctx.old_inputs)

    def update(self, id: str, olds: PropertyMap, news: PropertyMap, ctx: Context) -> UpdateResult:
        raise ProviderError("unimplemented", f"{ctx.type} cannot be updated in place")

    def delete(self, id: str, props: PropertyMap, ctx: Context) -> None:
        pass


# ---------------------------------------------------------------------------
# Diffs


def same(a: Any, b: Any) -> bool:
    """Equal, ignoring secret wrappers; an unknown equals nothing."""
    a, b = reveal(a), reveal(b)
    if isinstance(a, Unknown) or isinstance(b, Unknown):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


_SIMPLE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _path_key(path: str, key: str) -> str:
    if _SIMPLE_KEY.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def diff_properties(
    olds: Optional[PropertyMap],
    news: PropertyMap,
    replace_on_changes: List[str] = (),
    ignore_changes: List[str] = (),
    delete_before_replace: bool = False,
) -> DiffResult:
    """A structural diff of two property maps with a detailed diff by path.

    A change under a key of `replace_on_changes` forces a replacement.
    """
    olds = olds or {}
    detailed: Dict[str, str] = {}
    diffs: List[str] = []
    replaces: List[str] = []
    stables: List[str] = []
    missing = object()

    def compare(path: str, a: Any, b: Any, replace: bool) -> None:
        def kind(k: str) -> None:
            detailed[path] = f"{k}-replace" if replace else k

        if a is missing and b is missing:
            return
        if a is missing:
            return kind("add")
        if b is missing:
            return kind("delete")
        x, y = reveal(a), reveal(b)
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                compare(_path_key(path, k), x.get(k, missing), y.get(k, missing), replace)
            return
        if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (p, q) in enumerate(zip(x, y)):
                compare(f"{path}[{i}]", p, q, replace)
            return
        if not same(x, y):
            kind("update")

    for key in sorted(set(olds) | set(news)):
        if key in ignore_changes:
            continue
        replace = key in replace_on_changes
        before = len(detailed)
        compare(_path_key("", key), olds.get(key, missing), news.get(key, missing), replace)
        if len(detailed) == before:
            stables.append(key)
        else:
            diffs.append(key)
            if replace:
                replaces.append(key)
    return DiffResult(
        changes=bool(diffs),
        replaces=replaces,
        stables=stables,
        delete_before_replace=delete_before_replace and bool(replaces),
        diffs=diffs,
        detailed_diff=detailed,
    )


def _unknown_kind(spec: Dict[str, Any]) -> str:
    ref = spec.get("$ref", "")
    if ref.endswith("/Asset"):
        return "asset"
    if ref.endswith("/Archive"):
        return "archive"
    return {"boolean": "bool", "integer": "number", "number": "number", "array": "array", "object": "object"}.get(
        spec.get("type", ""), "string"
    )


def preview_outputs(schema: Dict[str, Any], base: PropertyMap) -> PropertyMap:
    """`base`, and every output of `schema` that is not an input unknown (secret when the schema says so)."""
    outs = dict(base)
    inputs = schema.get("inputProperties", {})
    for name, spec in schema.get("properties", {}).items():
        if name not in inputs:
            u = Unknown(_unknown_kind(spec))
            outs[name] = Secret(u) if spec.get("secret") else u
    return outs


_DIFF_KINDS = {k.name.lower().replace("_", "-"): k for k in rp.DiffKind}


def _diff_to_wit(d: DiffResult) -> rp.DiffResponse:
    detailed = None
    if d.detailed_diff is not None:
        detailed = [(path, rp.PropertyDiff(_DIFF_KINDS[k], True)) for path, k in d.detailed_diff.items()]
    replaces = list(d.replaces or [])
    diffs = d.diffs
    if diffs is None:
        diffs = sorted(set(replaces) | {re.split(r"[.\[]", p)[0] for p, _ in detailed or []})
    if d.changes is None:
        changes = rp.DiffChanges.SOME if diffs else rp.DiffChanges.NONE if detailed is not None else rp.DiffChanges.UNKNOWN
    else:
        changes = rp.DiffChanges.SOME if d.changes else rp.DiffChanges.NONE
    return rp.DiffResponse(changes, replaces, list(d.stables or []), d.delete_before_replace, list(diffs), detailed)


# ---------------------------------------------------------------------------
# The WIT export


def _failures(fs: List[CheckFailure]) -> List[wit.CheckFailure]:
    return [wit.CheckFailure(f.property, f.reason) for f in fs or []]


def provider(
    name: str,
    version: str,
    resources: Dict[str, Resource],
    functions: Optional[Dict[str, Callable[[PropertyMap, InvokeContext], InvokeResult]]] = None,
    configure: Optional[Callable[[PropertyMap], None]] = None,
    schema: Optional[Dict[str, Any]] = None,
) -> type:
    """Builds the class componentize-py exports as `resource-provider`:
    `ResourceProvider = provider(...)` in the app module.

    `resources`: token (`<name>:<module>:<Type>`) -> Resource. `functions`: token -> function, for invoke.
    `configure`: called with the provider configuration once per instance. `schema`: package schema
    fields besides name, version and resources.
    """
    functions = functions or {}

    def resource(token: str) -> Resource:
        r = resources.get(token)
        if r is None:
            raise ProviderError("invalid-argument", f"unknown resource type '{token}'")
        return r

    def guard(f: Callable[..., Any]) -> Callable[..., Any]:
        # Every export returns its result or raises the WIT error.
        def call(self: Any, *args: Any) -> Any:
            try:
                return f(*args)
            except Err:
                raise
            except Exception as e:
                raise Err(_to_wit_error(e))

        return call

    def unimplemented(what: str) -> Callable[..., Any]:
        def call(self: Any, *args: Any) -> Any:
            raise Err(wit.Error_Unimplemented(f"{what} is not implemented by this provider"))

        return call

    def _get_schema(req: rp.GetSchemaRequest) -> str:
        spec = {"name": name, "version": version, **(schema or {})}
        spec["resources"] = {token: r.schema for token, r in resources.items()}
        return json.dumps(spec)

    def _check_config(req: rp.CheckRequest) -> rp.CheckResponse:
        return rp.CheckResponse(req.news, [])

    def _diff_config(req: rp.DiffRequest) -> rp.DiffResponse:
        return _diff_to_wit(diff_properties(_map(req.old_inputs), _map(req.news)))

    def _configure(req: rp.ConfigureRequest) -> rp.ConfigureResponse:
        if configure is not None:
            configure(_map(req.args))
        return rp.ConfigureResponse(False)

    def _invoke(req: rp.InvokeRequest) -> rp.InvokeResponse:
        f = functions.get(req.token)
        if f is None:
            raise ProviderError("invalid-argument", f"unknown function '{req.token}'")
        r = f(_map(req.args), InvokeContext(req.token, req.preview))
        return rp.InvokeResponse(to_wit(r.outputs), _failures(r.failures))

    def _check(req: rp.CheckRequest) -> rp.CheckResponse:
        news = _map(req.news)
        r = resource(req.type).check(_map(req.olds), news, _ctx(req))
        return rp.CheckResponse(to_wit(r.inputs if r.inputs is not None else news), _failures(r.failures))

    def _diff(req: rp.DiffRequest) -> rp.DiffResponse:
        ctx = _ctx(req, old_inputs=_map(req.old_inputs), ignore_changes=list(req.ignore_changes))
        return _diff_to_wit(resource(req.type).diff(req.id, _map(req.olds), _map(req.news), ctx))

    def _create(req: rp.CreateRequest) -> rp.CreateResponse:
        res = resource(req.type)
        ctx = _ctx(req, timeout=req.timeout)
        inputs = _map(req.properties)
        if req.preview:
            return rp.CreateResponse("", to_wit(res.preview(inputs, None, ctx)), False)
        r = res.create(inputs, ctx)
        return rp.CreateResponse(r.id or "", to_wit(r.outs or {}), False)

    def _read(req: rp.ReadRequest) -> rp.ReadResponse:
        inputs = _map(req.inputs)
        ctx = _ctx(req, old_inputs=inputs, timeout=req.timeout)
        r = resource(req.type).read(req.id, _map(req.properties), ctx)
        r_inputs = r.inputs if r.inputs is not None else inputs
        return rp.ReadResponse(r.id or "", to_wit(r.outs or {}), to_wit(r_inputs), False)

    def _update(req: rp.UpdateRequest) -> rp.UpdateResponse:
        res = resource(req.type)
        ctx = _ctx(req, timeout=req.timeout, old_inputs=_map(req.old_inputs), ignore_changes=list(req.ignore_changes))
        olds, news = _map(req.olds), _map(req.news)
        if req.preview:
            return rp.UpdateResponse(to_wit(res.preview(news, olds, ctx)), False)
        r = res.update(req.id, olds, news, ctx)
        return rp.UpdateResponse(to_wit(r.outs or {}), False)

    def _delete(req: rp.DeleteRequest) -> None:
        ctx = _ctx(req, old_inputs=_map(req.old_inputs), timeout=req.timeout)
        resource(req.type).delete(req.id, _map(req.properties), ctx)

    class ResourceProvider(exports.ResourceProvider):
        def get_plugin_info(self) -> rp.PluginInfo:
            return rp.PluginInfo(name, version)

        parameterize = unimplemented("parameterize")
        get_schema = guard(_get_schema)
        check_config = guard(_check_config)
        diff_config = guard(_diff_config)
        configure = guard(_configure)
        invoke = guard(_invoke)
        call = unimplemented("call")
        check = guard(_check)
        diff = guard(_diff)
        create = guard(_create)
        read = guard(_read)
        update = guard(_update)
        delete = guard(_delete)
        construct = unimplemented("construct")
        list = unimplemented("list")

        def get_mapping(self, key: str, provider: str) -> Optional[rp.Mapping]:
            return None

        # Unimplemented, as every call this provider does not implement.
        get_mappings = unimplemented("get_mappings")

        def cancel(self) -> None:
            pass

    return ResourceProvider

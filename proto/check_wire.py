#!/usr/bin/env python3
"""Check that our pulumirpc proto files are wire-identical to pulumi's published ones.

Usage: check_wire.py <encoded FileDescriptorSet of our protos>

The reference is the set of compiled descriptors shipped in the `pulumi` Python package
(pulumi.runtime.proto.*_pb2), version 3.272.0. Every `pulumi/*.proto` file in our set is
compared with the published file of the same name: package, imports, messages (nested
too), fields (name, number, type, type_name, label, proto3_optional, oneof), map entries,
reserved numbers/names, enums and values, services and methods (types and streaming).
Anything published must be in ours and identical, and ours may add nothing, except the
deprecated server-streaming `ResourceProvider.StreamInvoke` that we keep on purpose.

Exit status: 0 when identical, 1 on any difference (printed as a list), 2 on setup errors.
"""

import importlib
import importlib.util
import os
import sys
import types

EXPECTED_PULUMI_VERSION = "3.272.0"
EXPECTED_FILES = [
    "pulumi/alias.proto",
    "pulumi/plugin.proto",
    "pulumi/engine.proto",
    "pulumi/provider.proto",
    "pulumi/source.proto",
    "pulumi/callback.proto",
    "pulumi/resource.proto",
]
INSTALL_HINT = f"pip install pulumi=={EXPECTED_PULUMI_VERSION}"

# (service, method) -> (input_type, output_type, client_streaming, server_streaming) that we
# may define although the published descriptors do not.
ALLOWED_EXTRA_METHODS = {
    ("ResourceProvider", "StreamInvoke"): (".pulumirpc.InvokeRequest", ".pulumirpc.InvokeResponse", False, True),
}


# This script sits next to our own `pulumi/` proto directory, which Python would otherwise
# take for a (namespace) `pulumi` package; keep it off the import path.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]


def die(msg, code=2):
    print(f"check_wire: {msg}", file=sys.stderr)
    sys.exit(code)


try:
    from google.protobuf import descriptor_pb2
except ImportError:
    die(f"the `protobuf` Python package is missing: {INSTALL_HINT} (it pulls in protobuf)")

FDP = descriptor_pb2.FieldDescriptorProto
TYPE_NAMES = {v: k for k, v in FDP.Type.items()}
LABEL_NAMES = {v: k for k, v in FDP.Label.items()}


# ---------------------------------------------------------------------------------------
# Loading the published descriptors


def _forget_pulumi_modules():
    for name in list(sys.modules):
        if name == "pulumi" or name.startswith("pulumi."):
            del sys.modules[name]


def _import_normally(module):
    return importlib.import_module(f"pulumi.runtime.proto.{module}_pb2")


def _import_bypassing_package_init(module):
    """Load pulumi/runtime/proto/<module>_pb2.py without running pulumi's __init__ files.

    Those pull in grpc and the rest of the SDK, which the descriptors do not need."""
    if "pulumi.runtime.proto" not in sys.modules or not getattr(sys.modules["pulumi.runtime.proto"], "_wire_stub", False):
        _forget_pulumi_modules()
        spec = importlib.util.find_spec("pulumi")  # does not execute pulumi/__init__.py
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("no `pulumi` package on sys.path")
        root = list(spec.submodule_search_locations)[0]
        for name, sub in (("pulumi", ""), ("pulumi.runtime", "runtime"), ("pulumi.runtime.proto", "runtime/proto")):
            stub = types.ModuleType(name)
            stub.__path__ = [os.path.join(root, sub) if sub else root]
            stub._wire_stub = True
            sys.modules[name] = stub
    return importlib.import_module(f"pulumi.runtime.proto.{module}_pb2")


def _pulumi_version():
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return None
    try:
        return version("pulumi")
    except PackageNotFoundError:
        return None


def load_published(modules):
    """Return {file name: FileDescriptorProto} for pulumi.runtime.proto.<module>_pb2."""
    wheel_dir = os.environ.get("PULUMI_WHEEL_DIR")
    attempts = []
    strategies = [("import", _import_normally), ("direct load", _import_bypassing_package_init)]
    found = None
    for use_wheel_dir in ([False, True] if wheel_dir else [False]):
        if use_wheel_dir:
            sys.path.insert(0, wheel_dir)
            _forget_pulumi_modules()
        for label, load in strategies:
            try:
                found = {m: load(m) for m in modules}
                where = f"PULUMI_WHEEL_DIR={wheel_dir}" if use_wheel_dir else "installed `pulumi` package"
                print(f"check_wire: published descriptors from {where} ({label})")
                break
            except Exception as e:  # noqa: BLE001 - we report every failure below
                attempts.append(f"{label}{' via PULUMI_WHEEL_DIR' if use_wheel_dir else ''}: {type(e).__name__}: {e}")
                _forget_pulumi_modules()
        if found:
            break
    if not found:
        die(
            "cannot load pulumi's published descriptors (pulumi.runtime.proto.*_pb2).\n"
            f"  Install them with: {INSTALL_HINT}\n"
            "  (or set PULUMI_WHEEL_DIR to a directory holding the unpacked `pulumi` package)\n"
            "  attempts:\n    " + "\n    ".join(attempts)
        )
    ver = _pulumi_version()
    if ver is None:
        print(f"check_wire: warning: cannot tell the pulumi version; assuming {EXPECTED_PULUMI_VERSION}")
    elif ver != EXPECTED_PULUMI_VERSION:
        die(f"installed pulumi is {ver}, but the reference is {EXPECTED_PULUMI_VERSION}: {INSTALL_HINT}")
    out = {}
    for mod in found.values():
        fdp = descriptor_pb2.FileDescriptorProto()
        mod.DESCRIPTOR.CopyToProto(fdp)
        out[fdp.name] = fdp
    return out


# ---------------------------------------------------------------------------------------
# Comparison


class Diff:
    def __init__(self):
        self.problems = []
        self.counts = {"files": 0, "messages": 0, "fields": 0, "enums": 0, "enum values": 0, "services": 0, "methods": 0}

    def add(self, where, msg):
        self.problems.append(f"{where}: {msg}")

    def eq(self, where, what, published, ours):
        if published != ours:
            self.add(where, f"{what} differs: published {published!r}, ours {ours!r}")


def field_view(msg, f):
    oneof = msg.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else None
    return {
        "number": f.number,
        "type": TYPE_NAMES.get(f.type, f.type),
        "type_name": f.type_name or None,
        "label": LABEL_NAMES.get(f.label, f.label),
        "proto3_optional": f.proto3_optional,
        "oneof": oneof,
        "default_value": f.default_value or None,
        "packed": f.options.packed if f.options.HasField("packed") else None,
        "deprecated": f.options.deprecated,
    }


def reserved_numbers(msg):
    """Reserved ranges, normalised (sorted, adjacent ranges merged)."""
    ranges = sorted((r.start, r.end) for r in msg.reserved_range)
    merged = []
    for start, end in ranges:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def compare_enum(d, where, pub, ours):
    d.counts["enums"] += 1
    pv = {v.name: v.number for v in pub.value}
    ov = {v.name: v.number for v in ours.value}
    d.counts["enum values"] += len(pv)
    for name, num in pv.items():
        if name not in ov:
            d.add(where, f"enum value {name} = {num} missing")
        elif ov[name] != num:
            d.add(where, f"enum value {name}: published {num}, ours {ov[name]}")
    for name in sorted(ov.keys() - pv.keys()):
        d.add(where, f"extra enum value {name} = {ov[name]}")
    d.eq(where, "first value (default)", pub.value[0].name if pub.value else None, ours.value[0].name if ours.value else None)
    d.eq(where, "allow_alias", pub.options.allow_alias, ours.options.allow_alias)
    d.eq(where, "reserved names", sorted(pub.reserved_name), sorted(ours.reserved_name))
    d.eq(where, "reserved ranges", sorted((r.start, r.end) for r in pub.reserved_range), sorted((r.start, r.end) for r in ours.reserved_range))


def compare_named(d, where, kind, pub_items, our_items, compare, prefix=None):
    """Match items by name; `prefix` + name is where a matched child is reported."""
    prefix = f"{where}." if prefix is None else prefix
    pub = {x.name: x for x in pub_items}
    ours = {x.name: x for x in our_items}
    for name, p in pub.items():
        if name not in ours:
            d.add(where, f"{kind} {name} missing")
        else:
            compare(d, prefix + name, p, ours[name])
    for name in sorted(ours.keys() - pub.keys()):
        d.add(where, f"extra {kind} {name}")


def compare_message(d, where, pub, ours):
    d.counts["messages"] += 1
    d.eq(where, "map_entry", pub.options.map_entry, ours.options.map_entry)
    d.eq(where, "deprecated", pub.options.deprecated, ours.options.deprecated)
    d.eq(where, "oneofs", sorted(o.name for o in pub.oneof_decl), sorted(o.name for o in ours.oneof_decl))
    d.eq(where, "reserved numbers", reserved_numbers(pub), reserved_numbers(ours))
    d.eq(where, "reserved names", sorted(pub.reserved_name), sorted(ours.reserved_name))
    d.eq(where, "extension ranges", sorted((r.start, r.end) for r in pub.extension_range), sorted((r.start, r.end) for r in ours.extension_range))
    pf = {f.name: f for f in pub.field}
    of = {f.name: f for f in ours.field}
    d.counts["fields"] += len(pf)
    for name, f in pf.items():
        if name not in of:
            d.add(where, f"field {name} = {f.number} missing")
            continue
        pv, ov = field_view(pub, f), field_view(ours, of[name])
        for key in pv:
            if pv[key] != ov[key]:
                d.add(f"{where}.{name}", f"{key}: published {pv[key]!r}, ours {ov[key]!r}")
    for name in sorted(of.keys() - pf.keys()):
        d.add(where, f"extra field {name} = {of[name].number}")
    numbers = [f.number for f in ours.field]
    if len(numbers) != len(set(numbers)):
        d.add(where, f"duplicate field numbers in ours: {sorted(numbers)}")
    compare_named(d, where, "nested message", pub.nested_type, ours.nested_type, compare_message)
    compare_named(d, where, "nested enum", pub.enum_type, ours.enum_type, compare_enum)


def compare_service(d, where, pub, ours):
    d.counts["services"] += 1
    pm = {m.name: m for m in pub.method}
    om = {m.name: m for m in ours.method}
    d.counts["methods"] += len(pm)

    def shape(m):
        return (m.input_type, m.output_type, m.client_streaming, m.server_streaming)

    for name, m in pm.items():
        if name not in om:
            d.add(where, f"rpc {name} missing")
            continue
        d.eq(f"{where}.{name}", "(input, output, client_streaming, server_streaming)", shape(m), shape(om[name]))
        d.eq(f"{where}.{name}", "deprecated", m.options.deprecated, om[name].options.deprecated)
    for name in sorted(om.keys() - pm.keys()):
        allowed = ALLOWED_EXTRA_METHODS.get((pub.name, name))
        if allowed is None:
            d.add(where, f"extra rpc {name}")
        elif shape(om[name]) != allowed:
            d.add(f"{where}.{name}", f"allowed extra rpc has the wrong shape: {shape(om[name])}, want {allowed}")
        else:
            print(f"check_wire: allowed extra rpc {where}.{name} (not in the published descriptors)")


def compare_file(d, pub, ours):
    d.counts["files"] += 1
    where = pub.name
    d.eq(where, "package", pub.package, ours.package)
    d.eq(where, "syntax", pub.syntax or "proto2", ours.syntax or "proto2")
    d.eq(where, "imports", sorted(pub.dependency), sorted(ours.dependency))
    d.eq(where, "go_package", pub.options.go_package, ours.options.go_package)
    top = f"{where}: "
    compare_named(d, where, "message", pub.message_type, ours.message_type, compare_message, top)
    compare_named(d, where, "enum", pub.enum_type, ours.enum_type, compare_enum, top)
    compare_named(d, where, "service", pub.service, ours.service, compare_service, top)
    if pub.extension or ours.extension:
        d.eq(where, "extensions", [str(x) for x in pub.extension], [str(x) for x in ours.extension])


def main(argv):
    if len(argv) != 2:
        die(f"usage: {argv[0]} <encoded FileDescriptorSet>")
    with open(argv[1], "rb") as fh:
        fds = descriptor_pb2.FileDescriptorSet.FromString(fh.read())
    ours = {f.name: f for f in fds.file if f.name.startswith("pulumi/")}
    d = Diff()
    for name in EXPECTED_FILES:
        if name not in ours:
            d.add(name, "not in our descriptor set")
    modules = {}
    for name in ours:
        base = os.path.basename(name)
        if not base.endswith(".proto"):
            d.add(name, "unexpected file name")
            continue
        modules[base[: -len(".proto")]] = name
    published = load_published(sorted(modules))
    for name, fdp in sorted(ours.items()):
        if name not in published:
            d.add(name, "no published file of that name")
            continue
        compare_file(d, published[name], fdp)

    if d.problems:
        print(f"check_wire: MISMATCH with pulumi {EXPECTED_PULUMI_VERSION}: {len(d.problems)} difference(s)")
        for p in d.problems:
            print(f"  - {p}")
        return 1
    summary = ", ".join(f"{v} {k}" for k, v in d.counts.items())
    print(f"check_wire: OK, wire-identical to pulumi {EXPECTED_PULUMI_VERSION}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

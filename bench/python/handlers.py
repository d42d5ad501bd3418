"""The Python peer's RPC handlers called in this process, without gRPC.

The bench (`bench/src/handlers.rs`) sends, on stdin, the inputs of its
latency table: `{"cases": [{"input", "token", "name", "urn", "news" (a
google.protobuf.Struct, hex), "n"}]}`. For each, this builds the requests the
engine would send after a Check and a Create (as `workload::prepare` does),
calls the Pulumi SDK's `ProviderServicer` methods on the peer directly, and
answers on stdout with every timed call in nanoseconds:
`{input: {"Check": [...], "Diff": [...], ...}}`.
"""

import asyncio
import json
import sys
import time

from google.protobuf import struct_pb2
from pulumi.provider.experimental.server import ProviderServicer
from pulumi.runtime.proto import provider_pb2 as pb

import provider as peer


async def timed(call, request, n: int) -> list[int]:
    """`n` calls after a tenth as many unmeasured, as the Rust side does."""
    for _ in range(max(n // 10, 10)):
        await call(request, None)
    samples = []
    for _ in range(n):
        start = time.perf_counter_ns()
        await call(request, None)
        samples.append(time.perf_counter_ns() - start)
    return samples


async def case(servicer: ProviderServicer, c: dict) -> dict:
    news = struct_pb2.Struct()
    news.ParseFromString(bytes.fromhex(c["news"]))
    tok, name, urn = c["token"], c["name"], c["urn"]
    check = pb.CheckRequest(
        urn=urn, name=name, type=tok, olds=struct_pb2.Struct(), news=news, randomSeed=bytes([7] * 32)
    )
    checked = await servicer.Check(check, None)
    if checked.failures:
        raise SystemExit(f"{tok}: check failed: {checked.failures}")
    inputs = checked.inputs
    create = pb.CreateRequest(urn=urn, name=name, type=tok, properties=inputs)
    created = await servicer.Create(create, None)
    rid, state = created.id, created.properties
    calls = {
        "Check": (servicer.Check, check),
        "Diff": (
            servicer.Diff,
            pb.DiffRequest(id=rid, urn=urn, name=name, type=tok, olds=state, news=inputs, old_inputs=inputs),
        ),
        "Create": (servicer.Create, create),
        "Update": (
            servicer.Update,
            pb.UpdateRequest(id=rid, urn=urn, name=name, type=tok, olds=state, news=inputs, old_inputs=inputs),
        ),
        "Delete": (
            servicer.Delete,
            pb.DeleteRequest(id=rid, urn=urn, name=name, type=tok, properties=state, old_inputs=inputs),
        ),
    }
    return {op: await timed(call, request, c["n"]) for op, (call, request) in calls.items()}


async def run(spec: dict) -> dict:
    servicer = ProviderServicer([], peer.VERSION, peer.PyRandom(), "")
    return {c["input"]: await case(servicer, c) for c in spec["cases"]}


if __name__ == "__main__":
    json.dump(asyncio.run(run(json.load(sys.stdin))), sys.stdout)

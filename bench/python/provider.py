"""pyrandom: the benchmark's Python peer, written with Pulumi's Python SDK.

The same two resources the Rust side benchmarks, with the same behaviour:

- `pyrandom:index:RandomString` mirrors `random:index:RandomString`
  (examples/random): Check validates `length` (1..1024) and the character
  classes, fills defaults and rejects unknown properties; every input change
  replaces; Create draws `result` and uses it as the ID; Update keeps it.
- `pyrandom:index:Thing` mirrors `echo:index:Thing` (tests/guests/echo):
  Check passes inputs through, Diff replaces on `replace`, Create returns
  its inputs with a random ID, Update returns the new inputs. It carries the
  100-property and 1 MB asset inputs.

`pulumi.provider.server.main` serves only component providers (no Check,
Create, ...), so this uses the SDK's custom-resource provider interface,
`pulumi.provider.experimental` (`Provider` and `server.main`).
"""

import secrets
import sys

from pulumi.provider.experimental.property_value import Computed, PropertyValue
from pulumi.provider.experimental.provider import (
    CheckFailure,
    CheckRequest,
    CheckResponse,
    CreateRequest,
    CreateResponse,
    DeleteRequest,
    DiffRequest,
    DiffResponse,
    PropertyDiff,
    PropertyDiffKind,
    Provider,
    UpdateRequest,
    UpdateResponse,
)
from pulumi.provider.experimental.server import main

VERSION = "0.1.0"
STRING = "pyrandom:index:RandomString"
THING = "pyrandom:index:Thing"
MAX_LENGTH = 1024
DEFAULT_SPECIAL = "!@#$%&*()-_=+[]{}<>:?"
CLASSES = [
    ("upper", "minUpper", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ("lower", "minLower", "abcdefghijklmnopqrstuvwxyz"),
    ("numeric", "minNumeric", "0123456789"),
    ("special", "minSpecial", None),
]
BOOLS = {"upper", "lower", "numeric", "special"}
COUNTS = {"minUpper", "minLower", "minNumeric", "minSpecial"}
KNOWN = BOOLS | COUNTS | {"length", "overrideSpecial", "keepers"}


def _known(v: PropertyValue) -> bool:
    return not isinstance(v.value, Computed)


def check_string(news: dict) -> CheckResponse:
    failures = []
    inputs = dict(news)
    for key in news:
        if key not in KNOWN:
            failures.append(CheckFailure(key, "is not a known property"))
    length = news.get("length")
    if length is None:
        failures.append(CheckFailure("length", "is required"))
    elif _known(length):
        if not isinstance(length.value, float) or isinstance(length.value, bool):
            failures.append(CheckFailure("length", "must be a number"))
        elif length.value < 1:
            failures.append(CheckFailure("length", "must be at least 1"))
        elif length.value > MAX_LENGTH:
            failures.append(CheckFailure("length", f"must be at most {MAX_LENGTH}"))
    for key in BOOLS:
        v = news.get(key)
        if v is None:
            inputs[key] = PropertyValue(True)
        elif _known(v) and not isinstance(v.value, bool):
            failures.append(CheckFailure(key, "must be a bool"))
    for key in COUNTS:
        v = news.get(key)
        if v is None:
            inputs[key] = PropertyValue(0.0)
        elif _known(v) and (not isinstance(v.value, float) or not 0 <= v.value <= MAX_LENGTH):
            failures.append(CheckFailure(key, f"must be a number between 0 and {MAX_LENGTH}"))
    keepers = news.get("keepers")
    if keepers is not None and _known(keepers) and keepers.value is not None:
        for k, v in keepers.value.items():
            if _known(v) and not isinstance(v.value, str):
                failures.append(CheckFailure(f"keepers.{k}", "must be a string"))
    if not failures and all(_known(v) for v in inputs.values()):
        total = sum(inputs[c].value for c in COUNTS)
        for flag, count, _ in CLASSES:
            if not inputs[flag].value and inputs[count].value > 0:
                failures.append(CheckFailure(count, f"must be 0 when `{flag}` is false"))
        if not any(inputs[f].value for f in BOOLS):
            failures.append(CheckFailure("special", "at least one character class must be enabled"))
        if total > inputs["length"].value:
            failures.append(CheckFailure("length", "must be at least the sum of the minimums"))
    return CheckResponse(inputs=inputs, failures=failures)


def generate(props: dict) -> str:
    rng = secrets.SystemRandom()
    special = props.get("overrideSpecial")
    special = special.value if special is not None and special.value else DEFAULT_SPECIAL
    enabled = []
    for flag, count, chars in CLASSES:
        if props[flag].value:
            enabled.append((int(props[count].value), chars if chars is not None else special))
    out = []
    for minimum, chars in enabled:
        out.extend(rng.choice(chars) for _ in range(minimum))
    pool = "".join(chars for _, chars in enabled)
    while len(out) < int(props["length"].value):
        out.append(rng.choice(pool))
    rng.shuffle(out)
    return "".join(out)


def structural_diff(olds: dict, news: dict, replace_keys, ignore) -> DiffResponse:
    """Top-level keys that changed; those in `replace_keys` (all when None) replace."""
    diffs, detailed, replaces = [], {}, []
    for key in sorted(set(olds) | set(news)):
        if key in ignore or key == "result":
            continue
        old, new = olds.get(key), news.get(key)
        if old == new:
            continue
        replace = replace_keys is None or key in replace_keys
        if old is None:
            kind = PropertyDiffKind.ADD_REPLACE if replace else PropertyDiffKind.ADD
        elif new is None:
            kind = PropertyDiffKind.DELETE_REPLACE if replace else PropertyDiffKind.DELETE
        else:
            kind = PropertyDiffKind.UPDATE_REPLACE if replace else PropertyDiffKind.UPDATE
        diffs.append(key)
        detailed[key] = PropertyDiff(kind, True)
        if replace:
            replaces.append(key)
    return DiffResponse(changes=bool(diffs), replaces=replaces, diffs=diffs, detailed_diff=detailed)


class PyRandom(Provider):
    async def check(self, request: CheckRequest) -> CheckResponse:
        if request.type == STRING:
            return check_string(request.new_inputs)
        if request.type == THING:
            return CheckResponse(inputs=request.new_inputs)
        raise ValueError(f"unknown resource type '{request.type}'")

    async def diff(self, request: DiffRequest) -> DiffResponse:
        if request.type == STRING:
            return structural_diff(request.old_state, request.new_inputs, None, set(request.ignore_changes))
        ignore = set(request.ignore_changes) | {"fail"}
        return structural_diff(request.old_state, request.new_inputs, {"replace"}, ignore)

    async def create(self, request: CreateRequest) -> CreateResponse:
        props = dict(request.properties)
        if request.type == STRING:
            if request.preview:
                props["result"] = PropertyValue.computed()
                return CreateResponse(resource_id="", properties=props)
            result = generate(props)
            props["result"] = PropertyValue(result)
            return CreateResponse(resource_id=result, properties=props)
        resource_id = "" if request.preview else secrets.token_hex(8)
        return CreateResponse(resource_id=resource_id, properties=props)

    async def update(self, request: UpdateRequest) -> UpdateResponse:
        news = dict(request.news)
        if request.type == STRING and "result" in request.olds:
            news["result"] = request.olds["result"]
        return UpdateResponse(properties=news)

    async def delete(self, request: DeleteRequest) -> None:
        return None


if __name__ == "__main__":
    main(sys.argv[1:], VERSION, PyRandom())

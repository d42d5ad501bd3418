"""pyrandom: random strings, written in Python and run as a WebAssembly component.

componentize-py exports the class `ResourceProvider` of this module as the
WIT interface `resource-provider`; `pulumi_provider.provider` builds it.
"""

import secrets
import string

from pulumi_provider import (
    CheckFailure,
    CheckResult,
    Context,
    CreateResult,
    DiffResult,
    ProviderError,
    ReadResult,
    Resource,
    Secret,
    Unknown,
    UpdateResult,
    diff_properties,
    provider,
)

ALPHABET = string.ascii_letters + string.digits


def random_string(length: int) -> str:
    """`length` characters drawn uniformly from ALPHABET (the secrets module reads wasi:random)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


class RandomString(Resource):
    schema = {
        "description": "A random string of letters and digits, with a secret password of the same length.",
        "inputProperties": {
            "length": {"type": "integer", "description": "The number of characters, at least 1."},
            "keepers": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Arbitrary values that, when changed, force a new string.",
            },
        },
        "requiredInputs": ["length"],
        "properties": {
            "length": {"type": "integer"},
            "keepers": {"type": "object", "additionalProperties": {"type": "string"}},
            "result": {"type": "string", "description": "The generated string."},
            "password": {"type": "string", "secret": True, "description": "Another generated string, kept secret."},
        },
        "required": ["length", "result", "password"],
    }

    # Failures name the property; unknown values (previews) are let through.
    def check(self, olds: dict, news: dict, ctx: Context) -> CheckResult:
        failures = []
        length = news.get("length")
        if length is None:
            failures.append(CheckFailure("length", "is required"))
        elif isinstance(length, Unknown):
            pass  # checked again once it is known
        elif isinstance(length, bool) or not isinstance(length, (int, float)):
            failures.append(CheckFailure("length", f"must be a number, not {type(length).__name__}"))
        elif not float(length).is_integer() or length < 1:
            failures.append(CheckFailure("length", "must be a whole number of at least 1"))
        keepers = news.get("keepers")
        if keepers is None or isinstance(keepers, Unknown):
            pass  # optional
        elif not isinstance(keepers, dict):
            failures.append(CheckFailure("keepers", "must be a map"))
        else:
            for k, v in keepers.items():
                if not isinstance(v, (str, Unknown)):
                    failures.append(CheckFailure(f"keepers.{k}", "must be a string"))
        return CheckResult(news, failures)

    # Every input forces a new string; the detailed diff names each changed path.
    def diff(self, id: str, olds: dict, news: dict, ctx: Context) -> DiffResult:
        return diff_properties(ctx.old_inputs, news, replace_on_changes=["length", "keepers"])

    # Not called during a preview: the helper shows the inputs, and `result`
    # and `password` (secret) unknown, from the schema. Override `preview` to
    # show something else.
    def create(self, inputs: dict, ctx: Context) -> CreateResult:
        length = int(inputs["length"])
        result = random_string(length)
        ctx.log.info(f"generated a random string of {length} characters")
        return CreateResult(result, {**inputs, "result": result, "password": Secret(random_string(length))})

    # The state is the resource: with none (an import) there is nothing to read.
    def read(self, id: str, props: dict, ctx: Context) -> ReadResult:
        if not props:
            why = f"a random string cannot be imported (read by ID '{id}' with no state)"
            raise ProviderError("unimplemented", why)
        return ReadResult(id, props)

    # Only reached for changes that do not replace (none here): keep what was generated.
    def update(self, id: str, olds: dict, news: dict, ctx: Context) -> UpdateResult:
        return UpdateResult({**news, "result": olds["result"], "password": olds["password"]})

    def delete(self, id: str, props: dict, ctx: Context) -> None:
        ctx.log.debug("nothing to delete: the string lives only in the state")


ResourceProvider = provider(
    name="pyrandom",
    version="0.1.0",
    schema={
        "displayName": "Random (Python)",
        "description": "Random strings from a Python provider run as a WebAssembly component.",
        "license": "Apache-2.0",
    },
    resources={"pyrandom:index:RandomString": RandomString()},
)

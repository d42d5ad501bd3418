// jsrandom: random strings, written in TypeScript and run as a WebAssembly
// component. The WIT world `provider` exports the interface
// `resource-provider`, so the entry module exports `resourceProvider`.

import {
    type CheckFailure,
    type Resource,
    type Secret,
    type Unknown,
    ProviderError,
    diffProperties,
    isUnknown,
    provider,
    secret,
} from './pulumi-provider.ts';

interface RandomStringInputs {
    length: number | Unknown;
    keepers?: Record<string, string> | Unknown;
}

interface RandomStringOutputs extends RandomStringInputs {
    result: string | Unknown;
    password: Secret<string> | Secret<Unknown>;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters drawn uniformly from ALPHABET (rejection sampling over wasi:random). */
function randomString(length: number): string {
    const out: string[] = [];
    const limit = 256 - (256 % ALPHABET.length);
    while (out.length < length) {
        for (const b of crypto.getRandomValues(new Uint8Array(length * 2))) {
            if (b < limit && out.length < length) out.push(ALPHABET[b % ALPHABET.length]);
        }
    }
    return out.join('');
}

const randomStringResource: Resource<RandomStringInputs, RandomStringOutputs> = {
    schema: {
        description: 'A random string of letters and digits, with a secret password of the same length.',
        inputProperties: {
            length: { type: 'integer', description: 'The number of characters, at least 1.' },
            keepers: {
                type: 'object',
                additionalProperties: { type: 'string' },
                description: 'Arbitrary values that, when changed, force a new string.',
            },
        },
        requiredInputs: ['length'],
        properties: {
            length: { type: 'integer' },
            keepers: { type: 'object', additionalProperties: { type: 'string' } },
            result: { type: 'string', description: 'The generated string.' },
            password: { type: 'string', secret: true, description: 'Another generated string, kept secret.' },
        },
        required: ['length', 'result', 'password'],
    },

    // Failures name the property; unknown values (previews) are let through.
    check(_olds, news) {
        const failures: CheckFailure[] = [];
        const fail = (property: string, reason: string) => failures.push({ property, reason });
        const { length, keepers } = news;
        if (length === undefined) fail('length', 'is required');
        else if (isUnknown(length)) {
            // Checked again once it is known.
        } else if (typeof length !== 'number') fail('length', `must be a number, not ${typeof length}`);
        else if (!Number.isInteger(length) || length < 1) fail('length', 'must be a whole number of at least 1');
        if (keepers === undefined || isUnknown(keepers)) {
            // Optional.
        } else if (typeof keepers !== 'object' || keepers === null || Array.isArray(keepers)) fail('keepers', 'must be a map');
        else {
            for (const [k, v] of Object.entries(keepers)) {
                if (typeof v !== 'string' && !isUnknown(v)) fail(`keepers.${k}`, 'must be a string');
            }
        }
        return { inputs: news, failures };
    },

    // Every input forces a new string; the detailed diff names each changed path.
    diff(_id, _olds, news, ctx) {
        return diffProperties(ctx.oldInputs, { ...news }, { replaceOnChanges: ['length', 'keepers'] });
    },

    // Not called during a preview: the helper shows the inputs, and `result`
    // and `password` (secret) unknown, from the schema. Define `preview` to
    // show something else.
    create(inputs, ctx) {
        const length = inputs.length as number;
        const result = randomString(length);
        ctx.log.info(`generated a random string of ${length} characters`);
        return { id: result, outs: { ...inputs, result, password: secret(randomString(length)) } };
    },

    // The state is the resource: with none (an import) there is nothing to read.
    read(id, props) {
        if (Object.keys(props).length === 0) {
            const why = `a random string cannot be imported (read by ID '${id}' with no state)`;
            throw new ProviderError('unimplemented', why);
        }
        return { id, props };
    },

    // Only reached for changes that do not replace (none here): keep what was generated.
    update(_id, olds, news) {
        return { outs: { ...news, result: olds.result, password: olds.password } };
    },

    delete(_id, _props, ctx) {
        ctx.log.debug('nothing to delete: the string lives only in the state');
    },
};

export const resourceProvider = provider({
    name: 'jsrandom',
    version: '0.1.0',
    schema: {
        displayName: 'Random (TypeScript)',
        description: 'Random strings from a TypeScript provider run as a WebAssembly component.',
        license: 'Apache-2.0',
    },
    resources: { 'jsrandom:index:RandomString': randomStringResource },
});

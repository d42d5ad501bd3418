// The helper layer between `pulumi:provider@0.1.0` and a TypeScript provider.
//
// A provider author writes resources the way they write a Pulumi dynamic
// provider (`check`, `diff`, `create`, `read`, `update`, `delete`, each may be
// `async`) and sees plain JavaScript values: objects, arrays, strings,
// numbers, and small classes for what JSON cannot say (`Secret`, `Unknown`,
// `Asset`, `Archive`, `ResourceReference`, `Output`). This file is the only
// code that touches the WIT: it turns the flattened node lists into values and
// back, requests into calls, and thrown errors into the WIT `error` variant.

import { log as hostLog } from 'pulumi:provider/logging@0.1.0';
import { cancelled as hostCancelled } from 'pulumi:provider/context@0.1.0';
import type * as wit from 'pulumi:provider/types@0.1.0';
import type * as rp from 'pulumi:provider/resource-provider@0.1.0';

// ---------------------------------------------------------------------------
// Values

/** The element type of an unknown value; `string` is Pulumi's generic unknown. */
export type UnknownKind = wit.UnknownKind;

/** A value not known yet: during a preview, inputs computed from other resources are unknown. */
export class Unknown {
    constructor(readonly kind: UnknownKind = 'string') {}
}

/** A secret: the engine encrypts it in the state and masks it in output. */
export class Secret<T extends Value = Value> {
    constructor(readonly value: T) {}
}

/** A file-like blob: its contents come from `text`, a `path` or a `uri`. */
export class Asset {
    hash?: string;
    text?: string;
    path?: string;
    uri?: string;
    constructor(init: { hash?: string; text?: string; path?: string; uri?: string } = {}) {
        Object.assign(this, init);
    }
}

/** A set of named assets and archives, or a `path` or `uri` to an archive file. */
export class Archive {
    hash?: string;
    assets?: Record<string, Asset | Archive>;
    path?: string;
    uri?: string;
    constructor(init: { hash?: string; assets?: Record<string, Asset | Archive>; path?: string; uri?: string } = {}) {
        Object.assign(this, init);
    }
}

/** A reference to another resource; `id` is `Unknown` during a preview, absent for components. */
export class ResourceReference {
    constructor(
        readonly urn: string,
        readonly id?: string | Unknown,
        readonly packageVersion: string = '',
    ) {}
}

/** A value with its secretness and dependencies; `value` is `undefined` when it is not known. */
export class Output {
    constructor(
        readonly value: Value | undefined,
        readonly secret: boolean = false,
        readonly dependencies: string[] = [],
    ) {}
    get known(): boolean {
        return this.value !== undefined;
    }
}

export type Value =
    | null
    | boolean
    | number
    | string
    | Uint8Array
    | Value[]
    | Secret
    | Unknown
    | Asset
    | Archive
    | ResourceReference
    | Output
    | { [key: string]: Value };

/** Resource inputs and outputs: property name -> value. */
export type PropertyMap = { [key: string]: Value };

export const unknown = (kind: UnknownKind = 'string'): Unknown => new Unknown(kind);
export const secret = <T extends Value>(value: T): Secret<T> => new Secret(value);
export const isUnknown = (v: unknown): v is Unknown => v instanceof Unknown;
export const isSecret = (v: unknown): v is Secret => v instanceof Secret;

/** The value without its secret wrapper(s). */
export function reveal(v: Value): Value {
    while (v instanceof Secret) v = v.value;
    return v;
}

/** True when `v` is or contains an unknown (so it cannot be validated yet). */
export function containsUnknowns(v: Value | undefined): boolean {
    if (v instanceof Unknown) return true;
    if (v instanceof Secret) return containsUnknowns(v.value);
    if (v instanceof Output) return !v.known || containsUnknowns(v.value);
    if (Array.isArray(v)) return v.some(containsUnknowns);
    if (isPlainObject(v)) return Object.values(v).some(containsUnknowns);
    return false;
}

function isPlainObject(v: unknown): v is { [key: string]: Value } {
    if (v === null || typeof v !== 'object') return false;
    const proto = Object.getPrototypeOf(v);
    return proto === Object.prototype || proto === null;
}

function setKey(obj: { [key: string]: Value }, key: string, value: Value) {
    // defineProperty, so a key named `__proto__` stays a key.
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** WIT value (a flattened tree) -> JavaScript value. */
export function fromWit(value: wit.Value): Value {
    const nodes = value.nodes;
    const at = (i: number): Value => {
        const node = nodes[i];
        switch (node.tag) {
            case 'null':
                return null;
            case 'bool':
            case 'number':
            case 'string':
                return node.val;
            case 'bytes':
                return new Uint8Array(node.val);
            case 'array':
                return Array.from(node.val, at);
            case 'object': {
                const obj: { [key: string]: Value } = {};
                for (const [k, c] of node.val) setKey(obj, k, at(c));
                return obj;
            }
            case 'secret':
                return new Secret(at(node.val));
            case 'unknown':
                return new Unknown(node.val);
            case 'asset':
                return assetFromWit(node.val);
            case 'archive': {
                const { hash, source } = node.val;
                if (source?.tag === 'assets') {
                    const assets: Record<string, Asset | Archive> = {};
                    for (const [k, c] of source.val) assets[k] = at(c) as Asset | Archive;
                    return new Archive({ hash, assets });
                }
                return new Archive({ hash, [source?.tag ?? 'path']: source?.val });
            }
            case 'resource-reference': {
                const { urn, id, packageVersion } = node.val;
                const rid = id === undefined ? undefined : id.tag === 'known' ? id.val : new Unknown('string');
                return new ResourceReference(urn, rid, packageVersion);
            }
            case 'output': {
                const o = node.val;
                return new Output(o.value === undefined ? undefined : at(o.value), o.secret, o.dependencies);
            }
        }
    };
    return nodes.length === 0 ? null : at(0);
}

function assetFromWit(a: wit.Asset): Asset {
    const init: { hash?: string; text?: string; path?: string; uri?: string } = { hash: a.hash };
    if (a.source) init[a.source.tag] = a.source.val;
    return new Asset(init);
}

/** JavaScript value -> WIT value, its nodes in pre-order. */
export function toWit(value: Value | undefined): wit.Value {
    const nodes: wit.Node[] = [];
    const push = (v: Value | undefined): number => {
        const i = nodes.length;
        nodes.push({ tag: 'null' });
        nodes[i] = node(v);
        return i;
    };
    const node = (v: Value | undefined): wit.Node => {
        if (v === null || v === undefined) return { tag: 'null' };
        switch (typeof v) {
            case 'boolean':
                return { tag: 'bool', val: v };
            case 'number':
                return { tag: 'number', val: v };
            case 'bigint':
                return { tag: 'number', val: Number(v) };
            case 'string':
                return { tag: 'string', val: v };
        }
        if (v instanceof Uint8Array) return { tag: 'bytes', val: v };
        if (Array.isArray(v)) return { tag: 'array', val: Uint32Array.from(v.map(push)) };
        if (v instanceof Secret) return { tag: 'secret', val: push(v.value) };
        if (v instanceof Unknown) return { tag: 'unknown', val: v.kind };
        if (v instanceof Asset) return { tag: 'asset', val: assetToWit(v) };
        if (v instanceof Archive) {
            let source: wit.ArchiveSource | undefined;
            if (v.assets) source = { tag: 'assets', val: Object.entries(v.assets).map(([k, a]) => [k, push(a)]) };
            else if (v.path !== undefined) source = { tag: 'path', val: v.path };
            else if (v.uri !== undefined) source = { tag: 'uri', val: v.uri };
            return { tag: 'archive', val: { hash: v.hash, source } };
        }
        if (v instanceof ResourceReference) {
            const id: wit.ReferenceId | undefined =
                v.id === undefined ? undefined : v.id instanceof Unknown ? { tag: 'unknown' } : { tag: 'known', val: v.id };
            return { tag: 'resource-reference', val: { urn: v.urn, id, packageVersion: v.packageVersion } };
        }
        if (v instanceof Output) {
            const value = v.known ? push(v.value) : undefined;
            return { tag: 'output', val: { value, secret: v.secret, dependencies: v.dependencies } };
        }
        if (typeof v === 'object') {
            // Keys whose value is `undefined` are left out, as JSON does.
            const fields: [string, number][] = [];
            for (const [k, c] of Object.entries(v)) if (c !== undefined) fields.push([k, push(c)]);
            return { tag: 'object', val: fields };
        }
        throw new ProviderError('failed', `cannot send a ${typeof v} to the engine`);
    };
    push(value);
    return { nodes };
}

function assetToWit(a: Asset): wit.Asset {
    const source: wit.AssetSource | undefined =
        a.text !== undefined
            ? { tag: 'text', val: a.text }
            : a.path !== undefined
              ? { tag: 'path', val: a.path }
              : a.uri !== undefined
                ? { tag: 'uri', val: a.uri }
                : undefined;
    return { hash: a.hash, source };
}

function mapFromWit(v: wit.Value | undefined): PropertyMap {
    const m = v ? fromWit(v) : {};
    return isPlainObject(m) ? m : {};
}

// ---------------------------------------------------------------------------
// Errors

export type ErrorCode =
    | 'unimplemented'
    | 'invalid-argument'
    | 'not-found'
    | 'failed-precondition'
    | 'unavailable'
    | 'cancelled'
    | 'failed';

/** An error with a gRPC status for the engine; any other thrown error is `failed`. */
export class ProviderError extends Error {
    constructor(
        readonly code: ErrorCode,
        message: string,
    ) {
        super(message);
    }
}

/** Throw from `create` when the resource exists but could not be set up: the engine records `properties`. */
export class InitFailedError extends Error {
    constructor(
        readonly id: string,
        readonly properties: PropertyMap,
        readonly reasons: string[],
        readonly inputs?: PropertyMap,
    ) {
        super(reasons.join('; '));
    }
}

function toWitError(e: unknown): wit.Error {
    if (e instanceof ProviderError) return { tag: e.code, val: e.message } as wit.Error;
    if (e instanceof InitFailedError) {
        const { id, properties, inputs, reasons } = e;
        const val = { id, properties: toWit(properties), inputs: inputs && toWit(inputs), reasons };
        return { tag: 'init-failed', val };
    }
    if (e instanceof Error) return { tag: 'failed', val: e.message || String(e) };
    return { tag: 'failed', val: String(e) };
}

// ---------------------------------------------------------------------------
// Logging and the call context

export interface Logger {
    debug(message: string): void;
    info(message: string): void;
    warn(message: string): void;
    error(message: string): void;
}

/** Messages to the Pulumi CLI, tied to `urn` when given. */
export function logger(urn?: string): Logger {
    const at = (severity: 'debug' | 'info' | 'warning' | 'error') => (message: string) =>
        hostLog(severity, message, urn || undefined, false);
    return { debug: at('debug'), info: at('info'), warn: at('warning'), error: at('error') };
}

/** Logs not tied to a resource. */
export const log: Logger = logger();

/** What a call knows besides its properties. */
export interface Context {
    urn: string;
    name: string;
    type: string;
    /** Seconds; 0 when unset. */
    timeout: number;
    /** The inputs the resource was last created or updated with (`diff`, `update`, `read`, `delete`). */
    oldInputs?: PropertyMap;
    /** Properties whose changes the program asked to ignore (`diff`, `update`). */
    ignoreChanges: string[];
    /** Messages to the Pulumi CLI about this resource. */
    log: Logger;
    /** True once the engine asked to cancel: stop and return promptly. */
    cancelled(): boolean;
}

function context(r: { urn: string; name: string; type: string }, extra: Partial<Context> = {}): Context {
    return {
        urn: r.urn,
        name: r.name,
        type: r.type,
        timeout: 0,
        ignoreChanges: [],
        log: logger(r.urn),
        cancelled: hostCancelled,
        ...extra,
    };
}

// ---------------------------------------------------------------------------
// Resources, shaped like `pulumi.dynamic.ResourceProvider`

type Awaitable<T> = T | Promise<T>;

export interface CheckFailure {
    property: string;
    reason: string;
}

export interface CheckResult<I = PropertyMap> {
    inputs?: I;
    failures?: CheckFailure[];
}

export type DiffKind = rp.DiffKind;

export interface DiffResult {
    /** `undefined`: derived from the other fields, or unknown when they are all empty. */
    changes?: boolean;
    replaces?: string[];
    stables?: string[];
    deleteBeforeReplace?: boolean;
    /** Top-level keys that changed. */
    diffs?: string[];
    /** Property path (`keepers.k`, `tags["a.b"]`, `items[0]`) -> kind of change. */
    detailedDiff?: Record<string, DiffKind | { kind: DiffKind; inputDiff: boolean }>;
}

export interface CreateResult<O = PropertyMap> {
    id: string;
    outs?: O;
}

export interface ReadResult<O = PropertyMap, I = PropertyMap> {
    /** Absent or empty: the resource no longer exists. */
    id?: string;
    props?: O;
    inputs?: I;
}

export interface UpdateResult<O = PropertyMap> {
    outs?: O;
}

/** The JSON schema of one resource, as in a Pulumi package schema. */
export interface ResourceSchema {
    description?: string;
    inputProperties?: Record<string, object>;
    requiredInputs?: string[];
    properties?: Record<string, object>;
    required?: string[];
    [key: string]: unknown;
}

/** One resource type. Every method may be `async`; only `create` is required. */
export interface Resource<I = any, O = any> {
    /** The schema; its `properties` that are not `inputProperties` are the outputs a default preview shows unknown. */
    schema?: ResourceSchema;
    /** Validates and normalises inputs. Default: the new inputs as they are. */
    check?(olds: I, news: I, ctx: Context): Awaitable<CheckResult<I>>;
    /** Default: `diffProperties(ctx.oldInputs, news)`. */
    diff?(id: string, olds: O, news: I, ctx: Context): Awaitable<DiffResult>;
    /** Makes the resource. Never called during a preview: `preview` is. */
    create(inputs: I, ctx: Context): Awaitable<CreateResult<O>>;
    /**
     * What a preview of a create (`olds` undefined) or an update shows; inputs may be `Unknown`.
     * Default: the inputs, and every other output of the schema unknown (secret when the schema says so).
     */
    preview?(news: I, olds: O | undefined, ctx: Context): Awaitable<O>;
    /** Default: the state as it is. */
    read?(id: string, props: O, ctx: Context): Awaitable<ReadResult<O, I>>;
    /** Changes the resource in place. Never called during a preview: `preview` is. */
    update?(id: string, olds: O, news: I, ctx: Context): Awaitable<UpdateResult<O>>;
    /** Default: nothing to do. */
    delete?(id: string, props: O, ctx: Context): Awaitable<void>;
}

export interface InvokeResult {
    outputs?: PropertyMap;
    failures?: CheckFailure[];
}

export interface ProviderOptions {
    /** The package name: resource tokens start with `<name>:`. */
    name: string;
    /** Semver. */
    version: string;
    /** Token (`<name>:<module>:<Type>`) -> implementation. */
    resources: Record<string, Resource>;
    /** Token -> function, for `invoke`. */
    functions?: Record<string, (args: PropertyMap, ctx: { preview: boolean; log: Logger }) => Awaitable<InvokeResult>>;
    /** Provider configuration; called once per instance, before any other call. */
    configure?(config: PropertyMap): Awaitable<void>;
    /** Package schema fields besides `name`, `version` and `resources` (description, config, functions...). */
    schema?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------
// Diffs

/** Equal, ignoring secret wrappers; an unknown equals nothing. */
export function same(a: Value | undefined, b: Value | undefined): boolean {
    a = a === undefined ? a : reveal(a);
    b = b === undefined ? b : reveal(b);
    if (a instanceof Unknown || b instanceof Unknown) return false;
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
    if (isPlainObject(a) && isPlainObject(b)) {
        const ka = Object.keys(a);
        return ka.length === Object.keys(b).length && ka.every((k) => k in b && same(a[k], b[k]));
    }
    if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
    if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
        return a.constructor === b.constructor && JSON.stringify(a) === JSON.stringify(b);
    }
    return a === b;
}

function pathKey(path: string, key: string): string {
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return path ? `${path}.${key}` : key;
    return `${path}[${JSON.stringify(key)}]`;
}

/**
 * A structural diff of two property maps with a detailed diff by path.
 * A change under a key of `replaceOnChanges` forces a replacement.
 */
export function diffProperties(
    olds: PropertyMap | undefined,
    news: PropertyMap,
    opts: { replaceOnChanges?: string[]; ignoreChanges?: string[]; deleteBeforeReplace?: boolean } = {},
): DiffResult {
    olds = olds ?? {};
    const detailedDiff: Record<string, DiffKind> = {};
    const diffs: string[] = [];
    const replaces: string[] = [];
    const stables: string[] = [];
    const compare = (path: string, a: Value | undefined, b: Value | undefined, replace: boolean) => {
        const kind = (plain: DiffKind, replacing: DiffKind) => (detailedDiff[path] = replace ? replacing : plain);
        if (a === undefined && b === undefined) return;
        if (a === undefined) return kind('add', 'add-replace');
        if (b === undefined) return kind('delete', 'delete-replace');
        const x = reveal(a);
        const y = reveal(b);
        if (isPlainObject(x) && isPlainObject(y)) {
            for (const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort())
                compare(pathKey(path, k), x[k], y[k], replace);
            return;
        }
        if (Array.isArray(x) && Array.isArray(y) && x.length === y.length) {
            x.forEach((v, i) => compare(`${path}[${i}]`, v, y[i], replace));
            return;
        }
        if (!same(x, y)) kind('update', 'update-replace');
    };
    for (const key of [...new Set([...Object.keys(olds), ...Object.keys(news)])].sort()) {
        if (opts.ignoreChanges?.includes(key)) continue;
        const replace = opts.replaceOnChanges?.includes(key) ?? false;
        const before = Object.keys(detailedDiff).length;
        compare(pathKey('', key), olds[key], news[key], replace);
        if (Object.keys(detailedDiff).length === before) stables.push(key);
        else {
            diffs.push(key);
            if (replace) replaces.push(key);
        }
    }
    return {
        changes: diffs.length > 0,
        replaces,
        stables,
        diffs,
        detailedDiff,
        deleteBeforeReplace: (opts.deleteBeforeReplace ?? false) && replaces.length > 0,
    };
}

/** The kind of unknown that stands for a property of this schema type. */
function unknownKind(spec: { type?: string; $ref?: string }): UnknownKind {
    if (spec.$ref?.endsWith('/Asset')) return 'asset';
    if (spec.$ref?.endsWith('/Archive')) return 'archive';
    switch (spec.type) {
        case 'boolean':
            return 'bool';
        case 'integer':
        case 'number':
            return 'number';
        case 'array':
            return 'array';
        case 'object':
            return 'object';
        default:
            return 'string';
    }
}

/** The default preview: `base`, and every output of the schema that is not an input unknown. */
function previewOutputs(schema: ResourceSchema | undefined, base: PropertyMap): PropertyMap {
    const outs: PropertyMap = { ...base };
    const inputs = schema?.inputProperties ?? {};
    for (const [name, spec] of Object.entries(schema?.properties ?? {})) {
        if (name in inputs) continue;
        const s = spec as { type?: string; $ref?: string; secret?: boolean };
        outs[name] = s.secret ? new Secret(new Unknown(unknownKind(s))) : new Unknown(unknownKind(s));
    }
    return outs;
}

function diffToWit(d: DiffResult): rp.DiffResponse {
    const detailed = d.detailedDiff
        ? Object.entries(d.detailedDiff).map(([path, k]): [string, rp.PropertyDiff] => [
              path,
              typeof k === 'string' ? { kind: k, inputDiff: true } : k,
          ])
        : undefined;
    const replaces = d.replaces ?? [];
    const diffs = d.diffs ?? [...new Set([...replaces, ...(detailed ?? []).map(([p]) => p.split(/[.[]/)[0])])];
    const changes: rp.DiffChanges =
        d.changes === true
            ? 'some'
            : d.changes === false
              ? 'none'
              : diffs.length > 0
                ? 'some'
                : detailed
                  ? 'none'
                  : 'unknown';
    return {
        changes,
        replaces,
        stables: d.stables ?? [],
        deleteBeforeReplace: d.deleteBeforeReplace ?? false,
        diffs,
        detailedDiff: detailed,
    };
}

// ---------------------------------------------------------------------------
// The WIT export

type Exports = typeof import('pulumi:provider/resource-provider@0.1.0');

function failures(fs: CheckFailure[] | undefined): wit.CheckFailure[] {
    return (fs ?? []).map(({ property, reason }) => ({ property, reason }));
}

/**
 * Builds the `resource-provider` export from resources and functions:
 * `export const resourceProvider = provider({...})` in the entry module.
 */
export function provider(opts: ProviderOptions): Exports {
    const resource = (type: string): Resource => {
        const r = opts.resources[type];
        if (!r) throw new ProviderError('invalid-argument', `unknown resource type '${type}'`);
        return r;
    };
    // Every export answers with its result or throws the WIT error.
    const guard = async <T>(f: () => Promise<T>): Promise<T> => {
        try {
            return await f();
        } catch (e) {
            throw toWitError(e);
        }
    };
    const unimplemented = (what: string) => async (): Promise<never> => {
        throw toWitError(new ProviderError('unimplemented', `${what} is not implemented by this provider`));
    };

    const exports = {
        getPluginInfo: () => ({ name: opts.name, version: opts.version }),
        parameterize: unimplemented('parameterize'),
        getSchema: (_req: rp.GetSchemaRequest) =>
            guard(async () => {
                const resources: Record<string, ResourceSchema> = {};
                for (const [token, r] of Object.entries(opts.resources)) resources[token] = r.schema ?? {};
                return JSON.stringify({ name: opts.name, version: opts.version, ...opts.schema, resources });
            }),
        checkConfig: (req: rp.CheckRequest) => guard(async () => ({ inputs: req.news, failures: [] })),
        diffConfig: (req: rp.DiffRequest) =>
            guard(async () => diffToWit(diffProperties(mapFromWit(req.oldInputs), mapFromWit(req.news)))),
        configure: (req: rp.ConfigureRequest) =>
            guard(async () => {
                await opts.configure?.(mapFromWit(req.args));
                return { supportsAutonamingConfiguration: false };
            }),
        invoke: (req: rp.InvokeRequest) =>
            guard(async () => {
                const f = opts.functions?.[req.token];
                if (!f) throw new ProviderError('invalid-argument', `unknown function '${req.token}'`);
                const r = await f(mapFromWit(req.args), { preview: req.preview, log });
                return { outputs: toWit(r.outputs ?? {}), failures: failures(r.failures) };
            }),
        call: unimplemented('call'),
        check: (req: rp.CheckRequest) =>
            guard(async () => {
                const r = resource(req.type);
                const news = mapFromWit(req.news);
                const res = r.check ? await r.check(mapFromWit(req.olds), news, context(req)) : { inputs: news };
                return { inputs: toWit(res.inputs ?? news), failures: failures(res.failures) };
            }),
        diff: (req: rp.DiffRequest) =>
            guard(async () => {
                const r = resource(req.type);
                const oldInputs = mapFromWit(req.oldInputs);
                const news = mapFromWit(req.news);
                const ctx = context(req, { oldInputs, ignoreChanges: req.ignoreChanges });
                const d = r.diff
                    ? await r.diff(req.id, mapFromWit(req.olds), news, ctx)
                    : diffProperties(oldInputs, news, { ignoreChanges: req.ignoreChanges });
                return diffToWit(d);
            }),
        create: (req: rp.CreateRequest) =>
            guard(async () => {
                const r = resource(req.type);
                const ctx = context(req, { timeout: req.timeout });
                const inputs = mapFromWit(req.properties);
                if (req.preview) {
                    const outs = r.preview ? await r.preview(inputs, undefined, ctx) : previewOutputs(r.schema, inputs);
                    return { id: '', properties: toWit(outs), refreshBeforeUpdate: false };
                }
                const res = await r.create(inputs, ctx);
                return { id: res.id ?? '', properties: toWit(res.outs ?? {}), refreshBeforeUpdate: false };
            }),
        read: (req: rp.ReadRequest) =>
            guard(async () => {
                const r = resource(req.type);
                const props = mapFromWit(req.properties);
                const inputs = mapFromWit(req.inputs);
                const ctx = context(req, { oldInputs: inputs, timeout: req.timeout });
                // Without `read` there is nothing to look a resource up by ID with
                // (an import sends no state and no inputs): refused, not answered
                // with an empty state.
                if (!r.read && Object.keys(props).length === 0 && Object.keys(inputs).length === 0) {
                    const why = `${req.type} cannot be imported (read by ID '${req.id}' with no state): implement read`;
                    throw new ProviderError('unimplemented', why);
                }
                const res = r.read ? await r.read(req.id, props, ctx) : { id: req.id, props, inputs };
                return {
                    id: res.id ?? '',
                    properties: toWit(res.props ?? {}),
                    inputs: toWit(res.inputs ?? inputs),
                    refreshBeforeUpdate: false,
                };
            }),
        update: (req: rp.UpdateRequest) =>
            guard(async () => {
                const r = resource(req.type);
                const ctx = context(req, {
                    timeout: req.timeout,
                    oldInputs: mapFromWit(req.oldInputs),
                    ignoreChanges: req.ignoreChanges,
                });
                const olds = mapFromWit(req.olds);
                const news = mapFromWit(req.news);
                if (req.preview) {
                    const outs = r.preview ? await r.preview(news, olds, ctx) : previewOutputs(r.schema, { ...olds, ...news });
                    return { properties: toWit(outs), refreshBeforeUpdate: false };
                }
                if (!r.update) throw new ProviderError('unimplemented', `${req.type} cannot be updated in place`);
                const res = await r.update(req.id, olds, news, ctx);
                return { properties: toWit(res.outs ?? {}), refreshBeforeUpdate: false };
            }),
        delete: (req: rp.DeleteRequest) =>
            guard(async () => {
                const r = resource(req.type);
                const ctx = context(req, { oldInputs: mapFromWit(req.oldInputs), timeout: req.timeout });
                await r.delete?.(req.id, mapFromWit(req.properties), ctx);
            }),
        construct: unimplemented('construct'),
        list: unimplemented('list'),
        getMapping: (_key: string, _provider: string) => undefined,
        // Unimplemented, as every call this provider does not implement.
        getMappings: unimplemented('getMappings'),
        cancel: () => {},
    };
    // The export functions are async (a resource method may await); the
    // component model call waits for them.
    return exports as unknown as Exports;
}

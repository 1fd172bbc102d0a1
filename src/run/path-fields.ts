import { resolve } from 'node:path';
import { PATH_LIKE } from '../config/yaml.ts';
import { isTechniqueRef, parseJudgeRef, type ParsedJudgeRef } from '../llm/modelRef.ts';
import type { TransportSpec } from '../vehicle/transports/index.ts';
import type { ObserveTransport } from '../vehicle/observe/sources.ts';
import type { HeadUnitConfig } from './headunit-config.ts';
import type { PathField, PathKind } from './kind.ts';

/**
 * Fields that name files and that several kinds share (the head unit's bus, a CAN transport, a mapping): named
 * once here, so the bench app's path policy (src/server/path-policy.ts) and the loaders' "relative to the
 * config file" see the same list for every kind.
 */

/**
 * The file or device a CAN transport names: a candump file (`use`: written where the bench sends frames, read
 * where it listens), a recorded trace to replay (read), an SLCAN serial device. A socketcan interface or the
 * bridge names none. `set` stores a rewritten transport in the parsed config's form.
 */
export function transportPathFields<C>(field: string, spec: TransportSpec | ObserveTransport, use: Exclude<PathKind, 'device'>, set: (config: C, spec: TransportSpec | ObserveTransport) => void): PathField<C>[] {
  if ((spec.kind === 'candump' || spec.kind === 'replay') && spec.path) {
    const kind = spec.kind;
    // a candump -L stream on a serial line or pseudo-terminal is a device, not a file
    if (spec.path.startsWith('/dev/')) return [{ field, path: spec.path, kind: 'device', rewrite: () => undefined }];
    return [{ field, path: spec.path, kind: kind === 'replay' ? 'read' : use, rewrite: (c, p) => set(c, { kind, path: p }) }];
  }
  if (spec.kind === 'slcan') return [{ field, path: spec.path, kind: 'device', rewrite: () => undefined }];
  return [];
}

/** A mapping (or scenario) field: a name looked up among the shipped ones, or a path when it looks like one. */
export function namedFilePathFields<C>(field: string, value: string, set: (config: C, path: string) => void): PathField<C>[] {
  return PATH_LIKE.test(value) ? [{ field, path: value, kind: 'read', rewrite: set }] : [];
}

/** The files the head unit's config names: the reference unit's bus (frames it writes, the mapping it encodes them with). */
export function headUnitPathFields<C extends { headUnit: HeadUnitConfig }>(config: C): PathField<C>[] {
  const unit = config.headUnit;
  if (unit.type !== 'reference' || !unit.bus) return [];
  const bus = (c: C) => (c.headUnit as Extract<HeadUnitConfig, { type: 'reference' }>).bus!;
  return [
    ...transportPathFields<C>('headUnit.bus.transport', unit.bus.transport, 'write', (c, spec) => (bus(c).transport = spec as typeof unit.bus.transport)),
    ...namedFilePathFields<C>('headUnit.bus.mapping', unit.bus.mapping, (c, p) => (bus(c).mapping = p)),
  ];
}

/** The model files a model reference reads: `gguf:FILE`, and the gguf models a technique judge names (sc-5:gguf:…, ar:gguf:…+gguf:…). */
export function modelRefPathFields<C>(field: string, ref: string, set: (config: C, ref: string) => void): PathField<C>[] {
  if (ref.startsWith('gguf:')) return [{ field, path: ref.slice(5), kind: 'read', rewrite: (c, p) => set(c, `gguf:${p}`) }];
  if (!isTechniqueRef(ref)) return [];
  let parsed: ParsedJudgeRef;
  try {
    parsed = parseJudgeRef(ref);
  } catch {
    return []; // not a usable reference: the run stops on it before any model is loaded
  }
  return parsed.models.flatMap((model, j): PathField<C>[] => {
    if (!model.startsWith('gguf:')) return [];
    // each rewrite keeps the others' (a later field sees the earlier one's path)
    const rewrite = (c: C, path: string) => {
      const models = [...parsed.models];
      models[j] = `gguf:${path}`;
      parsed = { technique: parsed.technique, models };
      set(c, `${parsed.technique}:${models.join('+')}`);
    };
    return [{ field, path: model.slice(5), kind: 'read', rewrite }];
  });
}

/** A copy of `config` with every file its `fields` name made absolute against `baseDir`; devices stay as they are. */
export function withAbsolutePaths<C>(config: C, fields: readonly PathField<C>[], baseDir: string): C {
  const copy = structuredClone(config);
  for (const field of fields) if (field.kind !== 'device') field.rewrite(copy, resolve(baseDir, field.path));
  return copy;
}

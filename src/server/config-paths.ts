import { tmpdir } from 'node:os';
import { withAbsolutePaths } from '../run/path-fields.ts';
import { isAbsolute, relative, resolve } from 'node:path';
import type { CampaignConfig } from '../kinds/dialogue/config.ts';
import type { AnyCampaignKind } from '../kinds/registry.ts';
import type { KindConfig, PathField } from '../run/kind.ts';
import type { FieldError } from './http-util.ts';

/** Where a config started from the bench app may point: everything else is refused before any file is touched. */
export interface AppPathRoots {
  /** bench-configs/: relative paths resolve against it (a config's paths resolve against the file that names it) */
  configsDir: string;
  /** folders a config may read from: the workspace, bench-configs/, data/ (the vendored data sets), hardware/, models/ */
  readable: readonly string[];
  /** folders a config may write to (a candump file, the LLM request cache): the workspace */
  writable: readonly string[];
}

/** Serial devices an SLCAN adapter shows up as, and pseudo-terminals (a socat pair on a rig without hardware). */
const SERIAL_DEVICE = /^\/dev\/(tty[A-Za-z0-9]+|pts\/\d+|serial\/by-(id|path)\/[A-Za-z0-9._:-]+)$/;

/** A serial device, or a link in the system's temporary folder, where `socat pty,link=…` pairs are made (bench-configs/bus-observe.yaml). */
function serialDevice(path: string): boolean {
  return SERIAL_DEVICE.test(path) || (isAbsolute(path) && inside(tmpdir(), path) && resolve(path) !== resolve(tmpdir()));
}

function inside(root: string, path: string): boolean {
  const rel = relative(resolve(root), path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The fields (of a config started from the app) that name something outside the allowed folders.
 * Purely lexical (no file is opened or stat'ed), so the answer is the same whether or not the file
 * exists: `seeds: /etc/passwd` learns nothing about /etc/passwd.
 */
export function disallowedPaths(fields: readonly PathField[], roots: AppPathRoots): FieldError[] {
  const errors: FieldError[] = [];
  for (const { field, path, kind } of fields) {
    if (kind === 'device') {
      if (!serialDevice(path)) errors.push({ path: field, message: `a serial device such as /dev/ttyACM0, /dev/serial/by-id/… or a pseudo-terminal link under ${tmpdir()}` });
      continue;
    }
    const absolute = resolve(roots.configsDir, path);
    const allowed = kind === 'write' ? roots.writable : roots.readable;
    if (!allowed.some((root) => inside(root, absolute))) {
      errors.push({ path: field, message: `configs started from the bench app may only ${kind === 'write' ? 'write under the workspace' : 'name files under the workspace, bench-configs/, data/, hardware/ or models/'}` });
    }
  }
  return errors;
}

/**
 * The config as the app writes it to the workspace: every path made absolute against bench-configs/
 * (the copy lives elsewhere, and must read exactly what was checked) and the vehicle transport back
 * in its config form.
 */
export function absoluteConfigPaths(kind: AnyCampaignKind, config: KindConfig, configsDir: string): Record<string, unknown> {
  const copy = withAbsolutePaths(config, kind.pathFields(config), configsDir) as unknown as Record<string, unknown>;
  // a dialogue config's vehicle transport goes back to its text form
  const vehicle = (copy as unknown as Partial<CampaignConfig>).vehicle;
  if (vehicle) (copy.vehicle as Record<string, unknown>).transport = transportText(vehicle.transport);
  return copy;
}

function transportText(spec: NonNullable<CampaignConfig['vehicle']>['transport']): string {
  switch (spec.kind) {
    case 'candump':
      return spec.path ? `candump:${spec.path}` : 'candump';
    case 'slcan':
      return `slcan:${spec.path}`;
    case 'socketcan':
      return `socketcan:${spec.iface}`;
    case 'bridge':
      return 'bridge';
  }
}

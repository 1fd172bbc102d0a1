import { resolve } from 'node:path';
import { REPO_ROOT } from '../helpers/repoData.ts';

/** opendbc DBC files vendored under hardware/dbc/opendbc (licence and provenance beside them). */
export const OPENDBC_DIR = resolve(REPO_ROOT, 'hardware/dbc/opendbc');
export const OPENDBC_FILES = [
  'toyota_prius_2010_pt.dbc',
  'hyundai_2015_ccan.dbc',
  'tesla_can.dbc',
  'gm_global_a_high_voltage_management.dbc',
];

export function opendbcPath(file: string): string {
  return resolve(OPENDBC_DIR, file);
}

/**
 * How place names compare across the driver, the unit and the world: case, accents and spacing aside, and a leading
 * "the" dropped ("take me to the Cafe Central" names Café Central). One rule for the oracle, the world's lookups and
 * the reading of typed turns.
 */
export function placeNameKey(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^the /, '');
}

export function samePlaceName(a: string, b: string): boolean {
  return placeNameKey(a) === placeNameKey(b);
}

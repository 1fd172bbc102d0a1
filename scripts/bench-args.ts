/** The benchmark scripts' command-line options, read one way: `--name` flags, `--name N` numbers and `--name TEXT`. */
const argv = process.argv.slice(2);

/** Whether `--name` was given. */
export function flag(name: string): boolean {
  return argv.includes(`--${name}`);
}

/** The text after `--name`, or undefined when the option is absent. */
export function text(name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** The number after `--name`, or `fallback`; a value that is not a number stops the script naming the option. */
export function arg(name: string, fallback: number): number {
  const given = text(name);
  if (given === undefined) return fallback;
  const value = Number(given);
  if (given.trim() === '' || !Number.isFinite(value)) throw new Error(`--${name}: expected a number, got ${JSON.stringify(given)}`);
  return value;
}

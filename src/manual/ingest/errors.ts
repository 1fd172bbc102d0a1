/** A manual file that cannot be read as the format it claims; the message names the file and what was expected. */
export class ManualFormatError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
    this.name = 'ManualFormatError';
  }
}

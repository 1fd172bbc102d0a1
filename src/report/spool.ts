import { closeSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';

/** Text is handed to the file system in pieces of about this many characters (fewer system calls than one per row). */
const PIECE = 1 << 16;

/**
 * A file written piece by piece under a temporary name beside `path`, renamed into place by `commit` (a reader never
 * sees it half-written) or removed by `discard`. The report's files of a large run are written this way, so their
 * text never sits in memory whole.
 */
export class PieceFile {
  private readonly temporary: string;
  private fd: number | null;
  private pending: string[] = [];
  private pendingLength = 0;

  constructor(readonly path: string, suffix = 'tmp') {
    this.temporary = `${path}.${suffix}-${process.pid}`;
    this.fd = openSync(this.temporary, 'w+');
  }

  write(text: string): void {
    this.pending.push(text);
    this.pendingLength += text.length;
    if (this.pendingLength >= PIECE) this.flush();
  }

  /** Appends everything written to `rows` so far, read back from its file a piece at a time. */
  append(rows: PieceFile): void {
    this.flush();
    const fd = rows.flushed();
    const buffer = Buffer.allocUnsafe(PIECE * 4);
    for (let position = 0; ; ) {
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read === 0) return;
      writeSync(this.open(), buffer, 0, read);
      position += read;
    }
  }

  commit(): void {
    this.flush();
    closeSync(this.open());
    this.fd = null;
    renameSync(this.temporary, this.path);
  }

  discard(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(this.temporary, { force: true });
  }

  private flushed(): number {
    this.flush();
    return this.open();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    writeSync(this.open(), this.pending.join(''));
    this.pending = [];
    this.pendingLength = 0;
  }

  private open(): number {
    if (this.fd === null) throw new Error(`${this.path}: written after it was committed or discarded`);
    return this.fd;
  }
}

/**
 * The repeated part of a report file (one row per conversation), spooled to a scratch file beside the target as the
 * run is read, and written into the target between a head and a tail known only at the end (the totals).
 */
export class RowSpool {
  private readonly rows: PieceFile;
  count = 0;

  constructor(readonly path: string) {
    this.rows = new PieceFile(path, 'rows');
  }

  add(row: string): void {
    this.rows.write(row);
    this.count += 1;
  }

  /** Writes head, the rows and tail to the target, atomically, and removes the scratch file. */
  writeAround(head: string, tail: string): void {
    const file = new PieceFile(this.path);
    try {
      file.write(head);
      file.append(this.rows);
      file.write(tail);
      file.commit();
    } catch (error) {
      file.discard();
      throw error;
    } finally {
      this.rows.discard();
    }
  }

  /** Removes the scratch file (a report that failed before it was written). */
  discard(): void {
    this.rows.discard();
  }
}

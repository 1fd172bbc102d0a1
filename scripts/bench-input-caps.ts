/**
 * The input size caps of npm run bench:inputs (#34 item 7): for every reader of a user file, a valid file just under
 * its kind's cap (FILE_LIMITS, src/domain/input-files.ts), a sparse file of the cap + 1 byte (a regular file, refused
 * by its size) and, for the readers that take any path, /dev/zero (a stream, read up to the cap). scripts/bench-inputs.ts
 * runs each in a process of its own and reports the peak RSS over the process's own after its imports.
 */
import { closeSync, mkdirSync, openSync, readFileSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FILE_LIMITS, limitBytes, type FileLimit } from '../src/domain/input-files.ts';

const ROOT = resolve(import.meta.dirname, '..');
const MiB = 1024 * 1024;

/** Writes parts from `next(n)` until the next one would pass `bytes`; returns the size written. */
function writeUpTo(path: string, bytes: number, next: (n: number) => string, head = '', tail = ''): number {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'w');
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail);
  let pending: string[] = [head];
  try {
    for (let n = 0; ; n++) {
      const part = next(n);
      const length = Buffer.byteLength(part);
      if (size + length > bytes) break;
      size += length;
      pending.push(part);
      if (pending.length === 1000) {
        writeSync(fd, pending.join(''));
        pending = [];
      }
    }
    pending.push(tail);
    writeSync(fd, pending.join(''));
  } finally {
    closeSync(fd);
  }
  return size;
}

const markdownSection = (n: number) =>
  `## Climate control ${n}\n\nThe system keeps the cabin at the set temperature; press AUTO to let it choose the air flow.\n\n1. Press the AUTO button.\n2. Turn the knob to the temperature.\n\n> [!WARNING]\n> Do not cover the interior sensor ${n}. The system cannot measure the cabin temperature.\n\n`;
const htmlSection = (n: number) =>
  `<h2>Climate control ${n}</h2><p>The system keeps the cabin at the set temperature; press AUTO to let it choose the air flow.</p><ol><li>Press the AUTO button.</li><li>Turn the knob to the temperature.</li></ol>\n`;

/** A PDF of text pages (Helvetica, 40 lines a page) of at most `bytes`. */
function writePdf(path: string, bytes: number): number {
  const page = (n: number) =>
    Array.from({ length: 40 }, (_, line) => `BT /F1 10 Tf 72 ${760 - line * 18} Td (Climate control ${n}.${line}: press AUTO to let the system choose the air flow.) Tj ET`).join('\n');
  let pages = Math.max(1, Math.floor(bytes / Buffer.byteLength(page(0))));
  let body = pdfOf(page, pages);
  // the first guess leaves out the objects around each page's text: shrink until it fits
  while (body.length > bytes && pages > 1) {
    pages = Math.max(1, Math.floor(pages * (bytes / body.length) * 0.999));
    body = pdfOf(page, pages);
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, body);
  return body.length;
}

function pdfOf(page: (n: number) => string, pages: number): Buffer {
  const objects = ['<< /Type /Catalog /Pages 2 0 R >>', '', '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>'];
  const kids: string[] = [];
  for (let n = 0; n < pages; n++) {
    const content = page(n);
    kids.push(`${objects.length + 1} 0 R`);
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${objects.length + 2} 0 R >>`);
    objects.push(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`;
  const parts = ['%PDF-1.4\n'];
  const offsets: number[] = [];
  let offset = parts[0].length;
  objects.forEach((object, i) => {
    offsets.push(offset);
    const text = `${i + 1} 0 obj\n${object}\nendobj\n`;
    parts.push(text);
    offset += Buffer.byteLength(text, 'latin1');
  });
  parts.push(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`);
  parts.push(`trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`);
  const body = Buffer.from(parts.join(''), 'latin1');
  return body;
}

/** A small manual's chunks and questions, the material the index and test-set generators repeat. */
async function smallManual(dir: string) {
  const { buildManualIndex } = await import('../src/manual/manual-index.ts');
  const { ManualCorpus } = await import('../src/manual/corpus.ts');
  const { generateDeterministicTestSet } = await import('../src/manual/testset.ts');
  const file = join(dir, 'small-manual.md');
  writeUpTo(file, 64 * 1024, markdownSection, "# Owner's manual\n\n");
  const index = await buildManualIndex([file]);
  return { index, items: generateDeterministicTestSet(new ManualCorpus(index)) };
}

/** One reader: its cap, the file it reads (the extension matters to some), a valid file under the cap, and the read. */
export interface CapCase {
  name: string;
  limit: FileLimit;
  file: string;
  /** whether the reader takes /dev/zero (a stream): every reader of a path does, except those refused by a missing file first */
  stream: boolean;
  writeValid(path: string, cap: number, dir: string): Promise<number>;
  read(path: string, dir: string): Promise<string>;
}

export const CAP_CASES: CapCase[] = [
  {
    name: 'manual (Markdown)',
    limit: FILE_LIMITS.manual,
    file: 'manual.md',
    stream: true,
    writeValid: async (path, cap) => writeUpTo(path, cap, markdownSection, "# Owner's manual\n\n"),
    read: async (path) => {
      const { buildManualIndex } = await import('../src/manual/manual-index.ts');
      return `${(await buildManualIndex([path])).chunks.length} chunks`;
    },
  },
  {
    name: 'manual (HTML)',
    limit: FILE_LIMITS.manual,
    file: 'manual.html',
    stream: true,
    writeValid: async (path, cap) => writeUpTo(path, cap, htmlSection, "<html><body><h1>Owner's manual</h1>\n", '</body></html>\n'),
    read: async (path) => {
      const { buildManualIndex } = await import('../src/manual/manual-index.ts');
      return `${(await buildManualIndex([path])).chunks.length} chunks`;
    },
  },
  {
    name: 'manual (PDF)',
    limit: FILE_LIMITS.manual,
    file: 'manual.pdf',
    stream: true,
    writeValid: async (path, cap) => writePdf(path, cap),
    read: async (path) => {
      const { buildManualIndex } = await import('../src/manual/manual-index.ts');
      return `${(await buildManualIndex([path])).chunks.length} chunks`;
    },
  },
  {
    name: 'manual index',
    limit: FILE_LIMITS.manualIndex,
    file: 'manual-index.json',
    stream: true,
    writeValid: async (path, cap, dir) => {
      const { index } = await smallManual(dir);
      const { chunks, ...head } = index;
      const opening = JSON.stringify({ ...head, chunks: [] }).slice(0, -2);
      return writeUpTo(path, cap, (n) => `${n ? ',' : ''}${JSON.stringify({ ...chunks[n % chunks.length], id: `${chunks[n % chunks.length].id}-${n}` })}`, opening, ']}\n');
    },
    read: async (path) => {
      const { loadManualIndex } = await import('../src/manual/manual-index.ts');
      return `${loadManualIndex(path).chunks.length} chunks`;
    },
  },
  {
    name: 'test set (JSON lines)',
    limit: FILE_LIMITS.testSet,
    file: 'testset.jsonl',
    stream: true,
    writeValid: async (path, cap, dir) => {
      const { items } = await smallManual(dir);
      return writeUpTo(path, cap, (n) => `${JSON.stringify({ ...items[n % items.length], id: `q-${n}` })}\n`);
    },
    read: async (path) => {
      const { readTestSet } = await import('../src/manual/testset.ts');
      return `${(await readTestSet(path)).length} questions`;
    },
  },
  {
    name: 'task file (JSON)',
    limit: FILE_LIMITS.taskFile,
    file: 'tasks.json',
    stream: true,
    writeValid: async (path, cap) => {
      const tasks = JSON.parse(readFileSync(join(ROOT, 'data/carbench/tasks_base.json'), 'utf8')) as Array<{ task_id: string }>;
      return writeUpTo(path, cap, (n) => `${n ? ',\n' : ''}${JSON.stringify({ ...tasks[n % tasks.length], task_id: `task-${n}` })}`, '[', ']\n');
    },
    read: async (path) => {
      const { loadTaskFile } = await import('../src/toolenv/tasks.ts');
      return `${loadTaskFile(path).length} tasks`;
    },
  },
  {
    name: 'transcripts (CSV)',
    limit: FILE_LIMITS.transcript,
    file: 'transcripts.csv',
    stream: true,
    writeValid: async (path, cap) => writeUpTo(path, cap, (n) => `c${Math.floor(n / 50)},"Find a cafe near the station, please (${n})",30,D\n`, 'conversation,user,speed_kmh,gear\n'),
    read: async (path) => {
      const { importTranscripts } = await import('../src/suite/import.ts');
      return `${importTranscripts(path).conversations.length} conversations`;
    },
  },
  {
    name: 'transcripts (JSON lines)',
    limit: FILE_LIMITS.transcript,
    file: 'transcripts.jsonl',
    stream: true,
    writeValid: async (path, cap) => writeUpTo(path, cap, (n) => `${JSON.stringify({ conversation: `c${Math.floor(n / 50)}`, user: `Find a cafe near the station, please (${n})`, speed_kmh: 30, gear: 'D' })}\n`),
    read: async (path) => {
      const { importTranscripts } = await import('../src/suite/import.ts');
      return `${importTranscripts(path).conversations.length} conversations`;
    },
  },
  {
    name: 'KVRET (JSON)',
    limit: FILE_LIMITS.transcript,
    file: 'kvret.json',
    stream: true,
    writeValid: async (path, cap) => {
      const dialogues = JSON.parse(readFileSync(join(ROOT, 'data/kvret/kvret_dev_excerpt.json'), 'utf8')) as Array<{ scenario: { uuid: string } }>;
      const dialogue = (n: number) => {
        const original = dialogues[n % dialogues.length];
        return { ...original, scenario: { ...original.scenario, uuid: `${original.scenario.uuid}-${n}` } };
      };
      return writeUpTo(path, cap, (n) => `${n ? ',\n' : ''}${JSON.stringify(dialogue(n))}`, '[', ']\n');
    },
    read: async (path) => {
      const { importKvret } = await import('../src/suite/import.ts');
      return `${importKvret(path, { truncateTurns: true }).conversations.length} conversations`;
    },
  },
  {
    name: 'judge-bench dataset (JSON lines)',
    limit: FILE_LIMITS.judgeBenchDataset,
    file: 'pairs.jsonl',
    stream: true,
    writeValid: async (path, cap) => {
      const { generateDataset } = await import('../src/judgebench/generator.ts');
      const pairs = generateDataset({ seed: 1, users: 50 });
      return writeUpTo(path, cap, (n) => `${JSON.stringify({ ...pairs[n % pairs.length], id: `p-${n}` })}\n`);
    },
    read: async (path) => {
      const { readDataset } = await import('../src/judgebench/dataset.ts');
      return `${readDataset(path).length} pairs`;
    },
  },
  {
    name: 'ratings (CSV)',
    limit: FILE_LIMITS.ratings,
    file: 'ratings.csv',
    stream: true,
    writeValid: async (path, cap) => writeUpTo(path, cap, (n) => `r${n % 3},c${Math.floor(n / 12)},dim${n % 4},${n % 3},pass\n`, 'rater,conversation,dimension,score,pass\n'),
    read: async (path) => {
      const { readRatings } = await import('../src/judgebench/human.ts');
      return `${readRatings(path).length} ratings`;
    },
  },
  {
    name: 'suite (YAML config)',
    limit: FILE_LIMITS.config,
    file: 'suite.yaml',
    stream: true,
    writeValid: async (path, cap) =>
      writeUpTo(path, cap, (n) => `  - id: c${n}\n    turns:\n      - user: Find a cafe near the station, please.\n      - user: The cheaper one.\n`, 'suite: big\ndescription: at the cap\nconversations:\n'),
    read: async (path) => {
      const { loadSuite } = await import('../src/suite/format.ts');
      return `${loadSuite(path).scripts.length} conversations`;
    },
  },
  {
    name: 'seed pool (YAML)',
    limit: FILE_LIMITS.seedPool,
    file: 'pool.yaml',
    stream: true,
    writeValid: async (path, cap) => {
      const items = readFileSync(join(ROOT, 'bench-configs/seeds/in-car.yaml'), 'utf8').split(/\n(?=  - id: )/).slice(1).map((item) => item.replace(/\n*$/, '\n'));
      return writeUpTo(path, cap, (n) => items[n % items.length].replace(/- id: (\S+)/, `- id: $1-${n}`), 'seeds:\n');
    },
    read: async (path) => {
      const { loadSeedPool } = await import('../src/kinds/dialogue/seed-pool.ts');
      return `${loadSeedPool(path, { domains: { min: 1, max: 3 }, seed: 42, needed: 10 }).length} seeds sampled`;
    },
  },
  {
    name: 'CAN database (DBC)',
    limit: FILE_LIMITS.dbc,
    file: 'big.dbc',
    stream: true,
    writeValid: async (path, cap) =>
      writeUpTo(path, cap, (n) => `BO_ ${0x80000000 + n} MSG_${n}: 8 ECU\n SG_ SPEED_${n} : 0|16@1+ (0.01,0) [0|655.35] "km/h" ECU\n SG_ GEAR_${n} : 16|8@1+ (1,0) [0|255] "" ECU\n\n`, 'VERSION ""\n\nNS_ :\n\nBS_:\n\nBU_: ECU\n\n'),
    read: async (path) => {
      const { loadDbc } = await import('../src/vehicle/dbc/parser.ts');
      return `${loadDbc(path).messages.length} messages`;
    },
  },
  {
    name: 'WAV',
    limit: FILE_LIMITS.wav,
    file: 'speech.wav',
    stream: true,
    writeValid: async (path, cap) => {
      const { encodeWav } = await import('../src/voice/wav.ts');
      const { pcm16 } = await import('../src/voice/types.ts');
      const samples = new Int16Array(Math.floor((cap - 44) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin(i / 7));
      const wav = encodeWav(pcm16(samples));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, wav);
      return wav.length;
    },
    read: async (path) => {
      const { readWav } = await import('../src/voice/wav.ts');
      return `${(await readWav(path)).samples.length} samples`;
    },
  },
];

/** The three files of a case in `dir`: valid (under the cap), over (sparse, cap + 1 byte), stream (a link to /dev/zero). */
export async function writeCapFiles(testCase: CapCase, dir: string): Promise<{ valid: string; over: string; stream: string; validBytes: number }> {
  const caseDir = join(dir, testCase.name.replace(/\W+/g, '-'));
  mkdirSync(join(caseDir, 'valid'), { recursive: true });
  mkdirSync(join(caseDir, 'over'), { recursive: true });
  mkdirSync(join(caseDir, 'stream'), { recursive: true });
  const cap = limitBytes(testCase.limit);
  const valid = join(caseDir, 'valid', testCase.file);
  const validBytes = await testCase.writeValid(valid, cap, caseDir);
  const over = join(caseDir, 'over', testCase.file);
  writeFileSync(over, '');
  truncateSync(over, cap + 1);
  const stream = join(caseDir, 'stream', testCase.file);
  symlinkSync('/dev/zero', stream);
  return { valid, over, stream, validBytes };
}

export const capMiB = (testCase: CapCase) => limitBytes(testCase.limit) / MiB;

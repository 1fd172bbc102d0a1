import type { ByteOrder, DbcDatabase, DbcMessage, DbcSignal } from './types.ts';
import { frameKey } from './types.ts';
import { FILE_LIMITS, readBoundedBytes } from '../../domain/input-files.ts';
import { MAX_EXTENDED_ID, MAX_FRAME_BYTES, MAX_STANDARD_ID } from '../frames.ts';
import { escapeExcerpt } from '../logSummary.ts';

/** A malformed DBC: names the file, the line and what was expected there. */
export class DbcParseError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`${file}:${line}: expected ${expected}, found ${found}`);
    this.name = 'DbcParseError';
  }
}

type TokenKind = 'ident' | 'number' | 'string' | 'punct' | 'byteorder' | 'eof';
interface Token {
  kind: TokenKind;
  text: string;
  line: number;
  column: number;
}

const TOKEN_PATTERNS: Array<[TokenKind, RegExp]> = [
  ['byteorder', /@[^\s(]{0,2}/y],
  ['number', /[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/y],
  ['ident', /[A-Za-z_][A-Za-z0-9_]*/y],
  ['punct', /[:;|,()[\]]/y],
];

function tokenize(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let lineStart = 0;
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    if (ch === '\n') {
      line++;
      i++;
      lineStart = i;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\f' || ch === '\v' || ch === '\uFEFF') {
      i++;
      continue;
    }
    const column = i - lineStart;
    if (ch === '"') {
      const startLine = line;
      let value = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new DbcParseError(file, startLine, 'a closing " for the string opened here', 'end of file');
        const c = text[i];
        if (c === '\\' && i + 1 < text.length) {
          value += text[i + 1];
          i += 2;
          continue;
        }
        if (c === '"') break;
        if (c === '\n') {
          line++;
          lineStart = i + 1;
        }
        value += c;
        i++;
      }
      i++;
      tokens.push({ kind: 'string', text: value, line: startLine, column });
      continue;
    }
    let matched = false;
    for (const [kind, pattern] of TOKEN_PATTERNS) {
      pattern.lastIndex = i;
      const m = pattern.exec(text);
      if (m) {
        tokens.push({ kind, text: m[0], line, column });
        i += m[0].length;
        matched = true;
        break;
      }
    }
    if (!matched) throw new DbcParseError(file, line, 'a DBC token (keyword, name, number, string or one of : ; | , ( ) [ ] @)', `'${escapeExcerpt(ch)}'`);
  }
  tokens.push({ kind: 'eof', text: '', line, column: 0 });
  return tokens;
}

/** statements we accept but that carry nothing the bench uses; skipped up to their ';' */
const SKIPPED_STATEMENTS = new Set([
  'BA_DEF_', 'VAL_TABLE_', 'EV_', 'ENVVAR_DATA_', 'SGTYPE_', 'SGTYPE_VAL_', 'BA_DEF_SGTYPE_', 'BA_SGTYPE_',
  'SIG_TYPE_REF_', 'SIG_GROUP_', 'SIGTYPE_VALTYPE_', 'BO_TX_BU_', 'BA_DEF_REL_', 'BA_REL_', 'BA_DEF_DEF_REL_',
  'BU_SG_REL_', 'BU_EV_REL_', 'BU_BO_REL_', 'CAT_DEF_', 'CAT_', 'FILTER', 'NS_DESC_',
]);
const STATEMENTS = new Set([
  ...SKIPPED_STATEMENTS,
  'VERSION', 'NS_', 'BS_', 'BU_', 'BO_', 'SG_', 'CM_', 'BA_', 'BA_DEF_DEF_', 'VAL_', 'SIG_VALTYPE_', 'SG_MUL_VAL_',
]);

const CYCLE_TIME_ATTRIBUTE = 'GenMsgCycleTime';
/** id of VECTOR__INDEPENDENT_SIG_MSG, which Vector tools write into DBC files */
const VECTOR_INDEPENDENT_SIGNALS_ID = 0xc0000000;

function describe(token: Token): string {
  if (token.kind === 'eof') return 'end of file';
  if (token.kind === 'string') return `string "${escapeExcerpt(token.text, 40)}"`;
  return `'${escapeExcerpt(token.text, 40)}'`;
}

/** Frame bit positions of a signal, MSB first, as Vector and cantools number them. */
export function signalBitPositions(startBit: number, length: number, byteOrder: ByteOrder): number[] {
  const positions: number[] = [];
  if (byteOrder === 'little_endian') {
    // start bit is the LSB; bits ascend through the bytes
    for (let i = length - 1; i >= 0; i--) positions.push(startBit + i);
  } else {
    // start bit is the MSB in sawtooth numbering: walk down within a byte, then to bit 7 of the next byte
    let pos = startBit;
    for (let i = 0; i < length; i++) {
      positions.push(pos);
      pos = pos % 8 === 0 ? pos + 15 : pos - 1;
    }
  }
  return positions;
}

class Parser {
  private pos = 0;
  private readonly messages = new Map<number, DbcMessage>();
  private current: DbcMessage | undefined;
  private version = '';
  private nodes: string[] = [];
  private comment: string | undefined;
  private cycleTimeDefault: number | undefined;
  private readonly cycleTimes = new Map<number, number>();
  private readonly warnings: string[] = [];

  constructor(
    private readonly tokens: Token[],
    private readonly file: string,
  ) {}

  private peek(): Token {
    return this.tokens[this.pos];
  }
  private next(): Token {
    const token = this.tokens[this.pos];
    if (token.kind !== 'eof') this.pos++;
    return token;
  }
  private fail(token: Token, expected: string): never {
    throw new DbcParseError(this.file, token.line, expected, describe(token));
  }
  private expectPunct(text: string, what?: string): Token {
    const token = this.next();
    if (token.kind !== 'punct' || token.text !== text) this.fail(token, what ?? `'${text}'`);
    return token;
  }
  private expectIdent(what: string): Token {
    const token = this.next();
    if (token.kind !== 'ident') this.fail(token, what);
    return token;
  }
  private expectString(what: string): string {
    const token = this.next();
    if (token.kind !== 'string') this.fail(token, what);
    return token.text;
  }
  private expectNumber(what: string): number {
    const token = this.next();
    if (token.kind !== 'number') this.fail(token, what);
    return Number(token.text);
  }
  private expectInteger(what: string, min: number, max: number): number {
    const token = this.peek();
    const value = this.expectNumber(what);
    if (!Number.isInteger(value) || value < min || value > max) this.fail(token, `${what} (an integer ${min}..${max})`);
    return value;
  }
  /** CM_/BA_/VAL_ may name a message or signal the file lacks (real files do): noted, then ignored */
  private messageByKey(token: Token): DbcMessage | undefined {
    const message = this.messages.get(Number(token.text));
    if (!message) this.warnings.push(`${this.file}:${token.line}: no message with id ${token.text}; statement ignored`);
    return message;
  }

  parse(): DbcDatabase {
    for (;;) {
      const token = this.peek();
      if (token.kind === 'eof') break;
      if (token.kind !== 'ident' || !STATEMENTS.has(token.text)) {
        this.fail(token, 'a DBC keyword (VERSION, NS_, BS_, BU_, BO_, SG_, CM_, BA_, VAL_, …)');
      }
      this.next();
      if (token.text !== 'SG_') this.current = undefined;
      this.statement(token);
    }
    // a file without frames (empty, truncated, or not a DBC) would decode every frame as unknown: refuse it here
    if (this.messages.size === 0) this.fail(this.peek(), 'at least one message (BO_ id name: length transmitter); the file defines none');
    for (const message of this.messages.values()) {
      message.cycleTimeMs = this.cycleTimes.get(frameKey(message.id, message.extended)) ?? this.cycleTimeDefault;
      this.checkMultiplexing(message);
    }
    return { source: this.file, version: this.version, nodes: this.nodes, messages: [...this.messages.values()], comment: this.comment, warnings: this.warnings };
  }

  private statement(keyword: Token): void {
    switch (keyword.text) {
      case 'VERSION':
        this.version = this.expectString('the version string after VERSION');
        return;
      case 'NS_':
        this.expectPunct(':', "':' after NS_");
        // the new-symbols list: names on the NS_ line or on indented lines below it
        while (this.peek().kind === 'ident' && (this.peek().line === keyword.line || this.peek().column > 0)) this.next();
        return;
      case 'BS_':
        this.expectPunct(':', "':' after BS_");
        while (this.peek().kind !== 'eof' && this.peek().line === keyword.line) this.next();
        return;
      case 'BU_':
        this.expectPunct(':', "':' after BU_");
        while (
          this.peek().kind === 'ident' &&
          (this.peek().line === keyword.line || (this.peek().column > 0 && !STATEMENTS.has(this.peek().text)))
        ) {
          this.nodes.push(this.next().text);
        }
        return;
      case 'BO_':
        this.message(keyword);
        return;
      case 'SG_':
        this.signal(keyword);
        return;
      case 'CM_':
        this.commentStatement();
        return;
      case 'BA_DEF_DEF_':
        this.attributeDefault();
        return;
      case 'BA_':
        this.attribute();
        return;
      case 'VAL_':
        this.valueTable(keyword);
        return;
      case 'SIG_VALTYPE_':
        this.signalValueType();
        return;
      case 'SG_MUL_VAL_':
        this.fail(keyword, 'no SG_MUL_VAL_ (extended multiplexing is not supported by this codec)');
      default:
        this.skipToSemicolon(keyword);
    }
  }

  private skipToSemicolon(keyword: Token): void {
    for (;;) {
      const token = this.next();
      if (token.kind === 'eof') this.fail(token, `';' ending the ${keyword.text} statement of line ${keyword.line}`);
      if (token.kind === 'punct' && token.text === ';') return;
    }
  }

  private message(keyword: Token): void {
    const idToken = this.peek();
    const rawId = this.expectInteger('a message id after BO_', 0, 0xffffffff);
    if (rawId === VECTOR_INDEPENDENT_SIGNALS_ID) {
      // Vector's pseudo-message holding signals not placed in any frame: read it, keep it off the bus
      const name = this.expectIdent('a message name after the id').text;
      this.expectPunct(':', "':' after the message name");
      this.expectInteger('the message length in bytes', 0, MAX_FRAME_BYTES);
      this.expectIdent('the transmitting node');
      this.warnings.push(`${this.file}:${keyword.line}: ${name} (id ${rawId}) holds unplaced signals; not a frame, ignored`);
      // its declared length is 0: give its signals a full frame so they parse, then drop them with it
      this.current = { id: 0, extended: true, name, length: MAX_FRAME_BYTES, transmitter: '', signals: [], cycleTimeMs: undefined, comment: undefined, line: keyword.line };
      return;
    }
    const extended = rawId >= 0x80000000;
    const id = extended ? rawId - 0x80000000 : rawId;
    if (id > (extended ? MAX_EXTENDED_ID : MAX_STANDARD_ID)) {
      this.fail(idToken, extended ? 'an extended id up to 0x1FFFFFFF (plus bit 31)' : 'a standard id up to 0x7FF (extended ids carry bit 31)');
    }
    const name = this.expectIdent('a message name after the id').text;
    this.expectPunct(':', "':' after the message name");
    const length = this.expectInteger('the message length in bytes', 0, MAX_FRAME_BYTES);
    const transmitter = this.expectIdent('the transmitting node').text;
    const key = frameKey(id, extended);
    if (this.messages.has(key)) this.fail(idToken, `a message id not defined before (${rawId} is already ${this.messages.get(key)!.name})`);
    this.current = { id, extended, name, length, transmitter, signals: [], cycleTimeMs: undefined, comment: undefined, line: keyword.line };
    this.messages.set(key, this.current);
  }

  private signal(keyword: Token): void {
    const message = this.current;
    if (!message) this.fail(keyword, 'SG_ only directly after a BO_ message or another SG_');
    const name = this.expectIdent('a signal name after SG_').text;
    let multiplex: DbcSignal['multiplex'];
    if (this.peek().kind === 'ident') {
      const mux = this.next();
      if (mux.text === 'M') multiplex = 'multiplexer';
      else if (/^m\d+$/.test(mux.text)) multiplex = Number(mux.text.slice(1));
      else this.fail(mux, "a multiplex indicator 'M' or 'm<value>' (nested multiplexing 'm<value>M' is not supported)");
    }
    this.expectPunct(':', `':' after signal ${name}`);
    const startBit = this.expectInteger('the start bit', 0, MAX_FRAME_BYTES * 8 - 1);
    this.expectPunct('|', "'|' between start bit and length");
    const lengthToken = this.peek();
    const length = this.expectInteger('the signal length in bits', 1, 64);
    const orderToken = this.next();
    if (orderToken.kind !== 'byteorder' || !/^@[01][+-]$/.test(orderToken.text)) this.fail(orderToken, "the byte order and sign '@0+', '@0-', '@1+' or '@1-'");
    const byteOrder: ByteOrder = orderToken.text[1] === '1' ? 'little_endian' : 'big_endian';
    const signed = orderToken.text[2] === '-';
    this.expectPunct('(', "'(' before factor,offset");
    const factorToken = this.peek();
    const factor = this.expectNumber('the factor');
    if (factor === 0) this.fail(factorToken, 'a non-zero factor');
    this.expectPunct(',', "',' between factor and offset");
    const offset = this.expectNumber('the offset');
    this.expectPunct(')', "')' after factor,offset");
    this.expectPunct('[', "'[' before minimum|maximum");
    const min = this.expectNumber('the minimum');
    this.expectPunct('|', "'|' between minimum and maximum");
    const max = this.expectNumber('the maximum');
    this.expectPunct(']', "']' after minimum|maximum");
    const unit = this.expectString('the unit string (may be "")');
    const receivers: string[] = [];
    while (this.peek().line === keyword.line && this.peek().kind !== 'eof') {
      const token = this.next();
      if (token.kind === 'ident') receivers.push(token.text);
      else if (!(token.kind === 'punct' && token.text === ',')) this.fail(token, 'receiver node names separated by commas');
    }
    if (message.signals.some((s) => s.name === name)) this.fail(keyword, `a signal name not used before in ${message.name} (${name} repeats)`);
    const bitPositions = signalBitPositions(startBit, length, byteOrder);
    const outside = bitPositions.find((p) => p < 0 || p >= message.length * 8);
    if (outside !== undefined) {
      this.fail(lengthToken, `a signal within the ${message.length} bytes of ${message.name} (${name} reaches bit ${outside})`);
    }
    message.signals.push({
      name,
      startBit,
      length,
      byteOrder,
      signed,
      valueType: 'integer',
      factor,
      offset,
      // [0|0] is how DBC editors write "no declared range"; real files also carry inverted ones like [1|0]
      minimum: min < max ? min : undefined,
      maximum: min < max ? max : undefined,
      unit,
      receivers,
      multiplex,
      valueTable: new Map(),
      comment: undefined,
      bitPositions,
      line: keyword.line,
    });
  }

  private findSignal(messageToken: Token, name: Token): DbcSignal | undefined {
    const message = this.messageByKey(messageToken);
    if (!message) return undefined;
    const signal = message.signals.find((s) => s.name === name.text);
    if (!signal) this.warnings.push(`${this.file}:${name.line}: message ${message.name} has no signal ${name.text}; statement ignored`);
    return signal;
  }

  private commentStatement(): void {
    const token = this.peek();
    if (token.kind === 'string') {
      this.comment = this.expectString('the comment');
    } else {
      const kind = this.expectIdent('BU_, BO_, SG_, EV_ or a string after CM_');
      if (kind.text === 'BO_') {
        const messageToken = this.next();
        if (messageToken.kind !== 'number') this.fail(messageToken, 'a message id after CM_ BO_');
        const message = this.messageByKey(messageToken);
        const text = this.expectString('the comment string');
        if (message) message.comment = text;
      } else if (kind.text === 'SG_') {
        const messageToken = this.next();
        if (messageToken.kind !== 'number') this.fail(messageToken, 'a message id after CM_ SG_');
        const signal = this.findSignal(messageToken, this.expectIdent('a signal name'));
        const text = this.expectString('the comment string');
        if (signal) signal.comment = text;
      } else if (kind.text === 'BU_' || kind.text === 'EV_') {
        this.expectIdent(`a name after CM_ ${kind.text}`);
        this.expectString('the comment string');
      } else {
        this.fail(kind, 'BU_, BO_, SG_ or EV_ after CM_');
      }
    }
    this.expectPunct(';', "';' ending CM_");
  }

  private attributeValue(): Token {
    const token = this.next();
    if (token.kind !== 'number' && token.kind !== 'string' && token.kind !== 'ident') this.fail(token, 'an attribute value');
    return token;
  }

  private attributeDefault(): void {
    const name = this.expectString('the attribute name after BA_DEF_DEF_');
    const value = this.attributeValue();
    this.expectPunct(';', "';' ending BA_DEF_DEF_");
    if (name === CYCLE_TIME_ATTRIBUTE) this.cycleTimeDefault = this.cycleTime(value);
  }

  private cycleTime(token: Token): number | undefined {
    const value = Number(token.text);
    if (token.kind !== 'number' || !Number.isInteger(value) || value < 0) this.fail(token, `${CYCLE_TIME_ATTRIBUTE} as a whole number of ms >= 0`);
    return value === 0 ? undefined : value; // 0 means "not periodic"
  }

  private attribute(): void {
    const name = this.expectString('the attribute name after BA_');
    const target = this.peek();
    if (target.kind === 'ident' && (target.text === 'BO_' || target.text === 'SG_' || target.text === 'BU_' || target.text === 'EV_')) {
      this.next();
      if (target.text === 'BO_') {
        const messageToken = this.next();
        if (messageToken.kind !== 'number') this.fail(messageToken, 'a message id after BA_ "…" BO_');
        const message = this.messageByKey(messageToken);
        const value = this.attributeValue();
        if (message && name === CYCLE_TIME_ATTRIBUTE) {
          const cycle = this.cycleTime(value);
          if (cycle !== undefined) this.cycleTimes.set(frameKey(message.id, message.extended), cycle);
        }
      } else if (target.text === 'SG_') {
        const messageToken = this.next();
        if (messageToken.kind !== 'number') this.fail(messageToken, 'a message id after BA_ "…" SG_');
        this.findSignal(messageToken, this.expectIdent('a signal name'));
        this.attributeValue();
      } else {
        this.expectIdent(`a name after BA_ "…" ${target.text}`);
        this.attributeValue();
      }
    } else {
      this.attributeValue();
    }
    this.expectPunct(';', "';' ending BA_");
  }

  private valueTable(keyword: Token): void {
    const first = this.peek();
    if (first.kind !== 'number') {
      // VAL_ of an environment variable: nothing the bench uses
      this.skipToSemicolon(keyword);
      return;
    }
    this.next();
    const signal = this.findSignal(first, this.expectIdent('a signal name after VAL_ <id>'));
    for (;;) {
      const token = this.peek();
      if (token.kind === 'punct' && token.text === ';') {
        this.next();
        return;
      }
      const raw = this.expectNumber("a raw value or ';' ending VAL_");
      if (!Number.isInteger(raw)) this.fail(token, 'an integer raw value in VAL_');
      const label = this.expectString('the label of the value');
      signal?.valueTable.set(raw, label);
    }
  }

  private signalValueType(): void {
    const messageToken = this.next();
    if (messageToken.kind !== 'number') this.fail(messageToken, 'a message id after SIG_VALTYPE_');
    const signal = this.findSignal(messageToken, this.expectIdent('a signal name'));
    this.expectPunct(':', "':' after the signal name");
    const typeToken = this.peek();
    const type = this.expectInteger('the value type 0 (integer), 1 (float32) or 2 (float64)', 0, 3);
    if (!signal) {
      this.expectPunct(';', "';' ending SIG_VALTYPE_");
      return;
    }
    if (type === 1 || type === 2) {
      const bits = type === 1 ? 32 : 64;
      if (signal.length !== bits) this.fail(typeToken, `a ${bits}-bit signal for value type ${type} (${signal.name} has ${signal.length} bits)`);
      signal.valueType = type === 1 ? 'float32' : 'float64';
    } else if (type === 3) {
      this.fail(typeToken, 'value type 0, 1 or 2');
    }
    this.expectPunct(';', "';' ending SIG_VALTYPE_");
  }

  private checkMultiplexing(message: DbcMessage): void {
    const switches = message.signals.filter((s) => s.multiplex === 'multiplexer');
    const muxed = message.signals.find((s) => typeof s.multiplex === 'number');
    if (switches.length > 1) {
      throw new DbcParseError(this.file, switches[1].line, `one multiplexer 'M' per message (${message.name})`, `a second one, ${switches[1].name}`);
    }
    if (muxed && switches.length === 0) {
      throw new DbcParseError(this.file, muxed.line, `a multiplexer signal 'M' in ${message.name} for multiplexed signal ${muxed.name}`, 'none');
    }
  }
}

export function parseDbc(text: string, file = '<dbc>'): DbcDatabase {
  return new Parser(tokenize(text, file), file).parse();
}

export function loadDbc(path: string): DbcDatabase {
  // DBC files are traditionally cp1252, read as latin1
  return parseDbc(readBoundedBytes(path, 'DBC file', FILE_LIMITS.dbc).toString('latin1'), path);
}

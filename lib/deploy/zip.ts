import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { inflateRawSync } from 'node:zlib';

/**
 * The files of a zip archive (the packaged functions), read through its central directory
 * (APPNOTE.TXT 4.3.12, 4.3.16): name, stored and uncompressed size, and the bytes on demand.
 * Stored (0) and deflated (8) entries only, which is what the Serverless Framework writes.
 */
export interface ZipEntry {
  name: string;
  compressedSize: number;
  size: number;
  read: () => Buffer;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

export const zipEntries = (path: string): ZipEntry[] => {
  const zip = readFileSync(path);
  // The end-of-central-directory record: the last 22 bytes, or earlier when a comment follows it.
  let eocd = zip.length - 22;
  while (eocd >= 0 && zip.readUInt32LE(eocd) !== EOCD) eocd--;
  if (eocd < 0) throw new Error(`${path}: not a zip archive (no end of central directory)`);
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const entries: ZipEntry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(at) !== CENTRAL) throw new Error(`${path}: damaged central directory at ${at}`);
    const method = zip.readUInt16LE(at + 10);
    const compressedSize = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extraLength = zip.readUInt16LE(at + 30);
    const commentLength = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    at += 46 + nameLength + extraLength + commentLength;
    const read = (): Buffer => {
      if (zip.readUInt32LE(local) !== LOCAL) throw new Error(`${path}: ${name} has no local header`);
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressedSize);
      if (method === 0) return Buffer.from(data);
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${path}: ${name} uses compression method ${method}`);
    };
    entries.push({ name, compressedSize, size, read });
  }
  return entries;
};

/** Unpacks a zip under `dir`, as Lambda unpacks a function into /var/task and a layer into /opt. */
export const unpackZip = (zip: string, dir: string): void => {
  for (const e of zipEntries(zip)) {
    if (e.name.endsWith('/')) continue;
    const to = join(dir, e.name);
    if (!to.startsWith(join(dir, '/'))) throw new Error(`${zip}: ${e.name} would unpack outside ${dir}`);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, e.read());
  }
};

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SDK_EXPORTS, SDK_PACKAGES, type SdkPackage } from '../../../lib/aws/sdk';
import { SETUP_SDK_EXPORTS } from '../../../lib/aws/setup-sdk';

const ROOT = join(__dirname, '..', '..', '..');

const sources = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });

/** The values (not types) each file imports by name from an `@aws-sdk/*` package. */
const valueImports = (text: string): { pkg: string; name: string }[] =>
  [...text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+'(@aws-sdk\/[^']+)'/g)].flatMap((m) =>
    m[1] !== undefined
      ? []
      : (m[2] ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '' && !s.startsWith('type '))
          .map((s) => ({ pkg: m[3] ?? '', name: s.split(/\s+as\s+/)[0] ?? '' })),
  );

/**
 * The Lambda layer carries only the names SDK_EXPORTS lists (lib/deploy/sdk-layer.ts). `sdk.*()`
 * hands out those alone (the compiler checks it); a direct import from a package is checked here.
 */
describe('the SDK names the fleet takes', () => {
  it('lists every value the fleet’s code imports from an SDK package', () => {
    const missing = ['lib', 'functions', 'agent']
      .flatMap(sources)
      .flatMap((file) => valueImports(readFileSync(join(ROOT, file), 'utf8')).map((i) => ({ file, ...i })))
      .filter(({ pkg, name }) => !(SDK_EXPORTS[pkg as SdkPackage] as readonly string[] | undefined)?.includes(name));
    expect(missing).toEqual([]);
  });

  it('finds the imports it checks (the scan is not blind)', () => {
    expect(valueImports(readFileSync(join(ROOT, 'lib/aws/state-store.ts'), 'utf8'))).toContainEqual({
      pkg: '@aws-sdk/client-s3',
      name: 'PutObjectCommand',
    });
    expect(
      valueImports(
        `import { type S3Client, GetObjectCommand as Get } from '@aws-sdk/client-s3';\n` +
          `import type { X } from '@aws-sdk/client-sqs';`,
      ),
    ).toEqual([{ pkg: '@aws-sdk/client-s3', name: 'GetObjectCommand' }]);
  });

  it('lists names the installed packages really export', () => {
    for (const pkg of SDK_PACKAGES) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(pkg) as Record<string, unknown>;
      expect({ pkg, undefinedNames: SDK_EXPORTS[pkg].filter((name) => mod[name] === undefined) }).toEqual({
        pkg,
        undefinedNames: [],
      });
    }
  });

  it('lists names the setup commands take that the installed packages really export', () => {
    for (const [pkg, names] of Object.entries(SETUP_SDK_EXPORTS)) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(pkg) as Record<string, unknown>;
      expect({ pkg, undefinedNames: names.filter((name) => mod[name] === undefined) }).toEqual({
        pkg,
        undefinedNames: [],
      });
    }
  });
});

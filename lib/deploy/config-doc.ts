import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { z } from 'zod';
import { CONFIG_FILE_ENV, configSchema, ENV_NAMES, nodeSpecSchema, type Config } from '../core/config';

const SOURCE = 'lib/core/config-schema.ts';

/** Each property's doc comment in an object literal passed to `z.strictObject(...)` under `name`. */
const docComments = (name: string): Map<string, string> => {
  const path = join(__dirname, '..', '..', SOURCE);
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const docs = new Map<string, string>();
  const visit = (node: ts.Node, inside: boolean): void => {
    const here = inside || (ts.isVariableDeclaration(node) && node.name.getText() === name);
    if (here && ts.isPropertyAssignment(node) && ts.isObjectLiteralExpression(node.parent)) {
      const text = ts
        .getJSDocCommentsAndTags(node)
        .map((d) => (ts.isJSDoc(d) ? ts.getTextOfJSDocComment(d.comment) : undefined) ?? '')
        .join(' ');
      // Only the schema's own keys: the first object literal's, not those of its checks.
      if (!docs.has(node.name.getText())) docs.set(node.name.getText(), text.replace(/\s+/g, ' ').trim());
      return;
    }
    ts.forEachChild(node, (child) => visit(child, here));
  };
  visit(file, false);
  return docs;
};

/** The type a person writes, from the schema: unwrapped of its default and optionality. */
const typeOf = (schema: z.ZodType): string => {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType; format?: string; entries?: object };
  while ((def.type === 'default' || def.type === 'optional') && def.innerType !== undefined)
    def = def.innerType._zod.def;
  if (def.type === 'enum' && def.entries !== undefined)
    return Object.keys(def.entries)
      .map((e) => `\`${e}\``)
      .join(' or ');
  if (def.format === 'url') return 'URL';
  if (def.type === 'record') return 'object';
  if (def.type === 'union') return 'string';
  return def.type;
};

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const shown = (value: unknown): string => (value === undefined ? '(unset)' : `\`${JSON.stringify(value)}\``);

/** docs/configuration.md: every key of the fleet's configuration, from its schema and doc comments. */
export const renderConfigDoc = (): string => {
  const fleetDocs = docComments('configSchema');
  const nodeDocs = docComments('nodeSpecSchema');
  const defaults = configSchema.parse({}) as Partial<Config>;
  const fleetRows = Object.entries(configSchema.shape).map(([key, schema]) => {
    const env = ENV_NAMES[key as keyof Config];
    const value = defaults[key as keyof Config];
    const what = cell(fleetDocs.get(key) ?? '');
    return `| \`${key}\` | \`${env}\` | ${typeOf(schema as z.ZodType)} | ${shown(value)} | ${what} |`;
  });
  const nodeRows = Object.entries(nodeSpecSchema.shape).map(([key, schema]) => {
    const parsed = (schema as z.ZodType).safeParse(undefined);
    const value = parsed.success ? parsed.data : undefined;
    return `| \`${key}\` | ${typeOf(schema as z.ZodType)} | ${shown(value)} | ${cell(nodeDocs.get(key) ?? '')} |`;
  });
  return [
    '# Configuration',
    '',
    `Generated from \`${SOURCE}\` by \`npm run docs:config\`; \`tests/docs/configuration.test.ts\` keeps it`,
    "current. Every key can be set in the JSON file that the CLI's `--config` or `" + CONFIG_FILE_ENV + '` names',
    "(`fleet init --stack STAGE` writes it from the stack's outputs), or by its environment variable; the",
    'environment wins, key by key (`fleet doctor` says which gave each value). Numbers and lists in the',
    'environment are JSON (`FLEET_NODES=\'[{"name":"node-1"}]\'`). Durations are in seconds.',
    '',
    '## The fleet',
    '',
    '| key | environment | type | default | what it is |',
    '|---|---|---|---|---|',
    ...fleetRows,
    '',
    '## A node (each entry of `nodes`)',
    '',
    '| key | type | default | what it is |',
    '|---|---|---|---|',
    ...nodeRows,
    '',
  ].join('\n');
};

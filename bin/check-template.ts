/**
 * Checks a packaged CloudFormation template offline against the bundled resource spec.
 *
 *   npx tsx bin/check-template.ts [FILE]
 *
 * Exit 0: no problems; 1: problems (one `path: message` line each); 2: the file (or the spec)
 * could not be read.
 */
import { readFileSync } from 'node:fs';
import { FleetError, ValidationError } from '../lib/core/errors';
import { parseJsonText } from '../lib/core/validate';
import { checkTemplate, summarizeTemplate } from '../lib/deploy/check';
import { createSpecLookup } from '../lib/deploy/spec';

const EXIT = { clean: 0, problems: 1, badInput: 2 } as const;
const DEFAULT_FILE = '.serverless/cloudformation-template-update-stack.json';

const readTemplate = (file: string): unknown => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ValidationError(`template file ${file}: cannot be read (${reason})`, file, { cause: error });
  }
  return parseJsonText(text, `template file ${file}`);
};

const main = (args: readonly string[]): number => {
  if (args.length > 1 || args[0]?.startsWith('-') === true) {
    console.error('usage: check-template [FILE]  (default: .serverless/cloudformation-template-update-stack.json)');
    return EXIT.badInput;
  }
  const file = args[0] ?? DEFAULT_FILE;
  try {
    const template = readTemplate(file);
    const problems = checkTemplate(template, createSpecLookup());
    for (const { path, message } of problems) console.log(`${path}: ${message}`);
    const { resources, types } = summarizeTemplate(template);
    const found = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    console.log(`${file}: ${resources} resources of ${types} types checked, ${found}`);
    return problems.length === 0 ? EXIT.clean : EXIT.problems;
  } catch (error) {
    if (!(error instanceof FleetError)) throw error;
    console.error(error.message);
    return EXIT.badInput;
  }
};

process.exitCode = main(process.argv.slice(2));

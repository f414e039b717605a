import { Command } from 'commander';
import { registerOperatorCommands } from '../../bin/commands';
import { addExamples, EXAMPLES } from '../../bin/commands/examples';
import { runFleet } from '../helpers/children';

/** The CLI with every command's action replaced, so parsing an example checks its syntax and runs nothing. */
const inertProgram = (): Command => {
  const program = new Command().name('fleet').exitOverride();
  registerOperatorCommands(program);
  addExamples(program);
  for (const command of program.commands) command.exitOverride().action(() => undefined);
  return program;
};

/** An example's words as a shell splits them, up to a pipe, without the leading `fleet`. */
const words = (line: string): string[] =>
  (line.split(' | ')[0]?.match(/"[^"]*"|\S+/g) ?? []).map((w) => w.replace(/^"|"$/g, '')).slice(1);

describe('examples in --help', () => {
  const program = inertProgram();

  it.each(program.commands.map((c) => c.name()))('fleet %s --help ends with its examples', (name) => {
    const command = program.commands.find((c) => c.name() === name);
    let help = '';
    command?.configureOutput({ writeOut: (text) => (help += text) });
    command?.outputHelp();
    expect(help).toContain('\nExamples:\n  $ fleet ' + name);
  });

  it.each(Object.entries(EXAMPLES).filter(([name]) => name !== 'drill' && name !== 'demo'))(
    'every example of %s parses',
    async (name, examples) => {
      for (const [line] of examples) {
        const args = words(line);
        expect(args[0]).toBe(name);
        await expect(inertProgram().parseAsync(args, { from: 'user' })).resolves.toBeDefined();
      }
    },
  );

  it('fleet demo --help shows the demo examples', async () => {
    const res = await runFleet(['demo', '--help'], 20_000);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('Examples:\n  $ fleet demo ');
  });
});

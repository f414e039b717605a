import { agentTarball, copyFiles, installCommand } from '../../../lib/core/enroll';

describe('installCommand', () => {
  const facts = {
    node: 'node-1',
    region: 'us-west-2',
    version: '1.0.0',
    configFile: 'fleet-config.json',
    activationId: 'a1',
    activationCode: 'x',
  };

  it('quotes for the shell what it must, so a code or path with odd characters reaches install.sh whole', () => {
    const command = installCommand({ ...facts, activationCode: "it's $HOME", configFile: '/srv/my fleet.json' });
    expect(command).toContain(`--activation-code 'it'\\''s $HOME'`);
    expect(command).toContain(`--config 'my fleet.json'`);
  });

  it('names the files to copy: the installer, the release, its checksum and the config', () => {
    expect(agentTarball('1.0.0')).toBe('queens-fleet-agent-1.0.0.tar.gz');
    expect(copyFiles(facts)).toEqual([
      'dist/install.sh',
      'dist/queens-fleet-agent-1.0.0.tar.gz',
      'dist/queens-fleet-agent-1.0.0.tar.gz.sha256',
      'fleet-config.json',
    ]);
  });
});

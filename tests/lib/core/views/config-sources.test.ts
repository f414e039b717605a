import { configSources } from '../../../../lib/core/config';
import { describeSource, sourcesCheck } from '../../../../lib/core/views/config-sources';

describe('sourcesCheck', () => {
  it('groups the keys by where they came from: a file named by --config, variables, the stage, defaults', () => {
    const file = { path: '/etc/fleet/prod.json', via: 'flag' as const };
    const sources = configSources(
      { FLEET_REGION: 'eu-west-2' },
      { path: file.path, value: { stage: 'prod', queueUrl: 'https://sqs.eu-west-2.amazonaws.com/1/q' } },
    );
    const c = sourcesCheck(sources, file);
    expect(c.status).toBe('ok');
    expect(c.detail).toBe(
      'env FLEET_REGION: region; file /etc/fleet/prod.json (--config): stage, queueUrl; ' +
        `default, from stage: bucket, table; default: the other ${Object.keys(sources).length - 5} keys`,
    );
  });

  it('says which variable named the file, and warns only when nothing is set anywhere', () => {
    expect(describeSource({ kind: 'file', path: '/f.json' }, { path: '/f.json', via: 'env' })).toBe(
      'file /f.json (FLEET_CONFIG_FILE)',
    );
    expect(describeSource({ kind: 'file', path: 'fleet-config.json' }, { path: 'fleet-config.json', via: 'cwd' })).toBe(
      'file fleet-config.json (the current directory)',
    );
    const none = sourcesCheck(configSources({}), null);
    expect(none.status).toBe('warn');
    expect(none.hint).toMatch(/fleet init --stack/);
    expect(sourcesCheck(configSources({ FLEET_STAGE: 'prod' }), null).status).toBe('ok');
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAITHFUL, KIND, resolveBehaviour, scaleBehaviour } from '../../../../lib/harness/localcloud/behaviour';
import { renderBehaviourDoc } from '../../../../lib/harness/localcloud/behaviour-doc';
import { ValidationError } from '../../../../lib/core/errors';

describe('behaviour catalogue', () => {
  it('is what docs/aws-behaviour.md says (npm run docs:behaviour regenerates it)', () => {
    expect(readFileSync(join(__dirname, '../../../../docs/aws-behaviour.md'), 'utf8')).toBe(renderBehaviourDoc());
  });

  it('names a source for every behaviour', () => {
    const doc = renderBehaviourDoc();
    for (const name of Object.keys(FAITHFUL)) expect(doc).toContain(`## ${name}`);
    expect(doc.match(/\]\(https?:\/\//g)?.length).toBeGreaterThanOrEqual(Object.keys(FAITHFUL).length);
  });

  it('is all on by default and all off when kind', () => {
    expect(Object.values(FAITHFUL).every((b) => b.on)).toBe(true);
    expect(Object.values(KIND).every((b) => !b.on)).toBe(true);
  });

  it('takes a scenario override per behaviour, and refuses unknown names and fields', () => {
    const b = resolveBehaviour({ s3LostResponse: { rate: 0.5 }, sqsRedelivery: false });
    expect(b.s3LostResponse).toEqual({ ...FAITHFUL.s3LostResponse, rate: 0.5 });
    expect(b.sqsRedelivery.on).toBe(false);
    expect(() => resolveBehaviour({ s3Lost: true })).toThrow(ValidationError);
    expect(() => resolveBehaviour({ s3LostResponse: { rat: 0.5 } })).toThrow(/rat/);
    expect(() => resolveBehaviour({ s3LostResponse: { rate: 2 } })).toThrow(/rate/);
  });

  it('divides every duration by the time scale, and nothing else', () => {
    const b = scaleBehaviour(FAITHFUL, 20);
    expect(b.route53Propagation.insyncAfterMs).toBe(3_000);
    expect(b.lambdaAsync.retryDelaysMs).toEqual([3_000, 6_000]);
    expect(b.s3LostResponse.rate).toBe(FAITHFUL.s3LostResponse.rate);
  });
});

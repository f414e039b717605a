import { GetParameterCommand, ParameterNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { DEFAULT_PARAMETER_TTL_MS, SecureParameter } from '../../../lib/aws/parameters';
import { FleetError, ThrottledError, ValidationError } from '../../../lib/core/errors';

const NAME = '/queens-fleet/test/slack-webhook-url';
const VALUE = 'https://hooks.slack.com/services/T00000001/B00000001/secretValue123';
const ssm = mockClient(SSMClient);

/** A parameter over a clock the test moves by hand. */
const parameter = (): { param: SecureParameter; advance: (ms: number) => void } => {
  let t = 0;
  const param = new SecureParameter(new SSMClient({ region: 'us-west-2' }), NAME, { now: () => t });
  return { param, advance: (ms) => (t += ms) };
};

const failureOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );

describe('SecureParameter', () => {
  beforeEach(() => {
    ssm.reset();
    ssm.on(GetParameterCommand).resolves({ Parameter: { Name: NAME, Type: 'SecureString', Value: `${VALUE}\n` } });
  });
  afterAll(() => ssm.restore());

  describe('get', () => {
    it('reads the parameter decrypted and trims the value', async () => {
      await expect(parameter().param.get()).resolves.toBe(VALUE);
      expect(ssm).toHaveReceivedCommandWith(GetParameterCommand, { Name: NAME, WithDecryption: true });
    });

    it('serves the cached value until the TTL has passed, then rereads', async () => {
      const { param, advance } = parameter();
      await param.get();
      advance(DEFAULT_PARAMETER_TTL_MS - 1);
      await param.get();
      expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
      advance(1);
      await param.get();
      expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
    });

    it('shares one SSM call between concurrent callers', async () => {
      const { param } = parameter();
      await expect(Promise.all([param.get(), param.get(), param.get()])).resolves.toEqual([VALUE, VALUE, VALUE]);
      expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 1);
    });

    it('rereads after invalidate', async () => {
      const { param } = parameter();
      await param.get();
      param.invalidate();
      await param.get();
      expect(ssm).toHaveReceivedCommandTimes(GetParameterCommand, 2);
    });

    it('throws a FleetError naming the parameter when it does not exist, and caches no failure', async () => {
      ssm
        .on(GetParameterCommand)
        .rejectsOnce(new ParameterNotFound({ message: '', $metadata: { httpStatusCode: 400 } }))
        .resolves({ Parameter: { Name: NAME, Type: 'SecureString', Value: VALUE } });
      const { param } = parameter();
      const error = await failureOf(param.get());
      expect(error).toBeInstanceOf(FleetError);
      expect((error as Error).message).toMatch(new RegExp(`^SSM GetParameter ${NAME}: ParameterNotFound`));
      await expect(param.get()).resolves.toBe(VALUE);
    });

    it('throws ThrottledError when SSM throttles', async () => {
      ssm.on(GetParameterCommand).rejects(
        Object.assign(new Error('Rate exceeded'), {
          name: 'ThrottlingException',
          $metadata: { httpStatusCode: 400 },
        }),
      );
      await expect(parameter().param.get()).rejects.toBeInstanceOf(ThrottledError);
    });

    it('refuses a plain String parameter without quoting its value', async () => {
      ssm.on(GetParameterCommand).resolves({ Parameter: { Name: NAME, Type: 'String', Value: VALUE } });
      const error = await failureOf(parameter().param.get());
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toBe(
        `SSM GetParameter ${NAME}: the parameter must be a SecureString, not String`,
      );
    });
  });
});

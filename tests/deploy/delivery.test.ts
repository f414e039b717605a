import { CI_PARAMS, NODE_ROLES, packageTemplate, reader, type Template } from './packaged';
import { decide } from './policy-eval';

/**
 * The optional delivery bucket and CloudFront distribution (resources/delivery.yml), packaged
 * with them on: the distribution fronts the health-checked failover record, the bucket is
 * private and read by that distribution alone, and the nodes may deliver into it.
 */
let template: Template;
let t: ReturnType<typeof reader>;
beforeAll(() => {
  ({ template } = packageTemplate('package-delivery-test', CI_PARAMS));
  t = reader(template);
}, 120_000);

const conditionOf = (id: string): unknown => (template.Resources[id] as { Condition?: unknown } | undefined)?.Condition;

describe('delivery behind CloudFront', () => {
  it('fronts the fleet with a distribution whose origin is the failover record', () => {
    expect(conditionOf('Distribution')).toBe('Cdn');
    const config = t.props('Distribution').DistributionConfig as {
      Origins: unknown[];
      DefaultCacheBehavior: { TargetOriginId: string };
    };
    expect(config.Origins[0]).toEqual({
      Id: 'fleet',
      DomainName: CI_PARAMS.dataPlaneRecordName,
      CustomOriginConfig: { HTTPPort: 80, OriginProtocolPolicy: 'http-only' },
    });
    expect(config.DefaultCacheBehavior.TargetOriginId).toBe('fleet');
    const records = Object.values(template.Resources)
      .filter((r) => r.Type === 'AWS::Route53::RecordSet')
      .map((r) => r.Properties.Name);
    expect(records).toContain(CI_PARAMS.dataPlaneRecordName);
  });

  it('keeps the bucket private: public access blocked, read by this distribution alone', () => {
    expect(conditionOf('DeliveryBucket')).toBe('DeliveryBucketOn');
    expect(t.props('DeliveryBucket').PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    const [statement, ...others] = t.documentStatements(
      t.props('DeliveryBucketPolicy').PolicyDocument as { Statement: unknown[] },
    );
    expect(others).toEqual([]);
    expect(statement).toMatchObject({
      Effect: 'Allow',
      Principal: { Service: 'cloudfront.amazonaws.com' },
      Action: 's3:GetObject',
    });
    expect(JSON.stringify(statement?.Condition)).toContain('distribution/${Distribution}');
  });

  it('lets every node put and read delivered files, and nothing else in that bucket', () => {
    const bucket = `arn:aws:s3:::${CI_PARAMS.deliveryBucket}`;
    for (const role of NODE_ROLES) {
      const statements = t.statements(role);
      for (const action of ['s3:PutObject', 's3:GetObject'])
        expect(decide(statements, { action, resource: `${bucket}/vod/ep-1/hls/index.m3u8` })).toBe('allow');
      for (const action of ['s3:DeleteObject', 's3:PutBucketPolicy'])
        expect(decide(statements, { action, resource: `${bucket}/vod/ep-1/hls/index.m3u8` })).toBe('implicit-deny');
    }
  });
});

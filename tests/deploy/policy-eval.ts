import { asList, type Statement } from './packaged';

/**
 * IAM's decision for one request against one principal's identity statements, within one
 * account and with no resource policy: an explicit Deny wins, then any Allow; otherwise the
 * request is denied implicitly (IAM user guide, "Policy evaluation logic"). Only what the
 * fleet's policies use is understood; anything else throws, so a statement this cannot read
 * never passes for one that grants nothing.
 */
export type Decision = 'allow' | 'explicit-deny' | 'implicit-deny';

export interface Request {
  action: string;
  resource: string;
  /** Condition keys present in the request, e.g. `{ 's3:if-match': '"etag"' }`. */
  context?: Record<string, string>;
}

/** Values for the pseudo parameters the templates' `Fn::Sub` strings use. */
export const PSEUDO = {
  'AWS::Partition': 'aws',
  'AWS::Region': 'us-west-2',
  'AWS::AccountId': '123456789012',
} as const;

/** A Resource value as a string ARN: literal, `Fn::Sub` over pseudo parameters, or `ref:<id>` / `ref:<id>.<attr>`. */
export const arnOf = (value: unknown): string => {
  if (typeof value === 'string') return value;
  const v = value as { 'Fn::Sub'?: unknown; Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (typeof v['Fn::Sub'] === 'string') {
    return v['Fn::Sub'].replace(/\$\{([^}]+)\}/g, (_, name: string) => {
      const known = (PSEUDO as Record<string, string>)[name];
      if (known === undefined) throw new Error(`cannot evaluate \${${name}} in ${v['Fn::Sub'] as string}`);
      return known;
    });
  }
  if (typeof v.Ref === 'string') return `ref:${v.Ref}`;
  if (Array.isArray(v['Fn::GetAtt'])) return `ref:${v['Fn::GetAtt'].join('.')}`;
  throw new Error(`cannot evaluate the resource ${JSON.stringify(value)}`);
};

/** IAM's wildcards: `*` any run of characters (`/` included), `?` exactly one. */
const like = (pattern: string, value: string, ignoreCase = false): boolean => {
  const source = pattern
    .split('*')
    .map((run) =>
      run
        .split('?')
        .map((s) => s.replace(/[.+^${}()|[\]\\]/g, '\\$&'))
        .join('.'),
    )
    .join('.*');
  return new RegExp(`^${source}$`, ignoreCase ? 'i' : '').test(value);
};

const values = (v: unknown): string[] => (Array.isArray(v) ? v : [v]).map(String);

/** Every condition of the statement holds for the request (operators AND, keys AND, values OR). */
const conditionsHold = (condition: Statement['Condition'], context: Record<string, string>): boolean =>
  Object.entries(condition ?? {}).every(([operator, keys]) =>
    Object.entries(keys).every(([key, expected]) => {
      const present = context[key];
      switch (operator) {
        case 'Null':
          return values(expected).every((e) => (e === 'true' ? present === undefined : present !== undefined));
        case 'StringEquals':
          return present !== undefined && values(expected).includes(present);
        // A single-valued context here: ForAllValues holds when every value is allowed, and also,
        // as IAM has it, when the key is absent (IAM user guide, "Multivalued context keys").
        case 'ForAllValues:StringEquals':
          return present === undefined || values(expected).includes(present);
        case 'ForAllValues:StringLike':
          return present === undefined || values(expected).some((e) => like(e, present));
        case 'StringLike':
        case 'ArnLike':
          return present !== undefined && values(expected).some((e) => like(e, present));
        default:
          throw new Error(`cannot evaluate the condition operator ${operator}`);
      }
    }),
  );

const applies = (s: Statement, request: Request): boolean => {
  if (
    (s as { NotAction?: unknown; NotResource?: unknown }).NotAction !== undefined ||
    (s as { NotResource?: unknown }).NotResource !== undefined
  ) {
    throw new Error(`cannot evaluate NotAction/NotResource (${s.Sid ?? 'a statement'})`);
  }
  const resources = (Array.isArray(s.Resource) ? (s.Resource as unknown[]) : [s.Resource]).map(arnOf);
  return (
    asList(s.Action).some((a) => like(a, request.action, true)) &&
    resources.some((r) => like(r, request.resource)) &&
    conditionsHold(s.Condition, request.context ?? {})
  );
};

export const decide = (statements: readonly Statement[], request: Request): Decision => {
  const matching = statements.filter((s) => applies(s, request));
  if (matching.some((s) => s.Effect === 'Deny')) return 'explicit-deny';
  return matching.some((s) => s.Effect === 'Allow') ? 'allow' : 'implicit-deny';
};

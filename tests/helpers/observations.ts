import type { Observations } from '../../lib/core/drill/report';
import { requestFigures } from '../../lib/core/drill/requests';

/** A drill's observations with nothing seen, for report tests to fill in what they need. */
export const blankObservations = (over: Partial<Observations> = {}): Observations => ({
  faults: [],
  unfired: [],
  events: [],
  restarts: [],
  supervisorRestarts: [],
  workerStarts: [],
  leaders: [],
  receives: [],
  extensions: [],
  writes: [],
  windows: [],
  readiness: [],
  dnsChanges: [],
  addresses: {},
  completions: new Map(),
  enqueued: [],
  deadLettered: 0,
  givenBack: 0,
  timeline: [],
  aws: { s3: { GET: 0, PUT: 0, LIST: 0, HEAD: 0 }, sqs: 0, dynamodb: 0, sns: 0, ssm: 0, lambdaInvocations: 0 },
  lambdaInvocations: 0,
  requests: requestFigures({}, 0, 0, 0),
  cloud: {},
  heartbeatGaps: {},
  artifacts: {},
  depths: [],
  metrics: [],
  ...over,
});

import type { LambdaClient } from '@aws-sdk/client-lambda';
import { toFleetError } from './errors';
import { sdk } from './sdk';

/** Why a node pokes the watchdog. */
export interface TriggerReason {
  node: string;
  /**
   * `failing-sample`: the primary's newest sample failed; `role`: this node's role changed;
   * `leader-damaged`: it read a damaged leader.json.
   */
  reason: 'failing-sample' | 'role' | 'leader-damaged';
  detail: string;
}

/** The event body the watchdog receives from a node (functions/watchdog/handler.ts). */
export const NODE_TRIGGER_SOURCE = 'queen-fleet.agent';

/**
 * The watchdog function, invoked asynchronously (InvocationType Event: Lambda queues it and
 * answers 202 at once). A node uses it so a verdict never waits for S3's event notifications,
 * which AWS delivers "typically in seconds but can sometimes take a minute or longer".
 */
export class WatchdogTrigger {
  constructor(
    private readonly lambda: LambdaClient,
    readonly functionName: string,
  ) {}

  async invoke(why: TriggerReason): Promise<void> {
    try {
      await this.lambda.send(
        new (sdk.lambda().InvokeCommand)({
          FunctionName: this.functionName,
          InvocationType: 'Event',
          Payload: Buffer.from(JSON.stringify({ source: NODE_TRIGGER_SOURCE, ...why })),
        }),
      );
    } catch (error) {
      throw toFleetError(error, `Lambda Invoke ${this.functionName}`);
    }
  }
}

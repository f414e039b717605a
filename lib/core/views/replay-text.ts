import type { ReplayPlan, StepStatus } from './replay';

const MARK: Record<StepStatus, string> = { done: '✔', pending: '…', skipped: '–', failed: '✘', 'not-reached': ' ' };

/** One line per step and a headline: the replay as a person reads it (console, terminal). */
export const describePlan = (plan: ReplayPlan, mode: 'dry-run' | 'execute'): string[] => [
  `${mode === 'dry-run' ? 'DRY RUN' : 'EXECUTE'}: incident ${plan.incidentId} (${plan.incident}, ${plan.node}, ` +
    `epoch ${plan.epoch}; fleet at epoch ${plan.current.epoch ?? '?'}, primary ${plan.current.primary ?? '?'})`,
  ...plan.steps.map((s) => `  ${MARK[s.status]} ${s.step}: ${s.status}${s.detail === '' ? '' : ` (${s.detail})`}`),
  `verdict: ${plan.verdict}: ${plan.reason}`,
  ...(plan.action === null
    ? []
    : [
        mode === 'dry-run' ? `with "execute": true it would: ${plan.action.kind}` : `carrying out: ${plan.action.kind}`,
      ]),
];

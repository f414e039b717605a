import { INCIDENT_KINDS, TABLES, type IncidentKind } from './incident';

/** The incident tables as Mermaid state diagrams, for docs/architecture.md (a test keeps it current). */

const id = (stage: string): string => (stage === '(none)' || stage === 'closed' ? '[*]' : stage.replace(/-/g, '_'));

/** One kind's diagram: every edge of its table but the closes every stage has (RECOVERED, SUPERSEDED). */
export const incidentDiagram = (kind: IncidentKind): string => {
  const lines = ['stateDiagram-v2'];
  for (const [step, row] of Object.entries(TABLES[kind])) {
    if (row === undefined || step === 'RECOVERED' || step === 'SUPERSEDED') continue;
    const label = row.guard === undefined ? step : `${step} [${row.guard}]`;
    for (const [from, to] of row.edges) lines.push(`  ${id(from)} --> ${id(to)}: ${label}`);
  }
  return lines.join('\n');
};

/** Every kind's diagram, as the Markdown the docs hold between their markers. */
export const incidentDiagrams = (): string =>
  INCIDENT_KINDS.map((kind) => `**${kind}**\n\n\`\`\`mermaid\n${incidentDiagram(kind)}\n\`\`\``).join('\n\n');

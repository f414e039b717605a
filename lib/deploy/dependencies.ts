/**
 * The dependency graph of a template's resources, from `Ref`, `Fn::GetAtt`, `Fn::Sub`
 * placeholders and `DependsOn`, and the two ways it breaks that CloudFormation only reports
 * once a deploy has begun: a dependency cycle, and a use of a conditional resource that its
 * condition does not cover.
 */
import { findCycles } from './cycles';
import { getAttTarget, unboundPlaceholders } from './intrinsics';
import { isObject, own, type Problem } from './types';
import { walkCalls } from './walk';

/** How a resource or output uses a resource. */
export type Via = 'Ref' | 'Fn::GetAtt' | 'Fn::Sub' | 'DependsOn';

/** One use of a resource. */
export interface Dependency {
  /** Logical id of the resource used. */
  readonly target: string;
  readonly via: Via;
  /** Path to the call or the DependsOn entry. */
  readonly path: string;
  /** Conditions whose `Fn::If` true branch holds the use. */
  readonly guards: readonly string[];
}

/** More cycles than this are one mistake repeated; the first ones are enough to find it. */
const CYCLE_LIMIT = 20;

/** The names in `DependsOn`, a name or a list of them, each with its path; other values are skipped. */
export const dependsOnEntries = (dependsOn: unknown, at: string): { target: unknown; path: string }[] => {
  if (Array.isArray(dependsOn)) return dependsOn.map((target: unknown, i) => ({ target, path: `${at}.${i}` }));
  return typeof dependsOn === 'string' ? [{ target: dependsOn, path: at }] : [];
};

/**
 * Every resource `owner` (a resource or an output at `path`) uses through a function call;
 * `isResource` tells a resource from a parameter or a dangling name, which references.ts reports.
 */
export const callDependencies = (owner: unknown, path: string, isResource: (name: string) => boolean): Dependency[] => {
  const found: Dependency[] = [];
  const add = (target: string, via: Via, at: string, guards: readonly string[]): void => {
    if (isResource(target)) found.push({ target, via, path: at, guards });
  };
  walkCalls(owner, path, {
    call: ({ fn, at, guards }) => {
      if (fn.name === 'Ref' && typeof fn.argument === 'string') add(fn.argument, 'Ref', at, guards);
      if (fn.name === 'Fn::GetAtt') {
        const target = getAttTarget(fn.argument);
        if (target !== undefined) add(target.resource, 'Fn::GetAtt', at, guards);
      }
      if (fn.name === 'Fn::Sub')
        for (const { name } of unboundPlaceholders(fn.argument)) add(name, 'Fn::Sub', at, guards);
    },
  });
  return found;
};

/**
 * Cycles among `resources` and uses of conditional resources from resources and `outputs`
 * that may exist without them. Dangling names, unknown `conditions` and self-`DependsOn` are
 * reported elsewhere.
 */
export const checkDependencies = (
  resources: Record<string, unknown>,
  outputs: Record<string, unknown>,
  conditions: Record<string, unknown>,
): Problem[] => {
  const isResource = (name: string): boolean => Object.hasOwn(resources, name);
  const judge = conditionalUses(impliedBy(conditions), (target) => conditionOf(own(resources, target)));
  const problems: Problem[] = [];
  const edges = new Map<string, string[]>();
  for (const [id, resource] of Object.entries(resources)) {
    if (!isObject(resource)) continue;
    const at = `Resources.${id}`;
    const uses = [
      ...callDependencies(resource, at, isResource),
      ...dependsOnEntries(resource.DependsOn, `${at}.DependsOn`)
        .filter(
          (entry): entry is { target: string; path: string } =>
            typeof entry.target === 'string' && isResource(entry.target),
        )
        .map(({ target, path }) => ({ target, via: 'DependsOn' as const, path, guards: [] })),
    ];
    problems.push(...judge(id, resource.Condition, uses));
    // Uses in either Fn::If branch are edges: a cycle under one value of a condition still breaks that deploy.
    const targets = uses.filter((use) => !(use.via === 'DependsOn' && use.target === id)).map((use) => use.target);
    edges.set(id, [...new Set(targets)]);
  }
  for (const [name, output] of Object.entries(outputs)) {
    if (isObject(output))
      problems.push(
        ...judge(`output ${name}`, output.Condition, callDependencies(output, `Outputs.${name}`, isResource)),
      );
  }
  for (const cycle of findCycles([...edges.keys()], edges, CYCLE_LIMIT)) {
    problems.push({ path: `Resources.${cycle[0]}`, message: `dependency cycle ${[...cycle, cycle[0]].join(' → ')}` });
  }
  return problems;
};

const conditionOf = (value: unknown): unknown => (isObject(value) ? value.Condition : undefined);

/**
 * What each condition implies, itself included: an `Fn::And` implies each `{ Condition: … }`
 * among its terms, and what those imply. Nothing is evaluated, so no other implication is seen.
 */
export const impliedBy = (conditions: Record<string, unknown>): ReadonlyMap<string, ReadonlySet<string>> => {
  const terms = (name: string): string[] => {
    const and = own(conditions, name);
    const list = isObject(and) && Array.isArray(and['Fn::And']) ? (and['Fn::And'] as unknown[]) : [];
    return list.flatMap((t) => (isObject(t) && typeof t.Condition === 'string' ? [t.Condition] : []));
  };
  const implied = new Map<string, Set<string>>();
  for (const name of Object.keys(conditions)) {
    const found = new Set<string>();
    const stack = [name];
    // A cycle among conditions is reported by references.ts; here it only ends the walk.
    for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
      if (found.has(next)) continue;
      found.add(next);
      stack.push(...terms(next));
    }
    implied.set(name, found);
  }
  return implied;
};

/**
 * Judges the uses of resources that have a Condition, from an owner whose condition does not
 * imply it (impliedBy) and outside an `Fn::If` on one that does. A Condition that names no
 * condition is reported where it is declared, and the uses around it are not judged.
 */
const conditionalUses = (
  implied: ReadonlyMap<string, ReadonlySet<string>>,
  conditionOfTarget: (target: string) => unknown,
) => {
  const known = (condition: unknown): condition is string => typeof condition === 'string' && implied.has(condition);
  const covers = (condition: string | undefined, needed: string): boolean =>
    condition !== undefined && (implied.get(condition)?.has(needed) ?? false);
  return (owner: string, ownerCondition: unknown, uses: readonly Dependency[]): Problem[] => {
    if (ownerCondition !== undefined && !known(ownerCondition)) return [];
    const ownerState =
      ownerCondition === undefined ? `${owner} has no Condition` : `${owner} has Condition ${ownerCondition}`;
    const seen = new Set<string>();
    const problems: Problem[] = [];
    for (const { target, via, path, guards } of uses) {
      const needed = conditionOfTarget(target);
      if (!known(needed) || seen.has(`${path}\n${target}`)) continue;
      if (covers(ownerCondition, needed) || guards.some((g) => covers(g, needed))) continue;
      seen.add(`${path}\n${target}`);
      const guard = via === 'DependsOn' ? '' : ` and this ${via} is outside Fn::If [${needed}, …]`;
      problems.push({
        path,
        message:
          `${target} exists only when condition ${needed} is true, but ${ownerState}${guard}: ` +
          `the deploy fails when ${needed} is false`,
      });
    }
    return problems;
  };
};

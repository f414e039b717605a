/**
 * The one traversal the reference, argument and dependency checks share: it finds every
 * intrinsic function call at any depth, json-typed values included, and knows which `Fn::If`
 * true branches enclose it.
 */
import { asIntrinsic, mixedIntrinsicKey, type Intrinsic } from './intrinsics';
import { isObject } from './types';

/** A function call found by {@link walkCalls}. */
export interface CallSite {
  readonly fn: Intrinsic;
  /** Path to the call's key, e.g. `Resources.A.Properties.Name.Fn::Sub`. */
  readonly at: string;
  /** Conditions whose `Fn::If` true branch holds the call, outermost first. */
  readonly guards: readonly string[];
}

/** What {@link walkCalls} reports. */
export interface CallVisitor {
  call(site: CallSite): void;
  /** An object below the root that mixes a function key with other keys; it is walked as a plain object. */
  mixed?(key: string, others: readonly string[], at: string): void;
}

/**
 * Visits every call in `value` (found at `path`), outer calls before the calls in their
 * arguments. With `conditionSection`, `{ Condition: name }` is a call too. The root itself is
 * never reported as mixed: a resource or output object is checked by its own rules.
 */
export const walkCalls = (value: unknown, path: string, visitor: CallVisitor, conditionSection = false): void => {
  const walk = (node: unknown, at: string, guards: readonly string[], root: boolean): void => {
    if (Array.isArray(node)) {
      node.forEach((element, i) => walk(element, `${at}.${i}`, guards, false));
      return;
    }
    if (!isObject(node)) return;
    const fn = asIntrinsic(node, conditionSection);
    if (fn === undefined) {
      const key = root ? undefined : mixedIntrinsicKey(node, conditionSection);
      if (key !== undefined)
        visitor.mixed?.(
          key,
          Object.keys(node).filter((k) => k !== key),
          at,
        );
      for (const [name, child] of Object.entries(node)) walk(child, `${at}.${name}`, guards, false);
      return;
    }
    const fnAt = `${at}.${fn.name}`;
    visitor.call({ fn, at: fnAt, guards });
    const arg = fn.argument;
    if (fn.name === 'Fn::If' && Array.isArray(arg) && arg.length === 3 && typeof arg[0] === 'string') {
      walk(arg[1], `${fnAt}.1`, [...guards, arg[0]], false);
      walk(arg[2], `${fnAt}.2`, guards, false);
      return;
    }
    walk(arg, fnAt, guards, false);
  };
  walk(value, path, [], true);
};

import { z } from 'zod';
import { UtteranceAnnotationSchema, type UtteranceAnnotation } from '../domain/conversation.ts';
import { RequestSchema, type Request } from '../domain/targets.ts';
import type { Strategy } from '../domain/taxonomy.ts';
import { eitherShape, hasKey, memoisedSchema, sendsAs } from '../llm/structured.ts';

/**
 * What the model simulator answers (issue #37: fewer completion tokens). The model is asked (through the provider's
 * structured-output field) for one flat object: the driver's `text`, the `strategy` only where strategies are offered
 * (left out: none), and the annotation's fields beside them, each left out when empty (prompts/simulator/
 * select-and-generate.v5, opening-utterance.v4); targets as bare requests (extract-targets.v3). The shapes of the earlier
 * versions (an `annotation` object, `{ request }` wrappers), as a request cache may hold them, are still read.
 */

export interface UtteranceAnswer {
  text: string;
  strategy: Strategy | null;
  annotation: UtteranceAnnotation;
}

/** The annotation fields a model simulator states (`expectations` is for simulators that know the world). */
const ModelAnnotationSchema = UtteranceAnnotationSchema.omit({ expectations: true });

function compactUtteranceSchema(allowed: readonly Strategy[] | null) {
  const strategy = allowed?.length ? { strategy: z.enum(allowed as [Strategy, ...Strategy[]]).nullable().optional() } : {};
  return z.object({ text: z.string().min(1).max(600), ...strategy, ...ModelAnnotationSchema.shape });
}

function legacyUtteranceSchema(allowed: readonly Strategy[] | null) {
  return z.object({
    ...(allowed === null ? {} : { strategy: allowed.length ? z.enum(allowed as [Strategy, ...Strategy[]]).nullable() : z.null() }),
    text: z.string().min(1).max(600),
    annotation: ModelAnnotationSchema,
  });
}

function checkIds(targetIds: readonly string[]) {
  return (value: UtteranceAnswer, ctx: z.RefinementCtx) => {
    const introduced = value.annotation.introduces.map((t) => t.id);
    for (const id of introduced) {
      if (targetIds.includes(id)) ctx.addIssue({ code: 'custom', path: ['introduces'], message: `"${id}" is already a target id; use a new id` });
    }
    const known = new Set([...targetIds, ...introduced]);
    const refs: Array<[string, string[]]> = [
      ['addresses', value.annotation.addresses],
      ['returnsTo', value.annotation.returnsTo],
      ['drops', value.annotation.drops],
      ['addedConstraints', Object.keys(value.annotation.addedConstraints)],
    ];
    for (const [field, ids] of refs) {
      for (const id of ids) {
        if (!known.has(id)) ctx.addIssue({ code: 'custom', path: [field], message: `unknown target id "${id}" (known: ${[...known].join(', ')})` });
      }
    }
  };
}

function buildUtteranceAnswerSchema(targetIds: readonly string[], allowed: readonly Strategy[] | null) {
  const compact = compactUtteranceSchema(allowed).transform((value): UtteranceAnswer => {
    const { text, strategy, ...annotation } = value as typeof value & { strategy?: Strategy | null };
    return { text, strategy: strategy ?? null, annotation };
  });
  const legacy = legacyUtteranceSchema(allowed).transform(({ text, annotation, ...rest }): UtteranceAnswer => ({ text, strategy: ('strategy' in rest ? (rest.strategy as Strategy | null) : null) ?? null, annotation }));
  return sendsAs(eitherShape<UtteranceAnswer>(hasKey('annotation'), legacy, compact).superRefine(checkIds(targetIds)), compactUtteranceSchema(allowed));
}

/** An utterance's schema (memoised per target ids and strategies; `allowed` null: the opening, which has no strategy). */
export const utteranceAnswerSchema = memoisedSchema(
  (targetIds: readonly string[], allowed: readonly Strategy[] | null) => `${targetIds.join(',')}|${allowed === null ? 'opening' : allowed.join(',')}`,
  buildUtteranceAnswerSchema,
);

const compactTargets = z.object({ targets: z.array(RequestSchema).min(1).max(5) });
const legacyTargets = z.object({ targets: z.array(z.object({ request: RequestSchema })).min(1).max(5) }).transform(({ targets }) => ({ targets: targets.map((t) => t.request) }));
const isLegacyTargets = (value: unknown) => hasKey('targets')(value) && Array.isArray((value as { targets: unknown }).targets) && hasKey('request')((value as { targets: unknown[] }).targets[0]);

/** ExtractTargets' answer: the requests of the seed phrase, in order. */
export const ExtractedTargetsSchema = sendsAs(eitherShape<{ targets: Request[] }>(isLegacyTargets, legacyTargets, compactTargets), compactTargets);

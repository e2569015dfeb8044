/**
 * Named condition parts for guarded writes. Each part declares the names and values it uses,
 * so expressions are composed rather than concatenated by hand at every call site.
 */
export interface ConditionPart {
  readonly expression: string;
  readonly names: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/** The key is not taken yet: admission. */
export const keyIsFree = (partitionKey: string): ConditionPart => ({
  expression: 'attribute_not_exists(#pk)',
  names: { '#pk': partitionKey },
  values: {},
});

/** The record is still in the state the decision was made on. */
export const stateIs = (state: string): ConditionPart => ({
  expression: '#state = :expectedState',
  names: { '#state': 'state' },
  values: { ':expectedState': state },
});

/** Nobody wrote a transition since the decision's read. */
export const versionIs = (version: number): ConditionPart => ({
  expression: '#version = :expectedVersion',
  names: { '#version': 'version' },
  values: { ':expectedVersion': version },
});

/** A window of a budget counter has room for one more: not counted yet (a fresh window) or below its limit. */
export const tallyBelow = (index: number, attribute: string, limit: number): ConditionPart => ({
  expression: `attribute_not_exists(#t${index}) OR #t${index} < :limit${index}`,
  names: { [`#t${index}`]: attribute },
  values: { [`:limit${index}`]: limit },
});

/** Joins parts with AND into the three expression fields DynamoDB wants. */
export function allOf(...parts: readonly ConditionPart[]) {
  return {
    ConditionExpression: parts.map((p) => `(${p.expression})`).join(' AND '),
    ExpressionAttributeNames: Object.assign({}, ...parts.map((p) => p.names)) as Record<string, string>,
    ExpressionAttributeValues: Object.assign({}, ...parts.map((p) => p.values)) as Record<string, unknown>,
  };
}

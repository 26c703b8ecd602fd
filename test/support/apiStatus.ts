/**
 * Response bodies of kube-apiserver, byte for byte as it sends them, for tests that classify its errors.
 */

/** The `supported values` list of status.cause in a CRD that does not know ImagePullFailure. */
export const OLD_CAUSES = ['', 'InsufficientResources', 'Unschedulable', 'CrashLoop', 'OOMKilled', 'NotReady', 'Unknown'];

/** The cause the API server adds when a CRD's CEL rules were skipped because the schema refused the object. */
export const UNCHECKED_RULES =
  'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

/**
 * The 422 kube-apiserver answers a PATCH of rolloutguards/<name>/status with when a status enum does not
 * list the value written (field.NotSupported in the CRD's structural schema validation): a Status with
 * reason Invalid, the message `<Kind>.<group> "<name>" is invalid: [<field>: Unsupported value: …, <nil>:
 * …]`, one cause per field with reason FieldValueNotSupported, and, because the CRD has CEL rules, one
 * cause without a field saying the rules were not checked (the API server adds it to every refusal).
 */
export function enumRefusalBody(name: string, field: string, value: string, supported: readonly string[] = OLD_CAUSES): string {
  const detail = `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((v) => JSON.stringify(v)).join(', ')}`;
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `RolloutGuard.rolloutguard.dev ${JSON.stringify(name)} is invalid: [${field}: ${detail}, <nil>: ${UNCHECKED_RULES}]`,
    reason: 'Invalid',
    details: {
      name,
      group: 'rolloutguard.dev',
      kind: 'RolloutGuard',
      causes: [
        { reason: 'FieldValueNotSupported', message: detail, field },
        { reason: 'FieldValueInvalid', message: UNCHECKED_RULES, field: '<nil>' },
      ],
    },
    code: 422,
  });
}

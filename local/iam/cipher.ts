import { KMSServiceException } from '@aws-sdk/client-kms';
import { KMS_ENCRYPTION_CONTEXT } from '../../shared/adapters/kms-cipher.js';
import type { Cipher } from '../../shared/ports/cipher.js';
import { currentCaller } from './context.js';
import type { IamRequest } from './policies.js';

/**
 * The local cipher as the KMS cipher uses the field key in AWS: sealing needs
 * `kms:GenerateDataKey`, opening `kms:Decrypt`, on the template's field key, with the cipher's
 * encryption context as condition keys. A denial throws KMS's `AccessDeniedException`. The KMS
 * cipher reuses data keys, so AWS checks less often than this; the outcome of a check is the same.
 */
export function withKmsAuthorization(cipher: Cipher): Cipher {
  const authorize = (action: 'kms:GenerateDataKey' | 'kms:Decrypt') => {
    const caller = currentCaller();
    if (caller === undefined) return;
    const { account } = caller.enforcer.policies.deployment;
    const request: IamRequest = {
      action,
      resource: caller.enforcer.fieldKeyArn,
      context: {
        ...Object.fromEntries(
          Object.entries(KMS_ENCRYPTION_CONTEXT).map(([key, value]) => [
            `kms:EncryptionContext:${key}`,
            value,
          ]),
        ),
        'kms:EncryptionContextKeys': Object.keys(KMS_ENCRYPTION_CONTEXT),
        'kms:CallerAccount': account,
      },
    };
    const denial = caller.enforcer.check(caller.fn, [request]);
    if (denial === undefined) return;
    throw new KMSServiceException({
      name: 'AccessDeniedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400, requestId: crypto.randomUUID(), attempts: 1, totalRetryDelay: 0 },
      message: denial.message,
    });
  };
  return {
    async encrypt(plaintext, context) {
      authorize('kms:GenerateDataKey');
      return cipher.encrypt(plaintext, context);
    },
    async decrypt(sealed, context) {
      authorize('kms:Decrypt');
      return cipher.decrypt(sealed, context);
    },
  };
}

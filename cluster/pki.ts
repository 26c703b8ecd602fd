/**
 * A cluster's credentials: the service-account signing key, the static bearer tokens (the admin's and
 * the real node's kubelet's), the API server's client certificate for the real node's kubelet, and the
 * admin kubeconfig. The API server generates its own self-signed serving certificate.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { REAL_NODE_NAME } from './realNode.js';

/** The bearer tokens {@link writeCredentials} made. */
export interface Tokens {
  /** The admin's, in `system:masters`. */
  token: string;
  /** The real node's kubelet's, `system:node:real-1` in group `system:nodes`. */
  nodeToken: string;
}

/**
 * Writes a fresh set of credentials into directory `pki` and the admin kubeconfig (for the API server on
 * `apiserverPort`) to `kubeconfig`; returns the tokens.
 */
export async function writeCredentials(pki: string, kubeconfig: string, apiserverPort: number): Promise<Tokens> {
  const token = randomBytes(16).toString('hex');
  const nodeToken = randomBytes(16).toString('hex');
  await run('openssl', ['genrsa', '-out', path.join(pki, 'sa.key'), '2048']);
  // The kubelet's identity is a node's, so the Node authorizer, not system:masters, decides what it may read.
  const tokens = [
    `${token},admin,admin,"system:masters"`,
    `${nodeToken},system:node:${REAL_NODE_NAME},node-${REAL_NODE_NAME},"system:nodes"`,
  ];
  await writeFile(path.join(pki, 'tokens.csv'), tokens.join('\n') + '\n', { mode: 0o600 });
  await writeKubeletClientCert(pki);
  await writeFile(kubeconfig, kubeconfigYaml(apiserverPort, token), { mode: 0o600 });
  return { token, nodeToken };
}

function kubeconfigYaml(port: number, token: string): string {
  return toYaml({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'rollout-guard', cluster: { server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'rollout-guard', context: { cluster: 'rollout-guard', user: 'admin' } }],
    'current-context': 'rollout-guard',
  });
}

/**
 * A CA (`kubelet-ca.crt`) and the API server's client certificate from it (`kubelet-client.crt`): the real
 * node's kubelet accepts only this certificate, so its API is no one else's to call.
 */
async function writeKubeletClientCert(pki: string): Promise<void> {
  const f = (n: string) => path.join(pki, n);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('kubelet-ca.key'),
    '-out',
    f('kubelet-ca.crt'),
    '-days',
    '30',
    '-subj',
    '/CN=rollout-guard-kubelet-ca',
  ]);
  await run('openssl', [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('kubelet-client.key'),
    '-out',
    f('kubelet-client.csr'),
    '-subj',
    '/CN=kube-apiserver-kubelet-client',
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    f('kubelet-client.csr'),
    '-CA',
    f('kubelet-ca.crt'),
    '-CAkey',
    f('kubelet-ca.key'),
    '-CAcreateserial',
    '-out',
    f('kubelet-client.crt'),
    '-days',
    '30',
  ]);
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${stderr.trim()}`))));
  });
}

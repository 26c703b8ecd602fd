/**
 * Loads the API server connection: an explicit kubeconfig file, else client-node's default order
 * (in-cluster service account, then $KUBECONFIG, then ~/.kube/config).
 */
import { KubeConfig } from '@kubernetes/client-node';

export function loadKubeConfig(path?: string): KubeConfig {
  const kc = new KubeConfig();
  if (path) kc.loadFromFile(path);
  else kc.loadFromDefault();
  return kc;
}

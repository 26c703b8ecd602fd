/**
 * Words that belong to a DaemonSet: its kind and short name, and the columns only `kubectl get ds`
 * shows. A message about any other kind of target must contain none of them.
 */
export const DAEMONSET_WORDS = /DaemonSet|\bds\b|\bds\/|DESIRED|UP-TO-DATE|daemon pod/;

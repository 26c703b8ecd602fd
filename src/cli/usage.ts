/**
 * The usage of the whole command line: what `rollout-guard --help` prints, and what follows the message of
 * every usage error (an unknown or missing command, or a mistake in a command's arguments). The usage each
 * command prints for `COMMAND --help` lives beside that command.
 */

/** Every command with its flags in one line each, the connection flags, and the kubectl plugin's form. */
export const USAGE = `usage:
  rollout-guard run [--namespaces a,b] [--log-level info] [--leader-elect=true|false (default: true in a pod)]
                    [--metrics-bind-address :8080|0] [--health-probe-bind-address :8081]
                    [--metrics-secure --metrics-cert-dir DIR]
                    [--lease-namespace NS] [--identity ID] [--workers N] [--kubeconfig PATH]
  rollout-guard check ds/NAME|sts/NAME|deploy/NAME [-n NAMESPACE] [--deadline 10m] [--suspect 2m] [--output text|json|yaml] [connection flags]
  rollout-guard get ds/NAME|sts/NAME|deploy/NAME|rg/NAME [-n NAMESPACE] [--watch] [--output text|json|yaml] [connection flags]
  rollout-guard list [-n NAMESPACE | -A] [--output text|wide|json|yaml|name] [connection flags]   (also get -A)
  rollout-guard undo rg/NAME|NAME|ds/NAME|sts/NAME|deploy/NAME [-n NAMESPACE] [--dry-run] [connection flags]
  rollout-guard dashboard [-n NAMESPACE | -A] [--address 127.0.0.1] [--port 3200] [connection flags]
  rollout-guard completion bash|zsh|kubectl
  rollout-guard version (or --version)
connection flags, as kubectl's: --kubeconfig PATH[:PATH…] --context NAME --cluster NAME --user NAME
                                --as USER --as-group GROUP (repeatable)
as a kubectl plugin (kubectl-rollout_guard on PATH): kubectl rollout-guard check|get|list|undo|dashboard …
COMMAND --help describes a command in full`;

{{/*
Object names are fixed, as in deploy/, so that the chart and `kubectl apply -k` install the same objects
and the commands of README.md and docs/ apply to both. The RBAC is cluster-scoped: install one release per cluster.
*/}}

{{/* Helm's standard labels, on every object the chart templates (the CRDs in crds/ are not templated). */}}
{{- define "rollout-guard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* The operator's pods: the Deployment's selector, the PDB's, the anti-affinity's, the NetworkPolicy's. */}}
{{- define "rollout-guard.selectorLabels" -}}
app.kubernetes.io/name: rollout-guard
{{- end }}

{{/* "true" in namespaced mode (watchNamespaces set), else "". */}}
{{- define "rollout-guard.namespaced" -}}
{{- if gt (len .Values.watchNamespaces) 0 }}true{{ end }}
{{- end }}

{{/* "true" when the RolloutGuardPolicy controller runs: policies.enabled, never in namespaced mode. */}}
{{- define "rollout-guard.policies" -}}
{{- if and .Values.policies.enabled (not (include "rollout-guard.namespaced" .)) }}true{{ end }}
{{- end }}

{{/* The operator's ServiceAccount as an RBAC subject. */}}
{{- define "rollout-guard.subject" -}}
- {kind: ServiceAccount, name: rollout-guard, namespace: {{ .Release.Namespace }}}
{{- end }}

{{/* Where --metrics-cert-dir points with metrics.secure. */}}
{{- define "rollout-guard.metricsCertDir" -}}
/etc/rollout-guard/metrics-tls
{{- end }}

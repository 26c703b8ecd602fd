{{/*
Object names follow Helm's standard fullname: the release name when it contains the chart name (so
`helm install rollout-guard` names every object as deploy/ does, and the commands of README.md and docs/ apply to both
installs), else <release>-rollout-guard; fullnameOverride replaces it, nameOverride replaces the chart
name in it. Cluster-scoped objects (ClusterRoles, their bindings) carry the fullname too, so two releases
with different names can share a cluster; the CRDs are the one thing they share (crds.enabled in one).
*/}}

{{/* The chart name, or nameOverride: the app.kubernetes.io/name label. */}}
{{- define "rollout-guard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object name. Truncated to 55 characters rather than Helm's usual 63: the metrics
Service, <fullname>-metrics, must be a DNS label (at most 63), and a truncated suffix could make two
names equal.
*/}}
{{- define "rollout-guard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 55 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 55 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 55 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Helm's standard labels, on every object the chart renders, the CRDs included. */}}
{{- define "rollout-guard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/*
The operator's pods: the Deployment's selector, the PDB's, the anti-affinity's, the NetworkPolicy's, the
metrics Service's. The name alone, as deploy/ has it: a Deployment's selector is immutable, so adding
app.kubernetes.io/instance would make every existing release impossible to upgrade. Selectors are
namespaced, so releases in different namespaces never select each other's pods; two releases in one
namespace need different nameOverrides.
*/}}
{{- define "rollout-guard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "rollout-guard.name" . }}
{{- end }}

{{/* "true" in namespaced mode (watchNamespaces set), else "". */}}
{{- define "rollout-guard.namespaced" -}}
{{- if gt (len .Values.watchNamespaces) 0 }}true{{ end }}
{{- end }}

{{/* "true" when the RolloutGuardPolicy controller runs: policies.enabled, never in namespaced mode. */}}
{{- define "rollout-guard.policies" -}}
{{- if and .Values.policies.enabled (not (include "rollout-guard.namespaced" .)) }}true{{ end }}
{{- end }}

{{/* The operator's ServiceAccount: serviceAccount.name, else the fullname. */}}
{{- define "rollout-guard.serviceAccountName" -}}
{{- default (include "rollout-guard.fullname" .) .Values.serviceAccount.name }}
{{- end }}

{{/* The operator's ServiceAccount as an RBAC subject. */}}
{{- define "rollout-guard.subject" -}}
- {kind: ServiceAccount, name: {{ include "rollout-guard.serviceAccountName" . }}, namespace: {{ .Release.Namespace }}}
{{- end }}

{{/* Where --metrics-cert-dir points with metrics.secure. */}}
{{- define "rollout-guard.metricsCertDir" -}}
/etc/rollout-guard/metrics-tls
{{- end }}

{{/* The Service in front of the metrics port (monitoring.serviceMonitor.enabled). */}}
{{- define "rollout-guard.metricsServiceName" -}}
{{- printf "%s-metrics" (include "rollout-guard.fullname" .) }}
{{- end }}

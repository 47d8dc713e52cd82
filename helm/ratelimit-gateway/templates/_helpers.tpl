{{/* Names and labels. */}}
{{- define "ratelimit-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ratelimit-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The management Service's name: the full name is cut so that the suffix always fits in 63 characters. */}}
{{- define "ratelimit-gateway.managementName" -}}
{{- printf "%s-management" (include "ratelimit-gateway.fullname" . | trunc 52 | trimSuffix "-") }}
{{- end }}

{{- define "ratelimit-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ratelimit-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ratelimit-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ratelimit-gateway.labels" -}}
helm.sh/chart: {{ include "ratelimit-gateway.chart" . }}
{{ include "ratelimit-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ratelimit
{{- end }}

{{- define "ratelimit-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ratelimit-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ratelimit-gateway.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- end }}

{{/* Whether the management Service exists: asked for, or needed by the ServiceMonitor. */}}
{{- define "ratelimit-gateway.managementService" -}}
{{- if or .Values.management.service.enabled .Values.serviceMonitor.enabled }}true{{ end }}
{{- end }}

{{/* The fewest replicas the Deployment runs: autoscaling.minReplicas with the HPA, else replicaCount. */}}
{{- define "ratelimit-gateway.minReplicas" -}}
{{- if .Values.autoscaling.enabled }}{{ int .Values.autoscaling.minReplicas }}{{ else }}{{ int .Values.replicaCount }}{{ end }}
{{- end }}

{{/* Where the pod reads its configuration: the ConfigMap, then the optional Secret (later files win). */}}
{{- define "ratelimit-gateway.configLocation" -}}
file:/etc/ratelimit-gateway/config/application.yml
{{- if .Values.extraConfigSecret }},file:/etc/ratelimit-gateway/secret/application.yml{{ end }}
{{- end }}

{{/* A PodDisruptionBudget value as text: "" when unset (null or ""), else the integer or the percentage. */}}
{{- define "ratelimit-gateway.pdbValue" -}}
{{- if kindIs "invalid" . }}{{ else if kindIs "string" . }}{{ . }}{{ else }}{{ int . }}{{ end }}
{{- end }}

{{/*
The PodDisruptionBudget's one setting, as "minAvailable: X" or "maxUnavailable: X", after checking that it lets at
least one pod be evicted at the minimum replica count. Kubernetes rounds a percentage up in both fields.
*/}}
{{- define "ratelimit-gateway.pdbSetting" -}}
{{- $pdb := .Values.podDisruptionBudget }}
{{- $min := include "ratelimit-gateway.minReplicas" . | int }}
{{- $minAvailable := include "ratelimit-gateway.pdbValue" $pdb.minAvailable }}
{{- $maxUnavailable := include "ratelimit-gateway.pdbValue" $pdb.maxUnavailable }}
{{- if and (ne $minAvailable "") (ne $maxUnavailable "") }}
{{- fail (printf "podDisruptionBudget: set either minAvailable (%s) or maxUnavailable (%s), not both: Kubernetes refuses a PodDisruptionBudget with both." $minAvailable $maxUnavailable) }}
{{- end }}
{{- if ne $minAvailable "" }}
{{- $required := 0 }}
{{- if hasSuffix "%" $minAvailable }}
{{- $percent := trimSuffix "%" $minAvailable | int }}
{{- $required = div (add (mul $percent $min) 99) 100 | int }}
{{- else }}
{{- $required = $minAvailable | int }}
{{- end }}
{{- if ge $required $min }}
{{- fail (printf "podDisruptionBudget.minAvailable is %s, which keeps %d pod(s) available, but the fleet may run only %d replica(s) (%s): no pod could ever be evicted and every node drain would block. Set minAvailable to at most %d, or use maxUnavailable: 1, or raise the replica count." $minAvailable $required $min (ternary "autoscaling.minReplicas" "replicaCount" .Values.autoscaling.enabled) (sub $min 1)) }}
{{- end }}
minAvailable: {{ if hasSuffix "%" $minAvailable }}{{ $minAvailable | quote }}{{ else }}{{ $minAvailable | int }}{{ end }}
{{- else }}
{{- $value := default "1" $maxUnavailable }}
{{- if or (eq $value "0") (eq $value "0%") }}
{{- fail (printf "podDisruptionBudget.maxUnavailable is %s: no pod could ever be evicted and every node drain would block. Use at least 1 (or a percentage above 0%%)." $value) }}
{{- end }}
maxUnavailable: {{ if hasSuffix "%" $value }}{{ $value | quote }}{{ else }}{{ $value | int }}{{ end }}
{{- end }}
{{- end }}

{{/* Checks across values that the schema cannot express, with messages naming the values. */}}
{{- define "ratelimit-gateway.validate" -}}
{{- if .Values.autoscaling.enabled }}
{{- if gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas) }}
{{- fail (printf "autoscaling.minReplicas (%d) is above autoscaling.maxReplicas (%d)." (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- end }}
{{- if not (and .Values.resources .Values.resources.requests .Values.resources.requests.cpu) }}
{{- fail "autoscaling.enabled needs resources.requests.cpu: the autoscaler's CPU target is a share of the request." }}
{{- end }}
{{- end }}
{{- if eq .Values.redis.mode "sentinel" }}
{{- if not .Values.redis.sentinel.master }}{{ fail "redis.mode is sentinel: set redis.sentinel.master, the name of the master the Sentinels watch." }}{{ end }}
{{- if empty .Values.redis.sentinel.nodes }}{{ fail "redis.mode is sentinel: set redis.sentinel.nodes, the host:port of each Sentinel." }}{{ end }}
{{- end }}
{{- if eq .Values.redis.mode "cluster" }}
{{- if empty .Values.redis.cluster.nodes }}{{ fail "redis.mode is cluster: set redis.cluster.nodes, the host:port of some cluster nodes." }}{{ end }}
{{- end }}
{{- if eq .Values.redis.mode "standalone" }}
{{- if not .Values.redis.standalone.host }}{{ fail "redis.mode is standalone: set redis.standalone.host." }}{{ end }}
{{- end }}
{{- if eq (int .Values.management.port) (int .Values.server.port) }}
{{- fail (printf "management.port and server.port are both %d: the operator endpoints must have a port of their own, which the public Service does not expose." (int .Values.server.port)) }}
{{- end }}
{{- if .Values.podDisruptionBudget.enabled }}
{{- $_ := include "ratelimit-gateway.pdbSetting" . }}
{{- end }}
{{- if and .Values.serviceMonitor.enabled .Values.networkPolicy.enabled }}
{{- $default := list (dict "podSelector" (dict "matchLabels" (dict "ratelimit.dev/management-access" "true"))) }}
{{- if or (empty .Values.networkPolicy.managementFrom) (eq (toJson .Values.networkPolicy.managementFrom) (toJson $default)) }}
{{- fail "serviceMonitor.enabled scrapes the management port, which networkPolicy.managementFrom does not admit your Prometheus to: add it there (e.g. a namespaceSelector for its namespace), or set networkPolicy.enabled=false." }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Secret holding the operator passwords and the client-id secret: the one given, or the chart's own. */}}
{{- define "ratelimit-gateway.credentialsSecret" -}}
{{- .Values.credentials.existingSecret | default (printf "%s-credentials" (include "ratelimit-gateway.fullname" .)) }}
{{- end }}

{{/* Whether the pods read anything from the credentials Secret. */}}
{{- define "ratelimit-gateway.usesCredentials" -}}
{{- if or .Values.management.auth.enabled .Values.clientId.keyed }}true{{ end }}
{{- end }}

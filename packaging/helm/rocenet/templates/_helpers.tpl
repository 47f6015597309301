{{/* Labels shared by every object of the release. */}}
{{- define "rocenet.labels" -}}
app.kubernetes.io/name: rocenet
app.kubernetes.io/part-of: rocenet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* The DaemonSet's pod selector. */}}
{{- define "rocenet.selector" -}}
app.kubernetes.io/name: rocenet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: node
{{- end -}}

{{/* uid 0, every capability dropped unless added, never privileged. */}}
{{- define "rocenet.securityContext" -}}
runAsUser: 0
runAsGroup: 0
runAsNonRoot: false
privileged: false
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
{{- end -}}

{{/* The device plugin's socket name: the resource name with / as _. */}}
{{- define "rocenet.pluginSocket" -}}
{{ .Values.resourceName | replace "/" "_" }}-$(POD_NAME).sock
{{- end -}}

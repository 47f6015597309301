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

{{/* .Values.allocation, checked: devicePlugin or dra. */}}
{{- define "rocenet.allocation" -}}
{{- if not (has .Values.allocation (list "devicePlugin" "dra")) -}}
{{- fail (printf "allocation %q: want devicePlugin (the kubelet device plugin) or dra (Dynamic Resource Allocation)" (toString .Values.allocation)) -}}
{{- end -}}
{{- .Values.allocation -}}
{{- end -}}

{{/* rocenet-dra-plugin's flags that come from values, checked here rather
than refused by the plugin at start. --unhealthy-taint is always given, as
in packaging/kubernetes/components/dra; the others only away from the
plugin's default, which the component leaves to the plugin (so does the
device-plugin container with --resource-name). */}}
{{- define "rocenet.draPluginFlags" -}}
{{- $taint := .Values.draPlugin.unhealthyTaint -}}
{{- if not (has $taint (list "NoSchedule" "NoExecute" "None")) -}}
{{- fail (printf "draPlugin.unhealthyTaint %q: want NoSchedule, NoExecute or None" (toString $taint)) -}}
{{- end -}}
{{- $rdma := .Values.draPlugin.rdmaDeviceSpecs -}}
{{- if not (has $rdma (list "none" "non-gaudi" "all")) -}}
{{- fail (printf "draPlugin.rdmaDeviceSpecs %q: want none, non-gaudi or all" (toString $rdma)) -}}
{{- end -}}
- --unhealthy-taint={{ $taint }}
{{- if ne .Values.resourceName "rocenet.io/scale-out-port" }}
- --resource-name={{ .Values.resourceName }}
{{- end }}
{{- if ne $rdma "non-gaudi" }}
- --rdma-device-specs={{ $rdma }}
{{- end }}
{{- end -}}

{{/* Values of earlier charts that moved: refused by name rather than
ignored, so an upgrade with the old --set does not lose the setting. */}}
{{- define "rocenet.movedValues" -}}
{{- if hasKey .Values "diagSecretName" -}}
{{- fail "diagSecretName moved to diagd.secretName: the diagnostics run in rocenet-diagd, which mounts the Secret" -}}
{{- end -}}
{{- end -}}

{{/* rocenet-controller's pod selector. */}}
{{- define "rocenet.controllerSelector" -}}
app.kubernetes.io/name: rocenet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

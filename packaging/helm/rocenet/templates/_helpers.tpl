{{/* Labels shared by every object of the release. */}}
{{- define "rocenet.labels" -}}
app.kubernetes.io/name: rocenet
app.kubernetes.io/part-of: rocenet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{/* rocenet-controller's pod selector. */}}
{{- define "rocenet.controllerSelector" -}}
app.kubernetes.io/name: rocenet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end -}}

{{/* Values of earlier charts, which installed the node side from files:
refused by name rather than ignored, so an upgrade with the old --set does
not lose the setting silently. rocenetd's configuration, the nodes and the
allocation are the policy's now (policy.spec, docs/operator.md). */}}
{{- define "rocenet.movedValues" -}}
{{- range $old, $new := dict
    "allocation" "policy.spec.mode (DevicePlugin or DRA)"
    "config" "policy.spec (addressing, qos, health, outputs, logging, ...)"
    "configOverrides" "policy.spec (addressing, qos, health, outputs, logging, ...)"
    "diagd" "the policy's pods (diagd runs in each; its Secret is made by rocenet-controller)"
    "diagSecretName" "the Secret rocenet-diag, made by rocenet-controller"
    "draPlugin" "policy.spec.mode DRA"
    "updateStrategy" "policy.spec.rollout"
    "nodeSelector" "policy.spec.nodeSelector"
    "affinity" "policy.spec.nodeSelector"
    "tolerations" "policy.spec.tolerations"
    "resources" "policy.spec.resources"
    "hostPID" "nothing: cri-dockerd is not supported"
    "cniBinDir" "nothing: rocenet-controller finds OpenShift's by API discovery"
    "resourceName" "nothing: the resource is rocenet.io/scale-out-port"
    "metricsPort" "nothing: rocenetd's metrics are on 50152"
}}
{{- if hasKey $.Values $old -}}
{{- fail (printf "%s: the chart installs rocenet's operator now, and the value moved to %s (docs/deploying.md, Helm)" $old $new) -}}
{{- end -}}
{{- end -}}
{{- end -}}

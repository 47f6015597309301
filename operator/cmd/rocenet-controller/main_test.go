// SPDX-License-Identifier: Apache-2.0

package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseFlagsDefaults(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	f, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := flags{leaderElect: true, leaderElectionNamespace: "rocenet-system", namespace: "rocenet-system",
		daemonSet: "rocenet", metricsAddress: ":50155", metricsSecure: true, probeAddress: ":50156", staleAfter: 25 * time.Minute,
		qps: 50, burst: 100, triagePriorityClass: "rocenet-triage-holder", triageBudget: "10%", triageBudgetWindow: time.Hour}
	if f != want {
		t.Errorf("defaults %+v, want %+v", f, want)
	}
	t.Setenv("POD_NAMESPACE", "fabric")
	if f, _ := parseFlags(nil); f.leaderElectionNamespace != "fabric" || f.namespace != "fabric" {
		t.Errorf("the Lease's namespace %q, rocenet's %q, want $POD_NAMESPACE's", f.leaderElectionNamespace, f.namespace)
	}
	f, err = parseFlags([]string{"--leader-elect=false", "--metrics-bind-address=0", "--stale-after=1h", "--kubeconfig=/k", "-v=2",
		"--triage-priority-class=triage-holder", "--kube-api-qps=7.5", "--kube-api-burst=9", "--metrics-secure=false"})
	if err != nil || f.leaderElect || f.metricsAddress != "0" || f.staleAfter != time.Hour || f.kubeconfig != "/k" ||
		f.triagePriorityClass != "triage-holder" || f.qps != 7.5 || f.burst != 9 || f.metricsSecure {
		t.Errorf("parsed %+v, %v", f, err)
	}
}

// A bad flag is an error naming it (main exits 2 with it).
func TestParseFlagsRefuses(t *testing.T) {
	for args, want := range map[string]string{
		"--no-such-flag":                    "no-such-flag",
		"--stale-after=10s":                 "--stale-after 10s: at least 1m",
		"--stale-after=soon":                "stale-after",
		"--leader-election-namespace= here": "unexpected argument",
		"--leader-election-namespace=":      "--leader-election-namespace must not be empty",
		"--namespace=":                      "--namespace must not be empty",
		"--triage-budget=ten":               `--triage-budget "ten": a number of nodes`,
		"--triage-budget=120%":              `--triage-budget "120%": a share from 0% to 100%`,
		"--triage-budget-window=10s":        "--triage-budget-window 10s: at least 1m",
		"--kube-api-qps=0":                  "--kube-api-qps 0 and --kube-api-burst 100: both must be positive",
		"--kube-api-burst=0":                "--kube-api-qps 50 and --kube-api-burst 0: both must be positive",
	} {
		_, err := parseFlags(strings.Fields(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", args, err, want)
		}
	}
}

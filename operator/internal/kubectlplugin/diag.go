// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// The exit codes of a triage's verdict (diag reach, diag report), as
// rocectl's: the test ran and found a failure; it was inconclusive.
const (
	ExitFailed       = 6
	ExitInconclusive = 7
	// ExitNotMeasured: what was measured passed, but a stage, node or link
	// was not measured (diag report), so nothing may be taken as passed
	// there.
	ExitNotMeasured = 8
)

// verdictError ends a command with a verdict's exit code.
type verdictError struct {
	code int
	msg  string
}

func (e verdictError) Error() string { return e.msg }

var diagLong = `Triage across the cluster's nodes, chosen by name, label selector or
job: "diag reach" asks rocenet-controller for a run (a RocenetTriage) and
waits for its verdict; "diag report" writes the acceptance report of a
finished run; "diag nodes-file" prints the nodes' rocenet-diagd addresses
for "rocectl diag reach --nodes-file" (docs/fleet.md#triage).`

func newDiagCommand(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diag",
		Short: "Triage across nodes: reach runs, their reports, a nodes file for rocectl",
		Long:  diagLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), suggest(cmd, args[0]))
			}
			return nil
		},
		Run: func(cmd *cobra.Command, args []string) { _ = cmd.Help() },
	}
	cmd.AddCommand(newDiagReachCommand(o), newDiagReportCommand(o), newDiagNodesFileCommand(o),
		newCollectivePlanCommand(o))
	return cmd
}

// selection is how a command names its nodes: NODE arguments, -l, --job.
type selection struct {
	selector string
	job      string
}

func (s *selection) addFlags(cmd *cobra.Command, withJob bool) {
	cmd.Flags().StringVarP(&s.selector, "selector", "l", "", "The nodes whose labels match (instead of NODE names).")
	if withJob {
		cmd.Flags().StringVar(&s.job, "job", "", "The nodes of a workload's running pods: KIND/NAME (job, jobset, trainjob, pytorchjob or mpijob), in --namespace.")
	}
}

// spec fills a triage's node choice from args and the flags.
// workloadKinds is the kinds of workload --job names, as kubectl names
// their resources (singular and plural, lower case).
var workloadKinds = map[string]string{
	"job": "Job", "jobs": "Job",
	"jobset": "JobSet", "jobsets": "JobSet",
	"trainjob": "TrainJob", "trainjobs": "TrainJob",
	"pytorchjob": "PyTorchJob", "pytorchjobs": "PyTorchJob",
	"mpijob": "MPIJob", "mpijobs": "MPIJob",
}

func (s *selection) spec(args []string, spec *v1alpha1.RocenetTriageSpec) error {
	chosen := 0
	if len(args) > 0 {
		chosen++
		spec.Nodes = args
	}
	if s.selector != "" {
		chosen++
		sel, err := metav1.ParseToLabelSelector(s.selector)
		if err != nil {
			return usagef("--selector %q: %v", s.selector, err)
		}
		spec.NodeSelector = sel
	}
	if s.job != "" {
		chosen++
		kind, name, ok := strings.Cut(s.job, "/")
		workload := workloadKinds[strings.ToLower(kind)]
		if !ok || workload == "" || name == "" {
			return usagef("--job %q: KIND/NAME, KIND one of job, jobset, trainjob, pytorchjob, mpijob", s.job)
		}
		spec.Job = &v1alpha1.JobReference{Kind: workload, Name: name}
	}
	if chosen != 1 {
		return usagef("name the nodes one way: NODE..., --selector or --job")
	}
	return nil
}

var diagReachExample = `  # Acceptance of a rack, with an HTML report; exit 0 pass, 6 fail, 7 inconclusive
  kubectl rocenet diag reach -l rack=r12 --report acceptance.html

  # The nodes a slow training job runs on
  kubectl rocenet diag reach --job trainjob/llama-post-train -n training

  # Every hour, on two nodes (returns at once)
  kubectl rocenet diag reach gaudi-a gaudi-b --every 1h --name hourly`

func newDiagReachCommand(o *options) *cobra.Command {
	var (
		sel                        selection
		plan, maxUnvalidated, name string
		report, reportJSON         string
		count                      int32
		timeLimit, every, wait     time.Duration
		th                         Thresholds
	)
	cmd := &cobra.Command{
		Use:   "reach [NODE...] [-l SELECTOR | --job KIND/NAME]",
		Short: "Run reach over nodes as a RocenetTriage and wait for its verdict",
		Long: `Creates a RocenetTriage of the reach stage over the nodes named, selected
or running a job's pods, in --namespace (default: the context's), and waits
for rocenet-controller to run it: ARP and ICMP from every scale-out port
of every node to its gateway and to the peers of the run's plan (a mesh up
to 64 nodes, rings and leaf meshes above). Prints the verdict, each rail,
the suspects with their evidence and what became of the nodes'
validation labels; --report and --report-json write the acceptance report.
With --every it asks for a periodic run and returns at once.

Exit codes: 0 passed; 6 a failure was found; 7 inconclusive (the failure
named more nodes than --max-unvalidated, or none: no label changed); 1 the
run could not be made or did not end in --wait; 2 bad usage.`,
		Example: diagReachExample,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			t := &v1alpha1.RocenetTriage{Spec: v1alpha1.RocenetTriageSpec{Stage: "reach", Plan: plan, Count: count}}
			if err := sel.spec(args, &t.Spec); err != nil {
				return err
			}
			if plan != "auto" && plan != "mesh" && plan != "rings" {
				return usagef("--plan %q: auto, mesh or rings", plan)
			}
			if count < 1 || count > 100 {
				return usagef("--count %d: 1..100", count)
			}
			if timeLimit < time.Second || timeLimit > 30*time.Second || timeLimit%time.Second != 0 {
				return usagef("--time-limit %s: whole seconds, 1s..30s", timeLimit)
			}
			t.Spec.TimeoutSeconds = int32(timeLimit / time.Second)
			if maxUnvalidated != "" {
				v := intstr.Parse(maxUnvalidated)
				t.Spec.MaxUnvalidated = &v
			}
			if every > 0 {
				if every < time.Minute {
					return usagef("--every %s: at least 1m", every)
				}
				t.Spec.Every = &metav1.Duration{Duration: every}
			}
			t.Spec.KeepResult = report != "" || reportJSON != ""
			namespace, _, err := o.config.ToRawKubeConfigLoader().Namespace()
			if err != nil || namespace == "" {
				namespace = "default"
			}
			t.Namespace = namespace
			if name != "" {
				t.Name = name
			} else {
				t.GenerateName = "reach-"
			}
			if every == 0 {
				// One run, waited for here: the triage goes an hour after it,
				// with its kept result, rather than one stays per call.
				t.Spec.TTLSecondsAfterFinished = ptr.To[int32](3600)
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if err := clients.Kube.Create(ctx, t); err != nil {
				return apiError(fmt.Sprintf("creating a rocenettriage in %q", namespace), err)
			}
			out := o.env.Streams.Out
			fmt.Fprintf(o.env.Streams.ErrOut, "rocenettriage %s/%s created\n", t.Namespace, t.Name)
			if every > 0 {
				fmt.Fprintf(out, "rocenettriage %s/%s runs every %s (kubectl get rtriage -n %s %s)\n", t.Namespace, t.Name, every, t.Namespace, t.Name)
				return nil
			}
			deadline := time.Now().Add(wait)
			for {
				if err := clients.Kube.Get(ctx, client.ObjectKeyFromObject(t), t); err != nil {
					return apiError(fmt.Sprintf("rocenettriage %s/%s", t.Namespace, t.Name), err)
				}
				if t.Status.Runs >= 1 && finishedPhase(t.Status.Phase) {
					break
				}
				if time.Now().After(deadline) {
					return fmt.Errorf("rocenettriage %s/%s: not finished after %s (phase %q); is rocenet-controller running? (kubectl -n %s get deploy rocenet-controller)",
						t.Namespace, t.Name, wait, t.Status.Phase, o.rocenetNamespace)
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(pollInterval):
				}
			}
			RenderTriage(out, t)
			if t.Spec.KeepResult && t.Status.ResultConfigMap != "" {
				if err := writeReports(ctx, o, clients, t, report, reportJSON, th); err != nil {
					return err
				}
			}
			return triageVerdict(t)
		}),
	}
	sel.addFlags(cmd, true)
	cmd.Flags().StringVar(&plan, "plan", "auto", "Which pairs are probed: auto, mesh or rings.")
	cmd.Flags().Int32Var(&count, "count", 5, "Echo requests per target, 1..100.")
	cmd.Flags().DurationVar(&timeLimit, "time-limit", 5*time.Second, "The run's time bound, 1s..30s.")
	cmd.Flags().StringVar(&maxUnvalidated, "max-unvalidated", "", `The most nodes a failed run may unvalidate: a number, or a share ("10%", the default).`)
	cmd.Flags().DurationVar(&every, "every", 0, "Run again this long after each run ends; returns at once.")
	cmd.Flags().StringVar(&name, "name", "", "The RocenetTriage's name (default: reach-<random>).")
	cmd.Flags().DurationVar(&wait, "wait", 5*time.Minute, "How long to wait for the verdict.")
	cmd.Flags().StringVar(&report, "report", "", "Write the acceptance report to this HTML file.")
	cmd.Flags().StringVar(&reportJSON, "report-json", "", "Write the acceptance report to this JSON file.")
	th.addFlags(cmd)
	return cmd
}

// pollInterval is how often diag reach looks at its triage.
var pollInterval = time.Second

func finishedPhase(phase string) bool {
	switch phase {
	case v1alpha1.TriageSucceeded, v1alpha1.TriageFailed, v1alpha1.TriageInconclusive, v1alpha1.TriageError,
		v1alpha1.TriageSkipped, v1alpha1.TriageNotMeasured:
		return true
	}
	return false
}

// triageVerdict is the command's end for a finished triage.
func triageVerdict(t *v1alpha1.RocenetTriage) error {
	what := fmt.Sprintf("rocenettriage %s/%s: %s", t.Namespace, t.Name, t.Status.Message)
	switch t.Status.Phase {
	case v1alpha1.TriageSucceeded:
		return nil
	case v1alpha1.TriageFailed:
		return verdictError{ExitFailed, what}
	case v1alpha1.TriageInconclusive:
		return verdictError{ExitInconclusive, what}
	case v1alpha1.TriageNotMeasured:
		return verdictError{ExitNotMeasured, what}
	default:
		return fmt.Errorf("%s", what)
	}
}

// RenderTriage prints a finished triage: its verdict, plan, rails,
// suspects, failed probes and labels.
func RenderTriage(w io.Writer, t *v1alpha1.RocenetTriage) {
	s := t.Status
	fmt.Fprintf(w, "%s/%s: %s, %s\n", t.Namespace, t.Name, s.Phase, s.Message)
	if s.Plan != nil {
		fmt.Fprintf(w, "plan %s: %d %s from %s, %d peer probes and %d gateway probes\n",
			s.Plan.Kind, s.NodeCount, plural(int(s.NodeCount), "node", "nodes"), s.Coordinator, s.Plan.PeerProbes, s.Plan.GatewayProbes)
	}
	if len(s.Rails) > 0 {
		fmt.Fprintln(w)
		tw := printers.GetNewTabWriter(w)
		row(tw, "RAIL", "PORTS", "LEAVES", "PEER PROBES", "FAILED", "LOSS", "RTT P50", "P99")
		for _, r := range s.Rails {
			row(tw, r.Rail, fmt.Sprint(r.Ports), fmt.Sprint(r.Leaves), fmt.Sprint(r.PeerProbes), fmt.Sprint(r.PeersFailed),
				dash(r.LossRatio), dash(r.RTTP50), dash(r.RTTP99))
		}
		_ = tw.Flush()
	}
	if len(s.Suspects) > 0 {
		fmt.Fprintf(w, "\nSuspects (%d):\n", s.SuspectCount)
		tw := printers.GetNewTabWriter(w)
		row(tw, "KIND", "NODE/PORT OR LEAF", "RAIL", "EVIDENCE")
		for _, x := range s.Suspects {
			what := x.Node
			if x.Port != "" {
				what += "/" + x.Port
			}
			if x.Kind == "leaf" || x.Kind == "leaf-uplink" {
				what = x.Leaf
			}
			if x.Kind == "rail" {
				what = "-"
			}
			row(tw, x.Kind, what, dash(x.Rail), x.Evidence)
		}
		_ = tw.Flush()
	}
	if len(s.FailedLinks) > 0 {
		fmt.Fprintf(w, "\nFailed probes (%d):\n", s.FailedLinkCount)
		for i, l := range s.FailedLinks {
			if i == 10 {
				fmt.Fprintf(w, "  ... and %d more\n", int(s.FailedLinkCount)-10)
				break
			}
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	if l := s.Labels; l != nil {
		switch {
		case l.Inconclusive:
			fmt.Fprintf(w, "\nLabels: inconclusive, %s\n", l.Reason)
		case len(l.Unvalidated) > 0:
			fmt.Fprintf(w, "\nLabels: validation removed from %s\n", strings.Join(l.Unvalidated, ", "))
		case l.Validated > 0:
			fmt.Fprintf(w, "\nLabels: reach validated on %d %s\n", l.Validated, plural(int(l.Validated), "node", "nodes"))
		}
	}
}

func newDiagNodesFileCommand(o *options) *cobra.Command {
	var sel selection
	cmd := &cobra.Command{
		Use:   "nodes-file [NODE...] [-l SELECTOR]",
		Short: "The nodes' rocenet-diagd addresses, for rocectl diag reach --nodes-file",
		Long: `Prints one line per node, its scale-out ports' addresses (those not in a
pod) joined with "+", then the node's name as a comment: the form of
"rocectl diag reach --nodes-file", from the nodes' RocenetNodes. A node
without an addressed port is left out with a note on stderr.`,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			var spec v1alpha1.RocenetTriageSpec
			if err := sel.spec(args, &spec); err != nil {
				return err
			}
			clients, err := o.connect()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			names := spec.Nodes
			if spec.NodeSelector != nil {
				selector, err := metav1.LabelSelectorAsSelector(spec.NodeSelector)
				if err != nil {
					return usagef("--selector: %v", err)
				}
				var nodes corev1.NodeList
				if err := clients.Kube.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: selector}); err != nil {
					return apiError("nodes", err)
				}
				for _, n := range nodes.Items {
					names = append(names, n.Name)
				}
				if len(names) == 0 {
					return fmt.Errorf("no node matches %q", labels.Selector(selector).String())
				}
			}
			sort.Strings(names)
			for _, name := range names {
				var rn v1alpha1.RocenetNode
				if err := clients.Kube.Get(ctx, client.ObjectKey{Name: name}, &rn); err != nil {
					return apiError(fmt.Sprintf("rocenetnode %q", name), err)
				}
				var addresses []string
				for _, p := range rn.Status.Ports {
					if p.Address != "" && !p.InPod {
						addresses = append(addresses, strings.SplitN(p.Address, "/", 2)[0])
					}
				}
				if len(addresses) == 0 {
					fmt.Fprintf(o.env.Streams.ErrOut, "%s: no addressed port, left out\n", name)
					continue
				}
				fmt.Fprintf(o.env.Streams.Out, "%s  # %s\n", strings.Join(addresses, "+"), name)
			}
			return nil
		}),
	}
	sel.addFlags(cmd, false)
	return cmd
}

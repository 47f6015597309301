// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

// kubectl rocenet diag report: the acceptance report of a finished triage
// (its kept result) or of rocectl's JSON results, one a stage.

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
	"rocenet.io/operator/internal/stageresult"
)

// keptResult reads a triage's whole result from its ConfigMap.
func keptResult(ctx context.Context, o *options, clients Clients, t *v1alpha1.RocenetTriage) ([]byte, error) {
	if t.Status.ResultConfigMap == "" {
		return nil, fmt.Errorf("rocenettriage %s/%s keeps no result (spec.keepResult is false)", t.Namespace, t.Name)
	}
	var cm corev1.ConfigMap
	key := client.ObjectKey{Namespace: o.rocenetNamespace, Name: t.Status.ResultConfigMap}
	if err := clients.Kube.Get(ctx, key, &cm); err != nil {
		return nil, apiError(fmt.Sprintf("configmap %s/%s (the triage's result)", key.Namespace, key.Name), err)
	}
	if data, ok := cm.Data["result.json"]; ok {
		return []byte(data), nil
	}
	if zipped, ok := cm.BinaryData["result.json.gz"]; ok {
		r, err := gzip.NewReader(bytes.NewReader(zipped))
		if err != nil {
			return nil, fmt.Errorf("configmap %s/%s: result.json.gz: %w", key.Namespace, key.Name, err)
		}
		return io.ReadAll(io.LimitReader(r, 256<<20))
	}
	return nil, fmt.Errorf("configmap %s/%s holds no result.json", key.Namespace, key.Name)
}

func writeReports(ctx context.Context, o *options, clients Clients, t *v1alpha1.RocenetTriage, html, js string, th Thresholds) error {
	data, err := keptResult(ctx, o, clients, t)
	if err != nil {
		return err
	}
	r, err := ParseReachResult(data)
	if err != nil {
		return fmt.Errorf("rocenettriage %s/%s: %w", t.Namespace, t.Name, err)
	}
	ended := time.Now()
	if t.Status.CompletionTime != nil {
		ended = t.Status.CompletionTime.Time
	}
	rep := NewReport(fmt.Sprintf("rocenet acceptance: %s/%s", t.Namespace, t.Name), ended, r, th)
	return writeReportFiles(o, rep, html, js)
}

func writeReportFiles(o *options, rep *Report, html, js string) error {
	for _, f := range []struct {
		path  string
		write func(io.Writer) error
	}{{html, rep.WriteHTML}, {js, rep.WriteJSON}} {
		if f.path == "" {
			continue
		}
		var buf bytes.Buffer
		if err := f.write(&buf); err != nil {
			return err
		}
		if f.path == "-" {
			if _, err := o.env.Streams.Out.Write(buf.Bytes()); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(f.path, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
		fmt.Fprintf(o.env.Streams.ErrOut, "report written to %s\n", f.path)
	}
	return nil
}

func newDiagReportCommand(o *options) *cobra.Command {
	var html, js, baseline, title string
	var files []string
	var th Thresholds
	var minFraction float64
	cmd := &cobra.Command{
		Use:   "report [TRIAGE] [-f RESULT.json ...]",
		Short: "The acceptance report of a finished triage, or of rocectl's JSON results",
		Long: `Writes the acceptance report of a finished RocenetTriage of --namespace
that kept its result (spec.keepResult), or of rocectl's JSON results (-f
FILE, - for stdin; once per stage: "rocectl diag reach|rdma|allreduce|
bandwidth -o json"): the verdict, each stage's; of reach the fabric as a
picture (every port of every leaf coloured by its state, the leaf-to-leaf
matrix of each rail), the failures the suspects explain apart from those
nothing explains, the nodes not tested, each rail and leaf against the
thresholds of its kind of port (--max-rtt for a netdev that is the RoCE
path, --max-rtt-control-path for one that is the driver's control path,
as Gaudi's); of rdma and bandwidth each link against its line rate, and
what was not measured; of allreduce each ring's busbw and a bisection's
runs and conclusion; the ports' counters that moved during each run.
--baseline names an earlier report's JSON: a link or ring below
--min-fraction of its figure there fails. --html and --json name the
files ("-": stdout); without either, the HTML goes to stdout.

Exit codes: 0 pass; 6 fail; 7 inconclusive; 8 incomplete or not measured
(what was measured passed, but a stage, node or link was not measured);
1 no such triage or result; 2 bad usage.`,
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			if (len(files) == 0) == (len(args) == 0) || len(args) > 1 {
				return usagef("name one triage, or result files with -f")
			}
			if err := minFractionOK(minFraction); err != nil {
				return err
			}
			if html == "" && js == "" {
				html = "-"
			}
			var base *Report
			if baseline != "" {
				data, err := os.ReadFile(baseline)
				if err != nil {
					return fmt.Errorf("reading the baseline: %w", err)
				}
				if base, err = ParseBaseline(data); err != nil {
					return fmt.Errorf("%s: %w", baseline, err)
				}
			}
			var rep *Report
			if len(files) > 0 {
				if title == "" {
					title = "rocenet acceptance: " + filepath.Base(files[0])
				}
				stdin := false
				for _, file := range files {
					var data []byte
					var err error
					if file == "-" {
						if stdin {
							return usagef("-f -: standard input can be read once")
						}
						stdin = true
						data, err = io.ReadAll(o.env.Streams.In)
					} else {
						data, err = os.ReadFile(file)
					}
					if err != nil {
						return fmt.Errorf("reading the result: %w", err)
					}
					if rep, err = addResult(rep, title, time.Now(), data, "", th, base, minFraction); err != nil {
						return fmt.Errorf("%s: %w", file, err)
					}
				}
			} else {
				clients, err := o.connect()
				if err != nil {
					return err
				}
				namespace, _, err := o.config.ToRawKubeConfigLoader().Namespace()
				if err != nil || namespace == "" {
					namespace = "default"
				}
				var t v1alpha1.RocenetTriage
				if err := clients.Kube.Get(cmd.Context(), client.ObjectKey{Namespace: namespace, Name: args[0]}, &t); err != nil {
					return apiError(fmt.Sprintf("rocenettriage %s/%s", namespace, args[0]), err)
				}
				if !finishedPhase(t.Status.Phase) {
					return fmt.Errorf("rocenettriage %s/%s has not finished (phase %q)", namespace, args[0], t.Status.Phase)
				}
				data, err := keptResult(cmd.Context(), o, clients, &t)
				if err != nil {
					return err
				}
				ended := time.Now()
				if t.Status.CompletionTime != nil {
					ended = t.Status.CompletionTime.Time
				}
				if title == "" {
					title = fmt.Sprintf("rocenet acceptance: %s/%s", namespace, args[0])
				}
				if rep, err = addResult(nil, title, ended, data, t.Spec.Stage, th, base, minFraction); err != nil {
					return fmt.Errorf("rocenettriage %s/%s: %w", namespace, args[0], err)
				}
			}
			if err := writeReportFiles(o, rep, html, js); err != nil {
				return err
			}
			if rep.ExitCode != ExitOK {
				return verdictError{rep.ExitCode, rep.Title + ": " + rep.Verdict + ": " + rep.Summary}
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&html, "html", "", "Write the HTML report to this file (-: stdout).")
	cmd.Flags().StringVar(&js, "json", "", "Write the JSON report to this file (-: stdout).")
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil,
		"rocectl's JSON result to report on (-: stdin); once per stage.")
	th.addFlags(cmd)
	cmd.Flags().StringVar(&title, "title", "", `The report's title (default: "rocenet acceptance: " and the triage or the first file).`)
	cmd.Flags().StringVar(&baseline, "baseline", "", "An earlier report's JSON to judge the links and rings against.")
	cmd.Flags().Float64Var(&minFraction, "min-fraction", DefaultMinFraction,
		"The share of the baseline's figure a link or ring must reach.")
	return cmd
}

// addResult adds one rocectl result (of stage, or of the stage its fields
// say when stage is "") to rep, making the report when rep is nil; reach
// once, and first.
func addResult(rep *Report, title string, ended time.Time, data []byte, stage string, th Thresholds,
	base *Report, minFraction float64) (*Report, error) {
	if stage == "" {
		var err error
		if stage, err = StageOf(data); err != nil {
			return nil, err
		}
	}
	if rep != nil {
		for _, s := range rep.Stages {
			if s == stage {
				return nil, fmt.Errorf("a second result of %s; give one result a stage", stage)
			}
		}
	}
	if stage == "reach" {
		if rep != nil {
			return nil, fmt.Errorf("give the reach result first")
		}
		r, err := ParseReachResult(data)
		if err != nil {
			return nil, err
		}
		return NewReport(title, ended, r, th), nil
	}
	r, err := stageresult.Parse(stage, data)
	if err != nil {
		return nil, err
	}
	if rep == nil {
		rep = NewStageReport(title, ended)
	}
	rep.AddStage(stage, r, base, minFraction)
	return rep, nil
}

// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// NewScheme is the scheme of the plugin's client: core/v1 (Nodes, Pods)
// and rocenet.io/v1alpha1.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// output is a command's -o: a table of ours (plain or wide), or one of
// cli-runtime's printers (json, yaml, name, jsonpath, go-template) on the
// objects as the API returns them.
type output struct {
	flags *genericclioptions.PrintFlags
}

func addOutputFlag(cmd *cobra.Command) *output {
	flags := genericclioptions.NewPrintFlags("")
	flags.AddFlags(cmd)
	cmd.Flags().Lookup("output").Usage = "Output format: wide, or one of (" +
		strings.Join(flags.AllowedFormats(), ", ") + ") for the objects as the API returns them."
	return &output{flags: flags}
}

func (o *output) format() string { return *o.flags.OutputFormat }

func (o *output) wide() bool { return o.format() == "wide" }

// table says whether the output is one of our tables.
func (o *output) table() bool { return o.format() == "" || o.wide() }

// check refuses an unknown format before the cluster is asked.
func (o *output) check() error {
	if o.table() {
		return nil
	}
	if _, err := o.printer(); err != nil {
		return usageError{fmt.Errorf("--output %q: %w", o.format(), formatError(err))}
	}
	return nil
}

// formatError is cli-runtime's refusal of a format, naming ours (wide)
// among those it has.
func formatError(err error) error {
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return fmt.Errorf("not a format (%s)", strings.Join(append([]string{"wide"}, genericclioptions.NewPrintFlags("").AllowedFormats()...), ", "))
	}
	return err
}

// printer is cli-runtime's printer of the format, setting each object's
// apiVersion and kind from the scheme as the API server sends them.
func (o *output) printer() (printers.ResourcePrinter, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	p, err := o.flags.ToPrinter()
	if err != nil {
		return nil, err
	}
	return printers.NewTypeSetter(scheme).ToPrinter(p), nil
}

// print prints obj with cli-runtime's printer of the format.
func (o *output) print(obj runtime.Object, w io.Writer) error {
	p, err := o.printer()
	if err != nil {
		return err
	}
	return p.PrintObj(obj, w)
}

// dash is s, or "-" for nothing.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// age is how long ago t was, as kubectl says it ("5m", "3d"), or "-".
func age(t time.Time, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return duration.HumanDuration(now.Sub(t))
}

// row writes one tab-separated row.
func row(w io.Writer, cells ...string) {
	fmt.Fprintln(w, strings.Join(cells, "\t"))
}

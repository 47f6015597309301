// SPDX-License-Identifier: Apache-2.0

// Package cmdline is what the Go programs' command lines share: the usage
// text in the form of rocenet's other programs (GNU style, which help2man
// turns into the man page) and klog's verbosity as a flag of their own.
package cmdline

import (
	"flag"
	"fmt"
	"io"

	"k8s.io/klog/v2"
)

// PrintUsage prints head (the usage line and what the program does,
// ending with "Flags:\n") and then every flag of fs with its default.
func PrintUsage(out io.Writer, head string, fs *flag.FlagSet) {
	fmt.Fprint(out, head)
	width := 0
	fs.VisitAll(func(f *flag.Flag) { width = max(width, len(f.Name)) })
	fs.VisitAll(func(f *flag.Flag) {
		fmt.Fprintf(out, "  --%-*s  %s", width, f.Name, f.Usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(out, " (default: %q)", f.DefValue)
		}
		fmt.Fprintln(out)
	})
}

// AddVerbosity adds -v, klog's log verbosity, to fs.
func AddVerbosity(fs *flag.FlagSet) {
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	fs.Var(klogFlag{klogFlags, "v"}, "v", "log verbosity")
}

// klogFlag forwards one flag to klog's own flag set.
type klogFlag struct {
	fs   *flag.FlagSet
	name string
}

func (v klogFlag) String() string {
	if v.fs == nil {
		return ""
	}
	return v.fs.Lookup(v.name).Value.String()
}

func (v klogFlag) Set(s string) error { return v.fs.Set(v.name, s) }

// SPDX-License-Identifier: Apache-2.0

// Package kubectlplugin is `kubectl rocenet` (and `oc rocenet`): the
// fleet's objects (docs/fleet.md) read for an admin. `status` is the
// RocenetCluster at a glance, `nodes` the RocenetNodes selected by their
// Nodes' labels, `ports NODE` one node's port table, from its RocenetNode
// or, with --live, from rocectl in the node's rocenet pod; `diag` runs
// triage over nodes as RocenetTriages and writes acceptance reports;
// `must-gather` collects the objects, logs and nodes' state of a support
// case into one archive.
//
// The binary's main is one call of Run, which takes the streams and the
// way to reach the cluster as parameters (Env), so the tests run every
// command on a fake client without a process. docs/fleet.md#kubectl-rocenet
// describes the commands and their output.
package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The exit codes, as krew's plugins and kubectl use them.
const (
	ExitOK = 0
	// ExitError: the API server was not reached or refused, an object is
	// missing, or the command run in a pod failed.
	ExitError = 1
	// ExitUsage: an unknown command or flag, a bad value, wrong arguments.
	ExitUsage = 2
)

// DefaultRocenetNamespace is where packaging/kubernetes installs rocenet.
const DefaultRocenetNamespace = "rocenet-system"

// Clients are what the commands reach the cluster through.
type Clients struct {
	// Kube reads RocenetCluster, RocenetNodes, Nodes' metadata and Pods;
	// its scheme has core/v1 and rocenet.io/v1alpha1 (NewScheme).
	Kube client.Client
	// Exec runs a command in a pod's container (`ports --live`,
	// must-gather).
	Exec Executor
	// Logs reads a container's log (must-gather).
	Logs LogReader
}

// Env is everything the plugin takes from outside: main passes the
// process's streams and Connect; the tests buffers and fakes.
type Env struct {
	Streams genericiooptions.IOStreams
	// Connect makes the clients from the kubeconfig flags. A command calls
	// it once, after its arguments are checked, so a usage error never
	// needs a cluster.
	Connect func(*genericclioptions.ConfigFlags) (Clients, error)
	// Version is the program's version (--version).
	Version string
}

// usageError is a mistake in the command line: exit ExitUsage.
type usageError struct{ error }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// runError is a failure past the command line: exit ExitError.
type runError struct{ error }

func (e runError) Unwrap() error { return e.error }

// Run runs the plugin with args (without the program's name) and returns
// its exit code; errors go to env.Streams.ErrOut.
func Run(ctx context.Context, args []string, env Env) int {
	root := NewCommand(ctx, env)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return ExitOK
	}
	var verdict verdictError
	if errors.As(err, &verdict) {
		fmt.Fprintln(env.Streams.ErrOut, verdict.msg)
		return verdict.code
	}
	var failed runError
	if errors.As(err, &failed) {
		fmt.Fprintf(env.Streams.ErrOut, "error: %v\n", failed.error)
		return ExitError
	}
	// Everything else is the command line's: ours (usageError) and
	// cobra's (unknown command or flag, wrong number of arguments).
	fmt.Fprintf(env.Streams.ErrOut, "error: %v\nSee '%s --help' for usage.\n", err, cmd.CommandPath())
	return ExitUsage
}

// options are the flags every command shares.
type options struct {
	env              Env
	config           *genericclioptions.ConfigFlags
	rocenetNamespace string
	clients          *Clients
}

// connect makes the clients once.
func (o *options) connect() (Clients, error) {
	if o.clients == nil {
		c, err := o.env.Connect(o.config)
		if err != nil {
			return Clients{}, err
		}
		o.clients = &c
	}
	return *o.clients, nil
}

// runE makes a command's RunE: its usage errors stay usage errors, any
// other is a failure (ExitError).
func runE(run func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		var usage usageError
		var verdict verdictError
		if err == nil || errors.As(err, &usage) || errors.As(err, &verdict) {
			return err
		}
		return runError{err}
	}
}

var rootLong = `Shows rocenet's scale-out network across the cluster, from the objects
rocenet writes into the Kubernetes API: the RocenetCluster "cluster"
(kept by rocenet-controller) and one RocenetNode per node (written by
each node's rocenet-node-reporter).

Runs as "kubectl rocenet" or "oc rocenet" when kubectl-rocenet is on
PATH, with kubectl's connection flags (--kubeconfig, --context, ...).

Exit codes: 0 success; 1 the API server unreachable or refusing, an
object missing, or the command run in a pod failed; 2 bad usage; diag:
6 a failure found, 7 inconclusive.`

// NewCommand is the root command with its three commands.
func NewCommand(ctx context.Context, env Env) *cobra.Command {
	o := &options{env: env, config: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:   "kubectl-rocenet",
		Short: "Show rocenet's scale-out network across the cluster",
		Long:  rootLong,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl rocenet",
		},
		Version:       env.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// No command: the help, as kubectl prints it.
		Run: func(cmd *cobra.Command, args []string) { _ = cmd.Help() },
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), suggest(cmd, args[0]))
			}
			return nil
		},
	}
	root.SuggestionsMinimumDistance = 2
	root.SetContext(ctx)
	root.SetIn(env.Streams.In)
	root.SetOut(env.Streams.Out)
	root.SetErr(env.Streams.ErrOut)
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return usageError{err} })
	o.config.WrapConfigFn = func(c *rest.Config) *rest.Config {
		c.UserAgent = "kubectl-rocenet/" + env.Version
		return c
	}
	// kubectl's -v is the log's verbosity: --version has no short form.
	root.Flags().Bool("version", false, "Print the version and exit.")
	// kubectl completes a plugin's arguments through kubectl_complete-rocenet,
	// not a command of the plugin.
	root.CompletionOptions.DisableDefaultCmd = true
	o.config.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&o.rocenetNamespace, "rocenet-namespace", DefaultRocenetNamespace,
		"The namespace of rocenet's DaemonSet and rocenet-controller.")
	root.AddCommand(newStatusCommand(o), newNodesCommand(o), newPortsCommand(o), newPoliciesCommand(o), newDiagCommand(o),
		newMustGatherCommand(o), newNetworkCommand(o))
	return root
}

// suggest is cobra's "did you mean" for an unknown command, or nothing.
func suggest(cmd *cobra.Command, typed string) string {
	names := cmd.SuggestionsFor(typed)
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", strings.Join(names, `" or "`))
}

// SPDX-License-Identifier: Apache-2.0

// bundle-check validates an operator bundle directory (manifests/ and
// metadata/, as packaging/olm/make-bundle.py writes it) with the
// validators of github.com/operator-framework/api, the library
// `operator-sdk bundle validate` and OLM itself use: the bundle's
// structure and annotations, the ClusterServiceVersion, the CRDs it owns,
// OperatorHub's fields, capabilities and categories, the other objects,
// good practices, and APIs removed in the Kubernetes version given.
//
// Usage: bundle-check [--k8s-version=1.30] BUNDLE_DIR
// It prints every finding, one a line, and exits 1 on any error (and on
// any warning with --strict), 2 when the bundle cannot be read.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundle-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	k8sVersion := fs.String("k8s-version", "", "the oldest Kubernetes the bundle is for (the CSV's minKubeVersion when empty), for the removed-API check")
	strict := fs.Bool("strict", false, "fail on warnings too")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: bundle-check [--k8s-version=X.Y] [--strict] BUNDLE_DIR")
		return 2
	}
	bundle, err := manifests.GetBundleFromDir(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "bundle-check: %s: %v\n", fs.Arg(0), err)
		return 2
	}
	if bundle.CSV == nil {
		fmt.Fprintf(stderr, "bundle-check: %s: no ClusterServiceVersion\n", fs.Arg(0))
		return 2
	}
	version := *k8sVersion
	if version == "" {
		version = bundle.CSV.Spec.MinKubeVersion
	}
	validators := validation.DefaultBundleValidators.WithValidators(
		validation.OperatorHubV2Validator,
		validation.StandardCapabilitiesValidator,
		validation.StandardCategoriesValidator,
		validation.ObjectValidator,
		validation.GoodPracticesValidator,
		validation.AlphaDeprecatedAPIsValidator,
	)
	// The validators take their options as a map among the objects.
	objects := append(bundle.ObjectsToValidate(), map[string]string{"k8s-version": version})
	failed := false
	for _, result := range validators.Validate(objects...) {
		for _, e := range result.Errors {
			fmt.Fprintf(stdout, "%s %s: %s\n", e.Level, result.Name, e)
			if e.Level == errors.LevelError || *strict {
				failed = true
			}
		}
	}
	fmt.Fprintf(stdout, "bundle %s: %d owned CRDs, %d other objects\n",
		bundle.Name, len(bundle.V1CRDs), len(bundle.Objects))
	if failed {
		return 1
	}
	return 0
}

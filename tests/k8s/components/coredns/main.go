// SPDX-License-Identifier: Apache-2.0

// Command coredns is CoreDNS with the plugins the test cluster's DNS uses
// alone: the cluster's names from the API server (kubernetes), on the
// addresses the nodes reach the host by (bind), with errors and queries
// logged. CoreDNS' own program compiles in every plugin, the clouds' with
// their SDKs; its documented way to choose them is a main package of one's
// own that sets the directives.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

func init() {
	// In the order CoreDNS runs them (its plugin.cfg).
	dnsserver.Directives = []string{"bind", "errors", "log", "kubernetes"}
}

func main() {
	coremain.Run()
}

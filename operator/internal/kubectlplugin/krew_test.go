// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krewPlugin is krew's Plugin manifest, krew.googlecontainertools.github.com/v1alpha2,
// with the fields rocenet's uses; read strictly, so a misspelled one fails.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		Homepage         string `json:"homepage"`
		ShortDescription string `json:"shortDescription"`
		Description      string `json:"description"`
		Caveats          string `json:"caveats"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			Sha256 string `json:"sha256"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
			Bin string `json:"bin"`
		} `json:"platforms"`
	} `json:"spec"`
}

// The krew manifest installs, on linux/amd64 and linux/arm64, the binary
// CMake builds from ./operator/cmd/kubectl-rocenet, at the tree's version,
// under the name kubectl looks for (kubectl-<plugin name>).
func TestKrewManifestNamesTheBinaryTheBuildMakes(t *testing.T) {
	data, err := os.ReadFile("../../../packaging/krew/rocenet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m krewPlugin
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		t.Fatalf("packaging/krew/rocenet.yaml: %v", err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" {
		t.Errorf("apiVersion %q, kind %q", m.APIVersion, m.Kind)
	}
	if m.Spec.ShortDescription == "" || m.Spec.Homepage == "" {
		t.Errorf("no shortDescription or homepage")
	}

	cmake, err := os.ReadFile("../../CMakeLists.txt")
	if err != nil {
		t.Fatal(err)
	}
	target := regexp.MustCompile(`(?m)^\s*rocenet_go_program\((\S+)\s+\./operator/cmd/kubectl-rocenet\)`).FindSubmatch(cmake)
	if target == nil {
		t.Fatal("operator/CMakeLists.txt builds no program from ./operator/cmd/kubectl-rocenet")
	}
	bin := string(target[1])
	if bin != "kubectl-"+m.Metadata.Name {
		t.Errorf("CMake builds %s; kubectl runs plugin %q as kubectl-%s", bin, m.Metadata.Name, m.Metadata.Name)
	}

	top, err := os.ReadFile("../../../CMakeLists.txt")
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`project\(rocenet VERSION ([0-9.]+)`).FindSubmatch(top)
	if version == nil || m.Spec.Version != "v"+string(version[1]) {
		t.Errorf("spec.version %q, CMakeLists.txt's %q", m.Spec.Version, version)
	}

	var platforms []string
	sha256 := regexp.MustCompile(`^[0-9a-f]{64}$`)
	for _, p := range m.Spec.Platforms {
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		platforms = append(platforms, os+"/"+arch)
		if p.Bin != bin {
			t.Errorf("%s/%s: bin %q, want %q", os, arch, p.Bin, bin)
		}
		if !strings.HasPrefix(p.URI, "https://") || !strings.HasSuffix(p.URI, "_"+os+"_"+arch+".tar.gz") ||
			!strings.Contains(p.URI, m.Spec.Version) {
			t.Errorf("%s/%s: uri %q is not the release's archive of %s for it", os, arch, p.URI, m.Spec.Version)
		}
		if !sha256.MatchString(p.Sha256) {
			t.Errorf("%s/%s: sha256 %q is not 64 hex digits", os, arch, p.Sha256)
		}
		copied := false
		for _, f := range p.Files {
			copied = copied || f.From == bin
		}
		if !copied {
			t.Errorf("%s/%s: the archive's %s is not among the files installed", os, arch, bin)
		}
	}
	sort.Strings(platforms)
	if strings.Join(platforms, " ") != "linux/amd64 linux/arm64" {
		t.Errorf("platforms %q, want linux/amd64 and linux/arm64", platforms)
	}
}

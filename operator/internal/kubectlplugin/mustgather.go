// SPDX-License-Identifier: Apache-2.0

package kubectlplugin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	utilexec "k8s.io/client-go/util/exec"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "rocenet.io/operator/api/v1alpha1"
)

// LogReader streams a container's log, as kubectl logs does: the real one
// is the API server's pods/log; tests serve text.
type LogReader interface {
	Logs(ctx context.Context, namespace, pod, container string, previous bool) (io.ReadCloser, error)
}

// GatherCommands are the rocectl commands must-gather runs in each node's
// rocenetd container, by the file each one's JSON goes to.
var GatherCommands = map[string][]string{
	"ports.json":        {RocectlPath, "--output=json", "ports"},
	"health.json":       {RocectlPath, "--output=json", "health"},
	"addressing.json":   {RocectlPath, "--output=json", "addressing"},
	"neighbors.json":    {RocectlPath, "--output=json", "neighbors"},
	"attachments.json":  {RocectlPath, "--output=json", "attachments"},
	"reservations.json": {RocectlPath, "--output=json", "reservations"},
	"topology.json":     {RocectlPath, "--output=json", "topology"},
}

// gatherWorkers bounds the nodes asked at once: at 512 nodes, each exec a
// stream through the API server to a kubelet.
const gatherWorkers = 16

var mustGatherLong = `Collects what a support case needs into one gzipped tar: rocenet's
objects (the RocenetCluster, every RocenetNode, RocenetNodePolicy,
RocenetNetwork and RocenetTriage, and the Nodes), what runs in rocenet's namespace (its
Deployments, DaemonSets, pods, ConfigMaps and events; never a Secret), the
log of every container there (and of its previous run after a restart),
and each node's own state as rocectl prints it in the node's rocenet pod
(ports, health, addressing, neighbors, attachments, reservations,
topology).

What cannot be read (a node whose pod does not run, a log gone, an exec
refused) is listed in the archive's errors.txt and on stderr, and the rest
is still collected; the command fails only when nothing of rocenet can be
read. Needs get and list on the objects, pods/log and pods/exec in
rocenet's namespace (cluster-admin has them).`

// newMustGatherCommand is `kubectl rocenet must-gather`.
func newMustGatherCommand(o *options) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "must-gather [-o FILE]",
		Short: "Collect rocenet's objects, logs and each node's state into one archive",
		Long:  mustGatherLong,
		Args:  cobra.NoArgs,
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			clients, err := o.connect()
			if err != nil {
				return err
			}
			now := time.Now().UTC()
			name := "rocenet-must-gather-" + now.Format("20060102-150405")
			if out == "" {
				out = name + ".tar.gz"
			}
			g := &gatherer{clients: clients, namespace: o.rocenetNamespace, top: name, now: now}
			if err := g.gather(cmd.Context()); err != nil {
				return err
			}
			if err := g.write(out); err != nil {
				return err
			}
			fmt.Fprintf(o.env.Streams.Out, "wrote %s: %d files, %d nodes asked\n", out, len(g.files), g.nodes)
			for _, e := range g.errors {
				fmt.Fprintf(o.env.Streams.ErrOut, "not collected: %s\n", e)
			}
			return nil
		}),
	}
	cmd.Flags().StringVarP(&out, "output", "o", "",
		"The archive to write (default rocenet-must-gather-<UTC time>.tar.gz in the current directory).")
	return cmd
}

// gatherer collects the archive's files in memory, then writes them.
type gatherer struct {
	clients   Clients
	namespace string
	top       string
	now       time.Time

	mu     sync.Mutex
	files  map[string][]byte
	errors []string
	nodes  int
}

func (g *gatherer) add(name string, data []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.files == nil {
		g.files = map[string][]byte{}
	}
	g.files[path.Join(g.top, name)] = data
}

func (g *gatherer) fail(format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.errors = append(g.errors, fmt.Sprintf(format, args...))
}

// gather reads everything; an error only when nothing of rocenet could be
// read (the API server unreachable or refusing every read).
func (g *gatherer) gather(ctx context.Context) error {
	ns := client.InNamespace(g.namespace)
	read := 0
	for _, item := range []struct {
		file string
		list client.ObjectList
		opts []client.ListOption
	}{
		{"cluster/rocenetclusters.yaml", &v1alpha1.RocenetClusterList{}, nil},
		{"cluster/rocenetnodes.yaml", &v1alpha1.RocenetNodeList{}, nil},
		{"cluster/rocenetnodepolicies.yaml", &v1alpha1.RocenetNodePolicyList{}, nil},
		{"cluster/rocenettriages.yaml", &v1alpha1.RocenetTriageList{}, nil},
		{"cluster/rocenetnetworks.yaml", &v1alpha1.RocenetNetworkList{}, nil},
		{"cluster/nodes.yaml", &corev1.NodeList{}, nil},
		{"namespace/deployments.yaml", &appsv1.DeploymentList{}, []client.ListOption{ns}},
		{"namespace/daemonsets.yaml", &appsv1.DaemonSetList{}, []client.ListOption{ns}},
		{"namespace/pods.yaml", &corev1.PodList{}, []client.ListOption{ns}},
		{"namespace/configmaps.yaml", &corev1.ConfigMapList{}, []client.ListOption{ns}},
		{"namespace/events.yaml", &corev1.EventList{}, []client.ListOption{ns}},
	} {
		if err := g.clients.Kube.List(ctx, item.list, item.opts...); err != nil {
			g.fail("%s: %v", item.file, apiError("listing "+strings.TrimSuffix(path.Base(item.file), ".yaml"), err))
			continue
		}
		data, err := toYAML(item.list)
		if err != nil {
			g.fail("%s: %v", item.file, err)
			continue
		}
		g.add(item.file, data)
		read++
	}
	if read == 0 {
		return fmt.Errorf("nothing of rocenet could be read: %s", strings.Join(g.errors, "; "))
	}
	var pods corev1.PodList
	if err := g.clients.Kube.List(ctx, &pods, ns); err == nil {
		g.logs(ctx, pods.Items)
		g.nodeStates(ctx, pods.Items)
	}
	g.add("README.txt", g.readme())
	if len(g.errors) > 0 {
		g.add("errors.txt", []byte(strings.Join(g.errors, "\n")+"\n"))
	}
	return nil
}

// logs is every container's log of the namespace's pods, and the previous
// run's of each container that restarted.
func (g *gatherer) logs(ctx context.Context, pods []corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		statuses := map[string]int32{}
		for _, s := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			statuses[s.Name] = s.RestartCount
		}
		var containers []string
		for _, c := range p.Spec.InitContainers {
			containers = append(containers, c.Name)
		}
		for _, c := range p.Spec.Containers {
			containers = append(containers, c.Name)
		}
		for _, c := range containers {
			g.log(ctx, p, c, false)
			if statuses[c] > 0 {
				g.log(ctx, p, c, true)
			}
		}
	}
}

func (g *gatherer) log(ctx context.Context, p *corev1.Pod, container string, previous bool) {
	file := path.Join("logs", p.Name, container+".log")
	if previous {
		file = path.Join("logs", p.Name, container+".previous.log")
	}
	r, err := g.clients.Logs.Logs(ctx, p.Namespace, p.Name, container, previous)
	if err == nil {
		var data []byte
		data, err = io.ReadAll(r)
		_ = r.Close()
		if err == nil {
			g.add(file, data)
			return
		}
	}
	g.fail("%s: the log of %s/%s container %s: %v", file, p.Namespace, p.Name, container, err)
}

// nodeStates runs GatherCommands in the rocenetd container of each
// running node pod, gatherWorkers nodes at a time.
func (g *gatherer) nodeStates(ctx context.Context, pods []corev1.Pod) {
	selector, _ := labels.Parse(NodePodLabels)
	var todo []*corev1.Pod
	for i := range pods {
		p := &pods[i]
		if !selector.Matches(labels.Set(p.Labels)) {
			continue
		}
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			g.fail("nodes/%s: rocenet pod %s/%s is %s, not Running", p.Spec.NodeName, p.Namespace, p.Name, p.Status.Phase)
			continue
		}
		todo = append(todo, p)
	}
	g.nodes = len(todo)
	files := make([]string, 0, len(GatherCommands))
	for f := range GatherCommands {
		files = append(files, f)
	}
	sort.Strings(files)
	work := make(chan *corev1.Pod)
	var wg sync.WaitGroup
	for range min(gatherWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				for _, f := range files {
					g.nodeState(ctx, p, f, GatherCommands[f])
				}
			}
		}()
	}
	for _, p := range todo {
		work <- p
	}
	close(work)
	wg.Wait()
}

func (g *gatherer) nodeState(ctx context.Context, p *corev1.Pod, file string, command []string) {
	var stdout, stderr bytes.Buffer
	err := g.clients.Exec.Exec(ctx, p.Namespace, p.Name, RocenetdContainer, command, &stdout, &stderr)
	name := path.Join("nodes", p.Spec.NodeName, file)
	if err != nil {
		what := fmt.Sprintf("rocectl %s in pod %s/%s", strings.Join(command[2:], " "), p.Namespace, p.Name)
		var exit utilexec.ExitError
		if errors.As(err, &exit) {
			g.fail("%s: %s: exit code %d: %s", name, what, exit.ExitStatus(), strings.TrimSpace(stderr.String()))
		} else {
			g.fail("%s: %v", name, apiError("exec "+what, err))
		}
		if stdout.Len() == 0 {
			return
		}
	}
	g.add(name, stdout.Bytes())
}

func (g *gatherer) readme() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "rocenet must-gather, %s (kubectl rocenet must-gather)\n\n", g.now.Format(time.RFC3339))
	fmt.Fprintf(&b, "cluster/     rocenet's objects and the Nodes, as the API returns them\n")
	fmt.Fprintf(&b, "namespace/   what runs in %s (no Secret)\n", g.namespace)
	fmt.Fprintf(&b, "logs/        every container's log there, POD/CONTAINER.log (.previous.log: before its last restart)\n")
	fmt.Fprintf(&b, "nodes/       each node's state as rocectl prints it there, NODE/COMMAND.json (%d nodes)\n", g.nodes)
	if len(g.errors) > 0 {
		fmt.Fprintf(&b, "errors.txt   what could not be collected (%d)\n", len(g.errors))
	}
	return []byte(b.String())
}

// write is the gzipped tar of the files, made beside out and renamed over
// it: a failure leaves no half archive.
func (g *gatherer) write(out string) error {
	tmp, err := os.CreateTemp(path.Dir(out), "."+path.Base(out)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	defer os.Remove(tmp.Name())
	zw := gzip.NewWriter(tmp)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(g.files))
	for n := range g.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		data := g.files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(data)), ModTime: g.now,
			Typeflag: tar.TypeReg}); err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
		if _, err := tw.Write(data); err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
	}
	for _, c := range []io.Closer{tw, zw} {
		if err := c.Close(); err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}

// toYAML is a list as kubectl get -o yaml prints it: apiVersion and kind
// on every item.
func toYAML(list client.ObjectList) ([]byte, error) {
	scheme, err := NewScheme()
	if err != nil {
		return nil, err
	}
	if err := meta.EachListItem(list, func(obj runtime.Object) error {
		gvks, _, err := scheme.ObjectKinds(obj)
		if err != nil {
			return err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		return nil
	}); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	p := printers.NewTypeSetter(scheme).ToPrinter(&printers.YAMLPrinter{})
	if err := p.PrintObj(list.(runtime.Object), &b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"net/netip"
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	pb "rocenet.io/plugins/internal/rocenetpb"
)

// Attribute names. The unqualified ones belong to the driver's domain
// (rocenet.io/<name> in a DeviceClass or claim selector).
const (
	AttrPCIeRoot    resourceapi.QualifiedName = "resource.kubernetes.io/pcieRoot"
	AttrPCIBusID    resourceapi.QualifiedName = "resource.kubernetes.io/pciBusID"
	AttrNUMANode    resourceapi.QualifiedName = "resource.kubernetes.io/numaNode"
	AttrCNIDeviceID resourceapi.QualifiedName = "k8s.cni.cncf.io/deviceID"
	AttrCNIResource resourceapi.QualifiedName = "k8s.cni.cncf.io/resourceName"

	AttrPortID        resourceapi.QualifiedName = "portID"
	AttrInterface     resourceapi.QualifiedName = "interface"
	AttrMAC           resourceapi.QualifiedName = "mac"
	AttrRail          resourceapi.QualifiedName = "rail"
	AttrModule        resourceapi.QualifiedName = "module"
	AttrNICIndex      resourceapi.QualifiedName = "nicIndex"
	AttrIPv4          resourceapi.QualifiedName = "ipv4"
	AttrIPv4Prefix    resourceapi.QualifiedName = "ipv4PrefixLength"
	AttrGIDIndex      resourceapi.QualifiedName = "gidIndex"
	AttrRDMADevice    resourceapi.QualifiedName = "rdmaDevice"
	AttrDriver        resourceapi.QualifiedName = "driver"
	AttrLinkSpeedMbps resourceapi.QualifiedName = "linkSpeedMbps"
	AttrHealthy       resourceapi.QualifiedName = "healthy"
	AttrGaudi         resourceapi.QualifiedName = "gaudi"
)

// TaintKey marks a port rocenetd finds unhealthy; its value is the port's
// failing conditions.
const TaintKey = "rocenet.io/unhealthy"

// DeviceName turns a port id ("0000:19:00.0-p0", "mac-b0:fd:0b:00:00:01",
// "if-eth1") into a device name, which must be a DNS label: lower case,
// every run of other characters one '-', at most 63 characters.
func DeviceName(portID string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(portID) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.TrimRight(b.String(), "-")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	return name
}

// DeviceOptions is what the published devices depend on besides the ports.
type DeviceOptions struct {
	// The CNI resource name Multus matches a NetworkAttachmentDefinition's
	// k8s.v1.cni.cncf.io/resourceName against.
	ResourceName string
	// The effect of the taint on an unhealthy port; empty: no taint.
	TaintEffect resourceapi.DeviceTaintEffect
}

// PortView is one port as the DRA side sees it: the port with its health
// and address plan, joined from one node snapshot.
type PortView struct {
	Port   *pb.Port
	Health *pb.PortHealth
	Plan   *pb.PortPlan
	// The device name in the ResourceSlice.
	Device string
}

// Healthy reports whether rocenetd finds the port healthy; a port without a
// health entry is not.
func (v PortView) Healthy() bool { return v.Health != nil && v.Health.GetHealthy() }

// Gaudi reports whether the port is a Gaudi scale-out port.
func (v PortView) Gaudi() bool { return v.Port.GetDiscovery() == pb.Discovery_DISCOVERY_GAUDI_SYSFS }

// FailingConditions names the conditions that make the port unhealthy,
// comma-separated (advisory ones left out).
func (v PortView) FailingConditions() string {
	var types []string
	for _, c := range v.Health.GetConditions() {
		if !c.GetAdvisory() {
			types = append(types, c.GetType())
		}
	}
	return strings.Join(types, ",")
}

// Ports joins a snapshot's ports, health and plans by port id, in the
// snapshot's port order. Two ports whose ids map to the same device name
// keep the first; the second is left out (and logged by the caller).
func Ports(snapshot *pb.PortSnapshot) (views []PortView, clashes []string) {
	health := map[string]*pb.PortHealth{}
	for _, h := range snapshot.GetHealth().GetPorts() {
		health[h.GetPortId()] = h
	}
	plans := map[string]*pb.PortPlan{}
	for _, p := range snapshot.GetAddressing().GetPlans() {
		plans[p.GetPortId()] = p
	}
	seen := map[string]string{}
	for _, port := range snapshot.GetPorts() {
		name := DeviceName(port.GetId())
		if name == "" {
			clashes = append(clashes, port.GetId())
			continue
		}
		if other, ok := seen[name]; ok {
			clashes = append(clashes, port.GetId()+" (device name "+name+" is "+other+"'s)")
			continue
		}
		seen[name] = port.GetId()
		views = append(views, PortView{Port: port, Health: health[port.GetId()], Plan: plans[port.GetId()], Device: name})
	}
	return views, clashes
}

// Devices is the ResourceSlice content for the ports: one device per port,
// sorted by device name.
func Devices(views []PortView, opts DeviceOptions) []resourceapi.Device {
	devices := make([]resourceapi.Device, 0, len(views))
	for _, v := range views {
		devices = append(devices, device(v, opts))
	}
	sort.Slice(devices, func(i, j int) bool { return devices[i].Name < devices[j].Name })
	return devices
}

func str(s string) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{StringValue: ptr.To(s)}
}
func num(i int64) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{IntValue: ptr.To(i)}
}
func flag(b bool) resourceapi.DeviceAttribute {
	return resourceapi.DeviceAttribute{BoolValue: ptr.To(b)}
}

func device(v PortView, opts DeviceOptions) resourceapi.Device {
	p := v.Port
	attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		AttrCNIDeviceID: str(p.GetId()),
		AttrPortID:      str(p.GetId()),
		AttrInterface:   str(p.GetName()),
		AttrHealthy:     flag(v.Healthy()),
		AttrGaudi:       flag(v.Gaudi()),
	}
	if opts.ResourceName != "" {
		attrs[AttrCNIResource] = str(opts.ResourceName)
	}
	if p.GetPcieRoot() != "" {
		attrs[AttrPCIeRoot] = str(p.GetPcieRoot())
	}
	if p.GetPciAddress() != "" {
		attrs[AttrPCIBusID] = str(p.GetPciAddress())
	}
	// The standard attribute is left out for a device without NUMA affinity.
	if p.GetNumaNode() >= 0 && p.GetPciAddress() != "" {
		attrs[AttrNUMANode] = num(int64(p.GetNumaNode()))
	}
	if mac := p.GetPermanentMac(); mac != "" {
		attrs[AttrMAC] = str(mac)
	} else if p.GetMac() != "" {
		attrs[AttrMAC] = str(p.GetMac())
	}
	if p.GetRail() >= 0 {
		attrs[AttrRail] = num(int64(p.GetRail()))
	}
	if p.GetModuleId() >= 0 {
		attrs[AttrModule] = num(int64(p.GetModuleId()))
	}
	if p.GetPortIndex() >= 0 {
		attrs[AttrNICIndex] = num(int64(p.GetPortIndex()))
	}
	if prefix, ok := localPrefix(v.Plan); ok {
		attrs[AttrIPv4] = str(prefix.Addr().String())
		attrs[AttrIPv4Prefix] = num(int64(prefix.Bits()))
	}
	if rdma := p.GetRdma(); rdma != nil && rdma.GetDevice() != "" {
		attrs[AttrRDMADevice] = str(rdma.GetDevice())
		if rdma.GetGidIndex() >= 0 {
			attrs[AttrGIDIndex] = num(int64(rdma.GetGidIndex()))
		}
	}
	if p.GetDriver() != "" {
		attrs[AttrDriver] = str(p.GetDriver())
	}
	if p.GetSpeedMbps() > 0 {
		attrs[AttrLinkSpeedMbps] = num(int64(p.GetSpeedMbps()))
	}
	d := resourceapi.Device{Name: v.Device, Attributes: attrs}
	if !v.Healthy() && opts.TaintEffect != "" {
		value := v.FailingConditions()
		if value == "" {
			value = "Unhealthy"
		}
		d.Taints = []resourceapi.DeviceTaint{{Key: TaintKey, Value: taintValue(value), Effect: opts.TaintEffect}}
	}
	return d
}

// localPrefix is the port's address ("10.200.10.1/30"): the one rocenetd
// applied, else the one a ready plan asks for.
func localPrefix(plan *pb.PortPlan) (netip.Prefix, bool) {
	local := ""
	if plan.GetState() == pb.PlanState_PLAN_STATE_READY {
		local = plan.GetLocal()
	}
	if applied := plan.GetApplied(); applied != nil && applied.GetLocal() != "" {
		local = applied.GetLocal()
	}
	if local == "" {
		return netip.Prefix{}, false
	}
	prefix, err := netip.ParsePrefix(local)
	if err != nil || !prefix.Addr().Is4() {
		return netip.Prefix{}, false
	}
	return prefix, true
}

// taintValue fits a taint value's rules: at most 63 characters of
// [A-Za-z0-9._-], starting and ending with an alphanumeric.
func taintValue(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '.' || r == '_' || r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	v := b.String()
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "._-")
}

// SPDX-License-Identifier: Apache-2.0

// Package rocenetpb is the Go code of rocenetd's gRPC API (proto/rocenet/v1),
// the part the DRA plugin speaks: the node stream (PortDiscovery), health,
// addressing plans, attachments and reservations; and the reporter's
// Uninstall (Lifecycle).
//
// The .pb.go files are generated: `go generate ./plugins/...`
// writes them with the protoc-gen-go and protoc-gen-go-grpc that go.mod
// pins (tool directives) and Debian's protoc. The test
// proto_fresh_test.go fails when they differ from what the .proto files
// generate now.
package rocenetpb

//go:generate sh ./generate.sh

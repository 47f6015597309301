// SPDX-License-Identifier: Apache-2.0
// rocenet-kubelet-peer: a stand-in for kubelet's device manager, for tests.
//
//   rocenet-kubelet-peer <device-plugins dir>
//
// Serves v1beta1.Registration on <dir>/kubelet.sock. On Register it dials
// the plugin's endpoint in <dir> as kubelet does, calls
// GetDevicePluginOptions and keeps a ListAndWatch stream open. Everything
// it sees goes to stdout as one JSON object per line:
//   {"event":"listening"}
//   {"event":"register","request":{...}}
//   {"event":"options","response":{...}}
//   {"event":"devices","devices":[{"ID":..,"health":..,"topology":..}]}
//   {"event":"stream_end","code":N,"message":".."}
// Commands on stdin, each answered with one line:
//   allocate id1,id2[;id3]           containers separated by ';'
//     -> {"event":"allocate","ok":true,"response":{...}} or
//        {"event":"allocate","ok":false,"code":N,"message":".."}
//     a successful allocate is a pod of its own, "pod":"pod-N" in the
//     answer, whose containers hold the devices until it is deleted
//   preferred available=a,b,c must=a size=2
//     -> {"event":"preferred","ok":true,"response":{...}}
//   delete pod-N                     the pod is gone: its devices are free
//     -> {"event":"delete","ok":true}
//   quit
// As kubelet does, it also serves v1.PodResourcesLister on
// <dir>/../pod-resources/kubelet.sock: List answers with the pods above.
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "k8s/deviceplugin/v1beta1/api.grpc.pb.h"
#include "k8s/podresources/v1/api.grpc.pb.h"

namespace {

std::mutex out_mu;

void Emit(const std::string& line) {
  std::lock_guard<std::mutex> lock(out_mu);
  std::cout << line << std::endl;
}

std::string ToJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(m, &out, options).ok()) return "null";
  return out;
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

class Peer;

class RegistrationService final : public v1beta1::Registration::Service {
 public:
  explicit RegistrationService(Peer* peer) : peer_(peer) {}
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty*) override;

 private:
  Peer* peer_;
};

class Peer {
 public:
  explicit Peer(std::string dir) : dir_(std::move(dir)) {}

  // Like kubelet: answer Register at once, dial the plugin afterwards.
  void OnRegister(const v1beta1::RegisterRequest& request) {
    Emit("{\"event\":\"register\",\"request\":" + ToJson(request) + "}");
    std::lock_guard<std::mutex> lock(mu_);
    resource_name_ = request.resource_name();
    if (stream_ctx_) stream_ctx_->TryCancel();
    std::string endpoint = dir_ + "/" + request.endpoint();
    threads_.emplace_back([this, endpoint] { Connect(endpoint); });
  }

  void Connect(const std::string& endpoint) {
    auto channel = grpc::CreateChannel("unix:" + endpoint, grpc::InsecureChannelCredentials());
    std::shared_ptr<v1beta1::DevicePlugin::Stub> stub = v1beta1::DevicePlugin::NewStub(channel);
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      v1beta1::DevicePluginOptions options;
      grpc::Status s = stub->GetDevicePluginOptions(&ctx, v1beta1::Empty(), &options);
      if (!s.ok()) {
        Emit("{\"event\":\"options_failed\",\"code\":" + std::to_string(s.error_code()) +
             ",\"message\":" + Quote(s.error_message()) + "}");
        return;
      }
      Emit("{\"event\":\"options\",\"response\":" + ToJson(options) + "}");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      stub_ = stub;
    }
    auto ctx = std::make_shared<grpc::ClientContext>();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stream_ctx_ = ctx;
    }
    auto reader = stub->ListAndWatch(ctx.get(), v1beta1::Empty());
    v1beta1::ListAndWatchResponse response;
    while (reader->Read(&response)) {
      std::string json = ToJson(response);
      // {"devices":[...]} -> {"event":"devices","devices":[...]}
      Emit("{\"event\":\"devices\"," + json.substr(1));
    }
    grpc::Status s = reader->Finish();
    Emit("{\"event\":\"stream_end\",\"code\":" + std::to_string(s.error_code()) +
         ",\"message\":" + Quote(s.error_message()) + "}");
  }

  std::shared_ptr<v1beta1::DevicePlugin::Stub> CurrentStub() {
    std::lock_guard<std::mutex> lock(mu_);
    return stub_;
  }

  // The pods holding devices, as kubelet's PodResources List shows them.
  v1::ListPodResourcesResponse PodResources() {
    std::lock_guard<std::mutex> lock(mu_);
    return pods_;
  }

  void Command(const std::string& line) {
    std::vector<std::string> words = Split(line, ' ');
    if (words.empty()) return;
    if (words[0] == "delete") {
      std::lock_guard<std::mutex> lock(mu_);
      auto* pods = pods_.mutable_pod_resources();
      for (int i = 0; i < pods->size(); ++i) {
        if (words.size() > 1 && pods->Get(i).name() == words[1]) {
          pods->DeleteSubrange(i, 1);
          Emit("{\"event\":\"delete\",\"ok\":true}");
          return;
        }
      }
      Emit("{\"event\":\"delete\",\"ok\":false,\"message\":\"no such pod\"}");
      return;
    }
    std::shared_ptr<v1beta1::DevicePlugin::Stub> raw = CurrentStub();
    if (raw == nullptr) {
      Emit("{\"event\":" + Quote(words[0]) +
           ",\"ok\":false,\"code\":14,\"message\":" + Quote("no plugin registered") + "}");
      return;
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Status s;
    std::string response_json;
    if (words[0] == "allocate") {
      v1beta1::AllocateRequest request;
      for (const std::string& container : Split(words.size() > 1 ? words[1] : "", ';')) {
        auto* c = request.add_container_requests();
        for (const std::string& id : Split(container, ',')) c->add_devices_ids(id);
      }
      v1beta1::AllocateResponse response;
      s = raw->Allocate(&ctx, request, &response);
      response_json = ToJson(response);
      if (s.ok()) response_json += ",\"pod\":" + Quote(RecordPod(request));
    } else if (words[0] == "preferred") {
      v1beta1::PreferredAllocationRequest request;
      auto* c = request.add_container_requests();
      for (size_t i = 1; i < words.size(); ++i) {
        auto eq = words[i].find('=');
        if (eq == std::string::npos) continue;
        std::string key = words[i].substr(0, eq), value = words[i].substr(eq + 1);
        if (key == "available") {
          for (const std::string& id : Split(value, ',')) c->add_available_deviceids(id);
        } else if (key == "must") {
          for (const std::string& id : Split(value, ',')) c->add_must_include_deviceids(id);
        } else if (key == "size") {
          c->set_allocation_size(std::stoi(value));
        }
      }
      v1beta1::PreferredAllocationResponse response;
      s = raw->GetPreferredAllocation(&ctx, request, &response);
      response_json = ToJson(response);
    } else {
      Emit("{\"event\":\"error\",\"message\":" + Quote("unknown command " + words[0]) + "}");
      return;
    }
    if (s.ok()) {
      Emit("{\"event\":" + Quote(words[0]) + ",\"ok\":true,\"response\":" + response_json + "}");
    } else {
      Emit("{\"event\":" + Quote(words[0]) + ",\"ok\":false,\"code\":" +
           std::to_string(s.error_code()) + ",\"message\":" + Quote(s.error_message()) + "}");
    }
  }

  void Shutdown() {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_ctx_) stream_ctx_->TryCancel();
  }

 private:
  std::string RecordPod(const v1beta1::AllocateRequest& request) {
    std::lock_guard<std::mutex> lock(mu_);
    v1::PodResources* pod = pods_.add_pod_resources();
    pod->set_name("pod-" + std::to_string(++pod_count_));
    pod->set_namespace_("default");
    for (int i = 0; i < request.container_requests_size(); ++i) {
      v1::ContainerResources* container = pod->add_containers();
      container->set_name("c" + std::to_string(i));
      v1::ContainerDevices* devices = container->add_devices();
      devices->set_resource_name(resource_name_);
      for (const std::string& id : request.container_requests(i).devices_ids()) {
        devices->add_device_ids(id);
      }
    }
    return pod->name();
  }

 public:
  void Join() {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
  }

 private:
  const std::string dir_;
  std::mutex mu_;
  std::shared_ptr<v1beta1::DevicePlugin::Stub> stub_;
  std::shared_ptr<grpc::ClientContext> stream_ctx_;
  std::vector<std::thread> threads_;
  std::string resource_name_;
  v1::ListPodResourcesResponse pods_;
  int pod_count_ = 0;
};

class PodResourcesService final : public v1::PodResourcesLister::Service {
 public:
  explicit PodResourcesService(Peer* peer) : peer_(peer) {}
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    *response = peer_->PodResources();
    return grpc::Status::OK;
  }

 private:
  Peer* peer_;
};

grpc::Status RegistrationService::Register(grpc::ServerContext*,
                                           const v1beta1::RegisterRequest* request,
                                           v1beta1::Empty*) {
  if (request->version() != "v1beta1") {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unsupported version");
  }
  peer_->OnRegister(*request);
  return grpc::Status::OK;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: rocenet-kubelet-peer <device-plugins dir>\n";
    return 2;
  }
  std::string dir = argv[1];
  std::string socket = dir + "/kubelet.sock";
  ::unlink(socket.c_str());
  Peer peer(dir);
  RegistrationService service(&peer);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    std::cerr << "rocenet-kubelet-peer: cannot serve on " << socket << "\n";
    return 1;
  }
  // kubelet's layout: <root>/device-plugins and <root>/pod-resources.
  const std::string resources_dir = dir + "/../pod-resources";
  ::mkdir(resources_dir.c_str(), 0755);
  const std::string resources_socket = resources_dir + "/kubelet.sock";
  ::unlink(resources_socket.c_str());
  PodResourcesService resources(&peer);
  grpc::ServerBuilder resources_builder;
  resources_builder.AddListeningPort("unix:" + resources_socket, grpc::InsecureServerCredentials());
  resources_builder.RegisterService(&resources);
  std::unique_ptr<grpc::Server> resources_server = resources_builder.BuildAndStart();
  if (resources_server == nullptr) {
    std::cerr << "rocenet-kubelet-peer: cannot serve on " << resources_socket << "\n";
    return 1;
  }
  Emit("{\"event\":\"listening\",\"socket\":" + Quote(socket) + "}");
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "quit") break;
    peer.Command(line);
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  resources_server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  peer.Shutdown();
  peer.Join();
  return 0;
}

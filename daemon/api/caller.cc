// SPDX-License-Identifier: Apache-2.0
#include "daemon/api/caller.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "grpc/grpc_security_constants.h"
#include "grpcpp/security/auth_context.h"

namespace rocenet::api {

Caller CallerOf(const grpc::ServerContext& context,
                const os::PeerCredentialsLookup& credentials_of) {
  Caller caller;
  const std::string peer = context.peer();
  int fd = -1;
  if (absl::StartsWith(peer, "fd:") && absl::SimpleAtoi(peer.substr(3), &fd)) {
    // Only connections the daemon accepted on its unix socket are named by
    // descriptor; the call keeps its connection, and so the descriptor, open.
    absl::StatusOr<os::PeerCredentials> cred = credentials_of(fd);
    if (!cred.ok()) {
      caller.description = absl::StrCat(peer, " (", cred.status().message(), ")");
      return caller;
    }
    caller.via = Caller::Via::kUnixSocket;
    caller.uid = cred->uid;
    caller.gid = cred->gid;
    caller.groups = cred->groups;
    caller.description = absl::StrCat("uid ", cred->uid, " (pid ", cred->pid, ")");
    return caller;
  }
  caller.description = peer;
  std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth == nullptr) return caller;
  const std::vector<grpc::string_ref> type =
      auth->FindPropertyValues(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  if (type.empty() ||
      std::string(type.front().data(), type.front().size()) != GRPC_SSL_TRANSPORT_SECURITY_TYPE) {
    return caller;
  }
  caller.via = Caller::Via::kTls;
  // The server asks for client certificates only with verification, so an
  // identity here is one the client CA vouches for.
  caller.verified_client_cert = auth->IsPeerAuthenticated() &&
                                !auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty();
  if (caller.verified_client_cert) {
    std::vector<std::string> names;
    for (const grpc::string_ref& name : auth->GetPeerIdentity()) {
      names.emplace_back(name.data(), name.size());
    }
    caller.description = absl::StrCat(peer, " (", absl::StrJoin(names, ","), ")");
  } else {
    caller.description = absl::StrCat(peer, " (no client certificate)");
  }
  return caller;
}

}  // namespace rocenet::api

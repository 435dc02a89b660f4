#include "server/metrics_http.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace placement::server {
namespace {

constexpr size_t kMaxRequestBytes = 8192;
constexpr int kPollMillis = 100;  // how often the accept loop looks at stopping_
constexpr int kReceiveTimeoutSeconds = 2;

absl::Status Errno(absl::string_view what, const std::string& address) {
  return absl::UnavailableError(absl::StrCat("metrics: cannot ", what, " '", address, "': ", std::strerror(errno)));
}

void SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;  // the scraper went away; nothing to do
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string Response(absl::string_view status, absl::string_view content_type, absl::string_view body) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", content_type, "\r\nContent-Length: ", body.size(),
                      "\r\nConnection: close\r\n\r\n", body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(const std::string& address,
                                                                        std::function<std::string()> body) {
  const size_t colon = address.rfind(':');
  int port_number = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port_number) || port_number < 0 ||
      port_number > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("metrics: '", address, "' is not HOST:PORT"));
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port_number);
  if (const int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found); rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("metrics: cannot resolve '", host, "': ", gai_strerror(rc)));
  }
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0) {
    ::freeaddrinfo(found);
    return Errno("open a socket for", address);
  }
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound = ::bind(fd, found->ai_addr, found->ai_addrlen) == 0 && ::listen(fd, 16) == 0;
  ::freeaddrinfo(found);
  if (!bound) {
    absl::Status s = Errno("listen on", address);
    ::close(fd);
    return s;
  }
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
  const int port = local.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port)
                                               : ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(fd, port, std::move(body)));
}

MetricsEndpoint::MetricsEndpoint(int fd, int port, std::function<std::string()> body)
    : fd_(fd), port_(port), body_(std::move(body)) {
  thread_ = std::thread([this] { Run(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  stopping_.store(true);
  thread_.join();
  ::close(fd_);
}

void MetricsEndpoint::Run() {
  while (!stopping_.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMillis) <= 0) continue;
    const int connection = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    Serve(connection);
    ::close(connection);
  }
}

void MetricsEndpoint::Serve(int connection) {
  timeval timeout{kReceiveTimeoutSeconds, 0};
  ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  std::string request;
  char buffer[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    const ssize_t n = ::recv(connection, buffer, sizeof(buffer), 0);
    if (n <= 0) return;  // closed, or the receive timeout passed
    request.append(buffer, static_cast<size_t>(n));
  }
  const absl::string_view line = absl::string_view(request).substr(0, request.find("\r\n"));
  if (!absl::StartsWith(line, "GET ")) {
    SendAll(connection, Response("405 Method Not Allowed", "text/plain", "only GET\n"));
    return;
  }
  absl::string_view path =
      line.substr(4, line.find(' ', 4) == absl::string_view::npos ? absl::string_view::npos : line.find(' ', 4) - 4);
  path = path.substr(0, path.find('?'));
  if (path != "/metrics") {
    SendAll(connection, Response("404 Not Found", "text/plain", "metrics are at /metrics\n"));
    return;
  }
  SendAll(connection, Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body_()));
}

}  // namespace placement::server

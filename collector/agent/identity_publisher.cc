// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/identity_publisher.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <librdkafka/rdkafkacpp.h>

#include "base/clock.h"
#include "base/log.h"
#include "collector/sources/boot_id.h"
#include "kafka/kafka_conf.h"

namespace faultline {
namespace {

namespace fs = std::filesystem;

std::string FirstLine(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::vector<std::string> InterfaceAddresses() {
  std::set<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char buf[INET6_ADDRSTRLEN] = {};
    if (i->ifa_addr->sa_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, buf, sizeof(buf));
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(i->ifa_addr)->sin6_addr, buf,
                sizeof(buf));
    } else {
      continue;
    }
    out.insert(buf);
  }
  freeifaddrs(list);
  return {out.begin(), out.end()};
}

// <root>/class/infiniband/<dev>/ports/<n>/gids/<index>: "fe80:0000:...";
// unused table entries are all zero.
std::vector<std::string> PortGids(const std::string& sysfs_root) {
  std::set<std::string> out;
  std::error_code ec;
  const fs::path ib = fs::path(sysfs_root) / "class" / "infiniband";
  for (const auto& dev : fs::directory_iterator(ib, ec)) {
    std::error_code pec;
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", pec)) {
      std::error_code gec;
      for (const auto& gid : fs::directory_iterator(port.path() / "gids", gec)) {
        const std::string g = CanonicalAddress(FirstLine(gid.path()));
        if (g.empty() || g == "::") continue;
        out.insert(g);
        if (out.size() >= NodeIdentity::kMaxAddresses) return {out.begin(), out.end()};
      }
    }
  }
  return {out.begin(), out.end()};
}

}  // namespace

NodeIdentity IdentityPublisher::Collect(const Options& o) {
  NodeIdentity id;
  id.node = o.node;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) id.hostname = host;
  // The one boot-id reader (collector/sources/boot_id.h); unreadable: empty.
  if (Result<std::string> boot = ReadBootId(o.boot_id_path); boot.ok()) id.boot_id = *boot;
  id.addresses = InterfaceAddresses();
  if (id.addresses.size() > NodeIdentity::kMaxAddresses) {
    id.addresses.resize(NodeIdentity::kMaxAddresses);
  }
  id.gids = PortGids(o.sysfs_root);
  id.published = o.clock->Now();
  return id;
}

IdentityPublisher::IdentityPublisher(Options options, MetricsRegistry& metrics)
    : options_(std::move(options)),
      published_(metrics.GetCounter("faultline_agent_identity_published_total",
                                    "identity messages queued", {})),
      errors_(metrics.GetCounter("faultline_agent_identity_errors_total",
                                 "identity messages not queued", {})) {}

IdentityPublisher::~IdentityPublisher() { Stop(std::chrono::milliseconds(500)); }

Result<std::unique_ptr<IdentityPublisher>> IdentityPublisher::Create(Options options,
                                                                     MetricsRegistry& metrics) {
  std::unique_ptr<IdentityPublisher> self(new IdentityPublisher(std::move(options), metrics));
  KafkaProperties properties = {{"bootstrap.servers", self->options_.brokers},
                                {"client.id", "faultline-agent-identity"}};
  properties.insert(properties.end(), self->options_.properties.begin(),
                    self->options_.properties.end());
  Result<std::unique_ptr<RdKafka::Conf>> conf = MakeKafkaConf(properties);
  if (!conf.ok()) return conf.error();
  std::string err;
  self->producer_.reset(RdKafka::Producer::create(conf->get(), err));
  if (!self->producer_) return InvalidArgumentError("kafka identity producer: " + err);
  return self;
}

void IdentityPublisher::Publish() {
  const NodeIdentity id = Collect(options_);
  const std::string value = SerializeNodeIdentity(id);
  const RdKafka::ErrorCode e = producer_->produce(
      options_.topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
      const_cast<char*>(value.data()), value.size(), id.node.data(), id.node.size(), 0, nullptr);
  if (e != RdKafka::ERR_NO_ERROR) {
    errors_.Inc();
    LogWarning("identity", "cannot queue the node identity", {{"error", RdKafka::err2str(e)}});
    return;
  }
  published_.Inc();
  LogInfo("identity", "published node identity",
          {{"topic", options_.topic},
           {"addresses", id.addresses.size()},
           {"gids", id.gids.size()},
           {"boot_id", id.boot_id}});
}

void IdentityPublisher::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    lock.unlock();
    Publish();
    producer_->poll(0);
    lock.lock();
    // Wake every second to serve delivery reports; publish every interval.
    const auto next = options_.clock->MonotonicNow() + options_.interval;
    while (!stop_ && options_.clock->MonotonicNow() < next) {
      cv_.wait_for(lock, std::chrono::seconds(1));
      lock.unlock();
      producer_->poll(0);
      lock.lock();
    }
  }
}

void IdentityPublisher::Start() {
  thread_ = std::thread([this] { Run(); });
}

void IdentityPublisher::Stop(std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (producer_) {
    producer_->flush(static_cast<int>(timeout.count()));
    producer_.reset();
  }
}

}  // namespace faultline

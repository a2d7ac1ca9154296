// SPDX-License-Identifier: Apache-2.0
#include "tainter/intake/event_consumer.h"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include "base/fault_event.h"
#include "base/log.h"
#include "kafka/kafka_conf.h"
#include "kafka/kafka_events.h"
#include "tainter/intake/event_consumer_testing.h"

namespace faultline {
namespace {

// Identifies a dead-lettered message in the producer's delivery report.
struct DeadLetterTicket {
  int32_t partition;
  std::uint64_t generation;
  std::int64_t offset;
};

void FreeAll(std::vector<RdKafka::TopicPartition*>& parts) {
  for (RdKafka::TopicPartition* p : parts) delete p;
  parts.clear();
}

}  // namespace

std::chrono::milliseconds MaxPollInterval(const std::map<std::string, std::string>& properties) {
  constexpr std::chrono::milliseconds kDefault{300'000};
  auto it = properties.find("max.poll.interval.ms");
  if (it == properties.end()) return kDefault;
  char* end = nullptr;
  const long long ms = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0' || ms <= 0) return kDefault;
  return std::chrono::milliseconds(ms);
}

class KafkaEventConsumer::Callbacks final : public RdKafka::RebalanceCb,
                                            public KafkaEvents,
                                            public RdKafka::DeliveryReportCb {
 public:
  explicit Callbacks(KafkaEventConsumer& owner) : owner_(owner) {}

  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
      owner_.OnAssign(partitions);
    } else if (err == RdKafka::ERR__REVOKE_PARTITIONS) {
      owner_.OnRevoke(partitions);
    } else {
      LogWarning("kafka", "rebalance error", {{"error", RdKafka::err2str(err)}});
      consumer->unassign();
      owner_.partitions_.clear();
      owner_.assigned_ = 0;
    }
  }

  void OnKafkaError(RdKafka::Event& event) override {
    if (event.err() == RdKafka::ERR__ALL_BROKERS_DOWN) owner_.connected_ = false;
    owner_.m_.KafkaErrors(RdKafka::err2str(event.err())).Inc();
    LogWarning("kafka", "librdkafka error",
               {{"error", RdKafka::err2str(event.err())}, {"detail", event.str()}});
  }

  void dr_cb(RdKafka::Message& message) override {
    std::unique_ptr<DeadLetterTicket> ticket(static_cast<DeadLetterTicket*>(message.msg_opaque()));
    if (message.err() != RdKafka::ERR_NO_ERROR) {
      // Counted and let go: a dead-letter topic that cannot be written must
      // not stop the partition forever.
      owner_.m_.dead_letter_fails.Inc();
      LogError("kafka", "dead-letter write failed",
               {{"error", message.errstr()},
                {"partition", ticket ? ticket->partition : -1},
                {"offset", ticket ? ticket->offset : -1}});
    }
    if (ticket) owner_.Done(ticket->partition, ticket->generation, ticket->offset);
  }

 private:
  KafkaEventConsumer& owner_;
};

KafkaEventConsumer::KafkaEventConsumer(Options options, Tainter& tainter, MetricsRegistry& metrics,
                                       const Clock& clock)
    : options_(std::move(options)),
      tainter_(tainter),
      m_(metrics),
      clock_(clock),
      callbacks_(std::make_unique<Callbacks>(*this)) {}

KafkaEventConsumer::~KafkaEventConsumer() {
  Close(std::chrono::seconds(2));
  tainter_.SetOwnership([](const std::string&) { return false; });
}

int32_t KafkaEventConsumer::PartitionFor(const std::string& key, int32_t partitions) {
  if (partitions <= 0) return -1;
  // librdkafka's own function, so the answer is the producer's by
  // construction (it reads neither the topic handle nor the opaques).
  return rd_kafka_msg_partitioner_consistent_random(nullptr, key.data(), key.size(), partitions,
                                                    nullptr, nullptr);
}

bool KafkaEventConsumer::Owns(const std::string& node) const {
  for (const auto& [partition, state] : partitions_) {
    if (state.nodes.count(node) != 0) return true;
  }
  const int32_t p = PartitionFor(node, partition_count_);
  return p >= 0 && partitions_.count(p) != 0;
}

std::vector<std::pair<std::string, std::string>> KafkaEventConsumer::ConsumerProperties(
    const Options& o) {
  std::vector<std::pair<std::string, std::string>> p = {
      {"bootstrap.servers", o.brokers},   {"group.id", o.group},
      {"client.id", "faultline-tainter"}, {"auto.offset.reset", "earliest"},
      {"enable.partition.eof", "false"},
  };
  for (const auto& [k, v] : kLatencyDefaults) p.emplace_back(k, v);
  for (const auto& [k, v] : o.properties) p.emplace_back(k, v);
  // Last, so no passthrough property can turn them back on: offsets move
  // only when a decision holds.
  p.emplace_back("enable.auto.commit", "false");
  p.emplace_back("enable.auto.offset.store", "false");
  return p;
}

Result<std::unique_ptr<KafkaEventConsumer>> KafkaEventConsumer::Create(Options options,
                                                                       Tainter& tainter,
                                                                       MetricsRegistry& metrics,
                                                                       const Clock& clock) {
  if (options.brokers.empty()) return InvalidArgumentError("kafka.brokers is empty");
  if (options.topic.empty()) return InvalidArgumentError("kafka.topic is empty");
  if (options.group.empty()) return InvalidArgumentError("kafka.group is empty");
  if (options.dead_letter_topic.empty()) {
    return InvalidArgumentError("kafka.dead_letter_topic is empty");
  }
  std::unique_ptr<KafkaEventConsumer> self(
      new KafkaEventConsumer(std::move(options), tainter, metrics, clock));
  const Options& o = self->options_;

  Result<std::unique_ptr<RdKafka::Conf>> cconf = MakeKafkaConf(ConsumerProperties(o));
  if (!cconf.ok()) return cconf.error();
  FL_RETURN_IF_ERROR(SetKafkaCallbacks(
      **cconf, {.event = self->callbacks_.get(), .rebalance = self->callbacks_.get()}));
  std::string err;
  self->consumer_.reset(RdKafka::KafkaConsumer::create(cconf->get(), err));
  if (!self->consumer_) return InvalidArgumentError("kafka consumer: " + err);

  KafkaProperties producer_properties = {
      {"bootstrap.servers", o.brokers}, {"client.id", "faultline-tainter-dlq"}, {"acks", "all"}};
  for (const auto& [k, v] : o.properties) {
    // Consumer-group settings mean nothing to a producer; pass the rest.
    if (!ConsumerOnlyKafkaProperty(k)) producer_properties.emplace_back(k, v);
  }
  Result<std::unique_ptr<RdKafka::Conf>> pconf = MakeKafkaConf(producer_properties);
  if (!pconf.ok()) return pconf.error();
  FL_RETURN_IF_ERROR(SetKafkaCallbacks(
      **pconf, {.event = self->callbacks_.get(), .delivery = self->callbacks_.get()}));
  self->producer_.reset(RdKafka::Producer::create(pconf->get(), err));
  if (!self->producer_) return InvalidArgumentError("kafka dead-letter producer: " + err);

  // Only the owner of a node's partition decides for it (expiry, lifts);
  // until the group assigns partitions, this replica owns nothing.
  tainter.SetOwnership([raw = self.get()](const std::string& node) { return raw->Owns(node); });
  metrics.SetGaugeCallback("faultline_tainter_kafka_assigned_partitions",
                           "partitions assigned to this replica", {},
                           [raw = self.get()] { return raw->assigned_.load(); });
  return self;
}

Status KafkaEventConsumer::Start() {
  RdKafka::ErrorCode e = consumer_->subscribe({options_.topic});
  if (e != RdKafka::ERR_NO_ERROR) {
    return UnavailableError("kafka subscribe " + options_.topic + ": " + RdKafka::err2str(e));
  }
  LogInfo("kafka", "subscribed",
          {{"topic", options_.topic}, {"group", options_.group}, {"brokers", options_.brokers}});
  return OkStatus();
}

void KafkaEventConsumer::OnAssign(std::vector<RdKafka::TopicPartition*>& partitions) {
  const int timeout = static_cast<int>(options_.assign_timeout.count());
  std::vector<RdKafka::TopicPartition*> committed;
  std::vector<RdKafka::TopicPartition*> by_time;
  const std::int64_t since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    (clock_.Now() - options_.rebuild_span).time_since_epoch())
                                    .count();
  for (RdKafka::TopicPartition* p : partitions) {
    committed.push_back(RdKafka::TopicPartition::create(p->topic(), p->partition()));
    by_time.push_back(RdKafka::TopicPartition::create(p->topic(), p->partition(), since_ms));
  }
  RdKafka::ErrorCode ce = consumer_->committed(committed, timeout);
  RdKafka::ErrorCode te = consumer_->offsetsForTimes(by_time, timeout);
  if (ce != RdKafka::ERR_NO_ERROR || te != RdKafka::ERR_NO_ERROR) {
    LogWarning("kafka", "cannot look up offsets on assignment; windows are not rebuilt",
               {{"committed", RdKafka::err2str(ce)}, {"offsets_for_times", RdKafka::err2str(te)}});
  }
  std::int64_t replaying = 0;
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    const std::int64_t com =
        ce == RdKafka::ERR_NO_ERROR && committed[i]->err() == RdKafka::ERR_NO_ERROR
            ? committed[i]->offset()
            : RdKafka::Topic::OFFSET_INVALID;
    std::int64_t at = te == RdKafka::ERR_NO_ERROR && by_time[i]->err() == RdKafka::ERR_NO_ERROR
                          ? by_time[i]->offset()
                          : RdKafka::Topic::OFFSET_INVALID;
    if (at < 0) {
      // No answer for the time (or "nothing that recent", which a bounded
      // re-read filtered by timestamp also handles): look back by count.
      std::int64_t low = 0;
      std::int64_t high = 0;
      if (consumer_->query_watermark_offsets(partitions[i]->topic(), partitions[i]->partition(),
                                             &low, &high, timeout) == RdKafka::ERR_NO_ERROR) {
        const std::int64_t base = com >= 0 ? std::min(com, high) : high;
        at = std::max(low, base - options_.rebuild_max_messages);
      }
    }
    PartitionState state;
    state.generation = ++generation_;
    std::int64_t start;
    if (com >= 0) {
      start = at >= 0 && at < com ? at : com;
      state.replay_until = com;
      state.committed = com;
      replaying += com - start;
    } else {
      // Never committed by this group: recent messages are live; anything
      // older is history that adoption already reflects.
      start = at >= 0 ? at : RdKafka::Topic::OFFSET_END;
      state.history_before_ms = since_ms;
    }
    partitions[i]->set_offset(start);
    state.next = start >= 0 ? start : -1;
    partitions_[partitions[i]->partition()] = std::move(state);
  }
  FreeAll(committed);
  FreeAll(by_time);
  RdKafka::Metadata* metadata = nullptr;
  if (consumer_->metadata(/*all_topics=*/true, nullptr, &metadata, timeout) ==
          RdKafka::ERR_NO_ERROR &&
      metadata != nullptr) {
    for (const RdKafka::TopicMetadata* t : *metadata->topics()) {
      if (t->topic() == options_.topic) {
        partition_count_ = static_cast<int32_t>(t->partitions()->size());
      }
    }
  }
  delete metadata;
  if (consumer_->rebalance_protocol() == "COOPERATIVE") {
    std::unique_ptr<RdKafka::Error> e(consumer_->incremental_assign(partitions));
  } else {
    consumer_->assign(partitions);
  }
  assigned_ = static_cast<int>(partitions_.size());
  joined_ = true;
  connected_ = true;
  LogInfo("kafka", "partitions assigned",
          {{"partitions", partitions.size()}, {"replaying_messages", replaying}});
}

void KafkaEventConsumer::OnRevoke(std::vector<RdKafka::TopicPartition*>& partitions) {
  Commit(/*sync=*/true);
  std::set<std::string> nodes;
  for (RdKafka::TopicPartition* p : partitions) {
    auto it = partitions_.find(p->partition());
    if (it == partitions_.end()) continue;
    nodes.insert(it->second.nodes.begin(), it->second.nodes.end());
    partitions_.erase(it);
  }
  // Their new owner re-reads these nodes' events from the committed offsets.
  tainter_.DropPendingFor([&](const std::string& node) { return nodes.count(node) != 0; });
  if (consumer_->rebalance_protocol() == "COOPERATIVE") {
    std::unique_ptr<RdKafka::Error> e(consumer_->incremental_unassign(partitions));
  } else {
    consumer_->unassign();
    partitions_.clear();
  }
  assigned_ = static_cast<int>(partitions_.size());
  LogInfo("kafka", "partitions revoked", {{"partitions", partitions.size()}});
}

int KafkaEventConsumer::Poll(std::chrono::milliseconds timeout, int max_messages) {
  if (closed_) return 0;
  int taken = 0;
  int wait_ms = static_cast<int>(timeout.count());
  while (taken < max_messages) {
    std::unique_ptr<RdKafka::Message> m(consumer_->consume(wait_ms));
    if (!m || m->err() == RdKafka::ERR__TIMED_OUT) break;
    if (options_.before_decide) options_.before_decide();
    wait_ms = 0;
    Take(*m);
    if (m->err() == RdKafka::ERR_NO_ERROR) ++taken;
  }
  producer_->poll(0);
  return taken;
}

void KafkaEventConsumer::Take(RdKafka::Message& m) {
  if (m.err() == RdKafka::ERR__PARTITION_EOF) return;
  if (m.err() != RdKafka::ERR_NO_ERROR) {
    if (m.err() == RdKafka::ERR__ALL_BROKERS_DOWN) connected_ = false;
    m_.KafkaErrors(RdKafka::err2str(m.err())).Inc();
    LogWarning("kafka", "consume error", {{"error", m.errstr()}});
    return;
  }
  connected_ = true;
  m_.events_consumed.Inc();
  PartitionState& state = partitions_[m.partition()];
  const std::int64_t offset = m.offset();
  state.next = std::max(state.next, offset + 1);
  std::string_view payload(static_cast<const char*>(m.payload()), m.len());
  FaultEvent& event = event_;  // the last message's buffers, reused
  const Status parsed = ParseFaultEventInto(payload, event);
  const RdKafka::MessageTimestamp ts = m.timestamp();
  const bool history = state.history_before_ms >= 0 &&
                       ts.type != RdKafka::MessageTimestamp::MSG_TIMESTAMP_NOT_AVAILABLE &&
                       ts.timestamp < state.history_before_ms;
  if (offset < state.replay_until || history) {
    // Decided before this assignment: it only rebuilds windows and dedupe
    // (an event whose key names another node never counts, nor one its
    // rule does not vouch for).
    if (parsed.ok() && m.key() != nullptr && *m.key() == event.node &&
        (options_.rule_check == nullptr || options_.rule_check->Check(event).ok())) {
      tainter_.Replay(event);
    }
    return;
  }
  if (!parsed.ok()) {
    DeadLetter(m, parsed.ToString(), state);
    return;
  }
  if (const std::string* key = m.key(); key == nullptr || *key != event.node) {
    // The key routes the event to its node's owner; an event whose key
    // names another node (a forgery, or a broken producer) would let one
    // node's partition decide for another: set aside, not decided.
    m_.SetAside("key_mismatch").Inc();
    DeadLetter(
        m, "key '" + (key ? *key : std::string()) + "' does not match node '" + event.node + "'",
        state);
    return;
  }
  if (options_.rule_check != nullptr && !CheckRule(m, event, state)) return;
  state.nodes.insert(event.node);
  if (partition_count_ > 0 && PartitionFor(event.node, partition_count_) != m.partition()) {
    // The producer partitions differently (another `partitioner`): ownership
    // then rests on the nodes seen per partition only.
    m_.partition_mismatches.Inc();
  }
  state.in_flight.insert(offset);
  const int32_t partition = m.partition();
  const std::uint64_t generation = state.generation;
  tainter_.Handle(event,
                  [this, partition, generation, offset] { Done(partition, generation, offset); });
}

bool KafkaEventConsumer::CheckRule(RdKafka::Message& m, FaultEvent& event, PartitionState& state) {
  const RuleCheck::Verdict v = options_.rule_check->Check(event);
  if (v.mismatch) m_.rule_mismatches.Inc();
  if (v.ok()) {
    if (v.mismatch && rule_log_.Due(clock_.MonotonicNow())) {
      LogWarning("tainter", "event contradicts its rule; decided by the rule",
                 {{"node", event.node}, {"rule", event.rule}, {"detail", v.detail}});
    }
    return true;
  }
  // What the event asks for is not what its rule says (a forgery, a broken
  // producer, or an agent on other rule packs): never decided.
  m_.SetAside(v.set_aside).Inc();
  if (rule_log_.Due(clock_.MonotonicNow())) {
    LogWarning("tainter", "event set aside",
               {{"why", v.set_aside},
                {"node", event.node},
                {"rule", event.rule},
                {"detail", v.detail},
                {"suppressed_since_last", rule_log_.TakeSuppressed()}});
  }
  DeadLetter(m, v.set_aside + ": " + v.detail, state);
  return false;
}

void KafkaEventConsumer::DeadLetter(RdKafka::Message& m, const std::string& reason,
                                    PartitionState& state) {
  m_.dead_lettered.Inc();
  LogDebug("kafka", "dead-lettering a message",
           {{"partition", m.partition()}, {"offset", m.offset()}, {"reason", reason}});
  RdKafka::Headers* headers = RdKafka::Headers::create();
  headers->add("faultline.dlq.reason", reason);
  headers->add("faultline.dlq.topic", m.topic_name());
  headers->add("faultline.dlq.partition", std::to_string(m.partition()));
  headers->add("faultline.dlq.offset", std::to_string(m.offset()));
  auto* ticket = new DeadLetterTicket{m.partition(), state.generation, m.offset()};
  state.in_flight.insert(m.offset());
  const std::string* key = m.key();
  RdKafka::ErrorCode e =
      producer_->produce(options_.dead_letter_topic, RdKafka::Topic::PARTITION_UA,
                         RdKafka::Producer::RK_MSG_COPY, const_cast<void*>(m.payload()), m.len(),
                         key ? key->data() : nullptr, key ? key->size() : 0, 0, headers, ticket);
  if (e != RdKafka::ERR_NO_ERROR) {
    delete headers;
    delete ticket;
    m_.dead_letter_fails.Inc();
    LogError("kafka", "dead-letter write failed", {{"error", RdKafka::err2str(e)}});
    state.in_flight.erase(m.offset());
  }
}

void KafkaEventConsumer::Done(int32_t partition, std::uint64_t generation, std::int64_t offset) {
  auto it = partitions_.find(partition);
  if (it == partitions_.end() || it->second.generation != generation) return;
  it->second.in_flight.erase(offset);
}

void KafkaEventConsumer::Commit(bool sync) {
  if (closed_) return;
  producer_->poll(0);  // delivery reports of dead letters complete their offsets
  std::vector<RdKafka::TopicPartition*> offsets;
  for (auto& [partition, state] : partitions_) {
    if (state.next < 0) continue;
    const std::int64_t upto = state.in_flight.empty() ? state.next : *state.in_flight.begin();
    if (upto <= state.committed) continue;
    offsets.push_back(RdKafka::TopicPartition::create(options_.topic, partition, upto));
    state.committed = upto;
    committed_log_[partition] = upto;
  }
  if (!offsets.empty()) {
    RdKafka::ErrorCode e = sync ? consumer_->commitSync(offsets) : consumer_->commitAsync(offsets);
    if (e != RdKafka::ERR_NO_ERROR) {
      m_.KafkaErrors(RdKafka::err2str(e)).Inc();
      LogWarning("kafka", "commit failed", {{"error", RdKafka::err2str(e)}});
      // Commit again next time.
      for (RdKafka::TopicPartition* p : offsets) {
        if (auto it = partitions_.find(p->partition()); it != partitions_.end()) {
          it->second.committed = -1;
        }
      }
    }
    FreeAll(offsets);
  }
  UpdateLag();
}

void KafkaEventConsumer::UpdateLag() {
  std::int64_t lag = 0;
  for (const auto& [partition, state] : partitions_) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    if (consumer_->get_watermark_offsets(options_.topic, partition, &low, &high) !=
            RdKafka::ERR_NO_ERROR ||
        high < 0) {
      continue;
    }
    const std::int64_t position =
        state.in_flight.empty() ? (state.next >= 0 ? state.next : high) : *state.in_flight.begin();
    lag += std::max<std::int64_t>(0, high - position);
  }
  m_.consumer_lag.Set(static_cast<double>(lag));
}

std::map<int32_t, int64_t> KafkaEventConsumerTesting::CommittedOffsets(
    const KafkaEventConsumer& consumer) {
  return consumer.committed_log_;
}

void KafkaEventConsumer::Close(std::chrono::milliseconds timeout) {
  if (closed_ || !consumer_) return;
  producer_->flush(static_cast<int>(timeout.count()));
  producer_->poll(0);
  Commit(/*sync=*/true);
  consumer_->close();
  closed_ = true;
  assigned_ = 0;
  // Work still queued is uncommitted, so the next owner of those partitions
  // decides it again; its completion callbacks point at this consumer and
  // must not outlive it.
  tainter_.DropPendingFor([](const std::string&) { return true; });
  partitions_.clear();
  LogInfo("kafka", "consumer closed", {{"pending_decisions", tainter_.pending()}});
}

}  // namespace faultline

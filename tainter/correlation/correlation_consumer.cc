// SPDX-License-Identifier: Apache-2.0
#include "tainter/correlation/correlation_consumer.h"

#include <vector>

#include <librdkafka/rdkafkacpp.h>

#include "base/fault_event.h"
#include "base/log.h"
#include "base/node_identity.h"
#include "kafka/kafka_conf.h"

namespace faultline {

CorrelationConsumer::CorrelationConsumer(Options options, Correlator& correlator,
                                         MetricsRegistry& metrics, const Clock& clock)
    : options_(std::move(options)), correlator_(correlator), metrics_(metrics), clock_(clock) {}

CorrelationConsumer::~CorrelationConsumer() { Close(); }

Result<std::unique_ptr<CorrelationConsumer>> CorrelationConsumer::Create(Options options,
                                                                         Correlator& correlator,
                                                                         MetricsRegistry& metrics,
                                                                         const Clock& clock) {
  if (options.brokers.empty()) return InvalidArgumentError("kafka.brokers is empty");
  std::unique_ptr<CorrelationConsumer> self(
      new CorrelationConsumer(std::move(options), correlator, metrics, clock));
  const Options& o = self->options_;
  // A group.id of its own: it is never joined (assign() by hand), and
  // nothing is committed, so it can never disturb the deciding group.
  KafkaProperties properties = {{"bootstrap.servers", o.brokers},
                                {"group.id", o.group + "-correlation"},
                                {"client.id", "faultline-tainter-correlation"},
                                {"enable.partition.eof", "false"}};
  for (const auto& [k, v] : o.properties) {
    if (k.rfind("group.", 0) == 0 || k.rfind("partition.assignment", 0) == 0) continue;
    properties.emplace_back(k, v);
  }
  properties.emplace_back("enable.auto.commit", "false");
  properties.emplace_back("enable.auto.offset.store", "false");
  Result<std::unique_ptr<RdKafka::Conf>> conf = MakeKafkaConf(properties);
  if (!conf.ok()) return conf.error();
  std::string err;
  self->consumer_.reset(RdKafka::KafkaConsumer::create(conf->get(), err));
  if (!self->consumer_) return InvalidArgumentError("kafka correlation consumer: " + err);
  return self;
}

Status CorrelationConsumer::Start() {
  const int timeout = static_cast<int>(options_.timeout.count());
  RdKafka::Metadata* raw = nullptr;
  if (consumer_->metadata(/*all_topics=*/true, nullptr, &raw, timeout) != RdKafka::ERR_NO_ERROR ||
      raw == nullptr) {
    return UnavailableError("kafka metadata for the correlation consumer");
  }
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  std::vector<RdKafka::TopicPartition*> events;
  std::vector<RdKafka::TopicPartition*> identity;
  const std::int64_t since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    (clock_.Now() - options_.rebuild_span).time_since_epoch())
                                    .count();
  for (const RdKafka::TopicMetadata* t : *metadata->topics()) {
    for (const RdKafka::PartitionMetadata* p : *t->partitions()) {
      if (t->topic() == options_.events_topic) {
        events.push_back(RdKafka::TopicPartition::create(t->topic(), p->id(), since_ms));
      } else if (t->topic() == options_.identity_topic) {
        identity.push_back(
            RdKafka::TopicPartition::create(t->topic(), p->id(), RdKafka::Topic::OFFSET_BEGINNING));
      }
    }
  }
  if (events.empty()) {
    return UnavailableError("kafka topic " + options_.events_topic + " has no partitions yet");
  }
  const RdKafka::ErrorCode te = consumer_->offsetsForTimes(events, timeout);
  std::vector<RdKafka::TopicPartition*> all = events;
  all.insert(all.end(), identity.begin(), identity.end());
  for (RdKafka::TopicPartition* p : all) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    if (consumer_->query_watermark_offsets(p->topic(), p->partition(), &low, &high, timeout) !=
        RdKafka::ERR_NO_ERROR) {
      continue;
    }
    if (p->topic() == options_.events_topic &&
        (te != RdKafka::ERR_NO_ERROR || p->err() != RdKafka::ERR_NO_ERROR || p->offset() < 0)) {
      // The broker cannot map the time (librdkafka's mock cluster answers
      // -1): look back by count; timestamps still decide what counts.
      p->set_offset(std::max(low, high - options_.rebuild_max_messages));
    }
    // Caught up once the partition's end at start is read; nothing to wait
    // for when the start is already there (no message within the span).
    const std::int64_t from = p->offset() == RdKafka::Topic::OFFSET_BEGINNING ? low : p->offset();
    if (from >= 0 && high > from) catch_up_[{p->topic(), p->partition()}] = high;
  }
  // Identities first: an event naming a GID resolves only once the
  // identity that claims it is read, so the events partitions are added
  // when the identity topic is caught up (Poll), or at once without one.
  identity_pending_ = false;
  for (RdKafka::TopicPartition* p : identity) {
    if (catch_up_.count({p->topic(), p->partition()})) identity_pending_ = true;
  }
  if (identity_pending_) {
    consumer_->assign(identity);
    for (RdKafka::TopicPartition* p : events) {
      pending_events_.emplace_back(p->partition(), p->offset());
    }
    identity_deadline_ = clock_.MonotonicNow() + options_.timeout;
  } else {
    consumer_->assign(all);
  }
  started_ = true;
  started_at_ = clock_.Now();
  LogInfo("correlation", "reading every partition",
          {{"events_partitions", events.size()},
           {"identity_partitions", identity.size()},
           {"identity_topic", options_.identity_topic}});
  if (identity.empty()) {
    LogWarning("correlation", "no identity topic: only Node addresses resolve peers",
               {{"identity_topic", options_.identity_topic}});
  }
  for (RdKafka::TopicPartition* p : all) delete p;
  return OkStatus();
}

bool CorrelationConsumer::caught_up() const { return started_ && catch_up_.empty(); }

void CorrelationConsumer::AddEventsPartitions() {
  std::vector<RdKafka::TopicPartition*> events;
  for (const auto& [partition, offset] : pending_events_) {
    events.push_back(RdKafka::TopicPartition::create(options_.events_topic, partition, offset));
  }
  std::unique_ptr<RdKafka::Error> e(consumer_->incremental_assign(events));
  if (e) {
    LogWarning("correlation", "cannot add the events partitions", {{"error", e->str()}});
  }
  for (RdKafka::TopicPartition* p : events) delete p;
  pending_events_.clear();
  identity_pending_ = false;
}

int CorrelationConsumer::Poll(std::chrono::milliseconds timeout, int max_messages) {
  if (!started_) return 0;
  if (identity_pending_) {
    bool identity_left = false;
    for (const auto& [tp, end] : catch_up_) identity_left |= tp.first == options_.identity_topic;
    if (!identity_left || clock_.MonotonicNow() > identity_deadline_) AddEventsPartitions();
  }
  int taken = 0;
  int wait = static_cast<int>(timeout.count());
  while (taken < max_messages) {
    std::unique_ptr<RdKafka::Message> m(consumer_->consume(wait));
    wait = 0;
    if (!m || m->err() == RdKafka::ERR__TIMED_OUT) break;
    if (m->err() != RdKafka::ERR_NO_ERROR) {
      metrics_.read_errors.Inc();
      break;
    }
    ++taken;
    if (auto it = catch_up_.find({m->topic_name(), m->partition()});
        it != catch_up_.end() && m->offset() + 1 >= it->second) {
      catch_up_.erase(it);
      if (catch_up_.empty()) {
        LogInfo("correlation", "history read",
                {{"span_s", options_.rebuild_span.count()}, {"offset", m->offset()}});
      }
    }
    const std::string_view payload(static_cast<const char*>(m->payload()), m->len());
    if (m->topic_name() == options_.identity_topic) {
      if (auto id = ParseNodeIdentity(payload)) {
        correlator_.ObserveIdentity(*id);
        metrics_.identities.Inc();
      } else {
        metrics_.identities_rejected.Inc();
        LogDebug("correlation", "bad identity message",
                 {{"error", id.error().message()}, {"offset", m->offset()}});
      }
      continue;
    }
    // The correlator never reads the captures (peer, labels and the
    // outcome are their own keys) nor the evidence lines: checked, not kept.
    // Read into the last message's buffers: the correlator copies what it keeps.
    if (ParseFaultEventInto(payload, event_, EventFields::kCheckOnly).ok()) {
      correlator_.Observe(event_);  // bad ones: dead-lettered by the deciding consumer
    }
  }
  return taken;
}

void CorrelationConsumer::Close() {
  if (consumer_) {
    consumer_->close();
    consumer_.reset();
  }
}

}  // namespace faultline

// SPDX-License-Identifier: Apache-2.0
#include "collector/agent/kafka_sink.h"

#include <librdkafka/rdkafkacpp.h>
#include <nlohmann/json.hpp>

#include "base/log.h"
#include "kafka/kafka_conf.h"
#include "kafka/kafka_events.h"

namespace faultline {
namespace {

// What one produced message carries back to its delivery report.
struct InFlight {
  EventSink::DeliveryCallback callback;
};

// Delivery-report errors sorted by what the pipeline must do: a message the
// cluster will never take is rejected for good (kInvalidArgument: counted,
// its record commits); everything else may succeed after a restart, so the
// checkpoint must not pass it.
Status DeliveryStatus(const RdKafka::Message& message) {
  const RdKafka::ErrorCode err = message.err();
  const std::string text = RdKafka::err2str(err);
  switch (err) {
    case RdKafka::ERR_NO_ERROR:
      return OkStatus();
    case RdKafka::ERR_MSG_SIZE_TOO_LARGE:
    case RdKafka::ERR_INVALID_MSG_SIZE:
    case RdKafka::ERR_INVALID_MSG:
    case RdKafka::ERR_RECORD_LIST_TOO_LARGE:
    case RdKafka::ERR_INVALID_RECORD:
    case RdKafka::ERR_INVALID_REQUIRED_ACKS:
      return InvalidArgumentError("kafka rejected the message: " + text);
    case RdKafka::ERR__MSG_TIMED_OUT:
      return DeadlineExceededError("message.timeout.ms passed before delivery: " + text);
    case RdKafka::ERR_TOPIC_AUTHORIZATION_FAILED:
    case RdKafka::ERR_CLUSTER_AUTHORIZATION_FAILED:
      return PermissionDeniedError(text);
    default:
      return UnavailableError(text);
  }
}

}  // namespace

struct KafkaSink::Callbacks : public RdKafka::DeliveryReportCb, public KafkaEvents {
  explicit Callbacks(KafkaSink& owner) : sink(owner) {}

  void dr_cb(RdKafka::Message& message) override {
    std::unique_ptr<InFlight> in_flight(static_cast<InFlight*>(message.msg_opaque()));
    if (!in_flight || !enabled) return;
    const Status status = DeliveryStatus(message);
    if (status.ok()) sink.SetReachable(true);
    in_flight->callback(status);
  }

  void OnKafkaError(RdKafka::Event& event) override { sink.OnError(event); }
  void OnKafkaStatistics(const std::string& json) override { sink.OnStatistics(json); }

  KafkaSink& sink;
  bool enabled = true;  // false while the sink is destroyed: callers are gone
};

KafkaSink::KafkaSink(const Options& options, AgentMetrics* metrics)
    : options_(options), metrics_(metrics), callbacks_(std::make_unique<Callbacks>(*this)) {}

Result<std::unique_ptr<KafkaSink>> KafkaSink::Create(const Options& options,
                                                     AgentMetrics* metrics) {
  std::unique_ptr<KafkaSink> sink(new KafkaSink(options, metrics));
  KafkaProperties properties = {
      {"bootstrap.servers", options.brokers},
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"compression.type", options.compression},
      {"linger.ms", std::to_string(options.linger.count())},
      {"queue.buffering.max.messages", std::to_string(options.queue_max_messages)},
      {"queue.buffering.max.kbytes", std::to_string(options.queue_max_kbytes)},
      {"message.timeout.ms", std::to_string(options.message_timeout.count())},
      {"statistics.interval.ms", std::to_string(options.statistics_interval.count())},
      {"client.id", "faultline-agent"},
  };
  properties.insert(properties.end(), options.properties.begin(), options.properties.end());
  Result<std::unique_ptr<RdKafka::Conf>> conf = MakeKafkaConf(properties);
  if (!conf.ok()) return conf.error();
  FL_RETURN_IF_ERROR(SetKafkaCallbacks(
      **conf, {.event = sink->callbacks_.get(), .delivery = sink->callbacks_.get()}));
  std::string error;
  sink->producer_.reset(RdKafka::Producer::create(conf->get(), error));
  if (!sink->producer_) return InvalidArgumentError("kafka producer: " + error);
  sink->topic_.reset(RdKafka::Topic::create(sink->producer_.get(), options.topic, nullptr, error));
  if (!sink->topic_) return InvalidArgumentError("kafka topic " + options.topic + ": " + error);
  if (metrics) metrics->kafka_up.Set(0);
  LogInfo("kafka", "producer created",
          {{"brokers", options.brokers},
           {"topic", options.topic},
           {"message_timeout_ms", options.message_timeout.count()}});
  return sink;
}

KafkaSink::~KafkaSink() {
  if (!producer_) return;
  callbacks_->enabled = false;
  producer_->purge(RdKafka::Producer::PURGE_QUEUE | RdKafka::Producer::PURGE_INFLIGHT |
                   RdKafka::Producer::PURGE_NON_BLOCKING);
  producer_->flush(100);  // serves the purged messages' reports, which free them
  topic_.reset();
  producer_.reset();
}

Status KafkaSink::Publish(const FaultEvent& event, DeliveryCallback on_delivered) {
  if (fatal()) return FailedPreconditionError("kafka producer failed fatally; restart needed");
  const std::string value = SerializeFaultEvent(event);
  RdKafka::Headers* headers = RdKafka::Headers::create();
  headers->add("schema", std::to_string(FaultEvent::kSchemaVersion));
  headers->add("rule", event.rule);
  auto in_flight = std::make_unique<InFlight>(InFlight{std::move(on_delivered)});
  const RdKafka::ErrorCode err = producer_->produce(
      options_.topic, RdKafka::Topic::PARTITION_UA, RdKafka::Producer::RK_MSG_COPY,
      const_cast<char*>(value.data()), value.size(), event.node.data(), event.node.size(),
      /*timestamp=*/0, headers, in_flight.get());
  if (err == RdKafka::ERR_NO_ERROR) {
    static_cast<void>(in_flight.release());  // now owned by the delivery report
    return OkStatus();
  }
  delete headers;  // librdkafka takes them only on success
  switch (err) {
    case RdKafka::ERR__QUEUE_FULL:
      return ResourceExhaustedError("kafka producer queue is full");
    case RdKafka::ERR_MSG_SIZE_TOO_LARGE:
      return InvalidArgumentError("event of " + std::to_string(value.size()) +
                                  " bytes exceeds message.max.bytes");
    case RdKafka::ERR__FATAL:
      return FailedPreconditionError("kafka producer failed fatally");
    default:
      return UnavailableError(RdKafka::err2str(err));
  }
}

void KafkaSink::Poll(std::chrono::milliseconds timeout) {
  producer_->poll(static_cast<int>(timeout.count()));
  ReportFatal();
}

std::size_t KafkaSink::Flush(std::chrono::milliseconds timeout) {
  producer_->flush(static_cast<int>(timeout.count()));
  ReportFatal();
  return static_cast<std::size_t>(std::max(producer_->outq_len(), 0));
}

void KafkaSink::SetReachable(bool up) {
  if (reachable_.exchange(up) != up) {
    if (up) {
      LogInfo("kafka", "brokers reachable");
    }
  }
  if (metrics_) metrics_->kafka_up.Set(up ? 1 : 0);
}

void KafkaSink::OnError(RdKafka::Event& event) {
  if (metrics_) metrics_->kafka_errors.Inc();
  if (event.fatal()) {
    fatal_ = true;
    return;  // reported with its reason by ReportFatal(), outside the callback
  }
  switch (event.err()) {
    case RdKafka::ERR__ALL_BROKERS_DOWN:
      if (reachable_.exchange(false)) {
        LogWarning("kafka", "all brokers down; events are buffered", {{"error", event.str()}});
      }
      if (metrics_) metrics_->kafka_up.Set(0);
      break;
    default:
      // Transport errors repeat every reconnect attempt: log with a count.
      ++transport_errors_;
      if (LogThisOccurrence(transport_errors_)) {
        LogWarning("kafka", "producer error",
                   {{"error", event.str()},
                    {"code", RdKafka::err2str(event.err())},
                    {"occurrences", transport_errors_}});
      }
      break;
  }
}

void KafkaSink::OnStatistics(const std::string& json_text) {
  // {"brokers":{"host:port/1":{"nodeid":1,"state":"UP",...},...}}: bootstrap
  // entries have nodeid -1 and do not count.
  nlohmann::json stats = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!stats.is_object() || !stats.contains("brokers") || !stats["brokers"].is_object()) return;
  bool up = false;
  for (const auto& [name, broker] : stats["brokers"].items()) {
    if (broker.is_object() && broker.value("nodeid", -1) >= 0 &&
        broker.value("state", std::string()) == "UP") {
      up = true;
    }
  }
  if (!up && reachable_.exchange(false)) {
    LogWarning("kafka", "no broker reachable; events are buffered");
  }
  if (up) {
    SetReachable(true);
  } else if (metrics_) {
    metrics_->kafka_up.Set(0);
  }
}

void KafkaSink::ReportFatal() {
  if (!fatal_ || fatal_reported_) return;
  fatal_reported_ = true;
  std::string reason;
  const RdKafka::ErrorCode err = producer_->fatal_error(reason);
  const Status status =
      InternalError("fatal kafka producer error " + RdKafka::err2str(err) + ": " + reason);
  LogError("kafka", "fatal producer error; the agent must restart", {{"error", status.message()}});
  if (options_.on_fatal) options_.on_fatal(status);
}

}  // namespace faultline

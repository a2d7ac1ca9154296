// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

#include "base/fault_event.h"
#include "base/status.h"

namespace faultline {

// Where the agent sends the faults it finds. KafkaSink is the production
// implementation; tests use FakeEventSink; `--standalone` may plug in an
// in-process sink. This is the agent's only seam between matching and
// transport.
//
// Delivery is asynchronous, as in librdkafka: Publish() only queues, and
// `on_delivered` runs later, exactly once per accepted event, on whichever
// thread calls Poll() or Flush(). An implementation therefore starts no
// thread that runs callbacks, and a callback never races with the code that
// publishes.
//
// Thread-safety: Publish, Poll and Flush are called from one thread at a
// time (the pipeline's match thread, then the thread that stops it).
class EventSink {
 public:
  // The outcome of one accepted event:
  //   OK                 delivered (acknowledged by the broker).
  //   kInvalidArgument   rejected for good (e.g. larger than the broker
  //                      accepts): retrying cannot help. The caller counts it
  //                      and moves on, so its record may be committed.
  //   anything else      not delivered (timed out, purged, producer fenced):
  //                      the caller must not commit past its record; after a
  //                      restart it is read and sent again with the same id.
  using DeliveryCallback = std::function<void(const Status& result)>;

  virtual ~EventSink() = default;

  // Queues `event`; on success `on_delivered` runs exactly once later.
  //   kResourceExhausted  the local queue is full: Poll() and try again (the
  //                       callback was not taken).
  //   kInvalidArgument    this event can never be sent (too large): count it;
  //                       the callback will not run.
  //   other               the sink is broken (fatal producer error): the event
  //                       is not delivered; the callback will not run.
  virtual Status Publish(const FaultEvent& event, DeliveryCallback on_delivered) = 0;

  // Runs the delivery callbacks that are due, waiting up to `timeout` for one.
  virtual void Poll(std::chrono::milliseconds timeout) = 0;

  // Waits until every queued event is delivered or has failed (running their
  // callbacks), or until `timeout` passes. Returns the number still queued.
  virtual std::size_t Flush(std::chrono::milliseconds timeout) = 0;
};

}  // namespace faultline

// SPDX-License-Identifier: Apache-2.0
// ParseKmsgRecord: the pure parser of one /dev/kmsg record.
#include "collector/sources/kmsg_record.h"

#include <doctest/doctest.h>

namespace faultline {
namespace {

TEST_CASE("a kmsg record yields facility, priority, sequence, timestamp and message") {
  Result<KmsgRecord> r = ParseKmsgRecord("6,339,5140900,-;NET: Registered protocol family 10\n");
  REQUIRE(r.ok());
  CHECK(r->facility == 0);
  CHECK(r->priority == 6);
  CHECK(r->sequence == 339);
  CHECK(r->since_boot == std::chrono::microseconds(5140900));
  CHECK(r->message == "NET: Registered protocol family 10");
  CHECK(r->dict.empty());
}

TEST_CASE("the first prefix field packs facility times eight plus priority") {
  Result<KmsgRecord> r = ParseKmsgRecord("12,1,2,-;written by user space\n");
  REQUIRE(r.ok());
  CHECK(r->facility == 1);
  CHECK(r->priority == 4);
}

TEST_CASE("continuation lines become KEY=VALUE pairs and are not part of the message") {
  Result<KmsgRecord> r = ParseKmsgRecord(
      "6,193,311820,-;acpi PNP0A08:00: _OSC: OS supports\n SUBSYSTEM=acpi\n "
      "DEVICE=+acpi:PNP0A08:00\n not a pair\n");
  REQUIRE(r.ok());
  CHECK(r->message == "acpi PNP0A08:00: _OSC: OS supports");
  REQUIRE(r->dict.size() == 2);
  CHECK(r->dict[0] == std::pair<std::string, std::string>{"SUBSYSTEM", "acpi"});
  CHECK(r->dict[1] == std::pair<std::string, std::string>{"DEVICE", "+acpi:PNP0A08:00"});
}

TEST_CASE("escaped bytes are unescaped: tab, backslash, UTF-8 and either hex case") {
  Result<KmsgRecord> r = ParseKmsgRecord("6,90,246683,-;rcu: \\x09RCU \\x5cpath caf\\xC3\\xa9\n");
  REQUIRE(r.ok());
  CHECK(r->message == "rcu: \tRCU \\path caf\xc3\xa9");
}

TEST_CASE("malformed escapes are kept as they are") {
  CHECK(UnescapeKmsg("a\\xzz b\\x4") == "a\\xzz b\\x4");
  CHECK(UnescapeKmsg("\\x41\\x") == "A\\x");
  CHECK(UnescapeKmsg("") == "");
}

TEST_CASE("extra prefix fields of newer kernels are ignored") {
  Result<KmsgRecord> r = ParseKmsgRecord("4,17,99,c,caller=T42;NVRM: Xid 79\n");
  REQUIRE(r.ok());
  CHECK(r->sequence == 17);
  CHECK(r->message == "NVRM: Xid 79");
}

TEST_CASE("a record without a trailing newline or with an empty message still parses") {
  Result<KmsgRecord> r = ParseKmsgRecord("6,5,7,-;");
  REQUIRE(r.ok());
  CHECK(r->message.empty());
  Result<KmsgRecord> no_flags = ParseKmsgRecord("6,5,7;old kernel");
  REQUIRE(no_flags.ok());
  CHECK(no_flags->message == "old kernel");
}

TEST_CASE("records with a broken prefix are rejected with the field named") {
  struct Case {
    const char* raw;
    const char* field;
  };
  for (const Case& c : {Case{"6,1,2,- no semicolon\n", "';'"}, Case{"x,1,2,-;m\n", "priority"},
                        Case{"6,,2,-;m\n", "sequence"}, Case{"6,-1,2,-;m\n", "sequence"},
                        Case{"6,1,-5,-;m\n", "timestamp"}, Case{"6,1;m\n", "timestamp"},
                        Case{"99999,1,2,-;m\n", "priority"},
                        Case{"6,1,99999999999999999999999,-;m\n", "timestamp"}, Case{"", "';'"}}) {
    CAPTURE(c.raw);
    Result<KmsgRecord> r = ParseKmsgRecord(c.raw);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code() == StatusCode::kInvalidArgument);
    CHECK(r.error().message().find(c.field) != std::string::npos);
  }
}

TEST_CASE("the sequence number can be read from a record whose rest is broken") {
  CHECK(ParseKmsgSequence("6,42,x,-;m") == std::optional<std::uint64_t>(42));
  CHECK(ParseKmsgSequence("6,x,1,-;m") == std::nullopt);
  CHECK(ParseKmsgSequence("garbage") == std::nullopt);
}

}  // namespace
}  // namespace faultline

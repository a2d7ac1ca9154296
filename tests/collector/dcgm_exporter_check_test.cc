// SPDX-License-Identifier: Apache-2.0
// The dcgm-exporter check on real dcgm-exporter output (tests/data/dcgm/,
// sources in its README), served over HTTP by a local stand-in for the
// exporter, and the records it makes through the built-in rules.
#include "collector/checks/dcgm_exporter_check.h"

#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <httplib.h>

#include "collector/checks/check_record.h"
#include "collector/checks/http_get.h"
#include "collector/checks/prometheus_text.h"
#include "matcher/rule_set.h"

namespace faultline {
namespace {

std::string Sample(const std::string& name) {
  std::ifstream in(std::string(FL_SOURCE_DIR) + "/tests/data/dcgm/" + name);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// dcgm-exporter's /metrics on 127.0.0.1: serves `body` with `status` after
// `delay`, as the exporter's Go net/http server would (text/plain; version=0.0.4).
class FakeExporter {
 public:
  FakeExporter() {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::string body;
      int status = 200;
      std::chrono::milliseconds delay{0};
      {
        std::lock_guard lock(mu_);
        body = body_;
        status = status_;
        delay = delay_;
      }
      std::this_thread::sleep_for(delay);
      res.status = status;
      res.set_content(body, "text/plain; version=0.0.4; charset=utf-8");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // The socket listens from bind on; a GET sent before the accept loop
    // runs waits in the backlog. is_running() says the loop started.
    for (int i = 0; i < 500 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~FakeExporter() {
    server_.stop();
    thread_.join();
  }
  FakeExporter(const FakeExporter&) = delete;
  FakeExporter& operator=(const FakeExporter&) = delete;

  void Serve(std::string body, int status = 200, std::chrono::milliseconds delay = {}) {
    std::lock_guard lock(mu_);
    body_ = std::move(body);
    status_ = status;
    delay_ = delay;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::string body_;
  int status_ = 200;
  std::chrono::milliseconds delay_{0};
};

std::vector<std::string> Texts(const std::vector<CheckFinding>& findings) {
  std::vector<std::string> out;
  out.reserve(findings.size());
  for (const CheckFinding& f : findings) out.push_back(FormatCheckText("dcgm-exporter", f));
  return out;
}

DcgmExporterCheck MakeCheck(const std::string& url) {
  REQUIRE(LoadHttpClient().ok());
  DcgmExporterCheck::Options o;
  o.url = url;
  o.http.timeout = std::chrono::milliseconds(1000);
  return DcgmExporterCheck(o);
}

// The built-in rules' verdict on a check record: "<rule> <action>" per match.
std::vector<std::string> Verdicts(const CheckFinding& finding) {
  static Diagnostics diags;
  static SourceTexts texts;
  static const auto rules = LoadRules({}, {}, diags, texts);
  REQUIRE(rules);
  std::vector<RuleMatch> matches;
  rules->Match(MakeCheckRecord("dcgm-exporter", finding), matches);
  std::vector<std::string> out;
  out.reserve(matches.size());
  for (const RuleMatch& m : matches) {
    out.push_back(m.rule->id + (m.action == Action::kTaint ? " taint" : " event"));
  }
  return out;
}

const CheckFinding* Find(const std::vector<CheckFinding>& f, std::string_view device,
                         std::string_view counter) {
  for (const CheckFinding& x : f) {
    if (x.Field("device") == device && x.Field("counter") == counter) return &x;
  }
  return nullptr;
}

TEST_CASE("prometheus text: every real dcgm-exporter sample parses, labels and values intact") {
  for (const char* name : {"pr326-rtx3090.prom", "issue317-a30-mig.prom", "readme-2.3.5.prom",
                           "pr326-rtx3090-faults.prom"}) {
    CAPTURE(name);
    const auto samples = ParsePrometheusText(Sample(name));
    REQUIRE(samples.ok());
    CHECK(!samples->empty());
  }
  const auto s = *ParsePrometheusText(Sample("pr326-rtx3090.prom"));
  REQUIRE(s.size() == 2);
  CHECK(s[0].name == "DCGM_FI_DEV_XID_ERRORS");
  CHECK(s[0].Label("pci_bus_id") == "00000000:08:00.0");
  CHECK(s[0].Label("err_msg") == "Unknown Error");
  CHECK(s[1].value == 24268);
  // 2.x's space after the comma; DCGM's blank value read as a number.
  const auto readme = *ParsePrometheusText(Sample("readme-2.3.5.prom"));
  REQUIRE(readme.size() == 3);
  CHECK(readme[0].Label("UUID") == "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52");
  CHECK(readme[2].value > 9.2e18);
}

TEST_CASE("prometheus text: escapes, specials, timestamps and a trailing comma") {
  const auto s = ParsePrometheusText(
      "a{x=\"q\\\"b\\\\c\\nd\",} 1.5e3 1700000000000\r\n"
      "b NaN\n"
      "c{} +Inf\n"
      "  # indented comment\n"
      "d -Inf\n");
  REQUIRE(s.ok());
  REQUIRE(s->size() == 4);
  CHECK((*s)[0].Label("x") == "q\"b\\c\nd");
  CHECK((*s)[0].value == 1500);
  CHECK((*s)[1].value != (*s)[1].value);  // NaN
  CHECK((*s)[2].value > 1e308);
}

TEST_CASE("prometheus text: malformed input is an error naming the line, never a crash") {
  const std::pair<std::string, std::string> bad[] = {
      {"ok 1\n1bad 2\n", "line 2, column 1: expected a metric name"},
      {"m{gpu=\"0\" 1\n", "line 1, column 11: expected ',' or '}' after a label value"},
      {"m{gpu=0} 1\n", "line 1, column 7: expected a label value in double quotes"},
      {"m{gpu=\"0} 1\n", "line 1, column 12: expected the closing quote of a label value"},
      {"m{gpu=\"\\t\"} 1\n",
       "line 1, column 9: expected an escape \\\\, \\\" or \\n in a label value"},
      {"m{a=\"1\",a=\"2\"} 1\n", "line 1, column 14: expected each label once, not 'a' twice"},
      {"m 0x10\n", "line 1, column 3: expected a value (a float, NaN, +Inf or -Inf)"},
      {"m nan\n", "line 1, column 3: expected a value (a float, NaN, +Inf or -Inf)"},
      {"m\n", "line 1, column 2: expected a space before the value"},
      {"m 1 12x\n", "line 1, column 5: expected an integer timestamp"},
      {"m 1e999\n", "line 1, column 3: expected a value (a float, NaN, +Inf or -Inf)"},
      {std::string("m 1\0\n", 5), "line 1: a NUL byte"},
  };
  for (const auto& item : bad) {
    const std::string& text = item.first;
    const std::string& why = item.second;
    CAPTURE(text);
    const auto r = ParsePrometheusText(text);
    REQUIRE(!r.ok());
    CHECK(r.error().message() == why);
  }
}

TEST_CASE("SysfsPciAddress: DCGM's 8-digit domain becomes sysfs's 4") {
  CHECK(SysfsPciAddress("00000000:08:00.0") == "0000:08:00.0");
  CHECK(SysfsPciAddress("00000000:3B:00.0") == "0000:3b:00.0");
  CHECK(SysfsPciAddress("0000:3b:00.0") == "0000:3b:00.0");
  CHECK(SysfsPciAddress("00000001:08:00.0") == "0001:08:00.0");
  CHECK(SysfsPciAddress("00010000:08:00.0") == "");  // a VMD domain: sysfs writes 5 digits
  CHECK(SysfsPciAddress("08:00.0") == "");
  CHECK(SysfsPciAddress("00000000:08:00.0 ") == "");
}

TEST_CASE("dcgm-exporter: a healthy GPU scraped over HTTP passes, labels become fields") {
  FakeExporter exporter;
  exporter.Serve(Sample("pr326-rtx3090.prom"));
  DcgmExporterCheck check = MakeCheck(exporter.url());
  const std::vector<CheckFinding> f = check.Run({});
  CHECK(Texts(f) ==
        std::vector<std::string>{
            "check=dcgm-exporter status=ok device=0000:08:00.0 counter=xid value=0 expected=0 "
            "gpu=0 uuid=GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148 pci_bus_id=00000000:08:00.0 "
            "hostname=debian msg=no Xid",
            "check=dcgm-exporter status=ok device=node counter=scrape value=1 msg=1 GPUs in " +
                exporter.url()});
  for (const CheckFinding& x : f) CHECK(Verdicts(x).empty());
  // The Xid gauge holds its value: unchanged, it is not reported again.
  CHECK(Texts(check.Run({})).size() == 1);
}

TEST_CASE("dcgm-exporter: faults become records the built-in rules act on") {
  FakeExporter exporter;
  exporter.Serve(Sample("pr326-rtx3090.prom"));
  DcgmExporterCheck check = MakeCheck(exporter.url());
  (void)check.Run({});  // the baseline: counters grow from here
  exporter.Serve(Sample("pr326-rtx3090-faults.prom"));
  std::vector<CheckFinding> f = check.Run({});
  const std::string gpu = "0000:08:00.0";
  const auto text = [&](std::string_view counter) {
    const CheckFinding* x = Find(f, gpu, counter);
    REQUIRE(x != nullptr);
    return FormatCheckText("dcgm-exporter", *x);
  };
  const std::string labels =
      "gpu=0 uuid=GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148 pci_bus_id=00000000:08:00.0 "
      "hostname=debian";
  CHECK(text("xid") == "check=dcgm-exporter status=fail device=" + gpu +
                           " counter=xid value=79 expected=0 " + labels +
                           " msg=Xid 79: GPU has fallen off the bus");
  CHECK(Verdicts(*Find(f, gpu, "xid")) == std::vector<std::string>{"check.dcgm-xid taint"});
  CHECK(text("row_remap_failure") == "check=dcgm-exporter status=fail device=" + gpu +
                                         " counter=row_remap_failure value=1 expected=0 " + labels +
                                         " msg=row remapping failed: the GPU needs replacing");
  CHECK(Verdicts(*Find(f, gpu, "row_remap_failure")) ==
        std::vector<std::string>{"check.dcgm-row-remap-failure taint"});
  CHECK(Verdicts(*Find(f, gpu, "ecc_dbe_volatile")) ==
        std::vector<std::string>{"check.dcgm-ecc-dbe-volatile taint"});
  // Counters first seen in this scrape are their own baseline.
  CHECK(Find(f, gpu, "pcie_replay")->status == CheckStatus::kOk);
  CHECK(text("clocks") == "check=dcgm-exporter status=fail device=" + gpu +
                              " counter=clocks value=0x48 reasons=hw_slowdown,hw_thermal " +
                              labels + " msg=clocks slowed down: hw_slowdown,hw_thermal");
  CHECK(Verdicts(*Find(f, gpu, "clocks")) ==
        std::vector<std::string>{"check.dcgm-clocks-slowdown taint"});
  CHECK(Find(f, "node", "clocks")->status == CheckStatus::kFail);

  // The counters grow: each growth is a record; an NVLink CRC burst and
  // PCIe replays are events, new uncorrectable remapped rows too.
  std::string grown = Sample("pr326-rtx3090-faults.prom");
  const auto bump = [&grown](const std::string& metric, const std::string& from,
                             const std::string& to) {
    const std::size_t line = grown.find(metric + "{");
    REQUIRE(line != std::string::npos);
    const std::size_t at = grown.find("} " + from + "\n", line);
    REQUIRE(at != std::string::npos);
    grown.replace(at + 2, from.size(), to);
  };
  bump("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "12", "20");
  bump("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "40", "41");
  bump("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "3", "4");
  bump("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "72", "1");  // idle only: no fault
  exporter.Serve(grown);
  f = check.Run({});
  CHECK(text("pcie_replay") == "check=dcgm-exporter status=fail device=" + gpu +
                                   " counter=pcie_replay value=20 expected=12 delta=8 " + labels +
                                   " msg=8 new since the previous scrape");
  CHECK(Verdicts(*Find(f, gpu, "pcie_replay")) ==
        std::vector<std::string>{"check.dcgm-pcie-replay event"});
  CHECK(Verdicts(*Find(f, gpu, "nvlink_crc_flit")) ==
        std::vector<std::string>{"check.dcgm-nvlink-errors event"});
  CHECK(Verdicts(*Find(f, gpu, "uncorrectable_remapped_rows")) ==
        std::vector<std::string>{"check.dcgm-remapped-rows event"});
  CHECK(Find(f, gpu, "xid") == nullptr);  // still 79: not news
  CheckFinding clocks_ok = *Find(f, "node", "clocks");
  CHECK(clocks_ok.status == CheckStatus::kOk);
  clocks_ok.fields.emplace_back("was", "fail");  // as CheckSource adds it after a failure
  CHECK(Verdicts(clocks_ok) == std::vector<std::string>{"check.dcgm-clocks-ok event"});
}

TEST_CASE("dcgm-exporter: MIG instances of one GPU are one GPU, without pci_bus_id by index") {
  FakeExporter exporter;
  exporter.Serve(Sample("issue317-a30-mig.prom"));
  DcgmExporterCheck check = MakeCheck(exporter.url());
  const std::vector<std::string> t = Texts(check.Run({}));
  REQUIRE(t.size() == 3);
  CHECK(t[0] ==
        "check=dcgm-exporter status=ok device=gpu0 counter=xid value=0 expected=0 gpu=0 "
        "uuid=GPU-265c9814-6156-355b-e589-ff2064894f16 "
        "hostname=yg-data-k8s-gpu-a30-node-test-test0003.mt msg=no Xid");
  CHECK(t[1].rfind("check=dcgm-exporter status=ok device=gpu1 counter=xid value=0", 0) == 0);
  CHECK(t[2].rfind("check=dcgm-exporter status=ok device=node counter=scrape value=2 ", 0) == 0);
}

TEST_CASE("dcgm-exporter: DCGM's blank value is no reading, not a fault") {
  DcgmExporterCheck check({});
  const auto samples = ParsePrometheusText(
      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"0\", UUID=\"GPU-604ac76c\"} 9223372036854775794\n");
  REQUIRE(samples.ok());
  CHECK(Texts(check.Evaluate(*samples)) ==
        std::vector<std::string>{
            "check=dcgm-exporter status=ok device=node counter=scrape value=0 msg=0 GPUs in "
            "http://localhost:9400/metrics"});
}

TEST_CASE("dcgm-exporter: an exporter that is down, slow, failing or garbled is an error record") {
  FakeExporter exporter;
  DcgmExporterCheck check = MakeCheck(exporter.url());
  const auto scrape = [&check]() {
    const std::vector<CheckFinding> f = check.Run({});
    REQUIRE(f.size() == 1);
    CHECK(f[0].status == CheckStatus::kError);
    CHECK(Verdicts(f[0]) == std::vector<std::string>{"check.not-conclusive event"});
    return f[0].Field("value") + " " + f[0].message;
  };
  exporter.Serve("DCGM_FI_DEV_XID_ERRORS{gpu=\"0\"} 79\nDCGM_FI_DEV_XID_ERRORS{gpu=\"0\" 1\n");
  CHECK(scrape() == "malformed " + exporter.url() +
                        ": line 2, column 32: expected ',' or '}' after a label value");
  exporter.Serve("", 503);
  CHECK(scrape() == "http_status GET " + exporter.url() + ": HTTP 503");
  exporter.Serve(Sample("pr326-rtx3090.prom"), 200, std::chrono::milliseconds(1500));
  CHECK(scrape().rfind("timeout GET " + exporter.url() + ": no answer within 1000 ms", 0) == 0);
  // Nothing listens on the port any more.
  DcgmExporterCheck gone = MakeCheck("http://127.0.0.1:1/metrics");
  const std::vector<CheckFinding> f = gone.Run({});
  REQUIRE(f.size() == 1);
  CHECK(FormatCheckText("dcgm-exporter", f[0])
            .rfind("check=dcgm-exporter status=error device=node counter=scrape value=unreachable "
                   "msg=GET "
                   "http://127.0.0.1:1/metrics: ",
                   0) == 0);
}

TEST_CASE("dcgm-exporter: a body over the size limit is refused, not read on") {
  FakeExporter exporter;
  exporter.Serve(std::string(4096, '#'));
  REQUIRE(LoadHttpClient().ok());
  DcgmExporterCheck::Options o;
  o.url = exporter.url();
  o.http.max_bytes = 1024;
  DcgmExporterCheck check(o);
  const std::vector<CheckFinding> f = check.Run({});
  REQUIRE(f.size() == 1);
  CHECK(f[0].Field("value") == "too_large");
}

TEST_CASE("http get: a URL that is not http(s) is refused before any connection") {
  REQUIRE(LoadHttpClient().ok());
  const auto r = HttpGet("file:///etc/passwd", {}, {});
  REQUIRE(!r.ok());
  CHECK(r.error().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("http get: a stop request ends a GET the exporter is slow to answer") {
  FakeExporter exporter;
  exporter.Serve("x 1\n", 200, std::chrono::milliseconds(3000));
  REQUIRE(LoadHttpClient().ok());
  std::stop_source stop;
  std::jthread stopper([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.request_stop();
  });
  const auto started = std::chrono::steady_clock::now();
  HttpGetOptions o;
  o.timeout = std::chrono::milliseconds(5000);
  const auto r = HttpGet(exporter.url(), o, stop.get_token());
  REQUIRE(!r.ok());
  CHECK(r.error().code() == StatusCode::kAborted);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(2500));
}

}  // namespace
}  // namespace faultline

// SPDX-License-Identifier: Apache-2.0
#include "tainter/kube/kube_node_json.h"

#include <doctest/doctest.h>

#include "base/fault_event.h"

namespace faultline {
namespace {

using nlohmann::json;

json Node(json spec, const json& annotations = nullptr) {
  json node = {{"metadata", {{"name", "n"}, {"resourceVersion", "7"}}}, {"spec", spec}};
  if (!annotations.is_null()) node["metadata"]["annotations"] = annotations;
  return node;
}

NodeTaint Ours() {
  NodeTaint t;
  t.key = "faultline.dev/faulty";
  t.value = "true";
  return t;
}

TEST_CASE("BuildNodePatch: every patch starts with a test of the resourceVersion it read") {
  NodeChange change;
  change.add_taint = Ours();
  json patch = BuildNodePatch(Node({{"taints", json::array()}}), change);
  CHECK(patch == json::parse(R"([
    {"op":"test","path":"/metadata/resourceVersion","value":"7"},
    {"op":"add","path":"/spec/taints/-","value":{"key":"faultline.dev/faulty","value":"true","effect":"NoSchedule"}}
  ])"));
}

TEST_CASE("BuildNodePatch: without spec.taints (or without spec) the whole array is added") {
  NodeChange change;
  change.add_taint = Ours();
  CHECK(BuildNodePatch(Node(json::object()), change)[1]["path"] == "/spec/taints");
  json no_spec = {{"metadata", {{"name", "n"}, {"resourceVersion", "7"}}}};
  CHECK(BuildNodePatch(no_spec, change)[1] ==
        json::parse(R"({"op":"add","path":"/spec","value":{"taints":[
          {"key":"faultline.dev/faulty","value":"true","effect":"NoSchedule"}]}})"));
}

TEST_CASE("BuildNodePatch: a taint with the same key but another effect is a different taint") {
  NodeChange change;
  change.add_taint = Ours();
  json node = Node({{"taints", {{{"key", "faultline.dev/faulty"}, {"effect", "NoExecute"}}}}});
  CHECK(BuildNodePatch(node, change).size() == 2);
  change.add_taint->effect = "NoExecute";
  CHECK(BuildNodePatch(node, change).empty());  // key+effect present: nothing to do
}

TEST_CASE("BuildNodePatch: annotations are added, replaced and removed with escaped keys") {
  NodeChange change;
  change.annotations["faultline.dev/reasons"] = "new";
  change.annotations["a~b"] = "x";
  change.annotations["same"] = "v";
  change.annotations["drop/me"] = std::nullopt;
  change.annotations["absent"] = std::nullopt;
  json node =
      Node(json::object(), {{"faultline.dev/reasons", "old"}, {"same", "v"}, {"drop/me", "1"}});
  CHECK(BuildNodePatch(node, change) == json::parse(R"([
    {"op":"test","path":"/metadata/resourceVersion","value":"7"},
    {"op":"add","path":"/metadata/annotations/a~0b","value":"x"},
    {"op":"remove","path":"/metadata/annotations/drop~1me"},
    {"op":"replace","path":"/metadata/annotations/faultline.dev~1reasons","value":"new"}
  ])"));
  SUBCASE("with no annotations map, one add creates it") {
    NodeChange add;
    add.annotations["faultline.dev/reasons"] = "r";
    add.annotations["gone"] = std::nullopt;
    CHECK(BuildNodePatch(Node(json::object()), add)[1] ==
          json::parse(R"({"op":"add","path":"/metadata/annotations",
                          "value":{"faultline.dev/reasons":"r"}})"));
  }
}

TEST_CASE("BuildNodePatch: removal tests the exact taint it read at its index") {
  NodeChange change;
  change.remove_taint = Ours();
  json ours = {{"key", "faultline.dev/faulty"},
               {"value", "true"},
               {"effect", "NoSchedule"},
               {"timeAdded", "2026-11-22T07:00:00Z"}};
  json node = Node({{"taints", {{{"key", "a"}, {"effect", "NoSchedule"}}, ours}}});
  json patch = BuildNodePatch(node, change);
  REQUIRE(patch.size() == 3);
  CHECK(patch[1] == json({{"op", "test"}, {"path", "/spec/taints/1"}, {"value", ours}}));
  CHECK(patch[2] == json({{"op", "remove"}, {"path", "/spec/taints/1"}}));
  CHECK(BuildNodePatch(Node(json::object()), change).empty());
}

TEST_CASE(
    "NodeBaseToJson: a picture that kept only our keys still patches key by key where the node "
    "has the map, and adds the whole map only where it has none") {
  NodeBase base;
  base.node.name = "n";
  base.node.resource_version = "7";
  base.has_annotations = true;  // the node has others' annotations, none of ours
  base.has_labels = false;      // and no labels at all
  NodeChange change;
  change.add_taint = Ours();
  change.annotations["faultline.dev/reasons"] = "[]";
  change.labels["faultline.dev/needs-inspection"] = "true";
  const json node = NodeBaseToJson(base);
  CHECK(node["spec"] == json::object());  // never `add /spec`, which would replace it
  CHECK(BuildNodePatch(node, change) == json::parse(R"([
    {"op":"test","path":"/metadata/resourceVersion","value":"7"},
    {"op":"add","path":"/spec/taints","value":[{"key":"faultline.dev/faulty","value":"true","effect":"NoSchedule"}]},
    {"op":"add","path":"/metadata/annotations/faultline.dev~1reasons","value":"[]"},
    {"op":"add","path":"/metadata/labels","value":{"faultline.dev/needs-inspection":"true"}}
  ])"));
  // Our taint already there (kept in full): only the annotation is written.
  base.node.taints.push_back(Ours());
  base.node.annotations["faultline.dev/reasons"] = "[1]";
  CHECK(BuildNodePatch(NodeBaseToJson(base), change) == json::parse(R"([
    {"op":"test","path":"/metadata/resourceVersion","value":"7"},
    {"op":"replace","path":"/metadata/annotations/faultline.dev~1reasons","value":"[]"},
    {"op":"add","path":"/metadata/labels","value":{"faultline.dev/needs-inspection":"true"}}
  ])"));
}

TEST_CASE("NodeInfoFromJson reads name, uid, version, labels, annotations and taints") {
  json node = json::parse(R"({"metadata":{"name":"g","uid":"u","resourceVersion":"9",
      "labels":{"gpu":"true"},"annotations":{"a":"b"}},
      "spec":{"taints":[{"key":"k","value":"v","effect":"NoExecute","timeAdded":"t"}]}})");
  auto info = NodeInfoFromJson(node);
  REQUIRE(info.ok());
  CHECK(info->name == "g");
  CHECK(info->uid == "u");
  CHECK(info->resource_version == "9");
  CHECK(info->labels.at("gpu") == "true");
  CHECK(info->annotations.at("a") == "b");
  REQUIRE(info->taints.size() == 1);
  CHECK(info->taints[0].effect == "NoExecute");
  CHECK(info->taints[0].time_added == "t");
  CHECK_FALSE(NodeInfoFromJson(json::parse(R"({"kind":"Status"})")).ok());
}

TEST_CASE("events: deterministic names, bounded UTF-8-safe messages") {
  NodeEvent event;
  event.node = "gpu-1";
  event.reason = "FaultlineTainted";
  event.message = std::string(1023, 'a') + "\xc3\xa9";  // é straddles the 1024-byte limit
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  json a = BuildEventJson(event, now, {});
  json b = BuildEventJson(event, now + std::chrono::hours(1), {});
  CHECK(a["metadata"]["name"] == b["metadata"]["name"]);
  CHECK(a["message"].get<std::string>().size() == 1023);
  CHECK(a["firstTimestamp"] == "2027-01-15T08:00:00Z");
  event.reason = "FaultlineValveShut";
  CHECK(BuildEventJson(event, now, {})["metadata"]["name"] != a["metadata"]["name"]);
  CHECK(TruncateUtf8("abc", 10) == "abc");
  CHECK(EscapeJsonPointer("a/b~c") == "a~1b~0c");
}

}  // namespace
}  // namespace faultline

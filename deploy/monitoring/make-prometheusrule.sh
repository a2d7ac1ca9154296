#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Writes faultline-prometheusrule.yaml (a PrometheusRule for the Prometheus
# Operator) from faultline-alerts.yaml, the plain rules file: the same groups,
# indented under `spec:`. Run it after editing the alerts; the test suite
# (ctest -R deploy.alerts) fails while the two disagree.
#   deploy/monitoring/make-prometheusrule.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
{
  cat <<'YAML'
# Generated from faultline-alerts.yaml by make-prometheusrule.sh: edit that
# file and run the script. Runbooks: deploy/README.md, "Runbooks".
# Your Prometheus selects PrometheusRules by label (`ruleSelector`); add the
# label it expects in your overlay (kube-prometheus-stack: `release: <name>`).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: faultline
  namespace: faultline
  labels:
    app.kubernetes.io/name: faultline
spec:
YAML
  sed -n '/^groups:/,$p' "$here/faultline-alerts.yaml" | sed 's/^\(.\)/  \1/'
} >"$here/faultline-prometheusrule.yaml"

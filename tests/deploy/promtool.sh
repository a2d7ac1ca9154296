#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs promtool (Debian package `prometheus`, deploy/install-deps.sh --test)
# with these arguments, or prints SKIPPED and passes where it is missing.
#   promtool.sh check rules deploy/monitoring/faultline-alerts.yaml
#   promtool.sh test rules tests/deploy/alerts_test.yaml
if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIPPED: promtool is not installed (Debian package prometheus)"
  exit 0
fi
exec promtool "$@"

#!/usr/bin/env bash
# Registers this node's SSM agent (the snap or the Debian package) with its own hybrid
# activation (fleet enroll), unless it is registered already; install.sh runs it.
# Usage: ssm-register.sh ACTIVATION_ID ACTIVATION_CODE REGION. Exit 0 registered, 1 failed.
set -euo pipefail

# Where the SSM agent keeps its registration and writes the role's keys (overridable for tests).
readonly REGISTRATION=${SSM_REGISTRATION_FILE:-/var/lib/amazon/ssm/registration}
readonly CREDENTIALS=${SSM_CREDENTIALS_FILE:-/root/.aws/credentials}
(($# == 3)) || {
  echo "usage: $0 ACTIVATION_ID ACTIVATION_CODE REGION" >&2
  exit 2
}
id=$1 code=$2 region=$3

# A second registration would need a new activation and leave the first instance behind.
if [[ -s $REGISTRATION ]]; then
  echo "SSM agent already registered ($(<"$REGISTRATION")): the activation is not used"
  exit 0
fi
bin=amazon-ssm-agent unit=amazon-ssm-agent
if snap list amazon-ssm-agent >/dev/null 2>&1; then
  bin=/snap/amazon-ssm-agent/current/amazon-ssm-agent unit=snap.amazon-ssm-agent.amazon-ssm-agent
fi
if ! command -v "$bin" >/dev/null; then
  echo "ssm-register.sh: error: the SSM agent is not installed (docs/install.md, step 3)" >&2
  exit 1
fi
systemctl stop "$unit" || true
"$bin" -register -y -code "$code" -id "$id" -region "$region"
systemctl start "$unit"
# The daemons read the role's credentials the agent writes; they arrive within seconds.
for _ in {1..60}; do
  if [[ -s $CREDENTIALS ]]; then break; fi
  sleep 1
done
echo "registered with SSM: $(<"$REGISTRATION")"

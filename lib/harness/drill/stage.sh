#!/bin/sh
# A drill's stage command (workload.stages = "command"): works for STAGE_WORK_MS in 12 steps,
# reporting each step as a progress line (docs/pipeline.md), then writes its output.
# A stage hung by the hang-stage fault is SIGSTOPped: alive, no CPU, no output.
set -eu
ms=${STAGE_WORK_MS:-1000}
step=$((ms / 12))
i=0
while [ "$i" -lt 12 ]; do
  sleep "$(printf '%d.%03d' $((step / 1000)) $((step % 1000)))"
  i=$((i + 1))
  echo "progress $(printf '%d.%02d' $((i / 12)) $((i % 12 * 100 / 12)))"
done
printf '{"task":"%s","stage":"%s"}\n' "${TASK_ID:-?}" "${STAGE:-?}" > "${OUTPUT_DIR:-/tmp}/output.json"

#!/bin/sh
# A drill's last stage: fails unless the first stage's file arrived byte for byte, and unless the
# producer's payload reached it untouched (the scenario's workload.payload).
set -eu
cd "$INPUT_DIR/produce"
sha256sum -c --quiet clip.sha256
grep -q '"title":"Épisode 4 — \\"Ré\\""' "$TASK_FILE" || { echo "payload not as sent" >&2; exit 3; }
sleep "$(printf '%d.%03d' $((${STAGE_WORK_MS:-0} / 1000)) $((${STAGE_WORK_MS:-0} % 1000)))"
cp clip.sha256 "$OUTPUT_DIR/delivered.sha256"

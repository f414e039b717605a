#!/bin/sh
# A drill's first stage of a user's pipeline: works for STAGE_WORK_MS, then leaves a file of
# random bytes and its checksum in OUTPUT_DIR for the next stage, which may run on another node.
set -eu
ms=${STAGE_WORK_MS:-1000}
i=0
while [ "$i" -lt 4 ]; do
  sleep "$(printf '%d.%03d' $((ms / 4000)) $((ms / 4 % 1000)))"
  i=$((i + 1))
  echo "progress 0.$((i * 2))"
done
head -c 1048583 /dev/urandom > "$OUTPUT_DIR/clip.bin"
(cd "$OUTPUT_DIR" && sha256sum clip.bin > clip.sha256)

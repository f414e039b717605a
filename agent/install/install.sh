#!/usr/bin/env bash
# Installs the Queen's Fleet agent and worker on an Ubuntu 22.04 node: bundles to
# /opt/queen-fleet, config and environment to /etc/queen-fleet, the data directory
# /var/queen-fleet, and the two systemd units; registers the SSM agent with the node's activation
# (fleet enroll) when given one. See docs/install.md.
# Exit codes: 0 done, 1 failed, 2 bad arguments (options, config file or bundle directory).
set -euo pipefail

readonly PROG=install.sh
readonly UNITS=(queen-fleet-peer-sync.service queen-fleet-worker.service)
readonly BUNDLES=(agent.js worker.js)
# The units run this binary; a different --node-bin is written into their ExecStart.
readonly DEFAULT_NODE_BIN=/usr/bin/node
# The floor of package.json "engines": Node 20 is past its end of life, and the bundles are tested on 22.
readonly NODE_MIN_MAJOR=22 NODE_MIN_MINOR=12
# The same rule as a node name in the fleet config (lib/core/config.ts).
readonly NODE_NAME_RE='^[a-z0-9][a-z0-9-]{0,62}$'
# The only directory the units may write (ReadWritePaths=).
readonly DATA_DIR=/var/queen-fleet

usage() {
  cat <<EOF
Usage: sudo ./$PROG --config FILE --node NAME [options]

Installs queen-fleet-peer-sync (the agent) and queen-fleet-worker as systemd services.

  --config FILE   fleet config JSON, installed as /etc/queen-fleet/config.json (0640)
  --node NAME     this node's name (FLEET_NODE_NAME): lower-case letters, digits, dashes
  --bundle DIR    where agent.js, worker.js and the units are (default: this script's dir),
  --bundle FILE   or the release tarball of npm run build:agent, checked against FILE.sha256
  --activation-id ID --activation-code CODE --region REGION
                  register the SSM agent with this node's activation (fleet enroll prints them)
  --root DIR      write everything below DIR instead of / (default /); systemctl is then
                  not called and the units are enabled by symlink
  --node-bin PATH Node.js binary the units run (default $DEFAULT_NODE_BIN), at least
                  v$NODE_MIN_MAJOR.$NODE_MIN_MINOR; checked on / and whenever given
  --no-start      write and enable the services, do not start them
  --help          show this help

Running it again with the same arguments changes nothing; with new bundles or a new
config it replaces them and restarts the services that were running.
EOF
}

die() { echo "$PROG: error: $*" >&2; exit 1; }
bad_input() { echo "$PROG: error: $*" >&2; exit 2; }
bad_usage() {
  echo "$PROG: $*" >&2
  echo "Try '$PROG --help'." >&2
  exit 2
}

CONFIG='' NODE_NAME='' ROOT=/ NO_START=0 NODE_BIN='' BUNDLE_DIR='' TARBALL='' UNPACKED=''
ACTIVATION_ID='' ACTIVATION_CODE='' REGION=''
BUNDLE_DIR_DEFAULT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)

parse_args() {
  local opt value
  while (($# > 0)); do
    opt=$1
    case $opt in
      --help | -h)
        usage
        exit 0
        ;;
      --no-start)
        NO_START=1
        shift
        continue
        ;;
      --config=* | --node=* | --bundle=* | --root=* | --node-bin=* | --activation-*=* | --region=*)
        value=${opt#*=}
        opt=${opt%%=*}
        shift
        ;;
      --config | --node | --bundle | --root | --node-bin | --activation-id | --activation-code | --region)
        (($# >= 2)) || bad_usage "option $opt needs a value"
        value=$2
        shift 2
        ;;
      *) bad_usage "unknown argument: $opt" ;;
    esac
    [[ -n $value ]] || bad_usage "option $opt needs a non-empty value"
    case $opt in
      --config) CONFIG=$value ;;
      --node) NODE_NAME=$value ;;
      --bundle) BUNDLE_DIR=$value ;;
      --root) ROOT=$value ;;
      --node-bin) NODE_BIN=$value ;;
      --activation-id) ACTIVATION_ID=$value ;;
      --activation-code) ACTIVATION_CODE=$value ;;
      --region) REGION=$value ;;
      *) bad_usage "unknown argument: $opt" ;;
    esac
  done
  [[ -n $CONFIG ]] || bad_usage "--config FILE is required"
  [[ -n $NODE_NAME ]] || bad_usage "--node NAME is required"
  [[ $NODE_NAME =~ $NODE_NAME_RE ]] ||
    bad_usage "--node '$NODE_NAME': must be 1-63 lower-case letters, digits and dashes, not starting with a dash"
  [[ -f $CONFIG && -r $CONFIG ]] || bad_usage "--config '$CONFIG': no such readable file"
  [[ -z $ACTIVATION_ID$ACTIVATION_CODE$REGION || (-n $ACTIVATION_ID && -n $ACTIVATION_CODE && -n $REGION) ]] ||
    bad_usage "--activation-id, --activation-code and --region go together"
  BUNDLE_DIR=${BUNDLE_DIR:-$BUNDLE_DIR_DEFAULT}
  if [[ -f $BUNDLE_DIR && $BUNDLE_DIR == *.tar.gz ]]; then
    TARBALL=$BUNDLE_DIR
  elif [[ ! -d $BUNDLE_DIR ]]; then
    bad_usage "--bundle '$BUNDLE_DIR': no such directory or release tarball"
  fi
  [[ -d $ROOT ]] || bad_usage "--root '$ROOT': no such directory"
  ROOT=$(cd -- "$ROOT" && pwd)
  if [[ -n $NODE_BIN && ! $NODE_BIN =~ ^/[A-Za-z0-9._/+-]+$ ]]; then
    bad_usage "--node-bin '$NODE_BIN': must be an absolute path of letters, digits and ._/+-"
  fi
}

# Prints the path under the install root: target /etc/x -> <root>/etc/x.
under_root() {
  if [[ $ROOT == / ]]; then printf '%s\n' "$1"; else printf '%s%s\n' "$ROOT" "$1"; fi
}

# A release tarball: its checksum must match FILE.sha256 (as sha256sum writes it) before it is unpacked.
unpack_bundle() {
  local sums=$TARBALL.sha256 expected actual
  [[ -f $sums ]] || bad_input "$sums is missing: copy it with the tarball (npm run build:agent writes both)"
  expected=$(cut -d ' ' -f 1 <"$sums")
  actual=$(sha256sum -- "$TARBALL" | cut -d ' ' -f 1)
  [[ $expected =~ ^[0-9a-f]{64}$ && $actual == "$expected" ]] ||
    bad_input "$TARBALL: sha256 $actual does not match $sums; copy both again"
  echo "$TARBALL: sha256 matches $sums"
  UNPACKED=$(mktemp -d)
  tar -xzf "$TARBALL" -C "$UNPACKED" --no-same-owner || bad_input "$TARBALL: not a tarball tar can unpack"
  # Its one folder, whatever the file was renamed to on the way.
  BUNDLE_DIR=$(find "$UNPACKED" -mindepth 1 -maxdepth 1 -type d -print -quit)
}

check_bundle() {
  local name extra=()
  if [[ -n $ACTIVATION_ID ]]; then extra=(ssm-register.sh); fi
  for name in "${BUNDLES[@]}" "${UNITS[@]}" "${extra[@]}"; do
    [[ -f $BUNDLE_DIR/$name ]] ||
      bad_input "$BUNDLE_DIR/$name is missing: build the release with 'npm run build:agent' and copy it to the node"
  done
}

check_node() {
  local version major minor
  [[ -x $NODE_BIN ]] || die "Node.js not found at $NODE_BIN: install Node.js $NODE_MIN_MAJOR (docs/install.md) or pass --node-bin"
  version=$("$NODE_BIN" --version 2>/dev/null | head -n 1) || die "$NODE_BIN --version failed"
  [[ $version =~ ^v([0-9]+)\.([0-9]+)\. ]] || die "$NODE_BIN --version printed '$version', not a Node.js version"
  major=${BASH_REMATCH[1]} minor=${BASH_REMATCH[2]}
  if ((major < NODE_MIN_MAJOR || (major == NODE_MIN_MAJOR && minor < NODE_MIN_MINOR))); then
    die "Node.js $version at $NODE_BIN is too old: v$NODE_MIN_MAJOR.$NODE_MIN_MINOR or newer is required"
  fi
  echo "Node.js $version at $NODE_BIN"
}

# Reads the config as the daemons will and rejects what would only fail at start: not JSON,
# this node not among `nodes`, a data directory the sandbox does not allow, a privileged port.
check_config() {
  local node=$1
  "$node" - "$CONFIG" "$NODE_NAME" "$DATA_DIR" <<'EOF' || exit 2
const [file, name, dataDir] = process.argv.slice(2);
const fail = (msg) => { console.error(`install.sh: error: config ${file}: ${msg}`); process.exit(1); };
let c;
try { c = JSON.parse(require('fs').readFileSync(file, 'utf8')); } catch (e) { fail(`not valid JSON (${e.message})`); }
if (c === null || typeof c !== 'object' || Array.isArray(c)) fail('must be a JSON object');
const names = Array.isArray(c.nodes) ? c.nodes.map((n) => n && n.name) : [];
if (names.length > 0 && !names.includes(name)) fail(`node ${name} is not one of its nodes (${names.join(', ')})`);
if (c.dataDir !== undefined && c.dataDir !== dataDir) fail(`dataDir ${c.dataDir}: the units may only write ${dataDir}; remove the key or change ReadWritePaths= in both units`);
if (typeof c.healthPort === 'number' && c.healthPort > 0 && c.healthPort < 1024) fail(`healthPort ${c.healthPort} needs a capability the units drop; use a port above 1023`);
EOF
}

CHANGED=0
TMP_FILE=''
trap 'rm -rf -- ${TMP_FILE:+"$TMP_FILE"} ${UNPACKED:+"$UNPACKED"}' EXIT

# The services are root without capabilities: they can use only what root owns.
own() {
  if ((EUID == 0)); then chown root:root -- "$1"; fi
}

# put MODE DEST: writes stdin to DEST (under the root) atomically; notes whether it changed.
put() {
  local mode=$1 dest
  dest=$(under_root "$2")
  TMP_FILE="$dest.install.$$"
  cat >"$TMP_FILE"
  chmod "$mode" "$TMP_FILE"
  own "$TMP_FILE"
  if [[ -f $dest ]] && cmp -s "$TMP_FILE" "$dest" && [[ $(stat -c '%a %u' "$dest") == "$(stat -c '%a %u' "$TMP_FILE")" ]]; then
    rm -f -- "$TMP_FILE"
  else
    mv -f -- "$TMP_FILE" "$dest"
    CHANGED=1
    echo "wrote $dest"
  fi
  TMP_FILE=''
}

make_dir() {
  local mode=$1 dir
  dir=$(under_root "$2")
  mkdir -p -- "$dir"
  chmod "$mode" "$dir"
  own "$dir"
}

install_files() {
  local name unit
  make_dir 0755 /opt/queen-fleet
  make_dir 0750 /etc/queen-fleet
  make_dir 0750 "$DATA_DIR"
  make_dir 0755 /etc/systemd/system
  # The units bind /root/.aws read-only; it must exist before the node is registered.
  if [[ ! -d $(under_root /root/.aws) ]]; then make_dir 0700 /root/.aws; fi

  for name in "${BUNDLES[@]}"; do
    put 0644 "/opt/queen-fleet/$name" <"$BUNDLE_DIR/$name"
    if [[ -f $BUNDLE_DIR/$name.map ]]; then
      put 0644 "/opt/queen-fleet/$name.map" <"$BUNDLE_DIR/$name.map"
    elif [[ -f $(under_root "/opt/queen-fleet/$name.map") ]]; then
      rm -f -- "$(under_root "/opt/queen-fleet/$name.map")"
      CHANGED=1
    fi
  done
  put 0640 /etc/queen-fleet/config.json <"$CONFIG"
  put 0640 /etc/queen-fleet/fleet.env <<EOF
# Written by install.sh on every run: edit config.json instead, or add a drop-in
# (systemctl edit queen-fleet-worker) for one unit. Read by both queen-fleet units.
FLEET_CONFIG_FILE=/etc/queen-fleet/config.json
FLEET_NODE_NAME=$NODE_NAME
# The source maps ship beside the bundles but are not loaded: --enable-source-maps holds each
# bundle's map in memory, about 9 MiB a process (bench/bundle-rss.ts). Stack frames keep their
# function names; for TypeScript lines, a drop-in: Environment=NODE_OPTIONS=--enable-source-maps
EOF
  local text
  for unit in "${UNITS[@]}"; do
    # Through a variable, not a pipe: a failing sed stops the install instead of writing nothing.
    text=$(sed -e "s#^ExecStart=$DEFAULT_NODE_BIN #ExecStart=$NODE_BIN #" "$BUNDLE_DIR/$unit")
    put 0644 "/etc/systemd/system/$unit" <<<"$text"
  done
}

# What `systemctl enable` does for WantedBy=multi-user.target, for a root that is not
# the running system.
enable_by_symlink() {
  local wants unit
  wants=$(under_root /etc/systemd/system/multi-user.target.wants)
  mkdir -p -- "$wants"
  for unit in "${UNITS[@]}"; do
    ln -sfn -- "/etc/systemd/system/$unit" "$wants/$unit"
  done
  echo "enabled ${UNITS[*]} below $ROOT (not started: not the running system)"
}

activate() {
  systemctl daemon-reload
  if ((NO_START)); then
    systemctl enable "${UNITS[@]}"
    echo "enabled ${UNITS[*]}; start them with: systemctl start ${UNITS[*]}"
    return
  fi
  # New bundles, config or units reach the services that were running already.
  if ((CHANGED)); then systemctl try-restart "${UNITS[@]}"; fi
  systemctl enable --now "${UNITS[@]}"
  echo "started ${UNITS[*]}"
  echo "check: systemctl status ${UNITS[*]}; curl -s 127.0.0.1:8087/healthz"
}

main() {
  parse_args "$@"
  if [[ -n $TARBALL ]]; then unpack_bundle; fi
  check_bundle
  local checker=''
  if [[ $ROOT == / || -n $NODE_BIN ]]; then
    NODE_BIN=${NODE_BIN:-$DEFAULT_NODE_BIN}
    check_node
    checker=$NODE_BIN
  else
    # Preparing another root: its Node.js cannot be run from here.
    NODE_BIN=$DEFAULT_NODE_BIN
    checker=$(command -v node || true)
  fi
  if [[ -n $checker ]]; then
    check_config "$checker"
  else
    echo "warning: no node on PATH, config not checked" >&2
  fi
  if [[ $ROOT == / && $EUID -ne 0 ]]; then die "run as root (sudo) to install on this system, or pass --root DIR"; fi

  install_files
  if [[ -n $ACTIVATION_ID && $ROOT == / ]]; then
    bash "$BUNDLE_DIR/ssm-register.sh" "$ACTIVATION_ID" "$ACTIVATION_CODE" "$REGION" || die "SSM registration failed"
  elif [[ -n $ACTIVATION_ID ]]; then echo "not registering the SSM agent below $ROOT"; fi
  if [[ $ROOT == / ]]; then activate; else enable_by_symlink; fi
}

main "$@"

import type { Command } from 'commander';

/** Examples shown at the end of each command's --help: the commands people type, with what they do. */
export const EXAMPLES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  init: [
    ['fleet init --stack prod --region us-west-2', "./fleet-config.json from stack queens-fleet-prod's outputs"],
    ['fleet init --stack prod --config /etc/fleet/prod.json --overwrite', 'that file, replaced if it exists'],
  ],
  enroll: [
    ['fleet enroll node-3', "node-3's activation (1 hour), and the command to run on node-3"],
    ['fleet enroll node-3 --expires-in 24 --json', 'for scripts: the activation id, code and command'],
  ],
  status: [
    ['fleet status', 'the fleet on AWS (FLEET_CONFIG_FILE or FLEET_* settings)'],
    ['fleet status --local', 'the local fleet of `fleet demo --hold`'],
    ['fleet status --json | jq .leader', 'for scripts'],
    ['fleet status --watch 5', 'again every 5 s until Ctrl-C'],
  ],
  events: [
    ['fleet events --since 2h', 'the last two hours'],
    ['fleet events --node node-1 --kind STALLED --limit 5', "node-1's latest stalls"],
  ],
  failover: [
    ['fleet failover --to node-2 --reason "kernel update" --dry-run', 'show the steps, change nothing'],
    ['fleet failover --to node-2 --reason "kernel update"', 'on a terminal: shows the steps, then asks'],
    ['fleet failover --to node-2 --reason "node-1 is gone" --yes --json', 'from a script'],
  ],
  switchover: [
    ['fleet switchover --to node-2 --reason "kernel update" --dry-run', 'show the steps, change nothing'],
    ['fleet switchover --to node-2 --reason "kernel update"', 'drain node-1 to checkpoints, then hand over'],
    ['fleet switchover --to node-2 --reason "rebalance" --yes --no-wait', 'record the request and return'],
    ['fleet switchover --cancel', 'withdraw a pending request'],
  ],
  pause: [
    ['fleet pause --for 2h --reason "kernel update on node-2"', 'alerts only, for two hours at most'],
    ['fleet pause', 'until fleet resume'],
  ],
  resume: [['fleet resume', 'the watchdog acts again from its next run']],
  cordon: [['fleet cordon node-2 --reason "reboot for patches"', 'node-2 out of rotation: no incident, no promotion']],
  uncordon: [['fleet uncordon node-2', 'node-2 back in rotation']],
  rejoin: [['fleet rejoin node-2', "restart node-2's worker in standby mode and wait for its self-test"]],
  admission: [
    ['fleet admission', 'whether input is held, and why'],
    ['fleet admission --hold', 'hold input until --open or --auto'],
    ['fleet admission --auto', 'give the decision back to the watchdog'],
  ],
  replay: [
    ['fleet replay node-1-e3-i1.STALLED', "the incident's plan; changes nothing"],
    ['fleet replay node-1-e3-i1.STALLED --execute', 'carry out the step that resumes it'],
  ],
  doctor: [
    ['fleet doctor', 'check the configuration, bucket, table, queue, topic, SSM and DNS'],
    ['fleet doctor --json', 'for scripts'],
    ['fleet doctor --config prod.json', 'with that config file; says where each setting came from'],
  ],
  drill: [
    ['fleet drill --scenario tests/scenarios/kill-primary.json', 'one drill at ×20'],
    ['fleet drill --scenario tests/scenarios/freeze-primary.json --html /tmp/freeze.html', 'with its report page'],
  ],
  demo: [
    ['fleet demo', 'a stall detected and healed on a local 2-node fleet'],
    ['fleet demo --pipeline examples/ffmpeg', 'a real ffmpeg pipeline whose primary dies mid-transcode'],
  ],
};

/** Adds each command's examples to its --help. */
export const addExamples = (program: Command): void => {
  for (const command of program.commands) {
    const examples = EXAMPLES[command.name()];
    if (examples === undefined) continue;
    const width = Math.max(...examples.map(([line]) => line.length));
    const lines = examples.map(([line, what]) => `  $ ${line.padEnd(width)}  # ${what}`);
    command.addHelpText('after', `\nExamples:\n${lines.join('\n')}`);
  }
};

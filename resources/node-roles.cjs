// One IAM role per node, from the `nodes` parameter. The generator is
// TypeScript (lib/deploy/node-roles.ts, type-checked and unit-tested); tsx loads it for this one
// require only, so nothing else the framework loads is compiled through it.
'use strict';
const tsx = require('tsx/cjs/api');

module.exports = async ({ resolveVariable }) => {
  const { nodeRolesFragment } = tsx.require('../lib/deploy/node-roles.ts', __filename);
  return nodeRolesFragment({
    service: await resolveVariable('self:service'),
    stage: await resolveVariable('sls:stage'),
    region: await resolveVariable('self:provider.region'),
    bucket: await resolveVariable('param:stateBucket'),
    nodes: await resolveVariable('param:nodes'),
    nodePolicyArns: await resolveVariable('param:nodePolicyArns'),
  });
};

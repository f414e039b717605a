// The fleet's CloudWatch dashboard, from the metric catalogue (lib/deploy/dashboard.ts, typed and
// unit-tested), loaded through tsx for this one require as node-roles.cjs is.
'use strict';
const tsx = require('tsx/cjs/api');

module.exports = async ({ resolveVariable }) => {
  const { dashboardFragment } = tsx.require('../lib/deploy/dashboard.ts', __filename);
  return dashboardFragment({
    service: await resolveVariable('self:service'),
    stage: await resolveVariable('sls:stage'),
    bucket: await resolveVariable('param:stateBucket'),
    nodes: await resolveVariable('param:nodes'),
    metrics: await resolveVariable('param:metrics'),
    dashboard: await resolveVariable('param:dashboard'),
  });
};

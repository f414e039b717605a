// The alarms on the watchdog's metrics (lib/deploy/metric-alarms.ts, typed and unit-tested),
// loaded through tsx for this one require as dashboard.cjs is.
'use strict';
const tsx = require('tsx/cjs/api');

module.exports = async ({ resolveVariable }) => {
  const { metricAlarmsFragment } = tsx.require('../lib/deploy/metric-alarms.ts', __filename);
  return metricAlarmsFragment({
    service: await resolveVariable('self:service'),
    stage: await resolveVariable('sls:stage'),
    bucket: await resolveVariable('param:stateBucket'),
    nodes: await resolveVariable('param:nodes'),
    metrics: await resolveVariable('param:metrics'),
    standbyAlarmMinutes: await resolveVariable('param:standbyAlarmMinutes'),
    stallAlarmMinutes: await resolveVariable('param:stallAlarmMinutes'),
    heartbeatAlarmSeconds: await resolveVariable('param:heartbeatAlarmSeconds'),
    runbookUrl: await resolveVariable('param:runbookUrl'),
  });
};

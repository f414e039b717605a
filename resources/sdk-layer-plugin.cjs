// A Serverless Framework plugin for the AWS SDK layer (lib/deploy/sdk-layer.ts):
// - builds it into the layer's path (serverless.yml `layers.awsSdk`) before anything is packaged, so `sls package` and
//   `sls deploy` both ship the lockfile's SDK;
// - lets `sls package` run offline: the framework asks CloudFormation whether the deployed layer
//   is the same (to skip uploading it again), which needs credentials; with none, there is
//   nothing deployed to compare with, and the layer is packaged as new. A deploy has
//   credentials and compares as usual.
// tsx loads the TypeScript for this one require only.
'use strict';
const { resolve } = require('node:path');
const tsx = require('tsx/cjs/api');

class SdkLayerPlugin {
  constructor(serverless) {
    const build = async () => {
      const { buildSdkLayer } = tsx.require('../lib/deploy/sdk-layer.ts', __filename);
      const dir = resolve(serverless.serviceDir, serverless.service.getLayer('awsSdk').path);
      const sizes = await buildSdkLayer(dir, require('esbuild').build, require('./esbuild-plugins.cjs'));
      const listed = Object.entries(sizes).map(([group, bytes]) => `${group} ${Math.round(bytes / 1024)} KiB`);
      serverless.cli.log(`AWS SDK layer built (bundles: ${listed.join(', ')})`);
    };
    const offlineTolerant = () => {
      const compiler = serverless.pluginManager.plugins.find((p) => typeof p.compareWithLastLayer === 'function');
      if (compiler === undefined || compiler.queenFleetOffline === true) return;
      const compare = compiler.compareWithLastLayer.bind(compiler);
      compiler.compareWithLastLayer = async (name) => {
        try {
          return await compare(name);
        } catch (error) {
          if (error?.code !== 'AWS_CREDENTIALS_NOT_FOUND') throw error;
          serverless.cli.log(`no AWS credentials: layer ${name} packaged as new (nothing deployed to compare with)`);
          return undefined;
        }
      };
      compiler.queenFleetOffline = true;
    };
    this.hooks = {
      'before:package:initialize': async () => {
        offlineTolerant();
        await build();
      },
      'before:deploy:function:initialize': build,
    };
  }
}

module.exports = SdkLayerPlugin;
